# Verbs capture tests: the null provider (a stand-in libibverbs.so.1 for unit tests and the benchmark),
# test programs written against the plain rdma-core API (linked against the system libibverbs, run on the
# null provider or the softnic through LD_LIBRARY_PATH), and a trace printer built on the reader library.
PROGRAMS += verbs/nullprov/libibverbs.so.1
verbs/nullprov/libibverbs.so.1.srcs := tests/verbs/nullprov.c
verbs/nullprov/libibverbs.so.1.deps := tests/verbs/nullprov.map
verbs/nullprov/libibverbs.so.1.cflags := -fvisibility=hidden
verbs/nullprov/libibverbs.so.1.ldflags := -shared -Wl,-soname,libibverbs.so.1 -Wl,--version-script=tests/verbs/nullprov.map
verbs/nullprov/libibverbs.so.1.post := ln -sf libibverbs.so.1 $(B)/verbs/nullprov/libibverbs.so

# its stand-in libmlx5.so.1 (mlx5dv_open_device, mlx5dv_reg_dmabuf_mr)
PROGRAMS += verbs/nullprov/libmlx5.so.1
verbs/nullprov/libmlx5.so.1.srcs := tests/verbs/nullmlx5.c
verbs/nullprov/libmlx5.so.1.deps := tests/verbs/nullmlx5.map
verbs/nullprov/libmlx5.so.1.cflags := -fvisibility=hidden
verbs/nullprov/libmlx5.so.1.ldflags := -shared -Wl,-soname,libmlx5.so.1 -Wl,--version-script=tests/verbs/nullmlx5.map
verbs/nullprov/libmlx5.so.1.libs := -ldl

# programs linked against libibverbs
VT_VERBS := vt_basic vt_ex vt_cuda vt_mt vt_min vt_mlx5 vt_rq vt_adopt vt_manycq vt_wait
PROGRAMS += $(addprefix verbs/,$(VT_VERBS))
$(foreach p,$(VT_VERBS),$(eval verbs/$(p).srcs := tests/verbs/$(p).c))
$(foreach p,$(VT_VERBS),$(eval verbs/$(p).libs := -libverbs -ldl -lpthread))

# loaders that reach libibverbs only at run time: dlsym semantics, NCCL-style dlopen+dlvsym, and an
# RTLD_LOCAL library
PROGRAMS += verbs/vt_dlsym verbs/vt_nccl verbs/vt_local
verbs/vt_dlsym.srcs := tests/verbs/vt_dlsym.c
verbs/vt_dlsym.libs := -ldl
verbs/vt_nccl.srcs := tests/verbs/vt_nccl.c
verbs/vt_nccl.libs := -ldl
ON_DEMAND_PROGRAMS += verbs/libvtlocal.so
verbs/libvtlocal.so.srcs := tests/verbs/vt_locallib.c
verbs/libvtlocal.so.ldflags := -shared
verbs/libvtlocal.so.libs := -libverbs
verbs/vt_local.srcs := tests/verbs/vt_local.c
verbs/vt_local.deps := $(B)/verbs/libvtlocal.so
verbs/vt_local.libs := -ldl

# ABI check of preload/verbs_abi.h against the installed <infiniband/verbs.h>
PROGRAMS += verbs/abi_check
verbs/abi_check.srcs := tests/verbs/abi_check.c
verbs/abi_check.deps := preload/verbs_abi.h

# unit test of the interposers' pointer-keyed table (preload/ptrmap.c alone)
PROGRAMS += verbs/vt_ptrmap
verbs/vt_ptrmap.srcs := tests/verbs/vt_ptrmap.c preload/ptrmap.c
verbs/vt_ptrmap.deps := preload/ptrmap.h
verbs/vt_ptrmap.libs := -lpthread

# trace printer (reader library only)
PROGRAMS += verbs/vt_dump
verbs/vt_dump.srcs := tests/verbs/vt_dump.c formats/reader.c formats/rtrace_tables.c
verbs/vt_dump.deps := formats/reader.h formats/rtrace.h
verbs/vt_dump.libs := -lzstd

# not a program: everything the verbs tests need, by one name
verbs-tests: $(addprefix $(B)/verbs/,nullprov/libibverbs.so.1 nullprov/libmlx5.so.1 $(VT_VERBS) vt_dlsym vt_nccl \
    vt_local abi_check vt_ptrmap vt_dump)
.PHONY: verbs-tests
