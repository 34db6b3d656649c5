#!/bin/bash
# fork(): 16 children each write their own file (some exec /bin/true after recording); the parent's file
# records a FORK per child; threads that exit early are drained and their rings reused. A child's file is created in
# the fork handler (tests/core/fd_race.t); a child that execs before recording anything has it removed again, so the
# exec'd image (same pid) writes the one file under the pid's name.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 16

out=$(RAILSCOPE_OUT=$T/f run_timeout 30 "$E" -F 16 -X 4 -t 1 -n 500)
like "$out" "children_failed=0" "16 children ran (every 4th execs /bin/true)"
n=$(ls "$T"/f/*.rtrace | wc -l)
is "$n" 17 "17 trace files: the parent and one per child"
parent=$(grep -l . "$T"/f/*.rtrace | while read -r f; do "$C" "$f" | grep -q "forks=16" && echo "$f"; done)
isnt "$parent" "" "the parent's file has 16 FORK events"
bad=0
for f in "$T"/f/*.rtrace; do
    [ "$f" = "$parent" ] && continue
    "$C" "$f" | grep -q "status=complete marks=500 gaps=0 order_errors=0 tid_mix=0 drops=0" || bad=$((bad + 1))
done
is "$bad" 0 "each child's file holds exactly its own 500 events (nothing of the parent's)"
ppid_ok=$("$RS_CLI" info "$T"/f/*.rtrace | grep -c "ppid $(basename "$parent" .rtrace | sed 's/.*-//')")
is "$ppid_ok" 16 "children's headers name the parent as ppid"

# Threads exiting early: each of 8 workers starts a short-lived thread (10 events) after its own.
out=$(RAILSCOPE_OUT=$T/e run_timeout 30 "$E" -E -t 8 -n 1000)
is "$out" "emitted=8080 dropped=0" "8 workers + 8 short-lived threads emitted"
res=$("$C" "$T"/e/*.rtrace)
like "$res" "marks=8080 gaps=0 order_errors=0 tid_mix=0 drops=0 thread_start=16 thread_end=16 " "short-lived threads: all events, THREAD_START/END for all 16"
# Many threads over time, few alive at once: rings are reused (the file shows 200 thread lifetimes).
out=$(RAILSCOPE_OUT=$T/m run_timeout 30 bash -c 'for i in 1 2 3 4 5; do :; done; exec "$0" -E -t 100 -n 10' "$E")
res=$("$C" "$T"/m/*.rtrace)
like "$res" "marks=2000 gaps=0 .*thread_start=200 thread_end=200 " "200 thread lifetimes recorded"

# fork() while 4 threads are emitting (DataLoader workers forked from a busy trainer): the parent's file
# keeps all its events; each child has exactly its own. forked_under_load DIR: sets PARENT_OK, BAD, NFILES.
forked_under_load() {
    PARENT_OK=0 BAD=0 NFILES=0
    local f r
    for f in "$1"/*.rtrace; do
        NFILES=$((NFILES + 1))
        r=$("$C" "$f")
        case $r in
        *"marks=80000 gaps=0 order_errors=0 tid_mix=0 drops=0 "*"forks=16 "*) PARENT_OK=1 ;;
        *"status=complete marks=20000 gaps=0 order_errors=0 tid_mix=0 drops=0 "*) ;;
        *) BAD=$((BAD + 1)); diag "$r" ;;
        esac
    done
}
out=$(RAILSCOPE_OUT=$T/w run_timeout 60 "$E" -W -F 16 -X 5 -t 4 -n 20000 -r 100000)
like "$out" "children_failed=0" "forking under load: children ran, none dropped"
forked_under_load "$T/w"
is "$PARENT_OK" 1 "forking under load: the parent's 80000 events and 16 FORKs are all there"
is "$BAD" 0 "forking under load: every child's file holds exactly its 20000 events"

# a shell's fork + exec of traced commands: one file per process, no empty pre-exec file beside the image's
mkdir -p "$T/sh"
LD_PRELOAD="$RS_PRELOAD_SHELL" RAILSCOPE_OUT="$T/sh" bash -c 'for i in 1 2 3; do /bin/true; done; exit 0'
is "$(ls "$T/sh" | wc -l)" 4 "bash and three /bin/true it forked and exec'd: four files"
is "$(ls "$T/sh" | grep -c '\.[0-9]*\.rtrace$')" 0 "none under a second generation name (no empty file left by the fork)"

# The same with a zstd worker thread (RAILSCOPE_ZSTD_THREADS=1): a child inherits the parent's compression
# context but not its worker, and must neither wait for that worker nor lose its own events. Not under
# ASan: gcc 12's libasan takes no allocator lock around fork() (tests/lib.sh), and the zstd worker
# allocates while the emitter's threads fork, so children hang in ASan's malloc (seen in CI).
if [ "$RS_SAN" = asan ]; then
    for _ in 1 2 3; do skip "zstd worker + fork under ASan: gcc 12 libasan has no fork lock around its allocator"; done
    exit 0
fi
# Under TSan (make soak) a child may die at its very end with "ThreadSanitizer: dup thread with used id" (exit 66):
# gcc 12's libtsan keeps the parent's threads, by pthread_t, in a fork child's registry (LLVM's runtime forgets
# them at fork: ThreadRegistry::OnFork); glibc gives the child's own zstd worker the stack, so the pthread_t, of a
# parent thread that ran at fork; ZSTD_freeCCtx's pthread_join of it (the child's final rs_writer_close, after the
# last write) finds two entries and TSan dies. Not a tracer failure (a 25-line program without railscope does the
# same; docs/dev/journal/hardening.md, session 30): counted, and nothing else may fail or be said on stderr.
dup_re='^==[0-9]+==ThreadSanitizer: dup thread with used id 0x[0-9a-f]+$'
out=$(RAILSCOPE_ZSTD_THREADS=1 RAILSCOPE_OUT=$T/z run_timeout 60 "$E" -W -F 16 -X 5 -t 4 -n 20000 -r 100000 \
    2>"$T/z.err")
if [ "$RS_SAN" = tsan ]; then
    dups=$(grep -Ec "$dup_re" "$T/z.err") other=$(grep -Evc "$dup_re" "$T/z.err")
    diag "TSan: $dups of 16 children died of gcc 12 libtsan's 'dup thread with used id' at their final pthread_join"
    is "$(echo "$out" | grep children_failed) other-stderr=$other" "children_failed=$dups other-stderr=0" \
        "zstd worker thread: 16 children forked under load ran and exited (under TSan: but for libtsan's dup-thread deaths)"
else
    cat "$T/z.err" >&2
    like "$out" "children_failed=0" "zstd worker thread: 16 children forked under load ran and exited"
fi
forked_under_load "$T/z"
is "$NFILES" 17 "zstd worker thread: 17 trace files"
is "$PARENT_OK,$BAD" "1,0" "zstd worker thread: the parent's and every child's file complete"
