#!/usr/bin/env python3
"""CUPTI's cost with no process-to-process noise: one process attaches and detaches CUPTI between blocks of steps.

  gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o build/gpu/cuptitoggle.so bench/gpu/cuptitoggle.c -ldl
  bench/gpu/cuptitoggle.py --workload launch|transformer --cycles 12 --block 100 --out DIR

Why: on the H200 host two processes of one workload differ by 5-20 % for seconds at a time (lock-step pairs of
untraced processes gave 0.98-1.10 in session 7), so a 1 % cost cannot be told from which process ran it. Here the
phases take turns in one process, a block each:
  none     CUPTI detached (cuptiFinalize), as an untraced run
  idle     activity buffers registered, nothing enabled (the minimal injection's "none")
  idle-ts  + timestamp callback and system thread ids (what railscope's set-up adds; its default between windows)
  window   + CONCURRENT_KERNEL enabled (a sampling window, attached late)
The orders form a Williams design (each phase follows every other equally often): what a window leaves behind
slows the next block, whatever its phase.
Per phase: mean step time; per cycle the ratio to that cycle's `none` block, pooled as a geometric mean with a 95 %
t-interval over cycles. The time each switch takes (attach, late kernel enable, detach) is reported too: a design
that detaches CUPTI between windows pays it once per window. The first `none` blocks, before CUPTI was ever
attached, are kept apart (pre): whether a detached CUPTI leaves anything behind.

No railscope here: this measures CUPTI (libcupti from the process, as railscope finds it), not the tracer."""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchstats import pooled  # noqa: E402

PHASES = {"none": None, "idle": 0, "idle-ts": 1, "window": 3}


def williams(n):
    """Orders of n phases in which every phase follows every other equally often (a Williams design; for odd n
    each order and its reverse are needed, so this gives the first n rows of 2n). A block right after a kernel
    window runs slower whatever its phase (session 7: the plain rotation put `none` after `window` in 9 of 12
    cycles and biased every ratio to `none` low), so the order must balance what comes before each phase."""
    first = [0]
    lo, hi = 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    return [[(x + r) % n for x in first] for r in range(n)]


def launch_step(a):
    dev = torch.device("cuda", 0)
    x = torch.zeros(256, device=dev)
    src, dst = torch.ones(1024, device=dev), torch.empty(1024, device=dev)
    host, hdev = torch.ones(16384).pin_memory(), torch.empty(16384, device=dev)

    def step():
        for _ in range(600):
            x.add_(1.0)
        for _ in range(30):
            dst.copy_(src)
        hdev.copy_(host, non_blocking=True)
        return x[0].item()
    return step


def transformer_step(a):
    import torch.nn.functional as F
    from transformer import GPT
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = GPT(32768, 1024, 8, 16, 512).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, 32768, (8, 513), generator=g).pin_memory() for _ in range(4)]
    k = [0]

    def step():
        b = batches[k[0] % 4].to(dev, non_blocking=True)
        k[0] += 1
        x, y = b[:, :-1], b[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="launch", choices=["launch", "transformer"])
    ap.add_argument("--cycles", type=int, default=12)
    ap.add_argument("--block", type=int, default=100, help="steps per block")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--pre", type=int, default=3, help="`none` blocks before CUPTI is first attached")
    ap.add_argument("--phases", default="none,idle,idle-ts,window")
    ap.add_argument("--lib", default=os.path.join(os.environ.get("RS_BUILD", "build/gpu"), "cuptitoggle.so"))
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    phases = a.phases.split(",")
    step = (launch_step if a.workload == "launch" else transformer_step)(a)
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    tg = ctypes.CDLL(os.path.abspath(a.lib))
    tg.tg_records.restype = ctypes.c_uint64
    if tg.tg_load() != 0:
        sys.exit("cuptitoggle: libcupti.so.13 not found in the process")

    def block():
        d = []
        for _ in range(a.block):
            s0 = time.monotonic_ns()
            step()
            torch.cuda.synchronize()
            d.append(time.monotonic_ns() - s0)
        return d

    blocks, switches, errors = [], [], []
    for i in range(a.pre):
        blocks.append(dict(cycle=-1, phase="pre", steps_ns=block()))
    attached = False
    for c in range(a.cycles):
        order = [phases[j] for j in williams(len(phases))[c % len(phases)]]
        for ph in order:
            t0 = time.monotonic_ns()
            if attached:
                e = tg.tg_detach()
                if e:
                    errors.append(f"detach: CUPTI error {e}")
                attached = False
            t1 = time.monotonic_ns()
            if PHASES[ph] is not None:
                e = tg.tg_attach(PHASES[ph])
                if e:
                    errors.append(f"attach {ph}: CUPTI error {e}")
                attached = True
            torch.cuda.synchronize()
            t2 = time.monotonic_ns()
            switches.append(dict(to=ph, detach_ms=(t1 - t0) / 1e6, attach_ms=(t2 - t1) / 1e6))
            d = block()
            blocks.append(dict(cycle=c, phase=ph, steps_ns=d, first_ms=d[0] / 1e6))
    if attached:
        tg.tg_detach()
    res = dict(workload=a.workload, block=a.block, cycles=a.cycles, records=tg.tg_records(), errors=errors[:20],
               blocks=blocks, switches=switches)
    with open(os.path.join(a.out, f"cuptitoggle-{a.workload}.json"), "w") as f:
        json.dump(res, f)

    def mean_ms(b, skip=1):  # the block's first step carries the switch's after-effects: reported apart
        s = b["steps_ns"][skip:]
        return sum(s) / len(s) / 1e6
    print(f"cuptitoggle {a.workload}: {a.cycles} cycles x {len(phases)} phases x {a.block} steps; "
          f"{res['records']} records; errors {errors[:3] or 'none'}")
    pre = [mean_ms(b) for b in blocks if b["phase"] == "pre"]
    base = {b["cycle"]: mean_ms(b) for b in blocks if b["phase"] == "none"}
    if pre:
        print(f"  pre (never attached)  {statistics.mean(pre):8.3f} ms")
    for ph in phases:
        bs = [b for b in blocks if b["phase"] == ph]
        ms = [mean_ms(b) for b in bs]
        rs = [mean_ms(b) / base[b["cycle"]] for b in bs if b["cycle"] in base]
        m, lo, hi = pooled(rs)
        sw = [s for s in switches if s["to"] == ph]
        print(f"  {ph:9s} {statistics.mean(ms):8.3f} ms  vs none {m:.4f} [{lo:.4f}, {hi:.4f}]  "
              f"first step {statistics.median(b['first_ms'] for b in bs):7.2f} ms  "
              f"attach {statistics.median(s['attach_ms'] for s in sw):7.2f} ms (max {max(s['attach_ms'] for s in sw):.1f})"
              f"  detach {statistics.median(s['detach_ms'] for s in sw):7.2f} ms", flush=True)


if __name__ == "__main__":
    main()
