#!/usr/bin/env python3
"""GPU work through short kernel windows for a few seconds (bench/gpu/opentrace.c's subject): the caller sets
RAILSCOPE_CUDA_KERNEL_WINDOW and RAILSCOPE_FLUSH_MS so that CUPTI is detached and re-attached several times.
Usage: attach_probe.py SECONDS"""
import sys
import time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
x = torch.randn(512, 512, device="cuda")
t0 = time.time()
n = 0
while time.time() - t0 < secs:
    x = (x @ x).tanh()
    torch.cuda.synchronize()
    n += 1
print(f"steps {n}")
