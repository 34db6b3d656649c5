#!/bin/bash
# softnic on a GPU host (manual; needs PyTorch with NCCL): build the software test NIC there and let
# NCCL load it as its IB transport (NCCL_NET=IB: dlopen("libibverbs.so") + dlvsym@IBVERBS_1.1, device
# and port queries, the dma-buf probe, its async-event thread), then run an AllReduce over WORLD ranks
# (one GPU per rank; NCCL refuses two ranks on one GPU).  Usage: nccl_ib_probe.sh [WORLD]
# Status (H200 host, NCCL 2.28.9, 2026-11-29): NCCL loads softnic and logs "NET/IB : Using
# [0]softnic0:1/IB", then segfaults inside libnccl right after "Initialized NET plugin IB" (not in
# softnic: SOFTNIC_DEBUG_SEGV=1 shows the faulting PC in libnccl); its log says pciPath=(null), as
# softnic0 has no /sys/class/infiniband/softnic0/device.  SN_TOPO=1 (a topology file naming the NIC)
# does not avoid it.  NCCL_NET=Socket runs the same script fine.
set -u
WORLD=${1:-1}
B=${BUILD:-build-gpu}
make -s -j8 BUILD="$B" "$B/softnic/libibverbs.so.1" || exit 1
export LD_LIBRARY_PATH=$PWD/$B/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SOFTNIC_DIR=/tmp/softnic-nccl-$$
export SOFTNIC_DEBUG_SEGV=1 PYTHONFAULTHANDLER=1
export NCCL_NET=${NCCL_NET:-IB} NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,NET} NCCL_IB_DISABLE=0
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1   # with >= 2 ranks, force traffic through the NIC
# softnic0 has no /sys/class/infiniband entry, so NCCL cannot place it by PCI path; SN_TOPO=1 gives NCCL
# a topology file that hangs the NIC off the CPU next to the GPUs (NCCL completes the rest itself)
if [ "${SN_TOPO:-0}" = 1 ]; then
    topo=/tmp/softnic-topo-$$.xml
    {
        echo '<system version="1">'
        printf '  <cpu numaid="0" affinity="%x" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">\n' \
            $(( (1 << $(nproc)) - 1 ))
        nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -n "$WORLD" | while read -r bus; do
            bus=$(echo "${bus#0000}" | tr 'A-F' 'a-f')
            echo "    <pci busid=\"$bus\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>"
        done
        echo '    <nic><net name="softnic0" dev="0" speed="100000" port="1" latency="0" guid="0x736f66746e696301" maxconn="131072" gdr="0"/></nic>'
        echo '  </cpu>'
        echo '</system>'
    } >"$topo"
    export NCCL_TOPO_FILE=$topo
    cat "$topo"
fi
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29500 + RANDOM % 1000))
python3 - "$WORLD" <<'PY'
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
def run(rank, world):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    t = torch.full((1 << 22,), float(rank + 1), device="cuda")
    for _ in range(5):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    want = float(world * (world + 1) // 2) ** 5 if world > 1 else 1.0
    print(f"rank {rank}: allreduce {'OK' if abs(t[0].item() - want) < 1e-3 * want else 'WRONG'} ({t[0].item()})", flush=True)
    dist.destroy_process_group()
world = int(sys.argv[1])
if world == 1:
    run(0, 1)
else:
    mp.spawn(run, args=(world,), nprocs=world)
PY
