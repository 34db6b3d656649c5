# Call-stack tests (stacks.t): a program with named call sites, built without optimisation so each site has
# its own frame, plus a copy stripped of .symtab (names then come from .dynsym, -rdynamic). It drives the
# fake libcudart of tests/nccl, so it is built only with the CUDA headers like that library.
ifeq ($(HAVE_CUDA),1)
PROGRAMS += tests/stacks/stack_app
tests/stacks/stack_app.srcs := tests/stacks/stack_app.c
tests/stacks/stack_app.cflags := -O0 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -rdynamic
tests/stacks/stack_app.libs := -ldl -lpthread

# not a compile-and-link: a stripped copy
$(B)/tests/stacks/stack_app_stripped: $(B)/tests/stacks/stack_app
	strip -s -o $@ $<
TEST_BINS += $(B)/tests/stacks/stack_app_stripped
endif
