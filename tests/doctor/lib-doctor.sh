# Shared by the doctor tests (sourced). TAP helpers, the doctor binary and fixture building.
RS_TOP=${RS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RS_BUILD=${RS_BUILD:-$RS_TOP/build}
DOCTOR=$RS_BUILD/tests/doctor/rs-doctor
TDIR=$RS_TOP/tests/doctor
T=0
FAILED=0
ok() { T=$((T + 1)); echo "ok $T - $1"; }
NOTOK=""
not_ok() { T=$((T + 1)); FAILED=$((FAILED + 1)); echo "not ok $T - $1"; NOTOK+="not ok $T - $1"$'\n'; }
check() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; } # check STATUS DESC
need_doctor() {
    if [ ! -x "$DOCTOR" ]; then echo "1..0 # SKIP $DOCTOR not built (make BUILD=... tests)"; exit 0; fi
}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rs-doctor-t.XXXXXX")
# A failed file's digest for `make test` (RS_FAIL_DIGEST, as tests/lib.sh writes it): its not-ok lines and the
# first lines of the first failed comparison
doctor_digest() {
    [ "$FAILED" -gt 0 ] && [ -n "${RS_FAIL_DIGEST:-}" ] && [ -d "$RS_FAIL_DIGEST" ] || return 0
    {
        echo "== ${0#"$RS_TOP"/} (build $RS_BUILD): $FAILED failed of $T"
        printf '%s' "$NOTOK" | head -10
        [ -s "$WORK/faildiff" ] && { echo "-- its first failed comparison:"; head -12 "$WORK/faildiff" | cut -c1-300; }
    } >"$RS_FAIL_DIGEST/d-$(printf '%s' "${0#"$RS_TOP"/}" | tr -c 'A-Za-z0-9._-' _).$$" 2>/dev/null
}
trap 'doctor_digest; rm -rf "$WORK"' EXIT
doctor() { timeout 20 "$DOCTOR" "$@"; }
# same_as GOLDEN FILE DESC: compare, show a diff on failure
same_as() {
    if diff -u "$1" "$2" >"$WORK/diff" 2>&1; then ok "$3"; else
        not_ok "$3"
        sed 's/^/# /' "$WORK/diff" | head -40
        [ -s "$WORK/faildiff" ] || cp "$WORK/diff" "$WORK/faildiff" # the first failed comparison, for the digest
    fi
}
json_valid() { # json_valid FILE: python3 if present, else a brace-balance sanity check
    if command -v python3 >/dev/null; then python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
    else grep -q '"verdicts"' "$1"; fi
}
# fixture_test NAME EXPECTED_EXIT: build the fixture, compare text and JSON verdicts with the goldens.
fixture_test() {
    local name=$1 want=$2 st
    timeout 60 "$TDIR/fixtures/mkfixtures.sh" "$WORK/fx" "$name" || { echo "Bail out! cannot build fixture $name"; exit 1; }
    doctor --sysfs-root "$WORK/fx/$name" >"$WORK/$name.txt"; st=$?
    check $((st != want)) "$name: exit status $st (expected $want)"
    same_as "$TDIR/golden/$name.txt" "$WORK/$name.txt" "$name: text verdicts match golden/$name.txt"
    doctor --json --sysfs-root "$WORK/fx/$name" >"$WORK/$name.json"; st=$?
    check $((st != want)) "$name: --json exit status $st (expected $want)"
    json_valid "$WORK/$name.json"; check $? "$name: --json output is valid JSON"
    same_as "$TDIR/golden/$name.json" "$WORK/$name.json" "$name: JSON verdicts match golden/$name.json"
    # The same checks on the facts alone (what the analyzer does with a trace's HOST_FACT snapshot).
    doctor --dump-facts --sysfs-root "$WORK/fx/$name" >"$WORK/$name.facts"
    doctor --facts "$WORK/$name.facts" >"$WORK/$name.fromfacts.txt"; st=$?
    check $((st != want)) "$name: --facts (dumped facts) exit status $st"
    same_as "$TDIR/golden/$name.txt" "$WORK/$name.fromfacts.txt" "$name: verdicts from the dumped facts equal the live ones"
}
