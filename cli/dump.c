/* railscope dump [--json] [--abs] PATH...: every event of trace files, decoded generically from the
 * field descriptors generated in formats/rtrace_tables.c (so a new event kind needs no code here). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reader.h"
#include "rtrace_enums.h"
#include "analyzer/symbolize.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope dump [--json] [--abs] PATH...\n"
               "\n"
               "Print every event of the given trace files (a directory means its *.rtrace files and those of\n"
               "its subdirectories), in file order, with interned strings resolved. Call stacks (call_stack)\n"
               "are symbolised from the .symtab/.dynsym of the module files named in the trace, read on this\n"
               "host (function+offset, C++ names demangled; module+offset where a file is missing,\n"
               "different or stripped).\n"
               "\n"
               "  --json   JSON Lines: one object per event with \"kind\" (lower case), \"ts_ns\", \"pid\",\n"
               "           \"tid\", \"aux\" and every field of the kind by name; strings as JSON strings,\n"
               "           hex-typed fields (addresses, keys) as \"0x...\" strings; enum fields (opcode, mem,\n"
               "           status, copy_kind ...) also get FIELD_name with the value's name after the fields\n"
               "           (\"opcode\":0, ... \"opcode_name\":\"RDMA_WRITE\"), when the value has one\n"
               "  --abs    text mode: absolute timestamps in ns (default: seconds since the trace started)\n"
               "\n"
               "A completion's aux (ibv_wc, from tracers since session 20) is also given as fields after the kind's\n"
               "own: armed (true/false), empty_polls_min/empty_polls_max (the empty polls right before the poll that\n"
               "found it, a range; max null: 2^30 or more), waited_us (from the first of them, in units of 1.024 us;\n"
               "null with none), waited_capped (34.36 s or more). An aux without that record (0) is printed as is.\n"
               "\n"
               "Records written before the first timestamped event (the strings of the host snapshot) carry no\n"
               "time (ts_ns 0): text mode prints \"(no time)\" for them, --json their raw \"ts_ns\":0.\n"
               "\n"
               "Exit status: 0 all files complete, 1 a file is partial, truncated, damaged or unreadable while\n"
               "others were read (everything decodable is still printed, and the reason goes to stderr), 2 usage\n"
               "or no readable input. A file without the recorder's end record (PROC_END: the process was\n"
               "killed, crashed or is still running) is \"incomplete\": partial, exit 1.\n");
}

/* A JSON string: control characters escaped, ill-formed UTF-8 (invalid bytes, encoded surrogates, overlong
 * forms) replaced by U+FFFD, so every line is valid UTF-8 JSON (issue 17 D9; util/utf8.h). */
static void json_str(FILE *o, const char *s, size_t n)
{
    char small[6 * 512 + 1], *d = n <= 512 ? small : rs_xmalloc(6 * n + 1, "dump json string");
    size_t k = rs_json_escape(d, s, n, 0);
    fputc('"', o);
    fwrite(d, 1, k, o);
    fputc('"', o);
    if (d != small) free(d);
}

static void text_str(FILE *o, const char *s, size_t n)
{
    fputc('"', o);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(o, "\\x%02x", c);
        else fputc(c, o);
    }
    fputc('"', o);
}

/* text_str without the quotes, for symbol names and paths in stack frames. */
static void text_raw(FILE *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f || c == '\\' || c == '"') fprintf(o, "\\x%02x", c);
        else fputc(c, o);
    }
}

/* A time in text mode: absolute ns with --abs (or without a start time), else seconds since the trace
 * started. 0 is no time at all (the writer stamps records made before its first timed event with 0):
 * "(no time)", not 0 - start, about minus the host's uptime (issue s17: "-30033.703056185 ... string"). */
static void text_ts(FILE *o, uint64_t ts, uint64_t base)
{
    if (!ts) fputs("(no time)", o);
    else if (!base) fprintf(o, "%llu", (unsigned long long)ts);
    else fprintf(o, "%+.9f", ((double)(int64_t)(ts - base)) / 1e9);
}

static uint64_t rd(const unsigned char *p, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, p, size);
    return v;
}

static void print_field(FILE *o, int json, struct rs_reader *r, const struct rs_field_desc *f, const unsigned char *p,
                        uint64_t base)
{
    unsigned sz = rs_ftype_size[f->type];
    uint64_t v = rd(p, sz);
    switch (f->type) {
    case RS_T_i32: fprintf(o, "%d", (int32_t)v); break;
    case RS_T_i64: fprintf(o, "%lld", (long long)(int64_t)v); break;
    case RS_T_x64:
    case RS_T_x32: fprintf(o, json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)v); break;
    case RS_T_ts:
        if (json) fprintf(o, "%llu", (unsigned long long)v);
        else text_ts(o, v, base);
        break;
    case RS_T_str: {
        size_t n;
        const char *s = v ? rs_reader_string(r, (uint32_t)v, &n) : NULL;
        if (s) (json ? json_str : text_str)(o, s, n);
        else if (!v) fputs(json ? "null" : "-", o);
        else fprintf(o, json ? "\"#%u\"" : "#%u", (uint32_t)v);
        break;
    }
    default: fprintf(o, "%llu", (unsigned long long)v); break;
    }
}

/* CALL_STACK frames (formats/events_cuda.h), symbolised from the module files on this host: text prints
 * one indented line per frame, JSON a "frames" array. A frame whose module is unknown, unreadable or has
 * no symbol there keeps module+offset (or just the address). */
static void dump_call_stack(FILE *o, int json, struct rs_reader *r, struct rs_symbolizer *sym,
                            const struct rs_ev_CALL_STACK *s)
{
    size_t max = (s->h.size - sizeof *s) / sizeof(struct rs_stack_frame), n = s->depth < max ? s->depth : max;
    const unsigned char *tail = (const unsigned char *)(s + 1);
    if (json) fputs(",\"frames\":[", o);
    for (size_t i = 0; i < n; i++) {
        struct rs_stack_frame f;
        memcpy(&f, tail + i * sizeof f, sizeof f);
        size_t plen = 0;
        const char *path = f.module ? rs_reader_string(r, f.module, &plen) : NULL;
        int have_off = f.offset != RS_STACK_OFFSET_UNKNOWN;
        uint64_t soff = 0;
        /* A return address: the call is the instruction before it. */
        const char *fn =
            path && have_off && f.offset ? rs_sym_lookup(sym, path, plen, (uint64_t)f.offset - 1, &soff) : NULL;
        if (fn) {
            soff++;
            fn = rs_sym_demangle(sym, fn);
        }
        if (json) {
            fprintf(o, "%s{\"pc\":\"0x%llx\",\"module\":", i ? "," : "", (unsigned long long)f.pc);
            if (path) json_str(o, path, plen);
            else fputs("null", o);
            if (have_off) fprintf(o, ",\"offset\":\"0x%x\"", f.offset);
            else fputs(",\"offset\":null", o);
            fputs(",\"function\":", o);
            if (fn) {
                json_str(o, fn, strlen(fn));
                fprintf(o, ",\"function_offset\":%llu}", (unsigned long long)soff);
            } else {
                fputs("null}", o);
            }
        } else {
            fprintf(o, "\n    #%zu 0x%llx", i, (unsigned long long)f.pc);
            if (fn) {
                fputc(' ', o);
                text_raw(o, fn, strlen(fn));
                fprintf(o, "+0x%llx", (unsigned long long)soff);
            }
            if (path) {
                fputs(" in ", o);
                text_raw(o, path, plen);
                if (have_off) fprintf(o, "+0x%x", f.offset);
            } else {
                fputs(" in ?", o);
            }
        }
    }
    if (json) fputc(']', o);
    if (s->depth > max)
        fprintf(o, json ? ",\"frames_missing\":%llu" : "\n    (%llu frames missing)",
                (unsigned long long)(s->depth - max));
}

static void dump_event(FILE *o, int json, int abs, struct rs_reader *r, struct rs_symbolizer *sym,
                       const struct rs_event *e)
{
    const struct rs_header_info *h = rs_reader_header(r);
    const struct rs_ev_hdr *ev = e->ev;
    const unsigned char *b = (const unsigned char *)ev;
    const struct rs_kind_desc *d = e->known ? rs_kind_get(ev->kind) : NULL;
    const char *kname = d ? rs_kind_lname(ev->kind) : NULL;
    uint64_t base = abs ? 0 : h->start_mono;
    if (json) {
        fputs("{\"kind\":", o);
        if (kname) fprintf(o, "\"%s\"", kname);
        else fprintf(o, "\"unknown_%u\"", ev->kind);
        fprintf(o, ",\"ts_ns\":%llu,\"pid\":%llu,\"tid\":%u,\"aux\":%u", (unsigned long long)e->ts,
                (unsigned long long)h->pid, e->tid, ev->aux);
    } else {
        text_ts(o, e->ts, base);
        fprintf(o, " %llu/%u ", (unsigned long long)h->pid, e->tid);
        if (kname) fputs(kname, o);
        else fprintf(o, "unknown_%u", ev->kind);
        if (ev->aux) fprintf(o, " aux=%u", ev->aux);
    }
    if (!d) {
        fprintf(o, json ? ",\"size\":%u}\n" : " size=%u\n", ev->size);
        return;
    }
    size_t off = sizeof *ev;
    struct enum_name {
        const char *field, *name;
    } names[16];
    unsigned nnames = 0;
    for (unsigned i = 0; i < d->nfields; i++) {
        const struct rs_field_desc *f = &d->fields[i];
        if (!strcmp(f->name, "pad")) {
            off += rs_ftype_size[f->type];
            continue;
        }
        fprintf(o, json ? ",\"%s\":" : " %s=", f->name);
        print_field(o, json, r, f, b + off, base);
        if (json && nnames < 16) { /* enum fields: the value's name, from formats/rtrace_enums.h */
            const char *en = rs_enum_name(rs_enum_of(ev->kind, i), rd(b + off, rs_ftype_size[f->type]));
            if (en) names[nnames++] = (struct enum_name){f->name, en};
        }
        off += rs_ftype_size[f->type];
    }
    /* Variable-length tails of the kinds that have one. */
    if (ev->kind == RS_EV_STRING) {
        const struct rs_ev_STRING *s = (const void *)ev;
        fputs(json ? ",\"text\":" : " text=", o);
        (json ? json_str : text_str)(o, (const char *)(s + 1), s->len);
    } else if (ev->kind == RS_EV_STACK) {
        const struct rs_ev_STACK *s = (const void *)ev;
        size_t max = (ev->size - sizeof *s) / 8, n = s->depth < max ? s->depth : max;
        fputs(json ? ",\"frames\":[" : " frames=", o);
        for (size_t i = 0; i < n; i++)
            fprintf(o, json ? "%s\"0x%llx\"" : "%s0x%llx", i ? "," : "",
                    (unsigned long long)rd(b + sizeof *s + 8 * i, 8));
        if (json) fputc(']', o);
    } else if (ev->kind == RS_EV_CALL_STACK) {
        dump_call_stack(o, json, r, sym, (const void *)ev);
    } else if (d->varlen && ev->size > d->size) {
        fprintf(o, json ? ",\"tail_bytes\":%u" : " tail_bytes=%u", ev->size - d->size);
    }
    /* hdr.aux values that pack fields (formats/rtrace_enums.h rs_aux_fields), after the kind's own */
    struct rs_aux_field af[RS_AUX_MAX];
    unsigned naf = rs_aux_fields(ev->kind, ev->aux, af);
    for (unsigned i = 0; i < naf; i++) {
        fprintf(o, json ? ",\"%s\":" : " %s=", af[i].name);
        switch (af[i].type) {
        case RS_AUX_BOOL: fputs(af[i].v ? "true" : "false", o); break;
        case RS_AUX_U64: fprintf(o, "%llu", (unsigned long long)af[i].v); break;
        case RS_AUX_US:
            fprintf(o, "%llu.%03llu", (unsigned long long)(af[i].v / 1000), (unsigned long long)(af[i].v % 1000));
            break;
        default: fputs(json ? "null" : "-", o); break;
        }
    }
    /* the names come after every field (FIELD_name), so the fields keep their order and adjacency */
    for (unsigned i = 0; i < nnames; i++) fprintf(o, ",\"%s_name\":\"%s\"", names[i].field, names[i].name);
    fputs(json ? "}\n" : "\n", o);
}

int cmd_dump(int argc, char **argv)
{
    int json = 0, abs = 0;
    const struct cli_flag flags[] = {{"--json", &json}, {"--abs", &abs}, {NULL, NULL}};
    char err[512], **paths;
    int n = cli_trace_args("dump", argc, argv, flags, usage, &paths);
    if (n <= 0) return n < 0 ? 2 : 0;
    int rc = 0, nbad = 0;
    struct rs_symbolizer *sym = rs_sym_new();
    for (int k = 0; k < n; k++) {
        struct rs_reader *r = rs_reader_open(paths[k], err, sizeof err);
        if (!r) {
            fprintf(stderr, "railscope: dump: %s\n", err);
            nbad++;
            continue;
        }
        if (!json && n > 1) {
            const struct rs_header_info *h = rs_reader_header(r);
            printf("# %s: host %s pid %llu\n", paths[k], h->host ? h->host : "?", (unsigned long long)h->pid);
        }
        struct rs_event e;
        while (rs_reader_next(r, &e) > 0) dump_event(stdout, json, abs, r, sym, &e);
        const struct rs_read_stats *st = rs_reader_stats(r);
        if (st->status != RS_READ_OK) {
            fprintf(stderr, "railscope: dump: %s: %s\n", paths[k], st->reason);
            if (rc == 0) rc = 1;
        }
        rs_reader_close(r);
    }
    /* unreadable files beside readable ones: partial (exit 1); nothing readable: exit 2 (issue 17 D10) */
    if (nbad) rc = nbad == n ? 2 : 1;
    rs_paths_free(paths, n);
    rs_sym_free(sym);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "railscope: dump: cannot write the output: %s\n", strerror(errno));
        return 2;
    }
    return rc;
}
