/* Fuzz target: the file header (preamble + TLV block). The input is the TLV block; the first byte picks
 * how the preamble describes it (exact length, a length that lies, another version), so the fuzzer spends
 * its time in parse_header() instead of rediscovering the magic. A valid empty frame follows so that a
 * header the reader accepts is also iterated. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    struct rs_file_preamble pre;
    memcpy(pre.magic, RS_MAGIC, 8);
    pre.major = RS_FORMAT_MAJOR;
    pre.minor = (mode & 0x10) ? 0xffff : RS_FORMAT_MINOR;
    pre.header_bytes = (uint32_t)size;
    switch (mode & 7) {
    case 1: pre.header_bytes = (uint32_t)size + 1 + (mode >> 5); break; /* claims more than is there */
    case 2: pre.header_bytes = size ? (uint32_t)size - 1 : 0; break;    /* one byte short */
    case 3: pre.header_bytes = RS_MAX_HEADER_BYTES + 1; break;
    case 4: pre.header_bytes = 0xffffffffu; break;
    case 5: pre.major = (uint16_t)(RS_FORMAT_MAJOR + 1 + (mode >> 5)); break;
    default: break;
    }
    struct fz_buf f = {0};
    fz_put(&f, &pre, sizeof pre);
    fz_put(&f, data, size);
    if (mode & 8) {
        uint64_t raw[4] = {0};
        struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, 7, 16, 0};
        memcpy(raw, &c, sizeof c);
        struct rs_ev_hdr h = {123, RS_EV_NONE + 0x7fff, 16, 0}; /* an unknown kind, skipped by size */
        memcpy(&raw[2], &h, sizeof h);
        fz_put_raw_frame(&f, raw, sizeof raw, 0);
    }
    long n = fz_drain_bytes(f.b, f.n, 1 << 20);
    if ((mode & 7) == 0 && (mode & 8) && n >= 0) FZ_CHECK(n == 1);
    free(f.b);
    return 0;
}
