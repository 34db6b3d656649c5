/* Fuzz target: the frame layer (frame headers, sizes, checksums, zstd data, sequence numbers).
 * The input is a list of frame records:
 *     u8 flags, u32 raw size, u16 length, length bytes
 * flags bit 0: the bytes are a payload to compress (a valid zstd frame) rather than raw zstd input;
 * bit 1: use the payload's real size as raw size; bit 2: leave the checksum wrong; bit 3: skip a seq;
 * bit 4: bad frame magic; bit 5: cut the file inside this frame. Checksums are otherwise fixed up so
 * the fuzzer reaches the decompressor. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    struct fz_buf f = {0};
    fz_put_min_header(&f);
    uint64_t seq = 0;
    while (fz_left(&in)) {
        uint8_t flags = fz_u8(&in);
        uint32_t raw = fz_u32(&in);
        const uint8_t *bytes;
        size_t len = fz_take(&in, fz_u16(&in), &bytes);
        if (flags & 8) seq += 1 + (flags >> 6);
        size_t start = f.n;
        if (flags & 1) {
            /* pad to a multiple of 8 as the writer would */
            size_t padded = (len + 7) & ~(size_t)7;
            unsigned char *p = calloc(1, padded ? padded : 8);
            FZ_CHECK(p != NULL);
            if (len) memcpy(p, bytes, len);
            fz_put_raw_frame(&f, p, padded, seq);
            free(p);
            if (!(flags & 2)) memcpy(f.b + start + 8, &raw, 4); /* a raw size that may lie */
        } else {
            fz_put_frame(&f, bytes, (uint32_t)len, (flags & 2) ? (uint32_t)len : raw, seq);
        }
        if (flags & 4) f.b[start + 12] ^= 0x5a;
        if (flags & 16) f.b[start] ^= 0xff;
        if (flags & 32) {
            f.n = start + (f.n - start) / 2;
            break;
        }
        seq++;
    }
    fz_drain_bytes(f.b, f.n, 1 << 20);
    free(f.b);
    return 0;
}
