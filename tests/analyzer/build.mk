# rs-fmtcheck: the report's fast "%.9g" (analyzer/fmt_num.c) against printf, for tests/analyzer/fmt.t.
FMTCHECK := $(B)/tests/analyzer/rs-fmtcheck
$(FMTCHECK): tests/analyzer/fmtcheck.c $(B)/cli/analyzer/fmt_num.o analyzer/analyze_int.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/analyzer/fmtcheck.c $(B)/cli/analyzer/fmt_num.o $(LDFLAGS_ALL) -lm
TEST_BINS += $(FMTCHECK)
