# Verbs capture tests: the null provider (a stand-in libibverbs.so.1 for unit tests and the benchmark),
# test programs written against the plain rdma-core API (linked against the system libibverbs, run on the
# null provider or the softnic through LD_LIBRARY_PATH), and a trace printer built on the reader library.
VT := $(B)/verbs
NULLPROV_LIB := $(VT)/nullprov/libibverbs.so.1

$(NULLPROV_LIB): tests/verbs/nullprov.c tests/verbs/nullprov.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -shared -o $@ $< -Wl,-soname,libibverbs.so.1 \
	    -Wl,--version-script=tests/verbs/nullprov.map $(LDFLAGS_ALL)
	ln -sf libibverbs.so.1 $(VT)/nullprov/libibverbs.so

# its stand-in libmlx5.so.1 (mlx5dv_open_device, mlx5dv_reg_dmabuf_mr)
NULLMLX5_LIB := $(VT)/nullprov/libmlx5.so.1
$(NULLMLX5_LIB): tests/verbs/nullmlx5.c tests/verbs/nullmlx5.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -shared -o $@ $< -Wl,-soname,libmlx5.so.1 \
	    -Wl,--version-script=tests/verbs/nullmlx5.map $(LDFLAGS_ALL) -ldl

# programs linked against libibverbs
VT_VERBS_BINS := $(VT)/vt_basic $(VT)/vt_ex $(VT)/vt_cuda $(VT)/vt_mt $(VT)/vt_min $(VT)/vt_mlx5 $(VT)/vt_rq $(VT)/vt_adopt $(VT)/vt_manycq
$(VT)/vt_dlsym: tests/verbs/vt_dlsym.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl
$(VT)/vt_%: tests/verbs/vt_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -ldl -lpthread

# loaders that reach libibverbs only at run time: NCCL-style dlopen+dlvsym, and an RTLD_LOCAL library
$(VT)/vt_nccl: tests/verbs/vt_nccl.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl
$(VT)/libvtlocal.so: tests/verbs/vt_locallib.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $< $(LDFLAGS_ALL) -libverbs
$(VT)/vt_local: tests/verbs/vt_local.c $(VT)/libvtlocal.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/verbs/vt_local.c $(LDFLAGS_ALL) -ldl

# ABI check of preload/verbs_abi.h against the installed <infiniband/verbs.h>
$(VT)/abi_check: tests/verbs/abi_check.c preload/verbs_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

# unit test of the interposers' pointer-keyed table (preload/ptrmap.c alone)
$(VT)/vt_ptrmap: tests/verbs/vt_ptrmap.c preload/ptrmap.c preload/ptrmap.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/verbs/vt_ptrmap.c preload/ptrmap.c $(LDFLAGS_ALL) -lpthread

# trace printer (reader library only)
$(VT)/vt_dump: tests/verbs/vt_dump.c formats/reader.c formats/rtrace_tables.c formats/reader.h formats/rtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/verbs/vt_dump.c formats/reader.c formats/rtrace_tables.c $(LDFLAGS_ALL) -lzstd

VT_BINS := $(VT_VERBS_BINS) $(VT)/vt_dlsym $(VT)/vt_nccl $(VT)/vt_local $(VT)/abi_check $(VT)/vt_dump $(VT)/vt_ptrmap
EXTRA_TARGETS += $(NULLPROV_LIB) $(NULLMLX5_LIB)
TEST_BINS += $(VT_BINS)
verbs-tests: $(NULLPROV_LIB) $(NULLMLX5_LIB) $(VT_BINS)
.PHONY: verbs-tests
