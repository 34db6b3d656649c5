/* NVTX message numbers (format 1.1, SPEC.md "NVTX message numbers"): a message with decimal numbers in it is
 * recorded as its template, each number replaced by one RS_NVTX_NUM_MARK byte, and the numbers as u64 words
 * after the event's fields. "step 1234" every step, or emit_nvtx's "aten::mul, op_id = 1911" every op, is then
 * one interned string for the whole run instead of one per call (each stays in the traced process for its life).
 * The tracer splits (rs_nvtx_split), the reader joins (rs_nvtx_join); both here so they cannot disagree. */
#ifndef RAILSCOPE_NVTX_MSG_H
#define RAILSCOPE_NVTX_MSG_H

#include <stddef.h>
#include <stdint.h>

#define RS_NVTX_NUM_MARK   0x1f /* ASCII unit separator: a message holding one is recorded whole */
#define RS_NVTX_MAX_NUMS   8    /* more numbers than this: the message is recorded whole */
#define RS_NVTX_NUM_DIGITS 19   /* the longest run that is a number: below 10^19 < 2^64 */
/* Readers hand such an event out with its message joined back under an id above this one (a file's own string
 * ids stay below 2^22): rs_reader_string resolves it; the exporter is given it as a STRING first. */
#define RS_NVTX_JOINED_ID  0x40000000u
#define RS_NVTX_MAX_JOINED (1u << 27) /* joined ids a reader hands out per file, at most */

/* Split the NUL-terminated message s (at most max bytes read) into tmpl (room for max + 1 bytes, NUL-terminated)
 * and num[]. A number is a maximal run of ASCII digits of 1-19 digits without a leading zero ("0" itself is one):
 * other runs ("007", 20 digits) stay in the template as they are, so joining gives back exactly s. Returns the
 * count of numbers (1..RS_NVTX_MAX_NUMS) with *tlen the template's length, or 0 when s is to be recorded whole
 * (no number, too many, a mark byte in it, or longer than max). */
static inline unsigned rs_nvtx_split(const char *s, size_t max, char *tmpl, size_t *tlen, uint64_t *num)
{
    unsigned n = 0;
    size_t o = 0, i = 0;
    while (s[i]) {
        if (i >= max || (unsigned char)s[i] == RS_NVTX_NUM_MARK) return 0;
        if (s[i] < '0' || s[i] > '9') {
            tmpl[o++] = s[i++];
            continue;
        }
        size_t j = i;
        uint64_t v = 0;
        while (s[j] >= '0' && s[j] <= '9' && j < max) v = v * 10 + (uint64_t)(s[j++] - '0');
        size_t len = j - i;
        if (len > RS_NVTX_NUM_DIGITS || (len > 1 && s[i] == '0')) { /* kept as text */
            for (; i < j; i++) tmpl[o++] = s[i];
            continue;
        }
        if (n == RS_NVTX_MAX_NUMS) return 0;
        num[n++] = v;
        tmpl[o++] = (char)RS_NVTX_NUM_MARK;
        i = j;
    }
    tmpl[o] = 0;
    *tlen = o;
    return n;
}

/* The message back from its template (tlen bytes) and its n numbers, into out (cap bytes, NUL-terminated).
 * Returns its length, or -1 when the template's marks are not n (a damaged or hostile file) or out is too small. */
static inline long rs_nvtx_join(const char *tmpl, size_t tlen, const uint64_t *num, unsigned n, char *out, size_t cap)
{
    size_t o = 0;
    unsigned k = 0;
    for (size_t i = 0; i < tlen; i++) {
        if ((unsigned char)tmpl[i] != RS_NVTX_NUM_MARK) {
            if (o + 1 >= cap) return -1;
            out[o++] = tmpl[i];
            continue;
        }
        if (k == n) return -1;
        char d[20]; /* 2^64 - 1 has 20 digits (a hostile file's; a tracer writes at most 19) */
        int nd = 0;
        uint64_t v = num[k++];
        do d[nd++] = (char)('0' + v % 10);
        while ((v /= 10));
        if (o + (size_t)nd >= cap) return -1;
        while (nd) out[o++] = d[--nd];
    }
    if (k != n) return -1;
    out[o] = 0;
    return (long)o;
}

#endif
