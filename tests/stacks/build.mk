# Call-stack tests (stacks.t): a program with named call sites, built without optimisation so each site has
# its own frame, plus a copy stripped of .symtab (names then come from .dynsym, -rdynamic). It drives the
# fake libcudart of tests/nccl, so it is built only with the CUDA headers like that library.
STK_T := $(B)/tests/stacks

ifeq ($(HAVE_CUDA),1)
$(STK_T)/stack_app: tests/stacks/stack_app.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O0 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -rdynamic -o $@ $< \
	    $(LDFLAGS_ALL) -ldl -lpthread

$(STK_T)/stack_app_stripped: $(STK_T)/stack_app
	strip -s -o $@ $<

TEST_BINS += $(STK_T)/stack_app $(STK_T)/stack_app_stripped
endif
