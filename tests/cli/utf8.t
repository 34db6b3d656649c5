#!/bin/bash
# Issue 17 D9: every JSON output is valid UTF-8 JSON even when the trace's strings are hostile (invalid
# bytes, encoded surrogates, CESU pairs, overlong forms, code points above U+10FFFF, truncated sequences,
# control characters, quotes). mkhostile puts such strings in the header (host, command line), thread
# names, marks, warnings and host facts. Checked with three decoders: Python (strict codec + json +
# no lone surrogates: strict_json.py), Node (TextDecoder fatal + JSON.parse: strict_json.js) and jq; and the
# Perfetto output with protoc (string fields must be UTF-8). Ill-formed parts become U+FFFD; well-formed
# multibyte text is kept. Before the fix: dump --json and the exports passed ED A0 80 and friends through.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
need_cmd python3
plan 17
D=$RS_TOP/tests/cli
"$RS_BUILD/tests/cli/mkhostile" utf8 "$T/u.rtrace"
have_node=0
command -v node >/dev/null && have_node=1
have_jq=0
command -v jq >/dev/null && have_jq=1

check3() { # desc, --lines or "", files...
    local desc=$1 mode=$2
    shift 2
    ok "$desc: Python strict" python3 "$D/strict_json.py" $mode "$@"
    if [ $have_node = 1 ]; then ok "$desc: Node strict" node "$D/strict_json.js" $mode "$@"
    else skip "node not installed"; fi
    if [ $have_jq = 1 ]; then ok "$desc: jq" sh -c 'for f; do jq -e . "$f" >/dev/null || exit 1; done' sh "$@"
    else skip "jq not installed"; fi
}

# util/utf8.h against Python's decoder (errors="replace" substitutes maximal subparts, as rs_utf8_clean
# does) on 3000 random lines made of UTF-8 edge bytes
python3 - "$T/in" "$T/want" <<'PY'
import random, sys
random.seed(17)
edge = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
        0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xfe, 0xff]
with open(sys.argv[1], "wb") as fi, open(sys.argv[2], "wb") as fw:
    for _ in range(3000):
        b = bytes(random.choice(edge) for _ in range(random.randint(1, 12)))
        fi.write(b + b"\n")
        fw.write(b.decode("utf-8", errors="replace").encode("utf-8") + b"\n")
PY
"$RS_BUILD/tests/cli/mkhostile" clean <"$T/in" >"$T/got"
ok "rs_utf8_clean == Python's decode(errors='replace') on 3000 lines of edge bytes" cmp "$T/got" "$T/want"

"$RS_CLI" dump --json "$T/u.rtrace" >"$T/dump.jsonl"
is $? 0 "dump --json of the hostile file: exit 0"
check3 "dump --json" --lines "$T/dump.jsonl"
like "$(cat "$T/dump.jsonl")" 'café € 😀' "dump --json keeps well-formed multibyte text"
like "$(cat "$T/dump.jsonl")" 'lone high surrogate (�)+ end' "dump --json replaces an encoded surrogate by U+FFFD"

"$RS_CLI" export -q --format chrome -o "$T/c.json" "$T/u.rtrace"
check3 "export chrome" "" "$T/c.json"
"$RS_CLI" export -q --format kineto -o "$T/k" "$T/u.rtrace"
mapfile -t kf < <(find "$T/k" -name '*.json')
check3 "export kineto (${#kf[@]} files)" "" "${kf[@]}"

if command -v protoc >/dev/null; then
    "$RS_CLI" export -q --format perfetto -o "$T/p.pf" "$T/u.rtrace"
    E=$RS_TOP/tests/export
    protoc --decode=perfetto.protos.Trace -I "$E" "$E/perfetto_subset.proto" <"$T/p.pf" >/dev/null 2>"$T/protoc.err"
    is "$(grep -c 'invalid UTF-8' "$T/protoc.err")" 0 "export perfetto: protoc finds no invalid UTF-8 string field"
else
    skip "protoc not installed"
fi

# report --json prints host names and paths from the traces (analyzer/report_json.c's jstr, through
# util/utf8.h's rs_json_escape).
"$RS_CLI" report --json "$T/u.rtrace" >"$T/r.json" 2>/dev/null
if python3 "$D/strict_json.py" "$T/r.json" >"$T/r.err" 2>&1; then
    echo "ok $((_tap_n + 1)) - report --json: Python strict"
else
    echo "not ok $((_tap_n + 1)) - report --json: Python strict"
    diag "$(cat "$T/r.err")"
fi
_tap_n=$((_tap_n + 1))

# report --html: the same strings in HTML text (analyzer/report_html.c's esc): valid UTF-8, and no control
# characters other than tab, newline and carriage return (HTML text allows no others)
"$RS_CLI" report --html "$T/r.html" "$T/u.rtrace" >/dev/null 2>&1
ok "report --html: the page is valid UTF-8" python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' \
    "$T/r.html"
ok "report --html: no control characters in the page" python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
bad = re.findall(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", t)
sys.exit("%d control characters: %r" % (len(bad), bad[:5]) if bad else 0)' "$T/r.html"
exit 0
