#!/bin/bash
# The output directory (issue 17 D5, D6): a RAILSCOPE_OUT too long for a path is refused with one warning
# (a relative one of > 4 KiB overflowed a global buffer in every traced process); a symbolic link that
# someone else planted on the way (the directory itself, or a component above it, in a shared sticky
# directory) is not followed, by the library or by `railscope record -o`; links of root or of the user
# are followed as before.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check railscope
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 14
cd "$T" || bail "no tmp"

# D5: relative and absolute paths longer than PATH_MAX - 1
mkdir "$T/d5" && cd "$T/d5" || bail "no dir"
long=$(printf 'a%.0s' $(seq 5000))
out=$(RAILSCOPE_OUT=$long run_timeout 30 "$E" -n 10 2>"$T/err5")
is "$?:$(echo "$out" | cut -d' ' -f1)" "0:emitted=0" "relative RAILSCOPE_OUT of 5000 bytes: the program runs, untraced"
is "$(grep -c '^railscope: ' "$T/err5")" 1 "one warning"
like "$(cat "$T/err5")" "RAILSCOPE_OUT is longer than 4095 bytes; this process is not traced" "it says why"
out=$(RAILSCOPE_OUT=/$long run_timeout 30 "$E" -n 10 2>"$T/err5b")
like "$(cat "$T/err5b")" "RAILSCOPE_OUT is longer than 4095 bytes" "absolute: the same (never cut to another path)"
is "$(ls -A "$T/d5" | wc -l)" 0 "nothing was created"
cd "$T" || bail "no tmp"

# D6: a link planted in a sticky world-writable directory by another user (nobody)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -m 1777 "$T/pub" "$T/victim" && chown nobody "$T/pub"
    ln -s "$T/victim" "$T/pub/out" && chown -h nobody "$T/pub/out"
    out=$(RAILSCOPE_OUT=$T/pub/out run_timeout 30 "$E" -n 10 2>"$T/err6")
    is "$?:$out" "0:emitted=0 dropped=10" "planted link as the directory: the program runs normally, untraced"
    is "$(ls -A "$T/victim" | wc -l)" 0 "nothing written through the link"
    is "$(grep -c '^railscope: ' "$T/err6")" 1 "one warning"
    like "$(cat "$T/err6")" "refusing to follow the symbolic link $T/pub/out \(owned by uid [0-9]+" "it names the link"
    RAILSCOPE_OUT=$T/pub/out/sub run_timeout 30 "$E" -n 10 >/dev/null 2>"$T/err6b"
    ok "a component above the directory: refused too, nothing created" test ! -e "$T/victim/sub" -a \
        "$(grep -c 'refusing to follow' "$T/err6b")" = 1
    "$RS_CLI" record -o "$T/pub/out/r" -- /bin/true 2>"$T/err6c"
    is "$?" 2 "record -o through the planted link: exit 2"
    like "$(cat "$T/err6c")" "^railscope: record: refusing to follow the symbolic link $T/pub/out " \
        "record: one line naming the link"
    ok "record: nothing created behind the link" test ! -e "$T/victim/r"
else
    for i in 1 2 3 4 5 6 7 8; do skip "needs root and a 'nobody' user to plant another user's link"; done
fi

# A link of our own is followed as before
mkdir "$T/real" && ln -s "$T/real" "$T/mine"
RAILSCOPE_OUT=$T/mine/x run_timeout 30 "$E" -n 10 >/dev/null 2>"$T/err7"
like "$("$C" "$T"/real/x/*.rtrace)" "marks=10 " "our own link: followed, the trace is behind it"
