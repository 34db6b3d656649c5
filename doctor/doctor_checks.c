/* Doctor's check driver and the helpers the check families share (verdict list, units, fact lookups). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

void rs_verdict(struct rs_verdicts *out, enum rs_level lvl, const char *check, const char *subject, const char *fix,
                const char *fmt, ...)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 64;
        struct rs_verdict *v = realloc(out->v, cap * sizeof *v);
        if (!v) return;
        out->v = v;
        out->cap = cap;
    }
    struct rs_verdict *d = &out->v[out->n++];
    memset(d, 0, sizeof *d);
    d->level = lvl;
    snprintf(d->check, sizeof d->check, "%s", check);
    snprintf(d->subject, sizeof d->subject, "%s", subject ? subject : "host");
    snprintf(d->fix, sizeof d->fix, "%s", fix ? fix : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

int rs_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return k;
}

int rs_verdicts_status(const struct rs_verdicts *v)
{
    int st = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->v[i].level == RS_FAIL) return 2;
        if (v->v[i].level == RS_WARN) st = 1;
    }
    return st;
}

void rs_verdicts_free(struct rs_verdicts *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

const char *rs_level_name(enum rs_level l)
{
    switch (l) {
    case RS_PASS: return "pass";
    case RS_WARN: return "warn";
    case RS_FAIL: return "fail";
    default: return "info";
    }
}

/* Per-lane payload bandwidth after line coding: Gen1/2 8b/10b, Gen3-5 128b/130b, Gen6 FLIT (242/256). */
double rs_pcie_lane_gbytes(const char *speed, int *gen)
{
    static const struct {
        double gts, gbytes;
        int gen;
    } t[] = {{2.5, 0.25, 1},
             {5.0, 0.5, 2},
             {8.0, 8.0 / 8 * 128 / 130, 3},
             {16.0, 16.0 / 8 * 128 / 130, 4},
             {32.0, 32.0 / 8 * 128 / 130, 5},
             {64.0, 64.0 / 8 * 242 / 256, 6}};
    if (gen) *gen = 0;
    if (!speed) return 0;
    char *end;
    double g = strtod(speed, &end);
    if (end == speed || g <= 0) return 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (g > t[i].gts - 0.1 && g < t[i].gts + 0.1) {
            if (gen) *gen = t[i].gen;
            return t[i].gbytes;
        }
    return 0;
}

double rs_ib_rate_gbits(const char *rate)
{
    if (!rate) return 0;
    char *end;
    double g = strtod(rate, &end);
    if (end == rate || g <= 0) return 0;
    return g;
}

const char *rs_pci_dist_name(enum rs_pci_dist d)
{
    static const char *const n[] = {"unknown", "PIX", "PXB", "PHB", "NODE", "SYS"};
    return (unsigned)d < 6 ? n[d] : "unknown";
}

const char *rs_pci_dist_nccl(enum rs_pci_dist d) { return rs_pci_dist_name(d == RS_DIST_NODE ? RS_DIST_PHB : d); }

const char *rs_pci_dist_words(enum rs_pci_dist d)
{
    static const char *const n[] = {"distance unknown",
                                    "same PCIe switch",
                                    "through several PCIe switches, same root port",
                                    "through the CPU's PCIe root complex",
                                    "across PCIe root complexes of one NUMA node",
                                    "across CPU sockets"};
    return (unsigned)d < 6 ? n[d] : n[0];
}

const char *rs_state_word(const char *s, char *buf, size_t n)
{
    if (!s) return "unknown";
    const char *c = strstr(s, ": ");
    snprintf(buf, n, "%s", c ? c + 2 : s);
    return buf;
}

int rs_ib_devs(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max)
{
    int n = rs_facts_children(f, out, max, "ib/"), o = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(out[i], "count") != 0) {
            if (o != i) memcpy(out[o], out[i], RS_FACT_NAME);
            o++;
        }
    return o;
}

int rs_ib_ports(struct rs_facts *f, const char *dev, char (*out)[RS_FACT_NAME], int max)
{
    return rs_facts_children(f, out, max, "ib/%s/port/", dev);
}

int rs_gpus(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max)
{
    int n = 0;
    for (int i = 0; i < max; i++) {
        const char *b = rs_facts_get(f, "gpu/%d/pci", i);
        if (!b) break;
        snprintf(out[n++], RS_FACT_NAME, "%s", b);
    }
    return n;
}

const char *rs_port_netdev(struct rs_facts *f, const char *dev, const char *port, char *buf, size_t n)
{
    char gids[256][RS_FACT_NAME];
    int ng = rs_facts_children(f, gids, 256, "ib/%s/port/%s/gid/", dev, port);
    for (int i = 0; i < ng; i++) {
        const char *nd = rs_facts_get(f, "ib/%s/port/%s/gid/%s/ndev", dev, port, gids[i]);
        if (nd && *nd) {
            snprintf(buf, n, "%s", nd);
            return buf;
        }
    }
    const char *nds = rs_facts_get(f, "ib/%s/netdevs", dev);
    if (nds && *nds) {
        snprintf(buf, n, "%s", nds);
        char *sp = strchr(buf, ' ');
        if (sp) *sp = '\0';
        return buf;
    }
    return NULL;
}

/* Same PCI slot (domain:bus:device), any function: the functions of a multi-port NIC share one link. */
int rs_same_slot(const char *a, const char *b)
{
    const char *da = strrchr(a, '.'), *db = strrchr(b, '.');
    return da && db && da - a == db - b && strncmp(a, b, (size_t)(da - a)) == 0;
}

double rs_nic_line_gbits(struct rs_facts *f, const char *bdf, char *names, size_t n)
{
    char devs[RS_MAX_DEV][RS_FACT_NAME];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV);
    double active = 0, any = 0;
    size_t off = 0;
    if (names && n) names[0] = '\0';
    for (int i = 0; i < nd; i++) {
        const char *p = rs_facts_get(f, "ib/%s/pci", devs[i]);
        /* The device itself, or another function of its slot that was described as a NIC (SR-IOV VFs are
         * not: they share the physical function's line rate). */
        if (!p || !(strcmp(p, bdf) == 0 || (rs_same_slot(p, bdf) && rs_facts_get(f, "pci/%s/role", p)))) continue;
        if (names && off + strlen(devs[i]) + 2 < n)
            off += (size_t)snprintf(names + off, n - off, "%s%s", off ? "," : "", devs[i]);
        char ports[16][RS_FACT_NAME], w[32];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int k = 0; k < np; k++) {
            double r = rs_ib_rate_gbits(rs_facts_get(f, "ib/%s/port/%s/rate", devs[i], ports[k]));
            any = r > any ? r : any;
            if (strcmp(rs_state_word(rs_facts_get(f, "ib/%s/port/%s/state", devs[i], ports[k]), w, sizeof w),
                       "ACTIVE") == 0)
                active += r;
        }
    }
    return active > 0 ? active : any;
}

int rs_gid_ipv4(const char *addr, char *buf, size_t n)
{
    /* IPv4-mapped: 0000:0000:0000:0000:0000:ffff:AABB:CCDD */
    unsigned g[8];
    if (!addr || sscanf(addr, "%x:%x:%x:%x:%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]) != 8)
        return 0;
    if (g[0] || g[1] || g[2] || g[3] || g[4] || g[5] != 0xffff) return 0;
    snprintf(buf, n, "%u.%u.%u.%u", g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff);
    return 1;
}

void rs_doctor_check(struct rs_facts *facts, struct rs_verdicts *out)
{
    rs_facts_sort(facts);
    rs_check_rdma(facts, out);
    rs_check_pcie(facts, out);
    rs_check_topo(facts, out);
    rs_check_gdr(facts, out);
    rs_check_nccl(facts, out);
    rs_check_cc(facts, out);
}
