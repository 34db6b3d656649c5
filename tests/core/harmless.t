#!/bin/bash
# Preloading librailscope.so into ordinary programs (bash, python3, coreutils) changes nothing they
# print or return: stdout, stderr and exit status are compared with an untraced run.
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so
need_cmd python3
plan 14

same() { # desc cmd...
    local desc=$1
    shift
    (cd "$T/work" && "$@") >"$T/ref.out" 2>"$T/ref.err"
    local ref=$?
    (cd "$T/work" && RAILSCOPE_OUT=$T/traces LD_PRELOAD=$RS_PRELOAD_SHELL "$@") >"$T/got.out" 2>"$T/got.err"
    local got=$?
    if [ $ref -eq $got ] && cmp -s "$T/ref.out" "$T/got.out" && cmp -s "$T/ref.err" "$T/got.err"; then
        _tap_result 0 "$desc"
    else
        _tap_result 1 "$desc"
        diag "exit $ref vs $got"
        diff "$T/ref.out" "$T/got.out" | head -5 | sed 's/^/#   /' >&2
        diff "$T/ref.err" "$T/got.err" | head -5 | sed 's/^/#   /' >&2
    fi
}
mkdir -p "$T/work"
seq 1 2000 | sort -R --random-source=/dev/zero >"$T/work/numbers"

same "bash: loops, subshells, pipes, here-docs, exit 7" bash -c '
    for i in 1 2 3; do echo "line $i"; done | tac
    x=$( (echo sub; echo shell) | wc -l ); echo "x=$x"
    cat <<EOT
here $((6 * 7))
EOT
    f() { return 3; }; f; echo "f=$?"
    ( exit 5 ); echo "sub=$?"
    echo err >&2
    exit 7'
same "bash: killed by its own SIGTERM (status 143)" bash -c 'echo before; kill -TERM $$; echo after'
same "bash: trap on SIGTERM and SIGINT" bash -c 'trap "echo t" TERM; trap "echo i" INT; kill -TERM $$; kill -INT $$; echo end'
same "bash: background jobs and wait" bash -c 'sleep 0.1 & (echo bg; exit 4) & wait $!; echo "rc=$?"; wait'
same "bash: exec replaces the shell (same pid)" bash -c 'echo one; exec sh -c "echo two; exit 9"'
same "coreutils: sort | uniq | sha256sum" sh -c 'sort -n numbers | uniq | sha256sum'
same "coreutils: ls, wc, cat, head, tr" sh -c 'ls -la numbers | cut -c1-10; wc -l numbers; cat numbers | head -3 | tr 0-9 a-j'
same "coreutils: false / missing file (exit 1, stderr)" sh -c 'false; ls /nonexistent-railscope; echo $?'
same "python3: threads, exit status 4" python3 -c '
import threading, sys
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out)); sys.exit(4)'
same "python3: subprocess and os.fork" python3 -c '
import os, subprocess
print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())
pid = os.fork()
if pid == 0:
    print("in fork", flush=True); os._exit(3)
_, st = os.waitpid(pid, 0); print("fork exit", os.waitstatus_to_exitcode(st))'
same "python3: multiprocessing pool" python3 -c '
import multiprocessing as mp
if __name__ == "__main__":
    with mp.Pool(2) as p: print(sum(p.map(abs, range(-50, 50))))'
same "python3: signal handlers as Python sees them" python3 -c '
import signal
print(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP), signal.getsignal(signal.SIGINT))
signal.signal(signal.SIGTERM, lambda *a: print("handled")); signal.raise_signal(signal.SIGTERM)
signal.signal(signal.SIGTERM, signal.SIG_DFL); print(signal.getsignal(signal.SIGTERM))'
same "python3: uncaught exception (exit 1, traceback)" python3 -c 'raise ValueError("boom")'
n=$(ls "$T"/traces/*.rtrace 2>/dev/null | wc -l)
ok "the traced runs did write trace files ($n)" test "$n" -ge 20
