# The canned recipe of the build fragments (*/build.mk): a fragment declares its programs, and this file,
# included by the Makefile after every fragment, writes their rules. A program is named by its path under
# $(B) and described by variables that carry that name:
#
#     PROGRAMS += tests/core/emitter                      built by `make` (all)
#     tests/core/emitter.srcs := tests/core/emitter.c $(CORE_OBJS)    compiled and linked in one command, in order
#     tests/core/emitter.libs := -lzstd -ldl -lpthread    after $(LDFLAGS_ALL)
#
# and, where needed (all optional):
#     NAME.deps     further prerequisites that are not compiled (headers, version scripts, other programs)
#     NAME.cflags   extra compiler flags (-I..., -O0, -fvisibility=hidden)
#     NAME.ldflags  extra link flags, before $(LDFLAGS_ALL) (-shared -Wl,-soname,...)
#     NAME.post     one shell command run after the link (e.g. a symbolic link beside a library)
# ON_DEMAND_PROGRAMS += NAME gets the same rule without being built by `make` (tools a target runs, e.g.
# corpus-regen's mkcorpus).
#
# The command: $(CC) $(CFLAGS_ALL) NAME.cflags -o $(B)/NAME NAME.srcs NAME.ldflags $(LDFLAGS_ALL) NAME.libs
# (so SAN= builds instrument every program). Rules that are not "compile and link one program" (the clang
# fuzz builds, stripping a copy, phony campaign targets) stay explicit in their fragment.

define rs_program
$(B)/$(1): $$($(1).srcs) $$($(1).deps)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) $$($(1).cflags) -o $$@ $$($(1).srcs) $$($(1).ldflags) $$(LDFLAGS_ALL) $$($(1).libs)
	$$(if $$($(1).post),$$($(1).post))
endef

$(foreach p,$(sort $(PROGRAMS) $(ON_DEMAND_PROGRAMS)),$(eval $(call rs_program,$(p))))
EXTRA_TARGETS += $(addprefix $(B)/,$(PROGRAMS))
