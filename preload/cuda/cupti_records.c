/* CUPTI activity records -> trace events. Kept apart from the loading/buffer code so the conversion can be
 * driven with synthetic records built from the CUDA 13 header structs (tests/nccl/). The record versions
 * are those of CUPTI 13.0 (Memcpy6, MemcpyPtoP4, Memset4, Kernel10, API, Synchronization2); only fields
 * present in every later version of each record are read (they grow at the end). */
#include <string.h>

#include "preload/cuda/cuda_int.h"
#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

struct rs_cupti_counts rs_cupti_counts;
int64_t rs_cupti_ts_offset;
static struct rs_ptrcache kernel_names;

void rs_cupti_names_forget(void) { memset(&kernel_names, 0, sizeof kernel_names); }

static inline uint64_t ts_of(uint64_t t) { return t ? (uint64_t)((int64_t)t - rs_cupti_ts_offset) : 0; }

static inline void count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

int rs_cupti_convert(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_MEMCPY ev;
        RS_EV_INIT(&ev, CUDA_MEMCPY, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.bytes = r->bytes;
        ev.correlation = r->runtimeCorrelationId ? r->runtimeCorrelationId : r->correlationId;
        ev.device = r->deviceId;
        ev.stream = r->streamId;
        ev.copy_kind = r->copyKind;
        ev.src_kind = r->srcKind;
        ev.dst_kind = r->dstKind;
        ev.src_device = ev.dst_device = r->deviceId;
        ev.drv_corr = r->correlationId;
        ev.flags = r->flags;
        count(&rs_cupti_counts.memcpy);
        return rs_emit_as(0, &ev.h);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_MEMCPY ev;
        RS_EV_INIT(&ev, CUDA_MEMCPY, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.bytes = r->bytes;
        ev.correlation = r->correlationId;
        ev.device = r->deviceId;
        ev.stream = r->streamId;
        ev.copy_kind = r->copyKind;
        ev.src_kind = r->srcKind;
        ev.dst_kind = r->dstKind;
        ev.src_device = r->srcDeviceId;
        ev.dst_device = r->dstDeviceId;
        ev.drv_corr = r->correlationId;
        ev.flags = r->flags;
        count(&rs_cupti_counts.memcpy);
        return rs_emit_as(0, &ev.h);
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_MEMSET ev;
        RS_EV_INIT(&ev, CUDA_MEMSET, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.bytes = r->bytes;
        ev.correlation = r->correlationId;
        ev.device = r->deviceId;
        ev.stream = r->streamId;
        ev.value = r->value;
        ev.memory_kind = r->memoryKind;
        ev.flags = r->flags;
        count(&rs_cupti_counts.memset);
        return rs_emit_as(0, &ev.h);
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_KERNEL ev;
        RS_EV_INIT(&ev, CUDA_KERNEL, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.name = rs_ptrcache_id(&kernel_names, r->name); /* names live as long as CUPTI's attachment */
        ev.correlation = r->correlationId;
        ev.device = r->deviceId;
        ev.stream = r->streamId;
        ev.grid_x = r->gridX;
        ev.grid_y = r->gridY;
        ev.grid_z = r->gridZ;
        ev.block_x = r->blockX;
        ev.block_y = r->blockY;
        ev.block_z = r->blockZ;
        count(&rs_cupti_counts.kernel);
        return rs_emit_as(0, &ev.h);
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_API ev;
        RS_EV_INIT(&ev, CUDA_API, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.name = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? rs_cupti_api_name(r->cbid) : 0;
        ev.correlation = r->correlationId;
        ev.cbid = r->cbid;
        ev.tid = r->threadId;
        ev.ret = r->returnValue;
        ev.pad = 0;
        count(&rs_cupti_counts.api);
        return rs_emit_as(0, &ev.h);
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *r = (const void *)rec;
        if (!r->start || r->end < r->start) break;
        struct rs_ev_CUDA_SYNC ev;
        RS_EV_INIT(&ev, CUDA_SYNC, ts_of(r->start));
        ev.end = ts_of(r->end);
        ev.correlation = r->correlationId;
        ev.type = (uint32_t)r->type;
        ev.stream = r->streamId;
        ev.pad = 0;
        count(&rs_cupti_counts.sync);
        return rs_emit_as(0, &ev.h);
    }
    default: count(&rs_cupti_counts.other); return 0;
    }
    count(&rs_cupti_counts.untimed); /* start = 0 (device buffer too small) or no end yet (forced flush) */
    return 0;
}
