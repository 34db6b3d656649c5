/* GPU<->NIC affinity: PCIe distance from the device paths under /sys/devices (the bridge hierarchy), the
 * NUMA node of each, and which RDMA NIC each GPU should use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

#define MAXC 24

static int split(const char *path, char (*c)[32], int max)
{
    int n = 0;
    const char *s = path;
    while (*s && n < max) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l >= 32) l = 31;
        memcpy(c[n], s, l);
        c[n][l] = '\0';
        n++;
        if (!e) break;
        s = e + 1;
    }
    return n;
}

static int numa(struct rs_facts *f, const char *bdf)
{
    const char *n = rs_facts_get(f, "pci/%s/numa_node", bdf);
    return n ? atoi(n) : -1;
}

/* The paths look like pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0: the root bus (host
 * bridge), the root port, then switch upstream/downstream port pairs, then the device. Diverging below
 * one switch (one downstream port each) is PIX; deeper is PXB; sharing only the host bridge is PHB. */
enum rs_pci_dist rs_pci_distance(struct rs_facts *f, const char *a, const char *b)
{
    const char *pa = rs_facts_get(f, "pci/%s/path", a), *pb = rs_facts_get(f, "pci/%s/path", b);
    if (!pa || !pb) return RS_DIST_UNKNOWN;
    char ca[MAXC][32], cb[MAXC][32];
    int na = split(pa, ca, MAXC), nb = split(pb, cb, MAXC), c = 0;
    while (c < na && c < nb && strcmp(ca[c], cb[c]) == 0) c++;
    if (c == 0) {
        int x = numa(f, a), y = numa(f, b);
        return x == y ? RS_DIST_NODE : RS_DIST_SYS; /* both -1: a single-node host */
    }
    if (c == 1) return RS_DIST_PHB;
    if (c >= na || c >= nb) /* one is above the other: treat as same switch */
        return RS_DIST_PIX;
    return (na - c - 1 <= 1 && nb - c - 1 <= 1) ? RS_DIST_PIX : RS_DIST_PXB;
}

void rs_check_topo(struct rs_facts *f, struct rs_verdicts *out)
{
    char gpus[RS_MAX_DEV][RS_FACT_NAME], devs[RS_MAX_DEV][RS_FACT_NAME];
    int ng = rs_gpus(f, gpus, RS_MAX_DEV), nd = rs_ib_devs(f, devs, RS_MAX_DEV);
    if (ng == 0) {
        rs_verdict(out, RS_INFO, "topo.gpus", "host", NULL,
                   "no NVIDIA GPUs found (PCI vendor 0x10de, class 0x0300/0x0302)");
        return;
    }
    /* NICs with a PCI function (software devices have none). */
    int nic_of[RS_MAX_DEV], nn = 0;
    for (int i = 0; i < nd; i++) {
        const char *p = rs_facts_get(f, "ib/%s/pci", devs[i]);
        if (p && strcmp(p, "none") != 0 && rs_facts_get(f, "pci/%s/path", p)) nic_of[nn++] = i;
    }
    if (nn == 0) return; /* rdma.devices already said there is nothing to pair with */
    int best_nic[RS_MAX_DEV], users[RS_MAX_DEV] = {0};
    for (int g = 0; g < ng; g++) {
        enum rs_pci_dist best = RS_DIST_UNKNOWN;
        int bi = -1;
        for (int k = 0; k < nn; k++) {
            const char *p = rs_facts_get(f, "ib/%s/pci", devs[nic_of[k]]);
            enum rs_pci_dist d = rs_pci_distance(f, gpus[g], p);
            if (d != RS_DIST_UNKNOWN && (bi < 0 || d < best)) {
                best = d;
                bi = k;
            }
        }
        best_nic[g] = bi;
        char subj[RS_FACT_NAME], fix[512];
        rs_fmt(subj, sizeof subj, "gpu%d", g);
        if (bi < 0) {
            rs_verdict(out, RS_INFO, "topo.affinity", subj, NULL, "unknown: PCIe path of %s or of the NICs not visible",
                       gpus[g]);
            continue;
        }
        users[bi]++;
        const char *nic = devs[nic_of[bi]], *np = rs_facts_get(f, "ib/%s/pci", nic);
        char gn[16], nnu[16]; /* NUMA node, "?" when the platform reports none (-1) */
        rs_fmt(gn, sizeof gn, numa(f, gpus[g]) < 0 ? "?" : "%d", numa(f, gpus[g]));
        rs_fmt(nnu, sizeof nnu, numa(f, np) < 0 ? "?" : "%d", numa(f, np));
        if (best >= RS_DIST_PHB) {
            rs_fmt(fix, sizeof fix,
                   "place a NIC under the same PCIe switch as this GPU; otherwise GPUDirect RDMA needs "
                   "NCCL_NET_GDR_LEVEL=%s "
                   "(NCCL's default PXB turns it off here and stages through host memory)",
                   rs_pci_dist_nccl(best));
            rs_verdict(out, RS_WARN, "topo.affinity", subj, fix, "%s (NUMA %s): nearest NIC %s (%s, NUMA %s) is %s: %s",
                       gpus[g], gn, nic, np, nnu, rs_pci_dist_name(best), rs_pci_dist_words(best));
        } else {
            rs_verdict(out, RS_PASS, "topo.affinity", subj, NULL, "%s (NUMA %s) should use %s (%s, NUMA %s): %s, %s",
                       gpus[g], gn, nic, np, nnu, rs_pci_dist_name(best), rs_pci_dist_words(best));
        }
    }
    /* With at least as many NICs as GPUs, two GPUs sharing a nearest NIC means a NIC or GPU is misplaced. */
    if (nn >= ng)
        for (int k = 0; k < nn; k++)
            if (users[k] > 1) {
                char gl[256] = "";
                for (int g = 0; g < ng; g++)
                    if (best_nic[g] == k) rs_fmt(gl + strlen(gl), sizeof gl - strlen(gl), "%sgpu%d", *gl ? "," : "", g);
                rs_verdict(out, RS_WARN, "topo.balance", devs[nic_of[k]],
                           "check the slot placement of GPUs and NICs (nvidia-smi topo -m); NCCL will share this NIC "
                           "between those GPUs",
                           "%s is the nearest NIC of %s while %d NICs serve %d GPUs", devs[nic_of[k]], gl, nn, ng);
            }
}
