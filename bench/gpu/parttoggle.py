#!/usr/bin/env python3
"""The tracer's parts switched off and on inside one traced ResNet-50 process: what each costs, paired in one run.

  RAILSCOPE_BENCH_HOOKS=1 RAILSCOPE_CUDA_KERNELS=all railscope record -q -o DIR -- \\
      python3 bench/gpu/parttoggle.py --cycles 100 --block 10 --out DIR
  (bench/gpu/overhead.sh parttoggle: full mode and the default without windows, one after the other)

Why: full mode costs ~1.5 points of a ResNet-50 step more than CUPTI's floor (a minimal injection enabling the same
activity kinds, bench/gpu/mincupti.c), and the default ~1.3 % over untraced, pooled over sessions 9-21 of lock-step
groups; every part that can be switched by the environment measured within its noise there (RESULTS.md), because
two processes of one workload differ by more than the 0.3-point parts. Here the parts take turns in one process, a
block of steps each, switched by the tracer's bench hooks (tracer/bench_hooks.c, railscope_bench_cuda in
preload/cuda/cupti.c; inert without RAILSCOPE_BENCH_HOOKS=1):
  all           everything the mode records (the reference)
  consumer-off  CUPTI's records walked and dropped: no conversion, no tick flush (the consumer's cost)
  rs-off        only the core's family: the wrappers forward, NVTX and NCCL events off, CUPTI's buffers dropped
                (CUPTI still records: the kinds stay on)
  cupti-off     as rs-off, and in full mode CUPTI's kernel and copy kinds disabled (CUPTI's own cost, the scale
                check: lock step puts it at ~14-16 % of a ResNet step)
The orders form a Williams design (each phase follows every other equally often). Per phase: mean step time (the
block's first step apart: it carries the switch), and per cycle the ratio to that cycle's `all` block, pooled as a
geometric mean with a 95 % t-interval over cycles. What cannot be switched inside a process (the library loaded,
NVTX's injection installed, the writer thread, the environment record sets) stays in every phase: `all` vs
`cupti-off` is not traced vs untraced.

The step is tests/gpu/train.py's bench step (ResNet-50 DDP, one rank, pinned inputs, channels_last, bf16 autocast,
an NVTX range per step; DDP's own AllReduce, not train.py's counting hook), synchronised at its end as under the
lock-step gate. Results are written after every cycle (parttoggle-TAG.json in --out)."""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../../tests/gpu"))
from benchstats import pooled  # noqa: E402
from cuptitoggle import williams  # noqa: E402

CORE_ONLY = 1  # 1u << RS_FAM_core: railscope_bench_keep keeps the core's family alone
# phase: (families kept: 0 = all the configuration enabled; no tick flush; no conversion; CUPTI kinds 1/0, -1 leave)
PHASES = {
    "all": (0, 0, 0, 1),
    "consumer-off": (0, 1, 1, 1),
    "rs-off": (CORE_ONLY, 1, 0, 1),
    "cupti-off": (CORE_ONLY, 1, 0, 0),
}


class Hooks:
    """The tracer's bench switches, found in the global scope (LD_PRELOAD puts librailscope.so there)."""

    def __init__(self, full):
        g = ctypes.CDLL(None)
        try:
            self.keep, self.cuda, self.window = (g.railscope_bench_keep, g.railscope_bench_cuda,
                                                 g.railscope_bench_cuda_window)
        except AttributeError:
            sys.exit("parttoggle: railscope's bench hooks not found: run under `railscope record` (a railscope with "
                     "tracer/bench_hooks.c)")
        self.keep.argtypes = [ctypes.c_uint]
        self.full = full
        if self.keep(0) < 0 or self.cuda(0, 0, -1) < 0:
            sys.exit("parttoggle: the bench hooks refused: RAILSCOPE_BENCH_HOOKS=1 must be set, and the tracer running")

    def set(self, phase):
        """Switch to `phase`; returns the ms until it applied. CUPTI's kinds change at the tracer's next tick (up to
        a tick's wait, only when they change), with every family on meanwhile: the trace's kernel-window mark is
        written only while the cuda family is on (without it a cupti-off block would read as recorded)."""
        keep, notick, noconv, kinds = PHASES[phase]
        t0 = time.monotonic_ns()
        change = self.full and self.window() != kinds
        if change:
            self.keep(0)
        if self.cuda(notick, noconv, kinds if change else -1) < 0:
            raise RuntimeError("bench hooks refused (the tracer shut down?)")
        while change and self.window() != kinds:
            if time.monotonic_ns() - t0 > 5e9:
                raise RuntimeError(f"CUPTI's kinds not switched to {kinds} within 5 s")
            time.sleep(0.005)
        if self.keep(keep) < 0:
            raise RuntimeError("bench hooks refused (the tracer shut down?)")
        return (time.monotonic_ns() - t0) / 1e6


def resnet_step(batch):
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP
    from train import Batches, init_dist
    _, _, local = init_dist()
    dev = torch.device("cuda", local)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().to(dev).to(memory_format=torch.channels_last)
    ddp = DDP(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    crit = torch.nn.CrossEntropyLoss()
    data = Batches(2, batch)  # train.py's bench inputs; its counting comm hook left out (DDP's default AllReduce)
    xs = [t.pin_memory() for t in data.x]
    ys = [t.pin_memory() for t in data.y]
    k = [0]

    def step():
        i = k[0]
        k[0] += 1
        torch.cuda.nvtx.range_push(f"step {i}")
        x = xs[i % 2].to(dev, non_blocking=True)
        y = ys[i % 2].to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = crit(ddp(x.contiguous(memory_format=torch.channels_last)), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--block", type=int, default=10, help="steps per block (the first is reported apart)")
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--phases", default="all,consumer-off,rs-off,cupti-off")
    ap.add_argument("--budget", type=float, default=0, help="stop starting cycles after this many seconds (0: none)")
    ap.add_argument("--tag", default="", help="name of the result file: parttoggle-TAG.json")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    phases = a.phases.split(",")
    bad = [p for p in phases if p not in PHASES]
    if bad or "all" not in phases or a.block < 2:
        sys.exit(f"parttoggle: phases are {','.join(PHASES)} with `all` among them, blocks of 2 steps or more")
    full = os.environ.get("RAILSCOPE_CUDA_KERNELS") in ("all", "full")
    hooks = Hooks(full)
    step = resnet_step(a.batch)
    for _ in range(a.warmup):
        step()
    t_start = time.monotonic()
    blocks, switches, errors = [], [], []
    res = dict(workload="resnet", mode="full" if full else "default", block=a.block, phases=phases, cycles=0,
               blocks=blocks, switches=switches, errors=errors)
    name = f"parttoggle-{a.tag or res['mode']}.json"

    def save():  # after every cycle: a call cut at its time limit keeps what ran
        res["cycles"] = len({b["cycle"] for b in blocks})
        with open(os.path.join(a.out, name + ".tmp"), "w") as f:
            json.dump(res, f)
        os.replace(os.path.join(a.out, name + ".tmp"), os.path.join(a.out, name))
    try:
        for c in range(a.cycles):
            if a.budget and time.monotonic() - t_start > a.budget:
                break
            for ph in [phases[j] for j in williams(len(phases))[c % len(phases)]]:
                switches.append(dict(to=ph, ms=hooks.set(ph)))
                d = []
                for _ in range(a.block):
                    s0 = time.monotonic_ns()
                    step()
                    d.append(time.monotonic_ns() - s0)
                blocks.append(dict(cycle=c, phase=ph, steps_ns=d))
            save()
        hooks.set("all")
    except RuntimeError as e:
        errors.append(str(e))
        print(f"parttoggle: {e}; the cycles before it are kept", file=sys.stderr)
    save()
    torch.distributed.destroy_process_group()
    whole = [b for b in blocks if sum(x["cycle"] == b["cycle"] for x in blocks) == len(phases)]  # summary: whole cycles
    if not whole:
        sys.exit("parttoggle: no whole cycle ran (a budget shorter than one cycle?)")

    def mean_ms(b):
        s = b["steps_ns"][1:]
        return sum(s) / len(s) / 1e6
    base = {b["cycle"]: mean_ms(b) for b in whole if b["phase"] == "all"}
    print(f"parttoggle resnet, {res['mode']} mode: {len(base)} cycles x {len(phases)} phases x {a.block} steps "
          f"({name}){'; ' + errors[0] if errors else ''}", flush=True)
    for ph in phases:
        bs = [b for b in whole if b["phase"] == ph]
        rs = [mean_ms(b) / base[b["cycle"]] for b in bs if b["cycle"] in base]
        m, lo, hi = pooled(rs)
        sw = [s["ms"] for s in switches if s["to"] == ph]
        print(f"  {ph:12s} {statistics.mean(mean_ms(b) for b in bs):8.3f} ms  vs all {m:.4f} [{lo:.4f}, {hi:.4f}]  "
              f"first step {statistics.median(b['steps_ns'][0] / 1e6 for b in bs):7.2f} ms  "
              f"switch {statistics.median(sw):6.1f} ms (max {max(sw):.0f})", flush=True)


if __name__ == "__main__":
    main()
