#!/bin/bash
# The preload and the three injection variables are harmless in processes without CUDA, CUPTI or NCCL:
# output and exit status unchanged, no crash, the exported entry points return safe errors.
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so tests/nccl/nogpu
plan 6
PRELOAD=$RS_PRELOAD_SHELL   # shells and python (lib.sh: no ASan runtime in front under ASan)
ENVS=(LD_PRELOAD="$PRELOAD" CUDA_INJECTION64_PATH="$RS_LIB" NCCL_PROFILER_PLUGIN="$RS_LIB" NVTX_INJECTION64_PATH="$RS_LIB" RAILSCOPE_OUT="$T/out")

out=$(env "${ENVS[@]}" bash -c 'echo hello; echo err >&2; exit 3' 2>"$T/err"); rc=$?
is "$out/$rc/$(cat "$T/err")" "hello/3/err" "bash: same output, stderr and exit status"
out=$(env "${ENVS[@]}" python3 -c 'import sys; print(sum(range(10))); sys.exit(4)' 2>"$T/err"); rc=$?
is "$out/$rc" "45/4" "python3 without CUDA: same output and exit status"
unlike "$(cat "$T/err")" 'railscope' "no railscope messages in a process that never touches CUDA or NCCL"
out=$(env "${ENVS[@]}" CUDA_HOME=/nonexistent timeout -k 2 20 "$RS_BUILD/tests/nccl/nogpu" 2>"$T/err"); rc=$?
like "$out/$rc" '^inject=1 nccl=3 memcpy=(999|none) nvtx=0 nccl2=3/0$' \
    "entry points without the libraries: InitializeInjection 1, ncclAllReduce ncclInternalError, cudaMemcpy cudaErrorUnknown"
is "$(grep -c 'ncclAllReduce: the real NCCL function is not found' "$T/err")" 1 "the missing NCCL is reported once"
like "$("$RS_CLI" dump "$T/out" 2>&1)" 'proc_end status=0' "traces of those processes are complete"
