# CI programs for the CUDA/NCCL/NVTX capture (no GPU needed): the profiler-plugin driver, fake NCCL /
# CUPTI / cudart libraries, an NVTX client and a no-GPU caller. The ones that need CUDA headers (CUPTI
# record structs, NVTX) are built only where the headers are (HAVE_CUDA); their tests skip otherwise.
NCCL_T := $(B)/tests/nccl

$(NCCL_T)/plugin_driver: tests/nccl/plugin_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl -lpthread

$(NCCL_T)/nogpu: tests/nccl/nogpu.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

$(NCCL_T)/nccl_local: tests/nccl/nccl_local.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

# fakenccl/: libnccl.so.2 (strong pncclX + weak ncclX) and libfakeuser.so that needs it (RUNPATH $ORIGIN).
$(NCCL_T)/fakenccl/libnccl.so.2: tests/nccl/fake_nccl.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wno-unused-parameter -shared -Wl,-soname,libnccl.so.2 -o $@ $< $(LDFLAGS_ALL) -ldl

$(NCCL_T)/fakenccl/libfakeuser.so: tests/nccl/fake_user.c $(NCCL_T)/fakenccl/libnccl.so.2
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $< $(NCCL_T)/fakenccl/libnccl.so.2 -Wl,-rpath,'$$ORIGIN' $(LDFLAGS_ALL)

TEST_BINS += $(NCCL_T)/plugin_driver $(NCCL_T)/nogpu $(NCCL_T)/nccl_local $(NCCL_T)/fakenccl/libfakeuser.so

ifeq ($(HAVE_CUDA),1)
$(NCCL_T)/fakecupti/libcupti.so.13: tests/nccl/fake_cupti.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -isystem $(CUDA_HOME)/include -shared -Wl,-soname,libcupti.so.13 -o $@ $< $(LDFLAGS_ALL)

$(NCCL_T)/fakecupti/libcudart.so.13: tests/nccl/fake_cudart.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -isystem $(CUDA_HOME)/include -shared -Wl,-soname,libcudart.so.13 -o $@ $< $(LDFLAGS_ALL)

$(NCCL_T)/fakecupti/libnvidia-ml.so.1: tests/nccl/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $< $(LDFLAGS_ALL)

$(NCCL_T)/cupti_driver: tests/nccl/cupti_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

$(NCCL_T)/nvtx_app: tests/nccl/nvtx_app.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -isystem $(CUDA_HOME)/include -Wno-unused-function -o $@ $< $(LDFLAGS_ALL) -ldl

TEST_BINS += $(NCCL_T)/fakecupti/libcupti.so.13 $(NCCL_T)/fakecupti/libcudart.so.13 $(NCCL_T)/cupti_driver \
    $(NCCL_T)/fakecupti/libnvidia-ml.so.1 \
    $(NCCL_T)/nvtx_app
endif
