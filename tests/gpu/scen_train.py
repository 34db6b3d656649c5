#!/usr/bin/env python3
"""One multi-rank NCCL scenario on ONE GPU, with its truth planted and recorded by the script itself.

Every rank runs on cuda:0 with its own NCCL_HOSTID (NCCL then sees one host per rank and sends everything
through its network transport: NET/Socket, or NET/IB with NCCL_NET=IB). A small MLP under DDP (NCCL
AllReduce of the gradients), a host->device batch copy each step (pinned or pageable, per rank), an NVTX
range around each step whose name takes one of several forms, and optionally a planted straggler:

  --cpu-straggler R:MS[,R:MS...]  rank R sleeps MS ms on the host before each step's forward pass (several
                            ranks, each its own sleep: '1:20,3:8')
  --gpu-straggler R:N       rank R runs N extra 4096^3 bf16 matmuls on the GPU before the forward pass
  --pageable R,R..|all      these ranks copy their batch from pageable memory (others: pinned)
  --warmup N                N untimed iterations before the steps (no NVTX range, no planted delay, no truth):
                            DDP's bucket rebuild and NCCL's connection setup happen there, outside every step, so
                            the steps' waits are the planted ones only (default 0: the first step does them)
  --nvtx FORM               'iteration {i}', 'iter{i}', 'Step {i}', 'step {i}', 'train_step' (no counter),
                            'profstep' (PyTorch's 'ProfilerStep#{i}' through record_function under
                            torch.autograd.profiler.emit_nvtx(): every op is an NVTX range too)

Launchers (--launch): 'torchrun' or 'env' (RANK/WORLD_SIZE/MASTER_* from the environment, one process
per rank started by the caller), or 'spawn' (this script starts --nproc ranks with torch.multiprocessing).

Each rank writes OUT/truth.rank<R>.json: what it did, measured (per-step CLOCK_MONOTONIC boundaries, the
sleep actually slept, the extra GPU time from CUDA events, bytes copied, and the time DDP handed each
gradient bucket to NCCL: a DDP comm hook stamps it, so the truth holds when each rank arrived at each
AllReduce, on the clock the tracer uses). tests/gpu/scen_truth.py merges
them into OUT/truth.json."""
import argparse
import json
import os
import socket
import time


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--name", required=True)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--nvtx", default="iteration {i}")
    p.add_argument("--cpu-straggler", default="")
    p.add_argument("--gpu-straggler", default="")
    p.add_argument("--pageable", default="")
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--batch", type=int, default=8192, help="rows of the per-step input (hidden fp32 each)")
    p.add_argument("--launch", default="torchrun", choices=["torchrun", "env", "spawn"])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--out", required=True)
    return p.parse_args(argv)


def rankset(spec, world):
    if not spec:
        return set()
    if spec == "all":
        return set(range(world))
    return {int(x) for x in spec.split(",")}


def cpu_stragglers(spec):
    """'R:MS[,R:MS...]' -> {R: MS}; '' -> {}. A rank listed twice is an error."""
    out = {}
    for part in filter(None, (x.strip() for x in spec.split(","))):
        r, ms = (int(v) for v in part.split(":"))
        if r in out:
            raise ValueError(f"--cpu-straggler: rank {r} listed twice ({spec!r})")
        out[r] = ms
    return out


def run(rank, world, a):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    os.environ["NCCL_HOSTID"] = f"rsgpu-host{rank}"   # one "host" per rank: NCCL uses its NET transport
    for k in ("NCCL_NVLS_ENABLE", ):
        os.environ.setdefault(k, "0")
    torch.cuda.set_device(0)
    dev = torch.device("cuda", 0)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    torch.manual_seed(rank)
    layers = []
    for _ in range(a.layers):
        layers += [torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(dev)
    ddp = DDP(model, device_ids=[0], bucket_cap_mb=8)
    hooks = []   # per step: CLOCK_MONOTONIC ns at which DDP handed each gradient bucket to NCCL (this rank)
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    def timing_hook(state, bucket):
        if hooks:
            hooks[-1].append(time.monotonic_ns())
        return default_hooks.allreduce_hook(None, bucket)

    ddp.register_comm_hook(None, timing_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    pageable = rank in rankset(a.pageable, world)
    x_host = torch.randn(a.batch, a.hidden)
    if not pageable:
        x_host = x_host.pin_memory()
    planted = cpu_stragglers(a.cpu_straggler)
    cpu_me, cpu_ms = rank in planted, planted.get(rank, 0)   # whether this rank sleeps, and how long
    gpu_r, gpu_n = (int(v) for v in a.gpu_straggler.split(":")) if a.gpu_straggler else (-1, 0)
    big = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) if rank == gpu_r else None
    prof_ctx = None
    if a.nvtx == "profstep":
        prof_ctx = torch.autograd.profiler.emit_nvtx()
        prof_ctx.__enter__()

    def name(i):
        if a.nvtx == "profstep":
            return f"ProfilerStep#{i}"
        return a.nvtx.format(i=i)

    for _ in range(a.warmup):   # untimed: no NVTX range, no planted delay, no hook times (hooks is empty)
        loss = ddp(x_host.to(dev, non_blocking=True)).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
    steps, sleeps, extra_ms = [], [], []
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    t_run0 = time.monotonic_ns()
    for i in range(a.steps):
        t0 = time.monotonic_ns()
        hooks.append([])
        rf = None
        if a.nvtx == "profstep":
            rf = torch.profiler.record_function(name(i))
            rf.__enter__()
        else:
            torch.cuda.nvtx.range_push(name(i))
        if cpu_me:
            s0 = time.monotonic_ns()
            time.sleep(cpu_ms / 1000.0)
            sleeps.append((time.monotonic_ns() - s0) / 1e6)
        if rank == gpu_r:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(gpu_n):
                big = (big @ big) * (1.0 / 4096)
            e1.record()
        x = x_host.to(dev, non_blocking=True)
        loss = ddp(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if rank == gpu_r:
            extra_ms.append(e0.elapsed_time(e1))
        if rf is not None:
            rf.__exit__(None, None, None)
        else:
            torch.cuda.nvtx.range_pop()
        steps.append((i, t0, time.monotonic_ns()))
    t_run1 = time.monotonic_ns()
    if prof_ctx is not None:
        prof_ctx.__exit__(None, None, None)
    nparams = sum(p.numel() for p in model.parameters())
    dist.destroy_process_group()
    res = dict(rank=rank, world=world, pid=os.getpid(), host=socket.gethostname(),
               nccl_hostid=os.environ["NCCL_HOSTID"], steps=a.steps, step_names=[name(i) for i in range(3)],
               warmup=a.warmup, cpu_planted_ms=cpu_ms if cpu_me else None,
               step_bounds_ns=steps, run_ns=[t_run0, t_run1], pageable=pageable,
               h2d_bytes_per_step=x_host.numel() * 4, grad_bytes=nparams * 4,
               cpu_sleep_ms=sleeps, gpu_extra_ms=extra_ms, bucket_hook_ns=hooks,
               step_ms_mean=(t_run1 - t_run0) / 1e6 / a.steps)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"truth.rank{rank}.json"), "w") as f:
        json.dump(res, f)
    if rank == 0:
        print(f"scen_train {a.name}: world={world} steps={a.steps} step_ms={res['step_ms_mean']:.2f}", flush=True)


def spawn_main(rank, world, a):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK="0")
    run(rank, world, a)


def main():
    a = parse()
    if a.launch == "spawn":
        import torch.multiprocessing as mp
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
        s.close()
        mp.spawn(spawn_main, args=(a.nproc, a), nprocs=a.nproc)
    else:
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)


if __name__ == "__main__":
    main()
