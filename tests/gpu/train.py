#!/usr/bin/env python3
"""ResNet-50 DDP training on synthetic data, for railscope's GPU tests and overhead benchmark.

Runs under torchrun (RANK/WORLD_SIZE/LOCAL_RANK from the environment) or alone (world size 1). Each step
is an NVTX range "step N" (torch.cuda.nvtx); gradients go through DDP's NCCL AllReduce with a comm hook
that counts the buckets, so the trace can be checked against the script's own counts. Inputs come from a
DataLoader with pinned or pageable batches (--phases pinned:30,pageable:30), or, for the benchmark, from
pre-pinned host tensors copied with non_blocking=True (--phases bench:200, timed after --warmup steps).

Writes a JSON file (--out, one per rank: OUT.rank<N>.json) with what it did: steps per phase and their
CLOCK_MONOTONIC boundaries (the tracer's clock), bytes per batch, AllReduce hook calls, step times.

--profile A:B runs torch.profiler (CPU + CUDA activities, no export) from step A to step B: alone it is
the benchmark's torch.profiler mode; under railscope it is the coexistence test."""
import argparse
import ctypes
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torchvision
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--phases", default="pinned:30,pageable:30",
                   help="kind:steps,... (pinned|pageable|bench; idle:MS sleeps MS milliseconds without CUDA)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps first (bench loader)")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--profile", default="", help="A:B run torch.profiler from step A to step B")
    p.add_argument("--out", default="train.json")
    # cuDNN's autotuner times candidate algorithms on the GPU at the first steps; in a lock-step group the processes
    # warm up together, so each one's picks depend on its neighbours' kernels (bench/gpu/ablate.py's -nb modes)
    p.add_argument("--no-cudnn-benchmark", action="store_true", help="cuDNN's heuristics instead of its autotuner")
    return p.parse_args()


class Batches(torch.utils.data.Dataset):
    """A few fixed synthetic batches, returned whole (batch_size=None): the loader's pin_memory decides
    whether the host copy is pinned or pageable."""

    def __init__(self, n, batch):
        g = torch.Generator().manual_seed(0)
        self.x = [torch.randn(batch, 3, 224, 224, generator=g) for _ in range(n)]
        self.y = [torch.randint(0, 1000, (batch,), generator=g) for _ in range(n)]

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return self.x[i % len(self.x)], self.y[i % len(self.y)]


def lockstep_gate():
    """bench/gpu/lockstep.py runs two of these processes in turns (RS_LOCKSTEP): bench/gpu/lockstep_gate.py."""
    if not os.environ.get("RS_LOCKSTEP"):
        return None
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../bench/gpu"))
    from lockstep_gate import Gate
    return Gate.from_env()


def init_dist():
    alone = "RANK" not in os.environ   # alone: a one-rank group on a free port
    for attempt in range(5):
        if alone:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                              MASTER_PORT=str(s.getsockname()[1]))
            s.close()
        rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local)
        try:
            dist.init_process_group("nccl", device_id=torch.device("cuda", local))
            return rank, world, local
        except RuntimeError as e:   # torch.distributed.DistNetworkError is one
            # the free port was taken between its close and the store's bind (eight processes starting at once:
            # session 15's lock-step group lost a process to EADDRINUSE); alone, another free port is as good. The
            # failed attempt has used up torch's first process-group name ("0"): harmless for a one-rank group.
            taken = "EADDRINUSE" in str(e) or "address already in use" in str(e).lower()
            if not alone or attempt == 4 or not taken:
                raise
            print(f"train.py: {e}; trying another port", file=sys.stderr)


def nccl_scope():
    """Is NCCL in the global symbol scope? (PyTorch loads it where dlsym(RTLD_NEXT) cannot see it.)"""
    glob = ctypes.CDLL(None)
    try:
        glob.pncclAllReduce
        return "global"
    except AttributeError:
        return "local"


def main():
    a = parse()
    rank, world, local = init_dist()
    dev = torch.device("cuda", local)
    torch.backends.cudnn.benchmark = not a.no_cudnn_benchmark
    model = torchvision.models.resnet50().to(dev).to(memory_format=torch.channels_last)
    ddp = DDP(model, device_ids=[local])
    hook_calls = [0]

    def counting_hook(state, bucket):
        hook_calls[0] += 1
        return default_hooks.allreduce_hook(None, bucket)

    ddp.register_comm_hook(None, counting_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    crit = torch.nn.CrossEntropyLoss()
    prof_a, prof_b = (int(v) for v in a.profile.split(":")) if a.profile else (-1, -1)
    prof = None

    phases = []
    for spec in a.phases.split(","):
        kind, n = spec.split(":")
        phases.append((kind, int(n)))
    res = dict(rank=rank, world=world, local_rank=local, pid=os.getpid(), batch=a.batch,
               cudnn_benchmark=torch.backends.cudnn.benchmark,
               image_bytes=a.batch * 3 * 224 * 224 * 4, label_bytes=a.batch * 8, nccl_scope=nccl_scope(),
               phases=[], hook_calls_per_step=[], step_ms=[])
    data = Batches(4, a.batch)
    step = 0

    def one_step(x, y, copy, sync=False, name="step"):
        """sync: the step ends synchronised inside its NVTX range (lock step: the range then holds the step's GPU
        tail, which the report's shares need; without it the tail fell between ranges, session 11). name: the
        range's word; lock step names its warm-up steps "warmup N" (all processes warm up at once, sharing the GPU),
        so that `report --step-marker step` takes the timed steps only (bench/gpu/overhead.sh donewhen)."""
        nonlocal step, prof
        if step == prof_a:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                      torch.profiler.ProfilerActivity.CUDA])
            prof.__enter__()
            res["profile_start_ns"] = time.monotonic_ns()
        before = hook_calls[0]
        torch.cuda.nvtx.range_push(f"{name} {step}")
        if copy:
            x = x.to(dev, non_blocking=True)
            y = y.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = crit(ddp(x.contiguous(memory_format=torch.channels_last)), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sync:
            torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        res["hook_calls_per_step"].append(hook_calls[0] - before)
        step += 1
        if step == prof_b and prof is not None:
            torch.cuda.synchronize()
            res["profile_end_ns"] = time.monotonic_ns()
            prof.__exit__(None, None, None)   # no export
            prof = None

    for kind, n in phases:
        torch.cuda.synchronize()
        ph = dict(kind=kind, steps=0 if kind == "idle" else n, start_ns=time.monotonic_ns())
        if kind in ("pinned", "pageable"):
            loader = torch.utils.data.DataLoader(data, batch_size=None, pin_memory=(kind == "pinned"),
                                                 num_workers=0, sampler=range(1 << 20))
            it = iter(loader)
            for _ in range(n):
                x, y = next(it)
                one_step(x, y, True)
        elif kind == "bench":
            xs = [t.pin_memory() for t in data.x[:2]]
            ys = [t.pin_memory() for t in data.y[:2]]
            gate = lockstep_gate()
            for i in range(a.warmup):
                one_step(xs[i % 2], ys[i % 2], True, name="warmup" if gate else "step")
            torch.cuda.synchronize()
            if gate:
                gate.ready()
            ph["timed_start_ns"] = t0 = time.monotonic_ns()
            per = []
            for i in range(n):
                if gate:
                    gate.wait()
                s0 = time.monotonic_ns()
                # under a gate the step ends synchronised: nothing of ours runs while the other process steps
                one_step(xs[i % 2], ys[i % 2], True, sync=gate is not None)
                if gate:
                    per.append((s0, time.monotonic_ns() - s0))
                    gate.step_done()
            torch.cuda.synchronize()
            t1 = time.monotonic_ns()
            ph["timed_end_ns"] = t1
            res["step_ms"].append((sum(d for _, d in per) if gate else t1 - t0) / 1e6 / n)
            if per:
                res["steps_ns"] = per
                res["step_ms_median"] = sorted(d for _, d in per)[len(per) // 2] / 1e6
        elif kind == "idle":
            # n milliseconds without a CUDA call (bench/gpu/crashhunt.sh's CH_PHASES): a sampling window's detach
            # is armed and then cancelled while the program is quiet, the path session 14's review asked to stress
            time.sleep(n / 1000)
        else:
            sys.exit(f"train.py: unknown phase kind {kind}")
        torch.cuda.synchronize()
        ph["end_ns"] = time.monotonic_ns()
        ph["first_step"] = step - ph["steps"]   # the first timed step (after a bench phase's warm-up)
        res["phases"].append(ph)
    res["hook_calls"] = hook_calls[0]
    res["steps"] = step
    torch.cuda.synchronize()
    dist.destroy_process_group()   # no barrier: it would add an AllReduce the hook does not count
    out = a.out if world == 1 else a.out.replace(".json", f".rank{rank}.json")
    with open(out, "w") as f:
        json.dump(res, f)
    if prof is not None:  # after the result: its post-processing is not the workload's (no export)
        prof.__exit__(None, None, None)
    if rank == 0:
        ms = f" step_ms={res['step_ms'][0]:.3f}" if res["step_ms"] else ""
        print(f"train.py: world={world} steps={step} allreduce_hooks={hook_calls[0]} nccl={res['nccl_scope']}{ms}",
              flush=True)


if __name__ == "__main__":
    main()
