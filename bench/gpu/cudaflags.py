"""cudaDeviceScheduleBlockingSync for the bench workloads (--blocking-sync): a thread that waits for the GPU sleeps
instead of spinning, so its instruction count is its work (bench/gpu/hostcost.py). Call before any CUDA use."""
import ctypes

CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC = 4


def blocking_sync():
    import torch  # noqa: F401  (loads the libcudart that PyTorch uses; the look-up below finds that copy)
    rt = ctypes.CDLL("libcudart.so.13")
    rc = rt.cudaSetDeviceFlags(CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC)
    if rc != 0:
        raise SystemExit(f"cudaSetDeviceFlags(BlockingSync) failed: error {rc}")
