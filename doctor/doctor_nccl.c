/* NCCL environment sanity: the variables that pick NIC, GID, interface and GPUDirect level, checked
 * against the devices, GID tables and netdevs actually present. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

/* NCCL's list syntax (NCCL_IB_HCA, NCCL_SOCKET_IFNAME): optional '^' (exclude the listed), then
 * optional '=' (exact names instead of prefixes), then "name[:port]" entries separated by ','. */
struct nlist {
    int exclude, exact, n;
    char name[32][RS_FACT_NAME];
    int port[32];
    int hits[32];
};

static void nlist_parse(const char *spec, struct nlist *l)
{
    memset(l, 0, sizeof *l);
    if (*spec == '^') {
        l->exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        l->exact = 1;
        spec++;
    }
    while (*spec && l->n < 32) {
        const char *e = strchr(spec, ',');
        size_t len = e ? (size_t)(e - spec) : strlen(spec);
        char ent[RS_FACT_NAME];
        rs_fmt(ent, sizeof ent, "%.*s", (int)(len < sizeof ent ? len : sizeof ent - 1), spec);
        char *colon = strchr(ent, ':');
        l->port[l->n] = -1;
        if (colon) {
            *colon = '\0';
            l->port[l->n] = atoi(colon + 1);
        }
        if (*ent) rs_fmt(l->name[l->n++], RS_FACT_NAME, "%s", ent);
        if (!e) break;
        spec = e + 1;
    }
}

/* Does the list select name[:port]? Counts hits per entry. */
static int nlist_selects(struct nlist *l, const char *name, int port)
{
    int m = 0;
    for (int i = 0; i < l->n; i++) {
        int nm = l->exact ? strcmp(name, l->name[i]) == 0 : strncmp(name, l->name[i], strlen(l->name[i])) == 0;
        if (nm && (l->port[i] < 0 || port < 0 || l->port[i] == port)) {
            l->hits[i]++;
            m = 1;
        }
    }
    return l->exclude ? !m : m;
}

struct portref {
    char dev[RS_FACT_NAME];
    int port;
};

/* Ports NCCL would use: all, or those NCCL_IB_HCA selects. */
static int selected_ports(struct rs_facts *f, const char *hca, struct portref *out, int max)
{
    char devs[RS_MAX_DEV][RS_FACT_NAME];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV), n = 0;
    struct nlist l;
    if (hca) nlist_parse(hca, &l);
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np && n < max; p++)
            if (!hca || nlist_selects(&l, devs[i], atoi(ports[p]))) {
                rs_fmt(out[n].dev, RS_FACT_NAME, "%s", devs[i]);
                out[n++].port = atoi(ports[p]);
            }
    }
    return n;
}

static void check_hca(struct rs_facts *f, struct rs_verdicts *out, const char *hca)
{
    char devs[RS_MAX_DEV][RS_FACT_NAME], list[512] = "", fix[512];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV);
    struct nlist l;
    nlist_parse(hca, &l);
    struct portref sel[128];
    int ns = 0, down = 0;
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME], w[32];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np; p++) {
            if (!nlist_selects(&l, devs[i], atoi(ports[p])) || ns >= 128) continue;
            rs_fmt(sel[ns].dev, RS_FACT_NAME, "%s", devs[i]);
            sel[ns++].port = atoi(ports[p]);
            if (strcmp(rs_state_word(rs_facts_get(f, "ib/%s/port/%s/state", devs[i], ports[p]), w, sizeof w),
                       "ACTIVE") != 0)
                down++;
            rs_fmt(list + strlen(list), sizeof list - strlen(list), "%s%s:%s", *list ? " " : "", devs[i], ports[p]);
        }
    }
    char all[512] = "";
    for (int i = 0; i < nd; i++) rs_fmt(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? " " : "", devs[i]);
    if (ns == 0) {
        rs_fmt(fix, sizeof fix, "set NCCL_IB_HCA to present devices (%s) or unset it", nd ? all : "none");
        rs_verdict(out, RS_FAIL, "nccl.ib_hca", "env", fix,
                   "NCCL_IB_HCA=%s selects no RDMA port (present: %s): NCCL falls back to TCP sockets", hca,
                   nd ? all : "none");
        return;
    }
    char miss[256] = "";
    if (!l.exclude)
        for (int i = 0; i < l.n; i++)
            if (!l.hits[i])
                rs_fmt(miss + strlen(miss), sizeof miss - strlen(miss), "%s%s", *miss ? "," : "", l.name[i]);
    if (*miss) {
        rs_fmt(fix, sizeof fix, "remove %s from NCCL_IB_HCA (present: %s)", miss, all);
        rs_verdict(out, RS_WARN, "nccl.ib_hca", "env", fix,
                   "NCCL_IB_HCA=%s: %s matches no present device/port; selects %s", hca, miss, list);
    } else if (down) {
        rs_verdict(out, RS_WARN, "nccl.ib_hca", "env", "exclude the ports that are not ACTIVE, or fix their links",
                   "NCCL_IB_HCA=%s selects %s, %d of them not ACTIVE", hca, list, down);
    } else {
        rs_verdict(out, RS_PASS, "nccl.ib_hca", "env", NULL, "NCCL_IB_HCA=%s selects %s", hca, list);
    }
}

/* The RoCE v2 GID index of a port to recommend (an IPv4 one if any: *ipv4 set), -1 if none. */
static int v2_index(struct rs_facts *f, const char *dev, int port, int *ipv4)
{
    *ipv4 = 0;
    char gids[256][RS_FACT_NAME], ip[32];
    int ng = rs_facts_children(f, gids, 256, "ib/%s/port/%d/gid/", dev, port), any = -1;
    for (int i = 0; i < ng; i++) {
        const char *t = rs_facts_get(f, "ib/%s/port/%d/gid/%s/type", dev, port, gids[i]);
        if (!t || !strstr(t, "v2")) continue;
        if (rs_gid_ipv4(rs_facts_get(f, "ib/%s/port/%d/gid/%s/addr", dev, port, gids[i]), ip, sizeof ip)) {
            *ipv4 = 1;
            return atoi(gids[i]);
        }
        if (any < 0) any = atoi(gids[i]);
    }
    return any;
}

static void check_gid(struct rs_facts *f, struct rs_verdicts *out, const char *hca, const char *gidx)
{
    struct portref sel[128];
    int ns = selected_ports(f, hca, sel, 128), roce = 0;
    char *end;
    long idx = gidx ? strtol(gidx, &end, 10) : -1;
    if (gidx && (end == gidx || *end || idx < -1 || idx > 1023)) {
        rs_verdict(out, RS_FAIL, "nccl.gid_index", "env", "set NCCL_IB_GID_INDEX to a GID table index (or unset it)",
                   "NCCL_IB_GID_INDEX=%s is not a GID index", gidx);
        return;
    }
    for (int i = 0; i < ns; i++) {
        const char *ll = rs_facts_get(f, "ib/%s/port/%d/link_layer", sel[i].dev, sel[i].port);
        if (!ll || strcmp(ll, "Ethernet") != 0) continue;
        roce++;
        char subj[RS_FACT_NAME + 8], fix[512];
        rs_fmt(subj, sizeof subj, "%s:%d", sel[i].dev, sel[i].port);
        int v4, rec = v2_index(f, sel[i].dev, sel[i].port, &v4);
        if (idx < 0) {
            if (rec >= 0)
                rs_verdict(out, RS_INFO, "nccl.gid_index", subj, NULL,
                           "NCCL_IB_GID_INDEX unset: NCCL picks a RoCE v2 GID itself (the %s one here is index %d)",
                           v4 ? "IPv4" : "link-local", rec);
            continue;
        }
        const char *type = rs_facts_get(f, "ib/%s/port/%d/gid/%ld/type", sel[i].dev, sel[i].port, idx);
        const char *ndev = rs_facts_get(f, "ib/%s/port/%d/gid/%ld/ndev", sel[i].dev, sel[i].port, idx);
        if (rec >= 0)
            rs_fmt(fix, sizeof fix,
                   "export NCCL_IB_GID_INDEX=%d (the RoCE v2 %s GID on %s), or unset it and let NCCL choose", rec,
                   v4 ? "IPv4" : "link-local", sel[i].dev);
        else
            rs_fmt(fix, sizeof fix,
                   "give the port's netdev an IP address so it gets a RoCE v2 GID, then point NCCL_IB_GID_INDEX at it");
        if (!type && !rs_facts_get(f, "ib/%s/port/%d/gid/%ld/addr", sel[i].dev, sel[i].port, idx))
            rs_verdict(out, RS_FAIL, "nccl.gid_index", subj, fix, "NCCL_IB_GID_INDEX=%ld is an empty GID slot on %s",
                       idx, subj);
        else if (type && strstr(type, "v2"))
            rs_verdict(out, RS_PASS, "nccl.gid_index", subj, NULL, "NCCL_IB_GID_INDEX=%ld is a RoCE v2 GID on %s%s%s",
                       idx, subj, ndev ? " netdev " : "", ndev ? ndev : "");
        else
            rs_verdict(out, RS_FAIL, "nccl.gid_index", subj, fix,
                       "NCCL_IB_GID_INDEX=%ld is a RoCE v1 GID on %s (type \"%s\"): RoCE v1 is not IP-routable and "
                       "mismatches peers using RoCE v2",
                       idx, subj, type ? type : "untyped");
    }
    if (gidx && roce == 0)
        rs_verdict(out, RS_INFO, "nccl.gid_index", "env", NULL, "NCCL_IB_GID_INDEX=%s set but no selected port is RoCE",
                   gidx);
}

static void check_ifname(struct rs_facts *f, struct rs_verdicts *out, const char *spec)
{
    char ifs[256][RS_FACT_NAME], list[512] = "", fix[512];
    int ni = rs_facts_children(f, ifs, 256, "net/"), n = 0, up = 0, lo = 0;
    struct nlist l;
    nlist_parse(spec, &l);
    for (int i = 0; i < ni; i++)
        if (nlist_selects(&l, ifs[i], -1)) {
            const char *os = rs_facts_get(f, "net/%s/operstate", ifs[i]);
            n++;
            if (strcmp(ifs[i], "lo") == 0) lo++;
            else if (os && (strcmp(os, "up") == 0 || strcmp(os, "unknown") == 0)) up++;
            rs_fmt(list + strlen(list), sizeof list - strlen(list), "%s%s(%s)", *list ? " " : "", ifs[i],
                   os ? os : "?");
        }
    if (n == 0) {
        rs_fmt(fix, sizeof fix, "set NCCL_SOCKET_IFNAME to an existing interface (%d present) or unset it", ni);
        rs_verdict(out, RS_FAIL, "nccl.socket_ifname", "env", fix,
                   "NCCL_SOCKET_IFNAME=%s matches no network interface: NCCL bootstrap fails", spec);
    } else if (up == 0) {
        rs_verdict(out, RS_FAIL, "nccl.socket_ifname", "env",
                   "point NCCL_SOCKET_IFNAME at an interface that is up and reaches the other nodes",
                   "NCCL_SOCKET_IFNAME=%s matches only %s: no usable interface for multi-node bootstrap", spec, list);
    } else {
        rs_verdict(out, lo ? RS_WARN : RS_PASS, "nccl.socket_ifname", "env",
                   lo ? "exclude lo (NCCL's default excludes it)" : NULL, "NCCL_SOCKET_IFNAME=%s matches %s", spec,
                   list);
    }
}

static int gdr_level(const char *v)
{
    /* NCCL's path names for this variable; numbered like enum rs_pci_dist (LOC = 0 = GDR off). */
    static const struct {
        const char *name;
        int level;
    } t[] = {{"LOC", 0}, {"PIX", RS_DIST_PIX}, {"PXB", RS_DIST_PXB}, {"PHB", RS_DIST_PHB}, {"SYS", RS_DIST_SYS}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(v, t[i].name) == 0) return t[i].level;
    return -1;
}

static void check_gdr_level(struct rs_facts *f, struct rs_verdicts *out, const char *v)
{
    int lvl = gdr_level(v);
    if (lvl < 0) {
        if (isdigit((unsigned char)*v))
            rs_verdict(out, RS_WARN, "nccl.gdr_level", "env", "use the names LOC, PIX, PXB, PHB or SYS",
                       "NCCL_NET_GDR_LEVEL=%s: numeric levels changed meaning between NCCL versions", v);
        else
            rs_verdict(out, RS_FAIL, "nccl.gdr_level", "env", "use one of LOC, PIX, PXB, PHB, SYS",
                       "NCCL_NET_GDR_LEVEL=%s is not a level", v);
        return;
    }
    if (lvl == 0) {
        rs_verdict(out, RS_WARN, "nccl.gdr_level", "env",
                   "unset NCCL_NET_GDR_LEVEL (default PXB) unless GPUDirect is broken here",
                   "NCCL_NET_GDR_LEVEL=LOC turns GPUDirect RDMA off: NIC traffic is staged through host memory");
        return;
    }
    char gpus[RS_MAX_DEV][RS_FACT_NAME], devs[RS_MAX_DEV][RS_FACT_NAME], off[256] = "";
    int ng = rs_gpus(f, gpus, RS_MAX_DEV), nd = rs_ib_devs(f, devs, RS_MAX_DEV), noff = 0;
    for (int g = 0; g < ng; g++) {
        int best = 99;
        for (int i = 0; i < nd; i++) {
            const char *p = rs_facts_get(f, "ib/%s/pci", devs[i]);
            int d = p ? (int)rs_pci_distance(f, gpus[g], p) : 0;
            if (d > 0 && d < best) best = d;
        }
        int nccl_best = best == RS_DIST_NODE ? RS_DIST_PHB : best; /* NCCL has no NODE: it is PHB there */
        if (best != 99 && nccl_best > lvl) {
            noff++;
            rs_fmt(off + strlen(off), sizeof off - strlen(off), "%sgpu%d(%s)", *off ? "," : "", g,
                   rs_pci_dist_name((enum rs_pci_dist)best));
        }
    }
    if (noff)
        rs_verdict(out, RS_WARN, "nccl.gdr_level", "env",
                   "raise NCCL_NET_GDR_LEVEL to the distance shown, or fix the GPU/NIC placement",
                   "NCCL_NET_GDR_LEVEL=%s: GPUDirect RDMA off for %s (nearest NIC farther than %s)", v, off, v);
    else
        rs_verdict(out, RS_PASS, "nccl.gdr_level", "env", NULL, "NCCL_NET_GDR_LEVEL=%s covers every GPU's nearest NIC",
                   v);
}

void rs_check_nccl(struct rs_facts *f, struct rs_verdicts *out)
{
    char envs[64][RS_FACT_NAME], devs[RS_MAX_DEV][RS_FACT_NAME];
    int ne = rs_facts_children(f, envs, 64, "env/"), nd = rs_ib_devs(f, devs, RS_MAX_DEV), nccl = 0;
    for (int i = 0; i < ne; i++) nccl += strncmp(envs[i], "NCCL_", 5) == 0;
    const char *hca = rs_facts_get(f, "env/NCCL_IB_HCA"), *gidx = rs_facts_get(f, "env/NCCL_IB_GID_INDEX");
    const char *ifn = rs_facts_get(f, "env/NCCL_SOCKET_IFNAME"), *lvl = rs_facts_get(f, "env/NCCL_NET_GDR_LEVEL");
    const char *dis = rs_facts_get(f, "env/NCCL_IB_DISABLE"), *p2p = rs_facts_get(f, "env/NCCL_P2P_DISABLE");
    const char *rv = rs_facts_get(f, "env/NCCL_IB_ROCE_VERSION_NUM"),
               *dmabuf = rs_facts_get(f, "env/NCCL_DMABUF_ENABLE");
    if (!nccl) rs_verdict(out, RS_INFO, "nccl.env", "env", NULL, "no NCCL_* variables set: NCCL's defaults apply");
    if (dis && atoi(dis) == 1)
        rs_verdict(out, nd ? RS_WARN : RS_INFO, "nccl.ib_disable", "env", nd ? "unset NCCL_IB_DISABLE" : NULL,
                   "NCCL_IB_DISABLE=1: NCCL uses TCP sockets%s", nd ? ", not the RDMA devices present" : "");
    if (hca && nd) check_hca(f, out, hca);
    else if (hca)
        rs_verdict(out, RS_INFO, "nccl.ib_hca", "env", NULL, "NCCL_IB_HCA=%s set but there are no RDMA devices", hca);
    if (nd) check_gid(f, out, hca, gidx);
    if (rv && atoi(rv) == 1)
        rs_verdict(out, RS_WARN, "nccl.roce_version", "env",
                   "unset NCCL_IB_ROCE_VERSION_NUM (default 2) unless the fabric is RoCE v1 only",
                   "NCCL_IB_ROCE_VERSION_NUM=1 selects RoCE v1 GIDs (not IP-routable)");
    if (ifn) check_ifname(f, out, ifn);
    if (lvl) check_gdr_level(f, out, lvl);
    if (p2p && atoi(p2p) == 1)
        rs_verdict(
            out, RS_WARN, "nccl.p2p_disable", "env", "unset NCCL_P2P_DISABLE unless peer-to-peer is known broken here",
            "NCCL_P2P_DISABLE=1: intra-node GPU traffic goes through host memory instead of NVLink/PCIe peer-to-peer");
    if (dmabuf && atoi(dmabuf) == 0)
        rs_verdict(out, RS_INFO, "nccl.dmabuf", "env", NULL,
                   "NCCL_DMABUF_ENABLE=0: GPUDirect RDMA only through nvidia_peermem");
}
