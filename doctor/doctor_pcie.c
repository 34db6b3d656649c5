/* PCIe link checks: each GPU's and NIC's negotiated link (speed x width) against what it is capable
 * of, the NIC's link against its network line rate, and the bridges above each device (a narrow switch
 * uplink caps everything below it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

struct link {
    double gbytes; /* usable GB/s, 0 if unknown */
    int gen, width;
};

static struct link get_link(struct rs_facts *f, const char *bdf, const char *which)
{
    struct link l = {0, 0, 0};
    const char *s = rs_facts_get(f, "pci/%s/%s_link_speed", bdf, which);
    const char *w = rs_facts_get(f, "pci/%s/%s_link_width", bdf, which);
    double lane = rs_pcie_lane_gbytes(s, &l.gen);
    l.width = w ? atoi(w) : 0;
    if (lane > 0 && l.width > 0) l.gbytes = lane * l.width;
    return l;
}

static const char *link_str(struct link l, char *buf, size_t n)
{
    if (l.gbytes <= 0) rs_fmt(buf, n, "unknown");
    else rs_fmt(buf, n, "Gen%d x%d (%.1f GB/s)", l.gen, l.width, l.gbytes);
    return buf;
}

/* Line rate of a NIC in GB/s: its RDMA ports, else its netdevs' speed (Mb/s). */
static double nic_line(struct rs_facts *f, const char *bdf, char *names, size_t n)
{
    double g = rs_nic_line_gbits(f, bdf, names, n);
    if (g <= 0) {
        char ifs[RS_MAX_DEV][RS_FACT_NAME];
        int ni = rs_facts_children(f, ifs, RS_MAX_DEV, "net/");
        for (int i = 0; i < ni; i++) {
            const char *p = rs_facts_get(f, "net/%s/pci", ifs[i]), *sp = rs_facts_get(f, "net/%s/speed", ifs[i]);
            if (p && sp && strcmp(p, bdf) == 0 && atol(sp) > 0) {
                g += atol(sp) / 1000.0;
                if (names && !*names) rs_fmt(names, n, "%s", ifs[i]);
            }
        }
    }
    if (names && !*names) rs_fmt(names, n, "%s", bdf);
    return g / 8.0;
}

static void check_device(struct rs_facts *f, struct rs_verdicts *out, const char *bdf, int gpu_idx)
{
    int is_gpu = gpu_idx >= 0;
    char name[256] = "", subj[RS_FACT_NAME], cb[64], mb[64], fix[512], who[256];
    double line = 0;
    rs_fmt(who, sizeof who, "%s", bdf);
    if (is_gpu) {
        rs_fmt(name, sizeof name, "gpu%d", gpu_idx);
        const char *model = rs_facts_get(f, "gpu/%d/model", gpu_idx);
        if (model) rs_fmt(who, sizeof who, "%s (%s)", bdf, model);
    } else {
        line = nic_line(f, bdf, name, sizeof name);
    }
    rs_fmt(subj, sizeof subj, "%s", name);
    struct link cur = get_link(f, bdf, "current"), max = get_link(f, bdf, "max");
    if (cur.gbytes <= 0 || max.gbytes <= 0) {
        rs_verdict(out, RS_INFO, "pcie.link", subj, NULL, "unknown: link speed/width of %s not visible", bdf);
        return;
    }
    link_str(cur, cb, sizeof cb);
    link_str(max, mb, sizeof mb);
    int down = cur.gbytes + 0.01 < max.gbytes;
    if (is_gpu) {
        if (cur.width < max.width) {
            rs_fmt(fix, sizeof fix,
                   "reseat the GPU / check riser and slot bifurcation in the BIOS (lspci -vv -s %s: LnkSta vs LnkCap)",
                   bdf);
            rs_verdict(out, RS_WARN, "pcie.link", subj, fix,
                       "%s runs %s of its %s: host<->GPU and GPUDirect traffic capped", who, cb, mb);
        } else if (down) {
            rs_verdict(out, RS_INFO, "pcie.link", subj,
                       "re-check under load: nvidia-smi -q -d PERFORMANCE,PCIE (or lspci -vv -s <bdf>)",
                       "%s runs %s of its %s: normal for an idle GPU (the link speed drops to save power)", who, cb,
                       mb);
        } else {
            rs_verdict(out, RS_PASS, "pcie.link", subj, NULL, "%s at %s", who, cb);
        }
    } else if (down) {
        rs_fmt(fix, sizeof fix,
               "reseat the NIC / move it to an x%d Gen%d slot, check riser and BIOS bifurcation (lspci -vv -s %s: "
               "LnkSta vs LnkCap)",
               max.width, max.gen, bdf);
        if (line > 0 && cur.gbytes < line)
            rs_verdict(out, RS_FAIL, "pcie.link", subj, fix,
                       "NIC %s negotiated PCIe %s, below its %.1f GB/s line rate (capable of %s)", name, cb, line, mb);
        else
            rs_verdict(out, RS_WARN, "pcie.link", subj, fix,
                       "NIC %s negotiated PCIe %s of its %s (still above its %.1f GB/s line rate)", name, cb, mb, line);
    } else if (line > 0 && cur.gbytes < line) {
        rs_verdict(out, RS_WARN, "pcie.link", subj,
                   "use a slot/NIC pairing whose PCIe generation carries the line rate (e.g. Gen5 x16 for 400G)",
                   "NIC %s at its full PCIe %s still cannot carry its %.1f GB/s line rate", name, cb, line);
    } else {
        rs_verdict(out, RS_PASS, "pcie.link", subj, NULL, "NIC %s at PCIe %s%s%.1f GB/s line rate", name, cb,
                   line > 0 ? " >= " : ", ", line > 0 ? line : 0.0);
    }

    /* Bridges above: the narrowest link on the way to the root caps the device. */
    const char *path = rs_facts_get(f, "pci/%s/path", bdf);
    if (!path) return;
    char tmp[1024], *save = NULL;
    rs_fmt(tmp, sizeof tmp, "%s", path);
    for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, bdf) == 0 || !rs_facts_get(f, "pci/%s/role", c)) continue;
        struct link bl = get_link(f, c, "current");
        if (bl.gbytes <= 0 || bl.gbytes + 0.01 >= cur.gbytes) continue;
        char bb[64];
        link_str(bl, bb, sizeof bb);
        rs_fmt(fix, sizeof fix, "check the PCIe switch/riser link at %s (lspci -vv -s %s) and its slot/cabling", c, c);
        if (!is_gpu && line > 0 && bl.gbytes < line)
            rs_verdict(out, RS_FAIL, "pcie.uplink", subj, fix,
                       "bridge %s above NIC %s runs %s, below the NIC's %.1f GB/s line rate", c, name, bb, line);
        else
            rs_verdict(out, RS_WARN, "pcie.uplink", subj, fix,
                       "bridge %s above %s runs %s, narrower than the device's own %s", c, name, bb, cb);
    }
}

void rs_check_pcie(struct rs_facts *f, struct rs_verdicts *out)
{
    char gpus[RS_MAX_DEV][RS_FACT_NAME], pcis[1024][RS_FACT_NAME];
    int ng = rs_gpus(f, gpus, RS_MAX_DEV);
    for (int i = 0; i < ng; i++) check_device(f, out, gpus[i], i);
    int np = rs_facts_children(f, pcis, 1024, "pci/"), last = -1;
    for (int i = 0; i < np; i++) {
        const char *role = rs_facts_get(f, "pci/%s/role", pcis[i]);
        if (!role || strcmp(role, "nic") != 0) continue;
        if (last >= 0 && rs_same_slot(pcis[last], pcis[i]))
            continue; /* another function of the NIC just checked: same link, rates already summed */
        last = i;
        check_device(f, out, pcis[i], -1);
    }
}
