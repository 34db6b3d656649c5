# softnic: the software RDMA test NIC, a replacement libibverbs.so.1 used through LD_LIBRARY_PATH=$(B)/softnic.
PROGRAMS += softnic/libibverbs.so.1
softnic/libibverbs.so.1.srcs := $(wildcard tools/softnic/sn_*.c)
softnic/libibverbs.so.1.deps := tools/softnic/sn.h tools/softnic/libibverbs.map
softnic/libibverbs.so.1.cflags := -fvisibility=hidden
softnic/libibverbs.so.1.ldflags := -shared -Wl,-soname,libibverbs.so.1 -Wl,--version-script=tools/softnic/libibverbs.map
softnic/libibverbs.so.1.libs := -lpthread
softnic/libibverbs.so.1.post := ln -sf libibverbs.so.1 $(B)/softnic/libibverbs.so
