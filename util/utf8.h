/* UTF-8 validation and JSON string escaping for everything the CLI prints from a trace (header fields and
 * interned strings come from the traced program, or from a hostile file). Header-only, so any program that
 * links the reader or the exporters can use it without another object file.
 *
 * Well-formed UTF-8 is exactly the byte sequences of the Unicode standard's table 3-7: no encoded
 * surrogates (ED A0..BF ..), no overlong forms (C0, C1, E0 80..9F, F0 80..8F), nothing above U+10FFFF
 * (F4 90.., F5..FF). Anything else is replaced by U+FFFD, one per maximal subpart of an ill-formed
 * sequence (the W3C/Unicode "substitution of maximal subparts" practice), so the output is valid UTF-8
 * that strict decoders (Python's json, Node's JSON.parse on a TextDecoder({fatal: true}) stream, jq) accept. */
#ifndef RAILSCOPE_UTF8_H
#define RAILSCOPE_UTF8_H
#include <stddef.h>
#include <string.h>

/* The sequence starting at s[0] (n >= 1 bytes available): returns its length (1-4) when well-formed, else 0
 * with *bad = how many bytes (>= 1) one U+FFFD replaces. */
static inline size_t rs_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned c = s[0];
    *bad = 1;
    if (c < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;      /* overlong */
        else if (c == 0xed) hi = 0x9f; /* surrogates D800-DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;      /* overlong */
        else if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* 80-C1 (stray continuation, overlong lead), F5-FF */
    }
    size_t i = 1;
    for (; i < len && i < n; i++) {
        unsigned b = s[i];
        if (i == 1 ? (b < lo || b > hi) : (b & 0xc0) != 0x80) break;
    }
    if (i == len) return len;
    *bad = i;
    return 0;
}

#define RS_UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* Copy n bytes of s into d as well-formed UTF-8 (ill-formed parts -> U+FFFD), NUL-terminated; d needs
 * 3 * n + 1 bytes. Returns the length written. Control characters are kept (see rs_json_escape). */
static inline size_t rs_utf8_clean(char *d, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t bad, k = rs_utf8_seq(p + i, n - i, &bad);
        if (k) {
            memcpy(d + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(d + o, RS_UTF8_REPLACEMENT, 3);
            o += 3;
            i += bad;
        }
    }
    d[o] = 0;
    return o;
}

/* The body of a JSON string literal (no quotes) for n bytes of s: '"' and '\\' escaped, control characters
 * (and DEL) as \n, \t, \r, \b, \f or \u00XX, ill-formed UTF-8 as U+FFFD; with html != 0 also '<' as \u003c
 * (safe inside an HTML <script>). d needs 6 * n + 1 bytes. Returns the length written (NUL-terminated). */
static inline size_t rs_json_escape(char *d, const char *s, size_t n, int html)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c < 0x80) {
            i++;
            if (c == '"' || c == '\\') {
                d[o++] = '\\';
                d[o++] = (char)c;
            } else if (c >= 0x20 && c != 0x7f && !(html && c == '<')) {
                d[o++] = (char)c;
            } else if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {
                d[o++] = '\\';
                d[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f';
            } else {
                memcpy(d + o, "\\u00", 4);
                d[o + 4] = hex[c >> 4];
                d[o + 5] = hex[c & 15];
                o += 6;
            }
            continue;
        }
        size_t bad, k = rs_utf8_seq(p + i, n - i, &bad);
        if (k) {
            memcpy(d + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(d + o, RS_UTF8_REPLACEMENT, 3);
            o += 3;
            i += bad;
        }
    }
    d[o] = 0;
    return o;
}

#endif
