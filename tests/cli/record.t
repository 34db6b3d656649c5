#!/bin/bash
# railscope record's own command line and end-of-run summary (review of session 29, items 1-4 and 9):
#  1. an empty -o ("-o $OUTDIR" with the variable unset) is a usage error, not a trace in ./railscope-out
#     announced as "trace in  (0 files)".
#  2. options take their value as `--opt VALUE` or `--opt=VALUE`, as report, export and doctor do (before:
#     "unknown option '--flush-ms=100'", exit 2); a flag given a value (record --quiet=1, dump --abs=1) is
#     refused by name, and the command's own flags stay its own.
#  3. the closing line counts this run's files, not the directory's (before: a second run into a shared -o said
#     "2 files" after writing 1): the others, older or written meanwhile by another run, are said apart.
#  4. a run that wrote no trace says why when record can tell (before: "(0 files); see 'railscope info DIR'",
#     and info then found nothing): RAILSCOPE_DISABLE set, a static executable, a set-user-ID one.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
plan 19
cd "$T" || bail "no tmp"

# --- 1. An empty output directory.
err=$("$RS_CLI" record -o "" -- sh -c 'echo ran >"$0/ran"' "$T" 2>&1)
is "$?:$err" "2:railscope: record: -o/--out needs a directory, not an empty string" "record -o '': exit 2, one line"
ok "... the command did not run, nothing in ./railscope-out" test ! -e "$T/ran" -a ! -e "$T/railscope-out"
err=$("$RS_CLI" record --out "" -- true 2>&1)
is "$?" 2 "record --out '': exit 2 too"

# --- 2. --opt=VALUE.
"$RS_CLI" record --out="$T/eq" --flush-ms=100 --events=all,-nvml --buffer-kb=256 --policy=block -- sh -c \
    'echo "$RAILSCOPE_OUT|$RAILSCOPE_FLUSH_MS|$RAILSCOPE_EVENTS|$RAILSCOPE_BUFFER_KB|$RAILSCOPE_POLICY"' \
    >"$T/eq.out" 2>"$T/eq.err"
is "$?:$(cat "$T/eq.out")" "0:$T/eq|100|all,-nvml|256|block" "record --out=DIR --flush-ms=N ...: every value reaches the command"
like "$(cat "$T/eq.err")" "^railscope: trace in $T/eq " "... and the trace is in --out=DIR"
err=$("$RS_CLI" record --flush-ms=5 -- true 2>&1)
is "$?:$err" "2:railscope: record: --flush-ms must be a number in 10..60000, not '5'" "record --flush-ms=5: checked like --flush-ms 5"
err=$("$RS_CLI" record --quiet=1 -- true 2>&1)
is "$?:$err" "2:railscope: record: option '--quiet' takes no value" "record --quiet=1: exit 2, says the flag takes no value"
err=$("$RS_CLI" record --flush-ms 2>&1)
is "$?:$err" "2:railscope: record: --flush-ms needs a value" "record --flush-ms (last): needs a value"
out=$("$RS_CLI" record -q -o"$T/eq2" sh -c 'echo "$0 $1"' --out=x -q 2>&1)
is "$out" "--out=x -q" "record: options after the command's name are the command's"
err=$("$RS_CLI" dump --abs=1 "$T/eq" 2>&1)
is "$?:$err" "2:railscope: dump: option '--abs' takes no value" "dump --abs=1: exit 2, says the flag takes no value (as report --json=1)"

# --- 3. Which files the closing line counts.
"$RS_CLI" record -o "$T/sh" -- true 2>"$T/c1"
like "$(cat "$T/c1")" "^railscope: trace in $T/sh \(1 file\); see 'railscope info $T/sh'\$" "a new directory: '(1 file)'"
"$RS_CLI" record -o "$T/sh" -- sh -c 'sh -c "exit 0" & wait' 2>"$T/c2"
like "$(cat "$T/c2")" "^railscope: trace in $T/sh \(2 files from this run, 3 in the directory\);" \
    "the same directory again, two processes: '2 files from this run, 3 in the directory'"
# Another traced process, no descendant of the command, writes into the directory during the run.
mkfifo "$T/go"
"$RS_CLI" record -o "$T/sh" -- sh -c 'read x <"$0/go"' "$T" 2>"$T/c3" & # sh alone: read is a builtin
rec=$!
for _ in $(seq 500); do [ "$(ls "$T"/sh/*.rtrace | wc -l)" -ge 4 ] && break; sleep 0.02; done
RAILSCOPE_OUT=$T/sh LD_PRELOAD=$RS_PRELOAD /bin/true
echo >"$T/go"
wait $rec
like "$(cat "$T/c3")" "\(1 file from this run, 5 in the directory\)" "a file another run wrote meanwhile: not this run's"
is "$(ls "$T"/sh/*.rtrace | wc -l)" 5 "... (5 files there indeed)"

# --- 4. No trace written: why, in one line.
err=$(RAILSCOPE_DISABLE=1 "$RS_CLI" record -o "$T/z1" -- /bin/true 2>&1)
is "$?:$err" "0:railscope: record: no trace written to $T/z1: RAILSCOPE_DISABLE=1 is set in the environment, so the library stays inert" \
    "RAILSCOPE_DISABLE=1: says so, exit status still the command's"
if printf 'int main(void){return 3;}' | cc -static -x c - -o "$T/static" 2>/dev/null; then
    err=$("$RS_CLI" record -o "$T/z2" -- "$T/static" 2>&1)
    is "$?:$err" "3:railscope: record: no trace written to $T/z2: $T/static is statically linked: no dynamic loader, so LD_PRELOAD cannot load the tracer" \
        "a static executable: says so in one line"
else
    skip "cc -static does not link here (no libc.a)" 1
fi
cp /bin/true "$T/suid"
if [ "$(id -u)" = 0 ] && chown nobody "$T/suid" 2>/dev/null && chmod 4755 "$T/suid"; then # chown clears the bit
    err=$("$RS_CLI" record -o "$T/z3" -- "$T/suid" 2>&1)
    is "$err" "railscope: record: no trace written to $T/z3: $T/suid is set-user-ID: the dynamic loader ignores LD_PRELOAD for it" \
        "a set-user-ID executable of another user: says so"
else
    skip "needs root to make a set-user-ID executable of another user" 1
fi
err=$(cd "$T" && PATH=$T:$PATH RAILSCOPE_DISABLE=0 "$RS_CLI" record -o "$T/z4" -- true 2>&1)
like "$err" "^railscope: trace in $T/z4 \(1 file\)" "RAILSCOPE_DISABLE=0 and a dynamic command found through PATH: traced, the usual line"
# a host name with a domain: the files are named after its first label (tracer/procinfo.c), and they are this run's
# (session 29: "no trace written ... no process of the command wrote one" on node7.cluster.example)
if [ "$(id -u)" = 0 ] && unshare -u true 2>/dev/null; then
    err=$(unshare -u sh -c 'hostname node7.cluster.example && exec "$0" record -o "$1" -- sh -c "echo hi >/dev/null"' \
        "$RS_CLI" "$T/fq" 2>&1)
    is "$err" "railscope: trace in $T/fq (1 file); see 'railscope info $T/fq'" \
        "a host name with a domain (node7.cluster.example): the run's files are counted"
else
    skip "needs root and unshare -u to set a host name" 1
fi
