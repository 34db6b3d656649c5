#!/bin/bash
# An unknown value of a CUDA/NCCL variable gets one warning and the default, as README.md says of every variable:
# RAILSCOPE_CUDA_API=bogus turned the runtime-API records on (~30 % of a step) and RAILSCOPE_NCCL_LOG=bogus was
# taken for auto, both without a word. A traced program with the tracer off (RAILSCOPE_DISABLE) says nothing.
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so
plan 9
cd "$T" || bail "no tmp"

# warns VALUE [VAR=VALUE...]: the tracer's stderr for /bin/true with RAILSCOPE_NCCL_LOG=VALUE
warns() {
    local v=$1
    shift
    env "$@" RAILSCOPE_NCCL_LOG="$v" RAILSCOPE_OUT="$T/n" LD_PRELOAD="$RS_PRELOAD" /bin/true 2>&1
}
is "$(warns bogus)" "railscope: RAILSCOPE_NCCL_LOG='bogus' unknown (auto|off); using auto" \
    "RAILSCOPE_NCCL_LOG=bogus: one warning, auto"
is "$(warns auto)$(warns off)$(warns OFF)" "" "RAILSCOPE_NCCL_LOG=auto, off, OFF: no warning"
is "$(warns bogus RAILSCOPE_DISABLE=1)$(warns bogus RAILSCOPE_EVENTS=all,-nccl)" "" \
    "... none with the tracer off or without the nccl family"

D=$RS_BUILD/tests/nccl/cupti_driver F=$RS_BUILD/tests/nccl/fakecupti
if [ ! -x "$D" ]; then
    skip "built without CUDA headers: tests/nccl/cupti_driver not built" 6
    exit 0
fi
# cupti ENV...: what the injection enabled (the driver's lines) and the tracer's warnings, against the fake CUPTI
cupti() {
    env "$@" RAILSCOPE_CUDA_KERNELS=all RAILSCOPE_OUT="$T/c" LD_PRELOAD="$RS_PRELOAD" "$D" "$F" basic 2>&1 |
        grep -E '^(enabled|runtime_api) |RAILSCOPE_CUDA'
}
out=$(cupti RAILSCOPE_CUDA_API=bogus RAILSCOPE_CUDA_SYNC=yes)
like "$out" "railscope: RAILSCOPE_CUDA_API='bogus' unknown \(on\|off\); using off" "RAILSCOPE_CUDA_API=bogus: a warning"
like "$out" "railscope: RAILSCOPE_CUDA_SYNC='yes' unknown \(on\|off\); using off" "RAILSCOPE_CUDA_SYNC=yes: a warning"
like "$out" "runtime_api memcpy=0 memcpyasync=0 getdevice=0 launch=0" "... and the default: no runtime-API records"
like "$out" "enabled .* sync=0 " "... no synchronisation records"
out=$(cupti RAILSCOPE_CUDA_API=1 RAILSCOPE_CUDA_SYNC=on)
like "$out" "runtime_api memcpy=1 memcpyasync=1 " "RAILSCOPE_CUDA_API=1: runtime-API records on"
like "$out" "enabled .* sync=1 " "RAILSCOPE_CUDA_SYNC=on: synchronisation records on"
