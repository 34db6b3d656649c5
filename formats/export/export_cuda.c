/* The exporter's CUDA, NVTX and NVML translation: kernels/copies/memsets on per-stream tracks, runtime
 * calls on their thread with flows to their GPU work (by correlation id), synchronization, NVTX ranges
 * (B/E, or complete events for Kineto) and marks, NVML counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_xlate.h"
#include "rtrace_enums.h"
#include "util/xalloc.h"

/* ---------------- CUDA ---------------- */

/* CUPTI's copy and memory kind names (formats/rtrace_enums.h; Kineto prints the same), "?" when unknown */
static const char *copy_kind_name(uint32_t k)
{
    const char *n = k < RS_ENUM_N(CUPTI_COPY) ? rs_enum_CUPTI_COPY[k] : NULL;
    return n ? n : "?";
}
static const char *mem_kind_name(uint32_t k)
{
    const char *n = k < RS_ENUM_N(CUPTI_MEM) ? rs_enum_CUPTI_MEM[k] : NULL;
    return n ? n : "?";
}

static struct xgroup *stream_group(struct rs_exp *x, uint32_t dev, uint32_t stream)
{
    struct xgroup *g = xl_group_get(x, XG_STREAM, dev, stream);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = xl_name_f(x, "GPU %u stream %u", dev, stream);
        if (x->o.format == RS_EXP_KINETO) { /* Kineto: pid = device, tid = stream */
            g->jpid = dev;
            g->jtid0 = stream;
        } else g->jtid0 = xl_synth_jtid(x);
        g->sort = 1000000 + (int32_t)(dev % 1000) * 1000 + (int32_t)(stream % 1000);
        xl_lane_new(x, g);
    }
    return g;
}

/* Correlation ids of runtime calls whose flow has started (direct-mapped, bounded): a GPU record ends a
 * flow only when its call was seen, so traces without API records (or with them dropped) get no
 * dangling arrows. CUPTI hands the call's record over before the GPU work's (the call returns first). */
#define XCORR (1u << 16)
static void corr_started(struct rs_exp *x, uint32_t corr)
{
    if (!x->p.corr && !(x->p.corr = rs_xcalloc(XCORR, sizeof *x->p.corr, "export_cuda corr"))) return;
    x->p.corr[corr & (XCORR - 1)] = corr;
}
static int corr_take(struct rs_exp *x, uint32_t corr)
{
    if (!x->p.corr || !corr || x->p.corr[corr & (XCORR - 1)] != corr) return 0;
    x->p.corr[corr & (XCORR - 1)] = 0;
    return 1;
}

static void gpu_common(struct rs_exp *x, struct rs_xitem *it, uint32_t corr, uint32_t dev, uint32_t stream)
{
    arg_u(it, RS_XK_device, RS_XA_U64, dev);
    arg_u(it, RS_XK_stream, RS_XA_U64, stream);
    arg_u(it, RS_XK_correlation, RS_XA_U64, corr);
    if (corr_take(x, corr)) it->flow_in = xl_corr_flow(x, corr);
}

/* "[x, y, z]" for grid/block arguments, cached by value. */
static uint32_t dim_nid(struct rs_exp *x, int32_t a, int32_t b, int32_t c)
{
    uint32_t h = (uint32_t)mix64((uint64_t)(uint32_t)a * 0x9e3779b1u ^ (uint64_t)(uint32_t)b << 20 ^
                                 (uint64_t)(uint32_t)c << 40) &
                 255;
    if (x->dim_cache[h].nid && x->dim_cache[h].v[0] == a && x->dim_cache[h].v[1] == b && x->dim_cache[h].v[2] == c)
        return x->dim_cache[h].nid;
    uint32_t n = xl_name_f(x, "[%d, %d, %d]", a, b, c);
    x->dim_cache[h].v[0] = a, x->dim_cache[h].v[1] = b, x->dim_cache[h].v[2] = c;
    x->dim_cache[h].nid = n;
    return n;
}

void xl_on_kernel(struct rs_exp *x, const struct rs_ev_CUDA_KERNEL *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, xl_str_nid(x, e->name), RS_XCAT_kernel);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_s(&it, RS_XK_grid, dim_nid(x, e->grid_x, e->grid_y, e->grid_z));
    arg_s(&it, RS_XK_block, dim_nid(x, e->block_x, e->block_y, e->block_z));
    xl_emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

void xl_on_memcpy(struct rs_exp *x, const struct rs_ev_CUDA_MEMCPY *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end), dur = end > ts ? end - ts : 0;
    uint32_t n, *c = e->copy_kind < 11 && e->src_kind < 8 && e->dst_kind < 8
                         ? &x->memcpy_nid[e->copy_kind][e->src_kind][e->dst_kind]
                         : NULL;
    if (c && *c) n = *c;
    else {
        n = xl_name_f(x, "Memcpy %s (%s -> %s)", copy_kind_name(e->copy_kind), mem_kind_name(e->src_kind),
                      mem_kind_name(e->dst_kind));
        if (c) *c = n;
    }
    item_init(&it, ts, dur, n, RS_XCAT_gpu_memcpy);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    arg_d(&it, RS_XK_gbps, dur ? (double)e->bytes / (double)dur : 0);
    xl_emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

void xl_on_memset(struct rs_exp *x, const struct rs_ev_CUDA_MEMSET *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end), dur = end > ts ? end - ts : 0;
    uint32_t n;
    if (e->memory_kind < 8 && x->memset_nid[e->memory_kind]) n = x->memset_nid[e->memory_kind];
    else {
        n = xl_name_f(x, "Memset (%s)", mem_kind_name(e->memory_kind));
        if (e->memory_kind < 8) x->memset_nid[e->memory_kind] = n;
    }
    item_init(&it, ts, dur, n, RS_XCAT_gpu_memset);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    arg_d(&it, RS_XK_gbps, dur ? (double)e->bytes / (double)dur : 0);
    xl_emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

void xl_on_sync(struct rs_exp *x, const struct rs_ev_CUDA_SYNC *e)
{
    static const char *const types[] = {"cuda sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    uint32_t ty = e->type < 5 ? e->type : 0;
    if (!x->sync_nid[ty]) x->sync_nid[ty] = xl_name_s(x, types[ty]);
    item_init(&it, ts, end > ts ? end - ts : 0, x->sync_nid[ty], RS_XCAT_cuda_sync);
    arg_u(&it, RS_XK_correlation, RS_XA_U64, e->correlation);
    struct xgroup *g = xl_group_get(x, XG_CSYNC, 0, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = xl_name_s(x, "CUDA synchronization");
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    xl_emit_slice(x, g, &it);
}

/* Runtime calls that Kineto links to GPU work (launches, copies, memsets, syncs). */
static int api_links(const char *n)
{
    return strstr(n, "Launch") || strstr(n, "Memcpy") || strstr(n, "Memset") || strstr(n, "emcpy") ||
           strstr(n, "Synchronize") || strstr(n, "StreamWaitEvent");
}

void xl_on_api(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_API *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    uint32_t nid = xl_str_nid(x, e->name);
    const char *n = rs_xname_get(x, nid)->s;
    int drv = n[0] == 'c' && n[1] == 'u' && n[2] != 'd';
    item_init(&it, ts, end > ts ? end - ts : 0, nid, drv ? RS_XCAT_cuda_driver : RS_XCAT_cuda_runtime);
    arg_u(&it, RS_XK_correlation, RS_XA_U64, e->correlation);
    arg_u(&it, RS_XK_cbid, RS_XA_U64, e->cbid);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, e->ret);
    /* whether the call links to GPU work, cached per name (direct-mapped) */
    uint32_t *lc = &x->api_link_cache[nid & 255];
    if ((*lc >> 1) != nid) *lc = nid << 1 | (uint32_t) !!api_links(n);
    if ((*lc & 1) && (it.flow_out = xl_corr_flow(x, e->correlation))) corr_started(x, e->correlation);
    uint32_t t = e->tid ? e->tid : tid;
    xl_emit_slice(x, xl_thread_side_group(x, XG_CUDA, t, "cuda"), &it);
}

void xl_on_copy_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_COPY_CALL *e)
{
    struct rs_xitem it;
    uint32_t ck = e->copy_kind < RS_ENUM_N(CUDA_COPY) ? e->copy_kind : RS_ENUM_N(CUDA_COPY),
             *c = &x->copy_nid[!!e->async][ck];
    _Static_assert(RS_ENUM_N(CUDA_COPY) + 1 <= sizeof x->copy_nid[0] / sizeof x->copy_nid[0][0], "copy_nid size");
    if (!*c)
        *c = xl_name_f(x, "%s %s", e->async ? "cudaMemcpyAsync" : "cudaMemcpy",
                       ck < RS_ENUM_N(CUDA_COPY) ? rs_enum_CUDA_COPY[ck] : "?");
    item_init(&it, al(x, e->h.ts), e->dur, *c, RS_XCAT_cuda_runtime);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->ret);
    xl_emit_slice(x, xl_thread_group(x, tid), &it);
}

/* NVTX push/pop: B/E on a per-thread NVTX track; depth is bounded (deeper pushes are counted and left out with
 * their pops), stray pops are ignored. Kineto's readers (HTA) take complete events only, so there the push is
 * kept (bounded stack) and the pop writes an "X" event, on the thread's own row (HTA reads ProfilerStep#N
 * there).
 *
 * That row also holds the thread's calls and its CUDA calls, each group with its own lane state; the row guard
 * (export_row.c) keeps them from partially overlapping. A range is checked at its pop: against the slices
 * around its start, gathered while it is open (at the push, xr_cross, then each slice placed on the row
 * until the pop, xr_place: a push long ago needs no memory of that time), and those around its end. One
 * that would straddle a slice there (NCCL's ncclCommInitRankConfig range, pushed inside railscope's
 * ncclCommInit call and never popped) goes to the NVTX group's second lane, a row of its own ("thread T nvtx
 * #2"); the others join the row, where the guard keeps later slices (CUDA calls seconds late) off them. */
static void nvtx_emit_x(struct rs_exp *x, struct xgroup *g, uint64_t end)
{
    struct xpush *p = &g->pushes[g->nvtx_depth];
    struct rs_xitem it;
    if (end < p->ts) end = p->ts;
    item_init(&it, p->ts, end - p->ts, p->msg, RS_XCAT_user_annotation);
    if (p->dom) arg_s(&it, RS_XK_domain, p->dom);
    struct xlane *l = g->lane[0];
    if (g->row && end > p->ts) {
        int c = p->min_cross < end ? 1 : xr_check(g->row, XR_N, p->ts, end, 0);
        if (!c && p->unsure) c = 2;
        if (c) { /* it would straddle a slice on the thread's row */
            x->st.row_moved++;
            x->st.row_unsure += c == 2;
            l = g->nlanes > 1 ? g->lane[1] : xl_lane_new(x, g);
            if (!l) return;
            xl_declare(x, &l->t);
        } else xr_add(g->row, XR_N, p->ts, end);
    }
    it.t = &l->t;
    x->be->slice(x->b, &it);
    x->st.items_out++;
}

void xl_on_nvtx_push(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_PUSH *e)
{
    struct xgroup *g = xl_thread_side_group(x, XG_NVTX, tid, "nvtx");
    if (!g || !g->nlanes) return;
    uint64_t ts = al(x, e->h.ts);
    struct xlane *l = g->lane[0];
    if (ts < l->last_start) ts = l->last_start;         /* B/E must stay ordered on the track */
    if (g->nvtx_depth >= XNVTX_DEPTH || g->nvtx_lost) { /* too deep: left out, counted; its pop is skipped */
        g->nvtx_lost++;
        x->st.nvtx_dropped++;
        return;
    }
    l->last_start = ts;
    xl_declare(x, &l->t);
    if (x->o.format == RS_EXP_KINETO) {
        if (!g->pushes && !(g->pushes = rs_xmalloc(XNVTX_DEPTH * sizeof *g->pushes, "export_cuda pushes"))) return;
        int unsure = 0;
        uint64_t cross = g->row ? xr_cross(g->row, ts, &unsure) : UINT64_MAX;
        g->pushes[g->nvtx_depth++] = (struct xpush){ts, xl_str_nid(x, e->message),
                                                    e->domain ? xl_str_nid(x, e->domain) : 0, cross, (uint32_t)unsure};
        return;
    }
    g->nvtx_depth++;
    struct rs_xitem it;
    item_init(&it, ts, 0, xl_str_nid(x, e->message), RS_XCAT_user_annotation);
    if (e->domain) arg_s(&it, RS_XK_domain, xl_str_nid(x, e->domain));
    it.t = &l->t;
    x->be->begin(x->b, &it);
    x->st.items_out++;
}

void xl_on_nvtx_pop(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_POP *e)
{
    struct xgroup *g = xl_thread_side_group(x, XG_NVTX, tid, "nvtx");
    if (!g || !g->nlanes) return;
    if (g->nvtx_lost) { /* the pop of a push left out */
        g->nvtx_lost--;
        return;
    }
    if (!g->nvtx_depth) return;
    uint64_t ts = al(x, e->h.ts);
    struct xlane *l = g->lane[0];
    if (ts < l->last_start) ts = l->last_start;
    l->last_start = ts;
    g->nvtx_depth--;
    if (g->pushes) nvtx_emit_x(x, g, ts);
    else x->be->end(x->b, &l->t, ts);
}

void xl_on_nvtx_start(struct rs_exp *x, const struct rs_ev_NVTX_START *e)
{
    struct xcache *s = cache_slot(x->p.nvtxr, e->id + 1);
    s->key = e->id + 1;
    s->ts = e->h.ts;
    s->v = xl_str_nid(x, e->message);
}

void xl_on_nvtx_end(struct rs_exp *x, const struct rs_ev_NVTX_END *e)
{
    struct xcache *s = cache_slot(x->p.nvtxr, e->id + 1);
    if (s->key != e->id + 1) return; /* start not seen (or evicted) */
    s->key = 0;
    struct rs_xitem it;
    uint64_t ts = al(x, s->ts), end = al(x, e->h.ts);
    item_init(&it, ts, end > ts ? end - ts : 0, s->v, RS_XCAT_user_annotation);
    xl_emit_slice(x, xl_async_group(x, XG_NVTXASYNC, 0, 0, "NVTX ranges"), &it);
}

void xl_on_nvtx_mark(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_MARK *e)
{
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, xl_str_nid(x, e->message), RS_XCAT_user_annotation);
    xl_emit_instant(x, xl_thread_group(x, tid), &it);
}

void xl_on_nvml(struct rs_exp *x, const struct rs_ev_NVML_SAMPLE *e)
{
    uint64_t key = (uint64_t)e->field << 32 | e->scope;
    struct xgroup *g = xl_group_get(x, XG_CTR_NVML, e->device, key);
    if (g && !g->nlanes) {
        const char *what = e->field == 138   ? "NVLink TX KiB"
                           : e->field == 139 ? "NVLink RX KiB"
                           : e->field == 197 ? "PCIe TX bytes"
                           : e->field == 198 ? "PCIe RX bytes"
                                             : NULL;
        char b[64];
        if (!what) {
            snprintf(b, sizeof b, "NVML field %u", e->field);
            what = b;
        }
        uint32_t n = e->scope == 0xffffffffu ? xl_name_f(x, "GPU %u %s", e->device, what)
                                             : xl_name_f(x, "GPU %u link %u %s", e->device, e->scope, what);
        g = xl_counter_group(x, XG_CTR_NVML, e->device, key, n);
    }
    xl_emit_counter(x, g, al(x, e->h.ts), (double)e->value);
}

void xl_cuda_end(struct rs_exp *x)
{
    struct xproc *p = &x->p;
    uint64_t end = p->last_ts;
    for (uint32_t i = 0; i < p->gcap; i++) { /* close NVTX ranges left open */
        struct xgroup *g = p->gtab[i];
        if (g && g->gk == XG_NVTX && g->nlanes) {
            uint64_t ts = end > g->lane[0]->last_start ? end : g->lane[0]->last_start;
            while (g->nvtx_depth) {
                g->nvtx_depth--;
                if (g->pushes) nvtx_emit_x(x, g, ts);
                else x->be->end(x->b, &g->lane[0]->t, ts);
            }
        }
    }
}
