# Verbs capture benchmark (runs on the null provider from tests/verbs/build.mk).
$(B)/verbs/vb_bench: bench/verbs/vb_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -libverbs -ldl
TEST_BINS += $(B)/verbs/vb_bench
