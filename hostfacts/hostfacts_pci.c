/* pci/ and gpu/ facts: for GPUs (NVIDIA, display/3D class) and NICs (functions with an RDMA device, and
 * Mellanox network/InfiniBand functions), and for every bridge above them: link speed and width (current
 * and max), NUMA node, the /sys/devices path (the PCIe hierarchy GPU-NIC distance is computed from),
 * IOMMU group and driver. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostfacts_int.h"

#define VENDOR_NVIDIA   0x10de
#define VENDOR_MELLANOX 0x15b3

enum role { ROLE_NONE, ROLE_GPU, ROLE_NIC };

static unsigned long read_hex(const struct hf_ctx *c, const char *bdf, const char *attr)
{
    char v[32];
    if (hf_read(c, v, sizeof v, "sys/bus/pci/devices/%s/%s", bdf, attr) <= 0) return 0;
    return strtoul(v, NULL, 16);
}

static enum role classify(const struct hf_ctx *c, const char *bdf)
{
    if (hf_exists(c, "sys/bus/pci/devices/%s/physfn", bdf))
        return ROLE_NONE; /* an SR-IOV virtual function: its link and rate are its physical function's */
    unsigned long vendor = read_hex(c, bdf, "vendor"), cls = read_hex(c, bdf, "class") >> 8;
    if (vendor == VENDOR_NVIDIA && (cls == 0x0302 || cls == 0x0300)) return ROLE_GPU;
    if (hf_exists(c, "sys/bus/pci/devices/%s/infiniband", bdf)) return ROLE_NIC;
    if (vendor == VENDOR_MELLANOX && (cls == 0x0207 || cls == 0x0200)) return ROLE_NIC;
    return ROLE_NONE;
}

/* Basename of a symlink's target (driver, iommu_group). */
static int link_base(const struct hf_ctx *c, char *out, size_t n, const char *bdf, const char *attr)
{
    char p[PATH_MAX], t[PATH_MAX];
    if (!hf_path(c, p, sizeof p, "sys/bus/pci/devices/%s/%s", bdf, attr)) return -1;
    ssize_t l = readlink(p, t, sizeof t - 1);
    if (l <= 0) return -1;
    t[l] = '\0';
    const char *b = strrchr(t, '/');
    b = b ? b + 1 : t;
    if (strlen(b) >= n) return -1;
    strcpy(out, b);
    return 0;
}

static void dev_facts(const struct hf_ctx *c, const char *bdf, const char *role, const char *path)
{
    static const char *const attrs[] = {
        "vendor",         "device",         "class",    "current_link_speed", "current_link_width",
        "max_link_speed", "max_link_width", "numa_node"};
    char key[256], v[HF_NAME];
    hf_emit(c, role, "pci/%s/role", bdf);
    for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
        hf_fmt(key, sizeof key, "pci/%s/%s", bdf, attrs[a]);
        hf_copy(c, key, "sys/bus/pci/devices/%s/%s", bdf, attrs[a]);
    }
    if (path) hf_emit(c, path, "pci/%s/path", bdf);
    if (link_base(c, v, sizeof v, bdf, "iommu_group") == 0) hf_emit(c, v, "pci/%s/iommu_group", bdf);
    if (link_base(c, v, sizeof v, bdf, "driver") == 0) hf_emit(c, v, "pci/%s/driver", bdf);
}

/* "Model:" line of /proc/driver/nvidia/gpus/<bdf>/information (present with the NVIDIA driver). */
static void gpu_model(const struct hf_ctx *c, int idx, const char *bdf)
{
    char p[PATH_MAX], buf[2048];
    if (!hf_path(c, p, sizeof p, "proc/driver/nvidia/gpus/%s/information", bdf)) return;
    int fd = hf_fd_open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t r = hf_fd_read(fd, buf, sizeof buf - 1);
    hf_fd_close(fd);
    if (r <= 0) return;
    buf[r] = '\0';
    char *m = strstr(buf, "Model:");
    if (!m) return;
    m += 6;
    while (*m == ' ' || *m == '\t') m++;
    char *e = strchr(m, '\n');
    if (e) *e = '\0';
    hf_emit(c, m, "gpu/%d/model", idx);
}

struct sel {
    char bdf[HF_NAME];
    enum role role;
};

static int cmp_sel(const void *a, const void *b)
{
    return strcmp(((const struct sel *)a)->bdf, ((const struct sel *)b)->bdf);
}

void hf_collect_pci(const struct hf_ctx *c)
{
    char p[PATH_MAX];
    if (!hf_path(c, p, sizeof p, "sys/bus/pci/devices")) return;
    struct hf_dir d;
    if (hf_dir_open(&d, p) != 0) return;
    struct sel sel[HF_MAX_GPU];
    int ns = 0, scanned = 0;
    const char *e;
    while (ns < HF_MAX_GPU && scanned < HF_MAX_PCI && (e = hf_dir_next(&d)) != NULL) {
        if (!hf_is_bdf(e) || strlen(e) >= HF_NAME) continue;
        scanned++;
        enum role r = classify(c, e);
        if (r != ROLE_NONE) {
            strcpy(sel[ns].bdf, e);
            sel[ns++].role = r;
        }
    }
    hf_dir_close(&d);
    hf_sort(sel, (size_t)ns, sizeof sel[0], cmp_sel);

    /* Bridges above the selected devices, each described once (a switch serves several devices). */
    char seen[HF_MAX_GPU * 4][24];
    int nseen = 0;
    int gpus = 0;
    for (int i = 0; i < ns; i++) {
        char path[PATH_MAX];
        int have = hf_devpath(c, path, sizeof path, "sys/bus/pci/devices/%s", sel[i].bdf) == 0;
        dev_facts(c, sel[i].bdf, sel[i].role == ROLE_GPU ? "gpu" : "nic", have ? path : NULL);
        if (sel[i].role == ROLE_GPU) {
            hf_emit(c, sel[i].bdf, "gpu/%d/pci", gpus);
            gpu_model(c, gpus, sel[i].bdf);
            gpus++;
        }
        if (!have) continue;
        /* Walk the path's components above the device itself. */
        char *save = NULL, *comp, tmp[PATH_MAX];
        strcpy(tmp, path);
        int depth = 0;
        for (comp = strtok_r(tmp, "/", &save); comp && depth < HF_MAX_DEPTH; comp = strtok_r(NULL, "/", &save)) {
            if (!hf_is_bdf(comp) || strcmp(comp, sel[i].bdf) == 0 || strlen(comp) >= sizeof seen[0]) continue;
            depth++;
            int dup = 0;
            for (int k = 0; k < nseen && !dup; k++) dup = strcmp(seen[k], comp) == 0;
            for (int k = 0; k < ns && !dup; k++) dup = strcmp(sel[k].bdf, comp) == 0;
            if (dup || nseen >= (int)(sizeof seen / sizeof seen[0])) continue;
            strcpy(seen[nseen++], comp);
            char bpath[PATH_MAX];
            int bh = hf_devpath(c, bpath, sizeof bpath, "sys/bus/pci/devices/%s", comp) == 0;
            dev_facts(c, comp, "bridge", bh ? bpath : NULL);
        }
    }
    char v[16];
    snprintf(v, sizeof v, "%d", gpus);
    hf_emit(c, v, "gpu/count");
}
