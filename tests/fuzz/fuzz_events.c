/* Fuzz target: the event layer inside a frame (chunks, event sizes, delta timestamps, known kinds with
 * short sizes, unknown kinds, DROPS/PARTIAL bookkeeping). The input is a decompressed frame payload; the
 * target compresses it into a valid frame so every input reaches the event parser.
 * First byte: bit 0 = wrap the rest in one chunk header (tid 7, delta flag from bit 1) so the fuzzer can
 * work on events alone; bit 2 = repeat the payload as a second frame (state carried across frames);
 * bit 3 = RS_CHUNK_FIELD_DELTA on the wrapping chunk (fields delta-coded against the previous event of the
 * same kind and size). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    size_t body = (size + 7) & ~(size_t)7;
    size_t hdr = (mode & 1) ? sizeof(struct rs_chunk_hdr) : 0;
    size_t total = hdr + body;
    if (total == 0) total = 8;
    unsigned char *raw = calloc(1, total);
    FZ_CHECK(raw != NULL);
    if (hdr) {
        uint32_t flags = (mode & 2) ? RS_CHUNK_TS_DELTA : 0;
#ifdef RS_CHUNK_FIELD_DELTA
        if (mode & 8) flags |= RS_CHUNK_FIELD_DELTA;
#endif
        struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, 7, (uint32_t)body, flags};
        memcpy(raw, &c, sizeof c);
    }
    if (size) memcpy(raw + hdr, data, size);
    struct fz_buf f = {0};
    fz_put_min_header(&f);
    fz_put_raw_frame(&f, raw, total, 0);
    if (mode & 4) fz_put_raw_frame(&f, raw, total, 1);
    fz_drain_bytes(f.b, f.n, 1 << 20);
    free(raw);
    free(f.b);
    return 0;
}
