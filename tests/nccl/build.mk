# CI programs for the CUDA/NCCL/NVTX capture (no GPU needed): the profiler-plugin driver, fake NCCL /
# CUPTI / cudart libraries, an NVTX client and a no-GPU caller. The ones that need CUDA headers (CUPTI
# record structs, NVTX) are built only where the headers are (HAVE_CUDA); their tests skip otherwise.
PROGRAMS += tests/nccl/plugin_driver tests/nccl/nogpu tests/nccl/nccl_local tests/nccl/fakenccl/libfakeuser.so
tests/nccl/plugin_driver.srcs := tests/nccl/plugin_driver.c
tests/nccl/plugin_driver.libs := -ldl -lpthread
tests/nccl/nogpu.srcs := tests/nccl/nogpu.c
tests/nccl/nogpu.libs := -ldl
tests/nccl/nccl_local.srcs := tests/nccl/nccl_local.c
tests/nccl/nccl_local.libs := -ldl

# fakenccl/: libnccl.so.2 (strong pncclX + weak ncclX) and libfakeuser.so that needs it (RUNPATH $ORIGIN).
PROGRAMS += tests/nccl/fakenccl/libnccl.so.2
tests/nccl/fakenccl/libnccl.so.2.srcs := tests/nccl/fake_nccl.c
tests/nccl/fakenccl/libnccl.so.2.cflags := -Wno-unused-parameter
tests/nccl/fakenccl/libnccl.so.2.ldflags := -shared -Wl,-soname,libnccl.so.2
tests/nccl/fakenccl/libnccl.so.2.libs := -ldl
tests/nccl/fakenccl/libfakeuser.so.srcs := tests/nccl/fake_user.c $(B)/tests/nccl/fakenccl/libnccl.so.2
tests/nccl/fakenccl/libfakeuser.so.ldflags := -shared -Wl,-rpath,'$$ORIGIN'

ifeq ($(HAVE_CUDA),1)
PROGRAMS += tests/nccl/fakecupti/libcupti.so.13 tests/nccl/fakecupti/libcudart.so.13 tests/nccl/cupti_driver \
    tests/nccl/fakecupti/libnvidia-ml.so.1 tests/nccl/nvtx_app tests/nccl/fakecupti/libcuda.so.1 tests/nccl/bench_keep_app
tests/nccl/fakecupti/libcuda.so.1.srcs := tests/nccl/fake_cuda.c
PROGRAMS += tests/nccl/fakecupti/librtcopy.so.13
tests/nccl/fakecupti/librtcopy.so.13.srcs := tests/nccl/fake_cudart.c
tests/nccl/fakecupti/librtcopy.so.13.cflags := -isystem $(CUDA_HOME)/include
tests/nccl/fakecupti/librtcopy.so.13.ldflags := -shared -Wl,-soname,librtcopy.so.13
tests/nccl/fakecupti/libcuda.so.1.ldflags := -shared -Wl,-soname,libcuda.so.1
tests/nccl/fakecupti/libcuda.so.1.libs := -ldl
# a program linked against libcuda (its cuGetProcAddress calls reach the exported wrappers: cuda_detach.t)
PROGRAMS += tests/nccl/fakecupti/libcudauser.so
tests/nccl/fakecupti/libcudauser.so.srcs := tests/nccl/fake_cuda_user.c $(B)/tests/nccl/fakecupti/libcuda.so.1
tests/nccl/fakecupti/libcudauser.so.ldflags := -shared -Wl,-rpath,'$$ORIGIN'
# fakenov2/: a driver older than 12.0 (no cuGetProcAddress_v2) and a program that probes for it with
# dlsym(RTLD_DEFAULT) (cuda_detach.t; the rest of the fake set is linked in from fakecupti/ by the test)
PROGRAMS += tests/nccl/fakenov2/libcuda.so.1 tests/nccl/fakenov2/libcudauser.so
tests/nccl/fakenov2/libcuda.so.1.srcs := tests/nccl/fake_cuda.c
tests/nccl/fakenov2/libcuda.so.1.cflags := -DFAKE_CUDA_NO_V2
tests/nccl/fakenov2/libcuda.so.1.ldflags := -shared -Wl,-soname,libcuda.so.1
tests/nccl/fakenov2/libcuda.so.1.libs := -ldl
tests/nccl/fakenov2/libcudauser.so.srcs := tests/nccl/fake_cuda_user.c $(B)/tests/nccl/fakenov2/libcuda.so.1
tests/nccl/fakenov2/libcudauser.so.cflags := -DFAKE_CUDA_USER_PROBE
tests/nccl/fakenov2/libcudauser.so.ldflags := -shared -Wl,-soname,libcudauser.so -Wl,-rpath,'$$ORIGIN'
tests/nccl/fakenov2/libcudauser.so.libs := -ldl
# ...and the program that calls it, or a library bound to cuGetProcAddress_v2 through its PLT (libcudalink.so: a
# shared library may leave the symbol undefined; only railscope's export defines it there)
PROGRAMS += tests/nccl/fakenov2/fake_cuda_probe tests/nccl/fakenov2/libcudalink.so
tests/nccl/fakenov2/fake_cuda_probe.srcs := tests/nccl/fake_cuda_probe.c $(B)/tests/nccl/fakenov2/libcudauser.so \
    $(B)/tests/nccl/fakenov2/libcuda.so.1
tests/nccl/fakenov2/fake_cuda_probe.ldflags := -Wl,-rpath,'$$ORIGIN'
tests/nccl/fakenov2/fake_cuda_probe.libs := -ldl
tests/nccl/fakenov2/libcudalink.so.srcs := tests/nccl/fake_cuda_user.c $(B)/tests/nccl/fakenov2/libcuda.so.1
tests/nccl/fakenov2/libcudalink.so.ldflags := -shared -Wl,-rpath,'$$ORIGIN'
tests/nccl/fakecupti/libcupti.so.13.srcs := tests/nccl/fake_cupti.c
tests/nccl/fakecupti/libcupti.so.13.cflags := -isystem $(CUDA_HOME)/include
tests/nccl/fakecupti/libcupti.so.13.ldflags := -shared -Wl,-soname,libcupti.so.13
tests/nccl/fakecupti/libcupti.so.13.libs := -ldl
tests/nccl/fakecupti/libcudart.so.13.srcs := tests/nccl/fake_cudart.c
tests/nccl/fakecupti/libcudart.so.13.cflags := -isystem $(CUDA_HOME)/include
tests/nccl/fakecupti/libcudart.so.13.ldflags := -shared -Wl,-soname,libcudart.so.13
tests/nccl/fakecupti/libnvidia-ml.so.1.srcs := tests/nccl/fake_nvml.c
tests/nccl/fakecupti/libnvidia-ml.so.1.ldflags := -shared -Wl,-soname,libnvidia-ml.so.1
tests/nccl/cupti_driver.srcs := tests/nccl/cupti_driver.c
tests/nccl/cupti_driver.libs := -ldl -lpthread
tests/nccl/nvtx_app.srcs := tests/nccl/nvtx_app.c
tests/nccl/nvtx_app.cflags := -isystem $(CUDA_HOME)/include -Wno-unused-function
tests/nccl/nvtx_app.libs := -ldl -lpthread
tests/nccl/bench_keep_app.srcs := tests/nccl/bench_keep_app.c
tests/nccl/bench_keep_app.cflags := -isystem $(CUDA_HOME)/include -Wno-unused-function
tests/nccl/bench_keep_app.libs := -ldl
endif
