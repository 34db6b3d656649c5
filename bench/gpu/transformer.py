#!/usr/bin/env python3
"""GPT-style training step for railscope's GPU overhead measurements (bench/gpu/ablate.py).

8 layers, d_model 1024, 16 heads, MLP 4x, vocabulary 32768, batch 8 x 512 tokens, bf16 autocast, AdamW
(PyTorch's default foreach implementation). Each step: the token batch is copied from pinned host memory
(non_blocking), forward + backward + optimizer step inside an NVTX range "step N", and the loss is read
back with .item() (a small device-to-host copy that waits for the step, as a training loop that logs its
loss does). --pageable copies the batch from pageable memory instead.

Writes one JSON file (--out): step_ms (mean of the timed steps), step_ms_median, steps_ns (start and
duration of every timed step, CLOCK_MONOTONIC = the tracer's clock: steps inside railscope's sampling windows
can be told apart), timed_start_ns/timed_end_ns, and t_result (time.time() just before exiting), so the harness can
time how long the process takes to end after its work is done.

--profile runs torch.profiler (CPU + CUDA activities, no export) over warm-up and timed steps.
Under bench/gpu/lockstep.py (RS_LOCKSTEP set) each timed step waits for its turn and ends synchronised; step_ms is
then the mean of the steps' own durations (the waits between them excluded)."""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudaflags import blocking_sync
import cpuclock
from lockstep_gate import Gate


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, ctx):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=40)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--pageable", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--blocking-sync", action="store_true", help="threads waiting for the GPU sleep (hostcost.py)")
    p.add_argument("--out", default="transformer.json")
    a = p.parse_args()
    if a.blocking_sync:
        blocking_sync()
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = GPT(a.vocab, a.d, a.layers, a.d // 64, a.ctx).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, a.vocab, (a.batch, a.ctx + 1), generator=g) for _ in range(4)]
    if not a.pageable:
        batches = [b.pin_memory() for b in batches]
    prof = None
    if a.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    losses = []

    def step(i, name="step"):
        # lock step names its warm-up steps "warmup N" (every process warms up at once, sharing the GPU): `report
        # --step-marker step` then takes the timed steps only (bench/gpu/overhead.sh donewhen's shares)
        torch.cuda.nvtx.range_push(f"{name} {i}")
        b = batches[i % len(batches)].to(dev, non_blocking=True)
        x, y = b[:, :-1], b[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        torch.cuda.nvtx.range_pop()

    gate = Gate.from_env()
    for i in range(a.warmup):
        step(i, "warmup" if gate else "step")
    torch.cuda.synchronize()
    if gate:
        gate.ready()
    c0 = cpuclock.snap()
    t0 = time.monotonic_ns()
    per = []
    for i in range(a.warmup, a.warmup + a.steps):
        if gate:
            gate.wait()
        s0 = time.monotonic_ns()
        step(i)  # ends with loss.item(): the step's GPU work is done
        if gate:
            torch.cuda.synchronize()  # nothing of ours left on the GPU when the other process runs
        per.append((s0, time.monotonic_ns() - s0))
        if gate:
            gate.step_done()
    torch.cuda.synchronize()
    t1 = time.monotonic_ns()
    cpu = cpuclock.diff(c0, cpuclock.snap())
    durs = sorted(d for _, d in per)
    res = dict(pid=os.getpid(), steps=a.steps, warmup=a.warmup, step_ms=[(sum(d for _, d in per) if gate else t1 - t0) / 1e6 / a.steps],
               step_ms_median=durs[len(durs) // 2] / 1e6, steps_ns=per,
               timed_start_ns=t0, timed_end_ns=t1, loss_first=losses[0], loss_last=losses[-1],
               finite=all(math.isfinite(v) for v in losses), tokens=a.batch * a.ctx)
    res.update(cpu)
    res["t_result"] = time.time()
    with open(a.out, "w") as f:
        json.dump(res, f)
    if prof is not None:  # after the result: its post-processing is not the workload's (no export)
        prof.__exit__(None, None, None)
    print(f"transformer.py: steps={a.steps} step_ms={res['step_ms'][0]:.3f} loss {losses[0]:.3f}->{losses[-1]:.3f}",
          flush=True)


if __name__ == "__main__":
    main()
