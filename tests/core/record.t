#!/bin/bash
# railscope record / dump / info as commands: help, usage errors, environment given to the child, exit
# status passed through (codes and signals), default directory, nested record.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
plan 24

for c in record dump info; do
    out=$("$RS_CLI" $c --help)
    is "$?:$(echo "$out" | head -1 | cut -d' ' -f1-3)" "0:usage: railscope $c" "$c --help prints usage and exits 0"
done
err=$("$RS_CLI" record 2>&1); rc=$?
is "$rc:$(echo "$err" | wc -l)" "2:1" "record without a command: exit 2, one line"
like "$err" "^railscope: record: no command" "the line says what is wrong"
err=$("$RS_CLI" dump --bogus x 2>&1); rc=$?
is "$rc:$err" "2:railscope: dump: unknown option '--bogus' (try 'railscope dump --help')" "unknown option: exit 2, one line"
err=$("$RS_CLI" info "$T/nope" 2>&1); rc=$?
is "$rc:$err" "2:railscope: info: $T/nope: No such file or directory" "missing input: exit 2, one line (names the command, like report and export)"

cd "$T" || bail "no tmp"
# Under TSan (make soak) the runtime goes first in LD_PRELOAD, as in RS_PRELOAD, and record keeps it in front of the
# library (cli/record.c set_preload): without it a traced dash loads libtsan after libc, as the library's dependency,
# and its writer thread dies in __tsan_func_entry (tests/core/fd_race.t says more). Checks 8, 10, 11, 19 and 21
# failed so before session 31.
san_pre=
[ "$RS_SAN" = tsan ] && san_pre=$RS_SAN_RT:
rec() { LD_PRELOAD="$san_pre${LD_PRELOAD:-}" "$RS_CLI" "$@"; }
out=$(LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 rec record -q -o rec -- sh -c 'echo "$LD_PRELOAD|$RAILSCOPE_OUT|$CUDA_INJECTION64_PATH|$NCCL_PROFILER_PLUGIN|$NVTX_INJECTION64_PATH"')
lib=$(readlink -f "$RS_LIB")
is "$out" "$san_pre$lib:/lib/x86_64-linux-gnu/libc.so.6|$T/rec|$lib|$lib|$lib" "child gets LD_PRELOAD prepended (old entries kept) and the injection variables"
err=$(NCCL_PROFILER_PLUGIN=/opt/insp/libnccl-profiler-inspector.so CUDA_INJECTION64_PATH=$RS_LIB \
    rec record -o recp -- sh -c 'echo "$NCCL_PROFILER_PLUGIN" >&2' 2>&1 >/dev/null)
is "$err" "railscope: record: NCCL_PROFILER_PLUGIN was /opt/insp/libnccl-profiler-inspector.so: replaced by railscope's library for this run
$lib
railscope: trace in $T/recp (1 file); see 'railscope info $T/recp'" \
    "another profiler plugin is replaced for the run, and record says so (the library itself: not a word)"
rec record -q -o rec2 -- sh -c 'exit 42'
is "$?" 42 "exit status passes through"
rec record -q -o rec3 -- sh -c 'kill -TERM $$'
is "$?" 143 "death by signal passes through"
rec record -q -o rec4 -- /nonexistent/prog 2>"$T/err"
is "$?" 127 "command not found: 127"
like "$(cat "$T/err")" "cannot run '/nonexistent/prog'" "and says so"
rec record -o rec5 -- /nonexistent/prog 2>"$T/err5"
is "$(wc -l <"$T/err5")" 1 "command not found, not quiet: the error is the only line (no 'trace in' summary)"
unset SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_MCA_ess_base_jobid
err=$(rec record -- true 2>&1)
like "$err" "^railscope: trace in $T/railscope-[0-9]{8}-[0-9]{6}[^ ]* \(1 file\)" "default directory: new, timestamped, and printed"
n=$(ls -d "$T"/railscope-* | wc -l)
is "$n" 1 "exactly one default directory created"
# one record per rank (srun, mpirun): the job step's ranks share one default directory named after it
mkdir -p jobs && cd jobs || bail "no jobs dir"
for r in 0 1 2; do SLURM_JOB_ID=77 SLURM_STEP_ID=2 rec record -q -- sleep 0.2 & done
wait
is "$(ls -d railscope-* | tr '\n' ' ')|$(ls railscope-slurm-77.2 | wc -l)" "railscope-slurm-77.2 |3" \
    "three srun tasks of job 77 step 2 started together: one directory, railscope-slurm-77.2, with their three files"
SLURM_JOB_ID=77 rec record -q -- true
PMIX_NAMESPACE='prterun-vm-123@1' rec record -q -- true
SLURM_JOB_ID='77;x' SLURM_STEP_ID=3 rec record -q -- true
ln -s /tmp railscope-slurm-77.4
SLURM_JOB_ID=77 SLURM_STEP_ID=4 rec record -q -- true
is "$(ls -d railscope-* | grep -c '^railscope-[0-9]\{8\}-[0-9]\{6\}')|$(ls -d railscope-* | grep -v '^railscope-[0-9]\{8\}' | tr '\n' ' ')" \
    "3|railscope-pmix-prterun-vm-123_1 railscope-slurm-77.2 railscope-slurm-77.4 " \
    "a batch script (no step id), an id needing quotes and a link in the way get timestamped ones; PMIx's namespace is used"
cd "$T" || bail "no tmp"
out=$(rec record -q -o ev --events verbs,-cuda -- sh -c 'echo $RAILSCOPE_EVENTS')
is "$out" "verbs,-cuda" "--events reaches the child"
like "$("$RS_CLI" info ev)" "events verbs,-cuda" "and the header records it"

# Nested: the inner record's command writes into the inner directory only.
rec record -q -o outer -- "$RS_CLI" record -q -o inner -- sh -c 'echo hi >/dev/null; exit 5'
is "$?" 5 "nested record: exit status through both"
inner_cmds=$("$RS_CLI" info inner | grep '^command:' | sort | uniq -c | awk '{print $1, $3}')
like "$inner_cmds" "1 sh" "nested record: the inner command's file is in the inner directory"
outer_cmds=$("$RS_CLI" info outer | grep '^command:')
unlike "$outer_cmds" "command: +sh " "nested record: not in the outer one"
like "$outer_cmds" "railscope record" "the outer directory has the inner launcher's own file"
