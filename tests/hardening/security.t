#!/bin/bash
# Security rules of the tracer and its files:
#  - the writer refuses a pre-planted symlink or an existing file, creates 0600 (sec_writer);
#  - a traced process's file is 0600 even under umask 0, and a symlink planted at its exact name is not
#    followed (the victim file is untouched, one warning, the trace goes to the next generation name);
#  - setuid and setgid programs are left untraced, even when they dlopen() the library themselves;
#  - the preload opens no socket (strace: socket() calls of a traced run = those of an untraced one);
#  - environment paths are validated: an over-long RAILSCOPE_OUT, one naming a regular file, bad numbers
#    and names in the other variables: the application is unaffected and gets a warning, and nothing is
#    written outside the directory asked for.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
need_build tests/hardening/sec_writer tests/hardening/sec_dlopen librailscope.so
plan 16

# 1. the writer
ok "writer: symlink and existing file refused, target untouched, new file 0600 (sec_writer)" \
    "$HB/sec_writer" "$(mkdir -p "$T/w" && echo "$T/w")"

# 2. a traced process's file
out=$( (umask 000; traced "$T/m" /bin/echo hi) 2>"$T/m.err")
f=$(ls "$T"/m/*.rtrace 2>/dev/null | head -1)
is "$(stat -c %a "$f" 2>/dev/null)" 600 "trace file mode 0600 under umask 0"
h=$(hostname)
h=${h%%.*}
h=${h//[^A-Za-z0-9._-]/_}
mkdir -p "$T/s"
echo precious >"$T/victim"
out=$(sh -c 'ln -s "$1" "$2/$3-$$.rtrace"; exec env LD_PRELOAD="$4" RAILSCOPE_OUT="$2" /bin/echo hi' \
    sh "$T/victim" "$T/s" "$h" "$PRELOAD" 2>"$T/s.err")
is "$(cat "$T/victim")" precious "a symlink planted at the trace's name is not followed (victim untouched)"
is "$out" hi "... and the application is unaffected"
like "$(cat "$T/s.err")" 'railscope: .*symbolic link' "... and the tracer says it refused the link"

# 3. setuid / setgid
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
    skip "setuid tests need root, setpriv and a 'nobody' user" 4
else
    chmod 755 "$T"
    mkdir -p "$T/suid" && chmod 1777 "$T/suid"
    cp "$HB/sec_dlopen" "$T/plain" && chmod 755 "$T/plain"
    cp "$RS_LIB" "$T/lib.so" && chmod 755 "$T/lib.so"
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env RAILSCOPE_OUT="$T/suid" "$@"; }
    # control: the same program, not setuid, run as nobody, is traced (so the test can see a file)
    o=$(as_nobody "$T/plain" "$T/lib.so" 2>&1)
    n=$(ls "$T/suid" | wc -l)
    if [ "$n" -lt 1 ]; then
        skip "control run (dlopen of the tracer, not setuid) wrote no trace: $o" 3
    else
        rm -f "$T"/suid/*
        cp "$HB/sec_dlopen" "$T/suid-prog" && chown root:root "$T/suid-prog" && chmod 4755 "$T/suid-prog"
        o=$(as_nobody "$T/suid-prog" "$T/lib.so" 2>&1)
        is "$o:$(ls "$T/suid" | wc -l)" "loaded:0" "setuid program that dlopen()s the tracer: runs, left untraced"
        cp "$HB/sec_dlopen" "$T/sgid-prog" && chown root:root "$T/sgid-prog" && chmod 2755 "$T/sgid-prog"
        o=$(as_nobody "$T/sgid-prog" "$T/lib.so" 2>&1)
        is "$o:$(ls "$T/suid" | wc -l)" "loaded:0" "setgid program that dlopen()s the tracer: runs, left untraced"
        o=$(as_nobody env LD_PRELOAD="$T/lib.so" "$T/suid-prog" /nonexistent 2>&1)
        is "$(ls "$T/suid" | wc -l)" 0 "setuid program under LD_PRELOAD: left untraced"
    fi
    is "$(stat -c %a "$T/suid")" 1777 "(setuid tests ran on a directory every user can write)"
fi

# 4. sockets
if command -v strace >/dev/null; then
    strace -f -qq -e trace=socket,socketpair -o "$T/st.plain" /bin/sh -c '/bin/echo a; /bin/true' >/dev/null 2>&1
    traced "$T/so" strace -f -qq -e trace=socket,socketpair -o "$T/st.traced" /bin/sh -c '/bin/echo a; /bin/true' \
        >/dev/null 2>&1
    # strace itself runs under the preload too: count only calls of the traced children (all of them)
    a=$(grep -c 'socket' "$T/st.plain")
    b=$(grep -c 'socket' "$T/st.traced")
    is "$b" "$a" "no socket opened by the preload (strace: $b socket calls traced, $a untraced)"
    [ "$b" != "$a" ] && diag "$(grep socket "$T/st.traced" | head -5)"
else
    # fallback: scan the descriptors of a traced process
    traced "$T/so" sleep 1 &
    sleep 0.5
    n=$(ls -l /proc/$!/fd 2>/dev/null | grep -c 'socket:')
    wait
    is "$n" 0 "no socket among the traced process's descriptors (strace not installed)"
fi

# 5. environment
long=$T/long
for ((i = 0; i < 22; i++)); do long+=/$(printf 'd%.0s' {1..190}); done
o=$(traced "$long" /bin/echo hi 2>"$T/e1")
rc=$?
is "$o:$rc" "hi:0" "RAILSCOPE_OUT longer than PATH_MAX: application unaffected"
n=$(find "$T/long" -name '*.rtrace' 2>/dev/null | wc -l)
is "$n" 0 "RAILSCOPE_OUT longer than PATH_MAX: no trace written under a truncated path"
[ "$n" != 0 ] && diag "$(find "$T/long" -name '*.rtrace' | head -1 | wc -c)-byte path written"
echo x >"$T/afile"
o=$(traced "$T/afile" /bin/echo hi 2>"$T/e2")
rc=$?
is "$o:$rc:$(cat "$T/afile")" "hi:0:x" "RAILSCOPE_OUT naming a regular file: application unaffected, file untouched"
is "$(grep -c '^railscope: ' "$T/e2")" 1 "... and exactly one warning"
o=$(env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$T/bad" RAILSCOPE_FLUSH_MS=abc RAILSCOPE_BUFFER_KB=-5 RAILSCOPE_EVENTS=bogus,-x \
    RAILSCOPE_ZSTD_LEVEL=999 RAILSCOPE_POLICY=maybe RAILSCOPE_LOG=loud /bin/echo hi 2>"$T/e3")
rc=$?
is "$o:$rc" "hi:0" "bad values in every RAILSCOPE_* variable: application unaffected"
bad=$(grep -v '^railscope: ' "$T/e3")
n=$(grep -c '^railscope: ' "$T/e3")
[ -z "$bad" ] && [ "$n" -ge 6 ]
_tap_result $? "... one 'railscope:' warning per bad value ($n lines), nothing else on stderr"
exit 0
