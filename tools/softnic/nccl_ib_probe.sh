#!/bin/bash
# softnic on a GPU host (needs PyTorch with NCCL): build the software test NIC there and let NCCL use it as
# its IB transport (NCCL_NET=IB: dlopen("libibverbs.so.1") + dlvsym@IBVERBS_1.1, device and port queries,
# the dma-buf probe, its async-event thread), then run an AllReduce over WORLD ranks, all on GPU 0 with a
# distinct NCCL_HOSTID each (NCCL then sees one host per rank and must use the network between them).
#   nccl_ib_probe.sh [WORLD]      (environment: BUILD=dir, extra NCCL_* variables to try)
# The test-only LD_PRELOAD shim tools/softnic/pcishim.c answers NCCL's realpath() of
# /sys/class/infiniband/softnic0/device with a real PCI function (softnic has no sysfs entry; without a PCI
# path NCCL crashed at once). NCCL_GIN_TYPE=0 (default here) works around an NCCL 2.28.9 bug: its GIN
# auto-selection calls through (ncclGin_t *)-1 when GDAKI finds no device (SIGSEGV at address 0x7 in
# ncclNetInit; fixed in 2.29.2). Status (H200, 2026-12-02): 2 ranks on one GPU, 8 channels via NET/IB/0,
# AllReduce correct, "GPU Direct RDMA Disabled for HCA 0 'softnic0'". History: docs/dev/journal/softnic.md.
set -u
WORLD=${1:-2}
B=${BUILD:-build-gpu}
make -s -j8 BUILD="$B" "$B/softnic/libibverbs.so.1" || exit 1
cc -O2 -shared -fPIC -o "$B/softnic/libsn_pcishim.so" tools/softnic/pcishim.c -ldl || exit 1
export LD_LIBRARY_PATH=$PWD/$B/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_PRELOAD=$PWD/$B/softnic/libsn_pcishim.so${LD_PRELOAD:+:$LD_PRELOAD}
export SOFTNIC_DIR=/tmp/softnic-nccl-$$ SOFTNIC_PCI_DEBUG=1
export SOFTNIC_DEBUG_SEGV=1 PYTHONFAULTHANDLER=1
export NCCL_NET=${NCCL_NET:-IB} NCCL_DEBUG=${NCCL_DEBUG:-INFO} NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,NET} NCCL_IB_DISABLE=0
export NCCL_GIN_TYPE=${NCCL_GIN_TYPE-0} NCCL_IB_MERGE_VFS=${NCCL_IB_MERGE_VFS-0}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29500 + RANDOM % 1000))
PY_FILE=$(mktemp /tmp/sn_probe.XXXXXX.py) # mp.spawn re-imports the main module: it must be a file
trap 'rm -f "$PY_FILE"' EXIT
cat >"$PY_FILE" <<'PY'
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
def run(rank, world):
    os.environ["NCCL_HOSTID"] = f"probe-host{rank}"
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", 0))
    t = torch.full((1 << 22,), float(rank + 1), device="cuda")
    for _ in range(5):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    want = float(world * (world + 1) // 2) * world ** 4
    print(f"\nrank {rank}: allreduce {'OK' if abs(t[0].item() - want) < 1e-3 * want else 'WRONG'} ({t[0].item()})", flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(run, args=(int(sys.argv[1]),), nprocs=int(sys.argv[1]))
PY
timeout -k 5 "${PROBE_TIMEOUT:-60}" python3 "$PY_FILE" "$WORLD"
