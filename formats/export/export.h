/* Exporters: railscope traces -> Perfetto protobuf, Chrome trace JSON, Kineto-flavoured JSON (for HTA).
 *
 * Two layers. The translator (export_xlate.c) reads events of one process at a time and turns them into a
 * small vocabulary of viewer items — tracks, slices, instants, counters and flows — keeping only bounded
 * per-track/per-QP state, so memory does not grow with the trace. A backend (export_pb.c, export_json.c)
 * encodes those items. Every format therefore shows the same tracks, names and flows.
 *
 *     struct rs_exp *x = rs_exp_open(&opts, err, sizeof err);
 *     for each file: rs_exp_begin_process(x, &proc); for each event: rs_exp_event(x, tid, ev);
 *                    rs_exp_end_process(x);
 *     rs_exp_close(x, &stats);
 *
 * Time: events carry the tracer clock; the translator maps it to realtime with the file's CLOCK anchors
 * (the header's pair, then every CLOCK event) and subtracts opts.base_realtime_ns (the earliest start over
 * all inputs) so that ranks line up and JSON microseconds keep their precision.
 */
#ifndef RAILSCOPE_EXPORT_H
#define RAILSCOPE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rtrace.h"

enum rs_exp_format { RS_EXP_PERFETTO = 0, RS_EXP_CHROME = 1, RS_EXP_KINETO = 2 };

/* A file's identity (stat: st_dev, st_ino). stat follows symbolic links, so a link to a file, hard or
 * symbolic, has that file's identity. */
struct rs_file_id {
    uint64_t dev, ino;
};

struct rs_exp_opts {
    enum rs_exp_format format;
    const char *out;           /* file (perfetto, chrome) or directory (kineto: one file per rank) */
    int split;                 /* chrome: start OUT.1.json, OUT.2.json ... past split_bytes */
    uint64_t split_bytes;      /* 0 = 500 MB: the size past which viewers fail (reference F2) */
    uint64_t bw_bin_ns;        /* bandwidth counter bin; 0 = 1 ms */
    uint64_t base_realtime_ns; /* subtracted from every aligned timestamp */
    int no_flows;              /* leave flow arrows out */
    int quiet;                 /* no warnings on stderr */
    void *sink;                /* in-process backends (rs_exp_open_with): their state */
    /* Parallel export (one exporter per input, outputs concatenated by the caller): the first input's
     * index, so that process ids, track uuids, flow ids and the Perfetto packet sequence stay unique
     * across parts; `part` = JSON without the file's opening and closing (rs_exp_json_head/tail). */
    uint64_t index_base;
    /* How many processes the whole export has (inputs, + 1 for findings), 0 = one exporter writes them all
     * with one track counter. Set, each process counts its tracks k = 1, 2, ... and their uuids interleave
     * (k * stride + index + 1): set it in a serial export too, and its output is a parallel export's. */
    uint64_t index_stride;
    int part;
    /* The input files (rs_file_ids): an output file that is one of them is refused before it is truncated,
     * whatever its name (a split file, a Kineto rank file, a part), so an export never destroys a trace. */
    const struct rs_file_id *inputs;
    size_t ninputs;
};

/* The identities of the paths that exist, into *ids (malloc'ed, free it; NULL when none). Paths that do not
 * exist are left out: nothing is read from them either. Returns how many, or -1 when memory ran out. */
int rs_file_ids(char *const *paths, int npaths, struct rs_file_id **ids);
/* 1 when path exists and is one of ids (the outputs "-" and a new file never are). */
int rs_file_is_one_of(const char *path, const struct rs_file_id *ids, size_t n);

/* The opening and closing of a Chrome JSON file whose events come from `part` exporters; parts are
 * joined with ",\n". Returns the bytes written into buf (at most n). */
size_t rs_exp_json_head(char *buf, size_t n, uint64_t base_realtime_ns);
size_t rs_exp_json_tail(char *buf, size_t n);

/* One input process (one trace file). */
struct rs_exp_proc {
    const char *host;
    uint64_t pid;
    int64_t rank; /* -1 unknown */
    int64_t world_size;
    uint64_t start_realtime, start_mono; /* the header's clock anchor */
    const char *label;                   /* optional extra text for the process name (e.g. file name) */
};

struct rs_exp_stats {
    uint64_t files_in;  /* input processes (files) begun: those read, not those skipped */
    uint64_t events_in; /* events handed to rs_exp_event */
    uint64_t items_out; /* slices + instants + counters written */
    uint64_t bytes_out; /* bytes written over all output files */
    uint64_t files_out;
    uint64_t wr_matched, wr_unmatched_wc, wr_no_completion;
    uint64_t lane_overflow; /* slices shown as instants at their end: more overlap than lanes */
    uint64_t lane_dropped;  /* of those, left out: every lane already past their end (a group's input out of order) */
    /* slices moved off their thread's row to a "#2" row of their own: they would partially overlap another
     * slice there (a range straddled by a call, a late CUDA call straddling a range); row_unsure of them only
     * because the row no longer remembered that time (export_row.c: bounded memory) */
    uint64_t row_moved, row_unsure;
    uint64_t row_overflow; /* of lane_overflow, slices kept off their thread's row that found no other lane free (an
                            * instant: in lane_overflow, not in row_moved) */
    uint64_t nvtx_dropped; /* NVTX ranges nested deeper than 64 on a thread: left out (their pops too) */
};

struct rs_exp;

struct rs_exp *rs_exp_open(const struct rs_exp_opts *o, char *err, size_t errlen);
int rs_exp_begin_process(struct rs_exp *x, const struct rs_exp_proc *p); /* -1: see rs_exp_last_error */
/* An input that could not be read: it shows nothing but keeps its index (process number, track uuids,
 * packet sequence of the next ones), as its empty part does in a parallel export. */
void rs_exp_skip_process(struct rs_exp *x);
const char *rs_exp_last_error(const struct rs_exp *x); /* why the last call failed ("" if none) */
/* One event of the current process; ev->ts absolute tracer clock. tid = the chunk's thread. Unknown kinds
 * and events shorter than their kind's size are skipped. */
void rs_exp_event(struct rs_exp *x, uint32_t tid, const struct rs_ev_hdr *ev);
/* An interned string of the current process (the reader resolves STRING records, but a caller that feeds
 * raw STRING events through rs_exp_event gets the same effect). */
void rs_exp_string(struct rs_exp *x, uint32_t id, const char *s, size_t len);
int rs_exp_end_process(struct rs_exp *x);
/* The current process's input was cut short (truncated, damaged, no PROC_END): a "trace incomplete" instant
 * with why, at its last exported event, on its railscope track. Call before rs_exp_end_process. */
void rs_exp_incomplete(struct rs_exp *x, const char *why);
/* An instant on the run's global "findings" track (analyzer results), ts in aligned ns (as emitted). */
void rs_exp_annotation(struct rs_exp *x, uint64_t ts_ns, const char *title, const char *text);
/* Finish every file. Returns 0, or -1 with a reason in err (write error). Frees x. */
int rs_exp_close(struct rs_exp *x, struct rs_exp_stats *st, char *err, size_t errlen);

#endif
