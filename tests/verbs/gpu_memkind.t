#!/bin/bash
# GPU hosts only: memory kinds of MRs from CUDA (cuPointerGetAttribute through the libcuda the program
# loaded): cuMemAlloc = device (with its device ordinal), cuMemAllocHost = pinned, cuMemAllocManaged =
# managed, malloc = host; posts from each carry that kind (null provider for the verbs side).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build verbs/vt_cuda verbs/nullprov/libibverbs.so.1
out=$(on_null traced "$T/tr" "$VT/vt_cuda" 2>&1)
rc=$?
[ $rc -eq 77 ] && skip_all "no CUDA driver or GPU here ($(printf '%s' "$out" | head -1))"
plan 6
is "$rc" 0 "vt_cuda ran under the tracer"
d=$(vdump "$T/tr")
is "$(field "$d" ibv_reg_mr mem | tr '\n' ' ')" "3 2 4 1 " "MR kinds: device=3, pinned=2, managed=4, host=1"
is "$(field "$d" ibv_reg_mr cuda_device | tr '\n' ' ')" "0 -1 0 -1 " "device ordinal of device and managed MRs"
for k in 100:3 101:2 102:4; do
    is "$(nkind "$d" ibv_post_send "wr_id=0x$(printf %x ${k%:*}) .*mem=${k#*:} ")" 1 "post wr_id ${k%:*} carries mem=${k#*:}"
done
