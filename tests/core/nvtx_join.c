/* NVTX message numbers (formats/nvtx_msg.h): split and join give back every message exactly, and the reader
 * joins an NVTX event's template and numbers into its message, one id per distinct text, while events whose
 * numbers do not fit their template (damage, hostile files) keep the template and never crash the reader.
 * Writes FILE with the offline writer, reads it back. Prints TAP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx_msg.h"
#include "reader.h"
#include "writer.h"

static int n_test, fails;
static void ok(int cond, const char *what)
{
    printf("%sok %d - %s\n", cond ? "" : "not ", ++n_test, what);
    if (!cond) fails++;
}

/* Round trips: every message comes back byte for byte; those that must stay whole say 0. */
static void split_join(void)
{
    static const struct {
        const char *s;
        unsigned n;
    } cases[] = {
        {"step 1234", 1},
        {"ReluBackward0, seq = 118, op_id = 1914", 3},
        {"ProfilerStep#3, op_id = 573", 2},
        {"1.5e-3", 3},
        {"0", 1},
        {"9999999999999999999", 1},    /* 19 digits: a number */
        {"x 12345678901234567890", 0}, /* 20 digits: text, and nothing else is a number */
        {"step 007", 0},               /* a leading zero: text */
        {"step 007 of 12", 1},         /* ... and the other run a number */
        {"a1b2c3d4e5f6g7h8", 8},
        {"a1b2c3d4e5f6g7h8i9", 0}, /* more than RS_NVTX_MAX_NUMS */
        {"plain", 0},
        {"\x1f 3", 0}, /* the mark byte itself: whole */
        {"", 0},
    };
    int all = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[RS_MAX_STRING + 1], out[RS_MAX_STRING + 200];
        size_t tl = 0;
        uint64_t num[RS_NVTX_MAX_NUMS];
        unsigned n = rs_nvtx_split(cases[i].s, RS_MAX_STRING, t, &tl, num);
        long l = n ? rs_nvtx_join(t, tl, num, n, out, sizeof out) : 0;
        if (n != cases[i].n || (n && (l != (long)strlen(cases[i].s) || strcmp(out, cases[i].s)))) {
            printf("# '%s': %u numbers (want %u), joined '%s'\n", cases[i].s, n, cases[i].n, n ? out : "");
            all = 0;
        }
    }
    ok(all, "split then join gives back each message; 20 digits, leading zeros, 9 numbers, a mark byte: whole");
    char big[RS_MAX_STRING + 2], t[RS_MAX_STRING + 1];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    big[5] = '7';
    size_t tl;
    uint64_t num[RS_NVTX_MAX_NUMS];
    ok(rs_nvtx_split(big, RS_MAX_STRING, t, &tl, num) == 0, "a message longer than the string limit: whole");
    uint64_t two[2] = {1, 2};
    char out[64];
    ok(rs_nvtx_join("a\x1f", 2, two, 2, out, sizeof out) < 0 &&
           rs_nvtx_join("a\x1f\x1f\x1f", 4, two, 2, out, sizeof out) < 0,
       "join refuses a template whose marks are not the numbers given");
    uint64_t max = UINT64_MAX;
    ok(rs_nvtx_join("v=\x1f", 3, &max, 1, out, sizeof out) == 22 && !strcmp(out, "v=18446744073709551615") &&
           rs_nvtx_join("v=\x1f", 3, &max, 1, out, 10) < 0,
       "join writes 2^64-1 (a hostile file's), and refuses a buffer too small");
}

struct push_ev {
    struct rs_ev_NVTX_PUSH e;
    uint64_t num[RS_NVTX_MAX_NUMS + 2];
};

static size_t push(struct push_ev *p, uint64_t ts, uint32_t msg, const uint64_t *num, unsigned n)
{
    memset(p, 0, sizeof *p);
    p->e.h.ts = ts;
    p->e.h.kind = RS_EV_NVTX_PUSH;
    p->e.h.size = (uint16_t)(sizeof p->e + 8 * n);
    p->e.message = msg;
    p->e.depth = 1;
    if (n) memcpy(p->num, num, 8 * (size_t)n);
    return p->e.h.size;
}

/* Joined messages past the reader's limit for them (64 MiB + 64 x the file's size): 20000 messages of 4 KiB in a
 * file of a few hundred KiB. The first are joined, the rest read as their template with '#' for each number, and
 * the file reads partial, saying so. */
static void big(const char *path)
{
    char file[4096 + 16], t[4000];
    snprintf(file, sizeof file, "%s.big", path);
    memset(t, 'a', sizeof t - 3);
    memcpy(t + sizeof t - 3, " \x1f", 3);
    static const struct rs_file_info fi = {.host = "h", .pid = 8, .rank = -1, .local_rank = -1, .world_size = -1};
    int err = 0, appended = 1;
    struct rs_writer *w = rs_writer_open(file, &fi, &err);
    uint32_t id = w ? rs_writer_intern_n(w, t, sizeof t - 1) : 0;
    struct push_ev p;
    for (uint64_t i = 0; w && i < 20000; i++) appended &= rs_writer_append(w, 1, &p, push(&p, 10 + i, id, &i, 1)) == 0;
    ok(w && appended && rs_writer_close(w) == 0, "20000 messages of 4 KiB written");
    char e[256];
    struct rs_reader *r = rs_reader_open(file, e, sizeof e);
    struct rs_event ev;
    const char *last = NULL;
    size_t last_len = 0;
    char want_first[4010];
    memcpy(want_first, t, sizeof t - 2); /* the a's and the space, then the number */
    memcpy(want_first + sizeof t - 2, "0", 2);
    int n = 0, first_ok = 0, kept = 0;
    while (r && rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind != RS_EV_NVTX_PUSH) continue;
        const char *s = rs_reader_string(r, ((const struct rs_ev_NVTX_PUSH *)(const void *)ev.ev)->message, &last_len);
        if (!n++) first_ok = s && !strcmp(s, want_first);
        kept += s && last_len && s[last_len - 1] != '#';
        last = s;
    }
    const struct rs_read_stats *st = r ? rs_reader_stats(r) : NULL;
    ok(n == 20000 && first_ok, "the first are joined");
    ok(last && last_len == sizeof t - 1 && last[sizeof t - 2] == '#' && last[0] == 'a',
       "past the limit: the template with '#' for its number");
    ok(st && st->status == RS_READ_PARTIAL && strstr(st->reason, "NVTX messages shown with '#'"),
       st ? st->reason : "no reader");
    /* past the limit a message is not joined at all (before: joined, hashed, then replaced by the '#' form, each
     * of ~4 KiB: a small file of such events took minutes to read) */
    ok(st && kept > 1000 && kept < 20000 && st->nvtx_joins == (uint64_t)kept + 1,
       "past the limit no message is joined: joins = messages kept + the one that did not fit");
    if (st) printf("# kept %d, joins %llu\n", kept, (unsigned long long)st->nvtx_joins);
    rs_reader_close(r);
}

/* Long templates (over the reader's 128 bytes): each distinct message is joined once, then found by its template and
 * numbers (not joined and hashed again at every event); a damaged event is never joined; a template id defined
 * again with another text (a hostile or damaged file; the writer never does) joins the new text from then on. */
static void keyed(const char *path)
{
    char file[4096 + 16], t1[300], t2[300];
    snprintf(file, sizeof file, "%s.keyed", path);
    memset(t1, 'a', 200);
    memcpy(t1 + 200, " \x1f", 3);
    memset(t2, 'b', 200);
    memcpy(t2 + 200, " \x1f", 3);
    static const struct rs_file_info fi = {.host = "h", .pid = 9, .rank = -1, .local_rank = -1, .world_size = -1};
    int err = 0, appended = 1;
    struct rs_writer *w = rs_writer_open(file, &fi, &err);
    uint32_t id = w ? rs_writer_intern(w, t1) : 0;
    struct push_ev p;
    uint64_t ts = 10, buf[40];
    for (uint64_t i = 0; w && i < 3000; i++)
        appended &= rs_writer_append(w, 1, &p, push(&p, ts++, id, &(uint64_t){i % 1500}, 1)) == 0;
    appended &= w && rs_writer_append(w, 1, &p, push(&p, ts++, id, (uint64_t[]){1, 2}, 2)) == 0; /* damaged */
    appended &= w && rs_writer_append(w, 1, buf, rs_string_record(buf, ts++, id, t2, strlen(t2))) == 0;
    appended &= w && rs_writer_append(w, 1, &p, push(&p, ts++, id, &(uint64_t){4}, 1)) == 0;
    ok(appended && rs_writer_close(w) == 0, "3000 pushes of 1500 messages of a 202-byte template, a damaged one, the "
                                            "template redefined, one more push written");
    char e[256];
    struct rs_reader *r = rs_reader_open(file, e, sizeof e);
    struct rs_event ev;
    int n = 0, exact = 1, damaged_ok = 0, redef_ok = 0;
    uint32_t first[1500] = {0}, same = 1;
    while (r && rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind != RS_EV_NVTX_PUSH) continue;
        uint32_t m = ((const struct rs_ev_NVTX_PUSH *)(const void *)ev.ev)->message;
        size_t len;
        const char *s = rs_reader_string(r, m, &len);
        if (n < 3000) {
            char want[32];
            int k = snprintf(want, sizeof want, " %d", n % 1500);
            exact &= s && len == 200 + (size_t)k && !memcmp(s, t1, 200) && !strcmp(s + 200, want);
            if (n < 1500) first[n] = m;
            else same &= first[n - 1500] == m;
        } else if (n == 3000) {
            damaged_ok = m == id;
        } else if (n == 3001) {
            redef_ok = s && len == 202 && !memcmp(s, t2, 200) && !strcmp(s + 200, " 4");
        }
        n++;
    }
    const struct rs_read_stats *st = r ? rs_reader_stats(r) : NULL;
    ok(n == 3002 && exact && same, "every message joined back, the second of each with the first's id");
    ok(st && st->nvtx_joins == 1501, "each distinct message joined once (1500, then the redefined template's one), "
                                     "the repeats found by template and number, the damaged one never joined");
    if (st && st->nvtx_joins != 1501) printf("# joins: %llu\n", (unsigned long long)st->nvtx_joins);
    ok(damaged_ok, "numbers that do not fit the template: the event is left as it is");
    ok(redef_ok, "a redefined template joins its new text");
    rs_reader_close(r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: nvtx_join FILE\n");
        return 2;
    }
    split_join();
    static const struct rs_file_info fi = {.host = "h", .pid = 7, .rank = -1, .local_rank = -1, .world_size = -1};
    int err = 0;
    struct rs_writer *w = rs_writer_open(argv[1], &fi, &err);
    if (!w) {
        printf("not ok %d - cannot create %s (%d)\n", ++n_test, argv[1], err);
        return 1;
    }
    uint32_t step = rs_writer_intern(w, "step \x1f"), op = rs_writer_intern(w, "aten::mul, seq = \x1f, op_id = \x1f");
    uint32_t plain = rs_writer_intern(w, "forward");
    struct push_ev p;
    uint64_t ts = 1000;
    int appended = 1;
    for (uint64_t i = 0; i < 3000; i++) { /* "step 0".."step 2999" then the same again: one id each */
        size_t n = push(&p, ts++, step, &(uint64_t){i % 1500}, 1);
        appended &= rs_writer_append(w, 1, &p, n) == 0;
    }
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, op, (uint64_t[]){5, 7}, 2)) == 0;
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, plain, NULL, 0)) == 0;
    /* damage: one number for two marks, three for one, more than RS_NVTX_MAX_NUMS, a template never defined */
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, op, (uint64_t[]){5}, 1)) == 0;
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, step, (uint64_t[]){1, 2, 3}, 3)) == 0;
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, step, (uint64_t[10]){1}, 10)) == 0;
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, 999, (uint64_t[]){1}, 1)) == 0;
    /* hostile: a plain push naming a joined id of its own (the reader's ids are the reader's) */
    appended &= rs_writer_append(w, 1, &p, push(&p, ts++, RS_NVTX_JOINED_ID + 1, NULL, 0)) == 0;
    ok(appended && rs_writer_close(w) == 0, "3000 pushes of 'step N', two-number and damaged ones written");

    char e[256];
    struct rs_reader *r = rs_reader_open(argv[1], e, sizeof e);
    if (!r) {
        printf("not ok %d - %s\n", ++n_test, e);
        return 1;
    }
    struct rs_event ev;
    int n = 0, exact = 1;
    uint32_t first_ids[1500] = {0}, again_same = 1, distinct_ok = 1;
    const char *msgs[7] = {0};
    uint32_t ids[7] = {0};
    while (rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind != RS_EV_NVTX_PUSH) continue;
        const struct rs_ev_NVTX_PUSH *pe = (const void *)ev.ev;
        const char *s = rs_reader_string(r, pe->message, NULL);
        if (n < 3000) {
            char want[32];
            snprintf(want, sizeof want, "step %d", n % 1500);
            if (!s || strcmp(s, want)) {
                if (exact) printf("# push %d: '%s', want '%s'\n", n, s ? s : "(none)", want);
                exact = 0;
            }
            if (n < 1500) {
                first_ids[n] = pe->message;
                if (n && first_ids[n] == first_ids[n - 1]) distinct_ok = 0;
            } else if (first_ids[n - 1500] != pe->message) {
                again_same = 0;
            }
        } else if (n - 3000 < 7) {
            msgs[n - 3000] = s;
            ids[n - 3000] = pe->message;
        }
        n++;
    }
    const struct rs_read_stats *st = rs_reader_stats(r);
    ok(n == 3007 && st->status == RS_READ_NO_END && st->strings_not_kept == 0,
       "every push read back (no PROC_END: an offline file), every string kept");
    ok(exact, "'step N' joined back for each of 3000 pushes");
    ok(distinct_ok && again_same && first_ids[0] > RS_NVTX_JOINED_ID,
       "one joined id per distinct message (the second 'step 12' has the first's id), above RS_NVTX_JOINED_ID");
    ok(msgs[0] && !strcmp(msgs[0], "aten::mul, seq = 5, op_id = 7"), "two numbers joined into emit_nvtx's form");
    ok(msgs[1] && !strcmp(msgs[1], "forward") && ids[1] == plain, "a message without numbers keeps its own id");
    ok(ids[2] == op && ids[3] == step && ids[4] == step && ids[5] == 999,
       "numbers that do not fit the template, too many of them, or an unknown template: the event is left as is");
    ok(ids[6] == 0 && !msgs[6], "a file's own id in the joined range names nothing");
    rs_reader_close(r);
    keyed(argv[1]);
    big(argv[1]);
    printf("1..%d\n", n_test);
    return fails ? 1 : 0;
}
