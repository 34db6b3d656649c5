/* host/, iommu/ and gpudirect/ facts: kernel release (DMA-BUF needs >= 5.12), NUMA nodes, IOMMU state,
 * and the GPUDirect RDMA prerequisites NCCL itself probes (nvidia_peermem, memory_peers/nv_mem*). */
#include <stdio.h>
#include <string.h>

#include "hostfacts_int.h"

static void iommu_cmdline(const struct hf_ctx *c)
{
    char line[4096], out[HF_VAL];
    if (hf_read(c, line, sizeof line, "proc/cmdline") < 0) return;
    size_t off = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if ((strstr(t, "iommu") || strstr(t, "acs")) && off + strlen(t) + 2 < sizeof out)
            off += (size_t)snprintf(out + off, sizeof out - off, "%s%s", off ? " " : "", t);
    hf_emit(c, off ? out : "none", "host/cmdline_iommu");
}

static int count_dir(const struct hf_ctx *c, const char *rel)
{
    char p[PATH_MAX];
    if (!hf_path(c, p, sizeof p, "%s", rel)) return -1;
    struct hf_dir d;
    if (hf_dir_open(&d, p) != 0) return -1;
    int n = 0;
    const char *e;
    while ((e = hf_dir_next(&d)) != NULL && n < 100000)
        if (e[0] != '.') n++;
    hf_dir_close(&d);
    return n;
}

static void loaded(const struct hf_ctx *c, const char *key, const char *module)
{
    char v[HF_VAL];
    int there = hf_exists(c, "sys/module/%s", module);
    hf_emit(c, there ? "loaded" : "absent", "%s", key);
    if (there && hf_read(c, v, sizeof v, "sys/module/%s/version", module) > 0) hf_emit(c, v, "%s_version", key);
}

void hf_collect_misc(const struct hf_ctx *c)
{
    char v[HF_VAL];
    hf_copy(c, "host/kernel", "proc/sys/kernel/osrelease");
    hf_copy(c, "host/numa_nodes", "sys/devices/system/node/online");
    iommu_cmdline(c);
    int g = count_dir(c, "sys/kernel/iommu_groups");
    snprintf(v, sizeof v, "%d", g);
    hf_emit(c, g < 0 ? "absent" : v, "iommu/groups");

    loaded(c, "gpudirect/nvidia_peermem", "nvidia_peermem");
    loaded(c, "gpudirect/nv_peer_mem", "nv_peer_mem"); /* the legacy Mellanox module */
    if (hf_read(c, v, sizeof v, "sys/kernel/mm/memory_peers/nv_mem/version") < 0) strcpy(v, "absent");
    hf_emit(c, v, "gpudirect/memory_peers/nv_mem");
    if (hf_read(c, v, sizeof v, "sys/kernel/mm/memory_peers/nv_mem_nc/version") < 0) strcpy(v, "absent");
    hf_emit(c, v, "gpudirect/memory_peers/nv_mem_nc");
    if (hf_read(c, v, sizeof v, "sys/module/nvidia/version") < 0) strcpy(v, "absent");
    hf_emit(c, v, "gpudirect/nvidia_driver");
    /* The open kernel modules (required for DMA-BUF GPUDirect) say so in their version banner. */
    if (hf_read(c, v, sizeof v, "proc/driver/nvidia/version") >= 0)
        hf_emit(c, strstr(v, "Open Kernel Module") ? "open" : "proprietary", "gpudirect/nvidia_kernel_module");
}
