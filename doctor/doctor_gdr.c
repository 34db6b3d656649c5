/* GPUDirect RDMA prerequisites: a peer-memory client (nvidia_peermem: the paths NCCL itself probes) or
 * the DMA-BUF path (kernel >= 5.12, NVIDIA open kernel modules), and IOMMU/ACS hints where visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

static int present(const char *v) { return v && strcmp(v, "absent") != 0; }

/* 1 = kernel >= 5.12, 0 = older, -1 = unknown. */
static int kernel_dmabuf(const char *rel)
{
    int maj, min;
    if (!rel || sscanf(rel, "%d.%d", &maj, &min) != 2) return -1;
    return maj > 5 || (maj == 5 && min >= 12);
}

static void iommu_acs(struct rs_facts *f, struct rs_verdicts *out, char (*gpus)[RS_FACT_NAME], int ng)
{
    const char *groups = rs_facts_get(f, "iommu/groups"), *cmd = rs_facts_get(f, "host/cmdline_iommu");
    int on = groups && atoi(groups) > 0;
    int pt = cmd && (strstr(cmd, "iommu=pt") || strstr(cmd, "iommu.passthrough=1"));
    if (!groups) {
        rs_verdict(out, RS_INFO, "gdr.iommu", "host", NULL, "unknown: IOMMU state not visible");
    } else if (!on) {
        rs_verdict(out, RS_PASS, "gdr.iommu", "host", NULL,
                   "IOMMU off (no IOMMU groups): peer-to-peer DMA is not translated");
    } else if (pt) {
        rs_verdict(out, RS_PASS, "gdr.iommu", "host", NULL, "IOMMU on in passthrough mode (%s)", cmd);
    } else {
        rs_verdict(
            out, RS_WARN, "gdr.iommu", "host",
            "boot with iommu=pt (intel_iommu=on iommu=pt / amd_iommu=on iommu=pt) or with the IOMMU off on bare metal",
            "IOMMU on (%s IOMMU groups) without passthrough (kernel options: %s): GPUDirect RDMA peer-to-peer DMA may "
            "fail or be slowed",
            groups, cmd ? cmd : "none");
    }
    /* ACS itself is in PCI config space beyond what non-root can read. Hint: with the IOMMU on, a GPU and
     * a NIC under one switch land in different IOMMU groups only if the switch isolates them (ACS on),
     * which sends their peer-to-peer traffic up to the root complex. */
    char devs[RS_MAX_DEV][RS_FACT_NAME];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV), hinted = 0, checked = 0;
    if (on)
        for (int g = 0; g < ng; g++)
            for (int i = 0; i < nd; i++) {
                const char *np = rs_facts_get(f, "ib/%s/pci", devs[i]);
                if (!np || rs_pci_distance(f, gpus[g], np) > RS_DIST_PXB) continue;
                const char *ga = rs_facts_get(f, "pci/%s/iommu_group", gpus[g]),
                           *gb = rs_facts_get(f, "pci/%s/iommu_group", np);
                if (!ga || !gb) continue;
                checked++;
                if (strcmp(ga, gb) != 0 && hinted++ < 4) {
                    char subj[RS_FACT_NAME];
                    rs_fmt(subj, sizeof subj, "gpu%d", g);
                    rs_verdict(out, RS_WARN, "gdr.acs", subj,
                               "disable ACS on the PCIe switch ports (BIOS, or setpci on the bridges' ACS control) for "
                               "GPUDirect; verify with lspci -vvv | grep ACSCtl",
                               "%s and %s share a PCIe switch but sit in different IOMMU groups (%s, %s): ACS is "
                               "probably on and "
                               "redirects their peer-to-peer traffic through the root complex",
                               gpus[g], devs[i], ga, gb);
                }
            }
    if (!hinted)
        rs_verdict(out, RS_INFO, "gdr.acs", "host", checked ? NULL : "lspci -vvv | grep ACSCtl (as root)",
                   checked ? "GPU/NIC pairs under one switch share IOMMU groups: no sign of ACS redirection"
                           : "unknown: ACS settings are not visible without root");
}

void rs_check_gdr(struct rs_facts *f, struct rs_verdicts *out)
{
    char gpus[RS_MAX_DEV][RS_FACT_NAME], devs[RS_MAX_DEV][RS_FACT_NAME];
    int ng = rs_gpus(f, gpus, RS_MAX_DEV), nd = rs_ib_devs(f, devs, RS_MAX_DEV);
    if (ng == 0 || nd == 0) {
        rs_verdict(out, RS_INFO, "gdr.peermem", "host", NULL, "GPUDirect RDMA checks skipped: %s",
                   ng == 0 && nd == 0 ? "no GPUs and no RDMA devices"
                   : ng == 0          ? "no GPUs"
                                      : "no RDMA devices");
        return;
    }
    const char *pm = rs_facts_get(f, "gpudirect/nvidia_peermem"),
               *pmv = rs_facts_get(f, "gpudirect/nvidia_peermem_version");
    const char *nv = rs_facts_get(f, "gpudirect/memory_peers/nv_mem"),
               *nvnc = rs_facts_get(f, "gpudirect/memory_peers/nv_mem_nc");
    const char *legacy = rs_facts_get(f, "gpudirect/nv_peer_mem");
    const char *drv = rs_facts_get(f, "gpudirect/nvidia_driver"),
               *flavor = rs_facts_get(f, "gpudirect/nvidia_kernel_module");
    const char *kern = rs_facts_get(f, "host/kernel");
    int peer =
        (pm && strcmp(pm, "loaded") == 0) || present(nv) || present(nvnc) || (legacy && strcmp(legacy, "loaded") == 0);
    int kd = kernel_dmabuf(kern);
    int open_mod = flavor && strcmp(flavor, "open") == 0;
    char why[256];
    if (!present(drv))
        rs_verdict(out, RS_WARN, "gdr.driver", "host", "install/load the NVIDIA driver (modprobe nvidia)",
                   "NVIDIA kernel driver not loaded (/sys/module/nvidia missing): no GPU use, no GPUDirect");
    if (peer) {
        rs_verdict(out, RS_PASS, "gdr.peermem", "host", NULL, "peer-memory GPUDirect RDMA available: %s%s%s%s",
                   pm && strcmp(pm, "loaded") == 0           ? "nvidia_peermem loaded"
                   : legacy && strcmp(legacy, "loaded") == 0 ? "nv_peer_mem loaded"
                                                             : "memory_peers/nv_mem present",
                   pmv ? " (version " : "", pmv ? pmv : "", pmv ? ")" : "");
    } else if (kd == 1 && open_mod) {
        rs_verdict(out, RS_PASS, "gdr.peermem", "host", NULL,
                   "nvidia_peermem not loaded, but DMA-BUF GPUDirect RDMA is possible (kernel %s >= 5.12, NVIDIA open "
                   "kernel modules %s); "
                   "NCCL prefers DMA-BUF when both GPU and NIC support it",
                   kern, present(drv) ? drv : "");
    } else {
        why[0] = '\0';
        if (kd == 0) rs_fmt(why, sizeof why, "kernel %s < 5.12", kern);
        else if (kd < 0) rs_fmt(why, sizeof why, "kernel version unknown");
        if (!open_mod)
            rs_fmt(why + strlen(why), sizeof why - strlen(why), "%s%s", *why ? ", " : "",
                   flavor ? "proprietary NVIDIA kernel modules" : "NVIDIA kernel module flavour unknown");
        rs_verdict(out, RS_WARN, "gdr.peermem", "host",
                   "modprobe nvidia-peermem (needs the MLNX_OFED/DOCA-OFED peer-memory API), or use DMA-BUF: NVIDIA "
                   "open kernel modules + kernel >= 5.12",
                   "no GPUDirect RDMA path: nvidia_peermem not loaded and DMA-BUF unavailable (%s); NCCL stages GPU "
                   "data through host memory",
                   why);
    }
    if (kd >= 0)
        rs_verdict(out, RS_INFO, "gdr.dmabuf", "host", NULL, "DMA-BUF: kernel %s %s 5.12, NVIDIA kernel modules %s",
                   kern, kd ? ">=" : "<", flavor ? flavor : "unknown");
    iommu_acs(f, out, gpus, ng);
}
