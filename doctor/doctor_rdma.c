/* RDMA port checks: devices present, port state/physical state/rate, RoCE GID table (which index is
 * RoCE v2 on which netdev) and the netdev MTU that bounds RoCE's path MTU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

/* The kernel derives RoCE's active MTU from the netdev MTU minus the RoCE headers (GRH 40, UDP 8,
 * BTH 12, XRC 4, AtomicETH 28, ICRC 4 = 96 bytes: iboe_get_mtu() in include/rdma/ib_addr.h) and rounds
 * down to an IB MTU (256..4096). */
static int roce_mtu(long netdev_mtu)
{
    long m = netdev_mtu - 96;
    int ib = 0;
    for (int v = 256; v <= 4096; v *= 2)
        if (v <= m) ib = v;
    return ib;
}

static void roce_port(struct rs_facts *f, struct rs_verdicts *out, const char *dev, const char *port, const char *subj)
{
    char gids[256][RS_FACT_NAME], v2list[256] = "", v1list[256] = "", fix[512], nd[64];
    int ng = rs_facts_children(f, gids, 256, "ib/%s/port/%s/gid/", dev, port);
    int nv2 = 0, nv1 = 0, v4idx = -1;
    char v4addr[32] = "", v4dev[64] = "";
    for (int i = 0; i < ng; i++) {
        const char *type = rs_facts_get(f, "ib/%s/port/%s/gid/%s/type", dev, port, gids[i]);
        const char *addr = rs_facts_get(f, "ib/%s/port/%s/gid/%s/addr", dev, port, gids[i]);
        const char *ndev = rs_facts_get(f, "ib/%s/port/%s/gid/%s/ndev", dev, port, gids[i]);
        char ip[32];
        int is4 = rs_gid_ipv4(addr, ip, sizeof ip);
        char *list = NULL;
        if (type && strstr(type, "v2")) {
            list = v2list;
            nv2++;
            if (is4 && v4idx < 0) {
                v4idx = atoi(gids[i]);
                rs_fmt(v4addr, sizeof v4addr, "%s", ip);
                rs_fmt(v4dev, sizeof v4dev, "%s", ndev ? ndev : "?");
            }
        } else if (type && strstr(type, "v1")) {
            list = v1list;
            nv1++;
        }
        if (list && strlen(list) + strlen(gids[i]) + 2 < 256)
            rs_fmt(list + strlen(list), 256 - strlen(list), "%s%s", *list ? "," : "", gids[i]);
    }
    if (ng == 0) {
        rs_fmt(fix, sizeof fix,
               "bring up the netdev of %s and give it an IP address (ip link set <if> up; ip addr add ...)", dev);
        rs_verdict(out, RS_FAIL, "roce.gid", subj, fix,
                   "RoCE port has an empty GID table: no netdev/IP bound, no RoCE traffic possible");
    } else if (nv2 == 0) {
        rs_verdict(out, RS_FAIL, "roce.gid", subj,
                   "enable RoCE v2 on the NIC (mlx5: it is on by default; check `rdma link`/firmware RoCE mode)",
                   "no RoCE v2 GID (RoCE v1 at index %s): RoCE v1 is not routable over IP", v1list);
    } else if (v4idx < 0) {
        rs_verdict(out, RS_WARN, "roce.gid", subj,
                   "assign an IPv4 address to the port's netdev (NCCL's default NCCL_IB_ADDR_FAMILY is AF_INET)",
                   "RoCE v2 GIDs at index %s but none with an IPv4 address (RoCE v1 at %s)", v2list,
                   *v1list ? v1list : "none");
    } else {
        rs_verdict(out, RS_PASS, "roce.gid", subj, NULL,
                   "RoCE v2 IPv4 GID at index %d on %s (%s); RoCE v2 at %s, RoCE v1 at %s", v4idx, v4dev, v4addr,
                   v2list, *v1list ? v1list : "none");
    }

    const char *ndev = rs_port_netdev(f, dev, port, nd, sizeof nd);
    if (!ndev) {
        rs_verdict(out, RS_INFO, "roce.mtu", subj, NULL, "unknown: no netdev found for this RoCE port");
        return;
    }
    const char *m = rs_facts_get(f, "net/%s/mtu", ndev), *os = rs_facts_get(f, "net/%s/operstate", ndev);
    if (os && strcmp(os, "up") != 0) {
        rs_fmt(fix, sizeof fix, "ip link set dev %s up; check cable and switch port", ndev);
        rs_verdict(out, RS_FAIL, "roce.netdev", subj, fix, "netdev %s is %s", ndev, os);
    }
    if (!m) {
        rs_verdict(out, RS_INFO, "roce.mtu", subj, NULL, "unknown: MTU of netdev %s not visible", ndev);
        return;
    }
    long mtu = atol(m);
    int rm = roce_mtu(mtu);
    if (rm < 4096) {
        rs_fmt(fix, sizeof fix,
               "ip link set dev %s mtu 9000 (and jumbo frames on the switch ports); RoCE MTU 4096 needs netdev MTU >= "
               "4192",
               ndev);
        rs_verdict(out, RS_WARN, "roce.mtu", subj, fix,
                   "netdev %s MTU %ld: RoCE path MTU is limited to %d bytes (4096 with jumbo frames)", ndev, mtu, rm);
    } else {
        rs_verdict(out, RS_PASS, "roce.mtu", subj, NULL, "netdev %s MTU %ld: RoCE path MTU 4096", ndev, mtu);
    }
}

void rs_check_rdma(struct rs_facts *f, struct rs_verdicts *out)
{
    char devs[RS_MAX_DEV][RS_FACT_NAME];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV);
    if (nd == 0) {
        const char *cnt = rs_facts_get(f, "ib/count");
        rs_verdict(
            out, RS_WARN, "rdma.devices", "host",
            "on a host meant for multi-node training: install and load the NIC's RDMA driver (mlx5_core + mlx5_ib, "
            "rdma-core); otherwise expect NCCL to fall back to TCP sockets (NET/Socket)",
            "no RDMA devices found (/sys/class/infiniband %s)",
            cnt && strcmp(cnt, "absent") == 0 ? "does not exist" : "is empty");
        return;
    }
    char list[512] = "";
    for (int i = 0; i < nd; i++)
        if (strlen(list) + strlen(devs[i]) + 2 < sizeof list)
            rs_fmt(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? " " : "", devs[i]);
    rs_verdict(out, RS_PASS, "rdma.devices", "host", NULL, "%d RDMA device%s: %s", nd, nd == 1 ? "" : "s", list);

    /* Best rate per link layer, to flag ports that negotiated less than their peers. */
    double best_ib = 0, best_eth = 0;
    int active = 0;
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME], w[32];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np; p++) {
            const char *ll = rs_facts_get(f, "ib/%s/port/%s/link_layer", devs[i], ports[p]);
            double r = rs_ib_rate_gbits(rs_facts_get(f, "ib/%s/port/%s/rate", devs[i], ports[p]));
            if (strcmp(rs_state_word(rs_facts_get(f, "ib/%s/port/%s/state", devs[i], ports[p]), w, sizeof w), "ACTIVE"))
                continue;
            active++;
            if (ll && strcmp(ll, "Ethernet") == 0) best_eth = r > best_eth ? r : best_eth;
            else best_ib = r > best_ib ? r : best_ib;
        }
    }
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np; p++) {
            char subj[RS_FACT_NAME * 2 + 2], sw[32], pw[32], fix[512];
            rs_fmt(subj, sizeof subj, "%s:%s", devs[i], ports[p]);
            const char *st = rs_state_word(rs_facts_get(f, "ib/%s/port/%s/state", devs[i], ports[p]), sw, sizeof sw);
            const char *ps =
                rs_state_word(rs_facts_get(f, "ib/%s/port/%s/phys_state", devs[i], ports[p]), pw, sizeof pw);
            const char *rate = rs_facts_get(f, "ib/%s/port/%s/rate", devs[i], ports[p]);
            const char *ll = rs_facts_get(f, "ib/%s/port/%s/link_layer", devs[i], ports[p]);
            int eth = ll && strcmp(ll, "Ethernet") == 0;
            const char *kind = eth ? "Ethernet (RoCE)" : ll ? ll : "link layer unknown";
            if (strcmp(st, "ACTIVE") != 0) {
                if (strcmp(st, "INIT") == 0 && !eth)
                    rs_fmt(fix, sizeof fix,
                           "no subnet manager has configured the port: start opensm or check the fabric's SM");
                else
                    rs_fmt(fix, sizeof fix,
                           "check the cable/transceiver and the switch port (physical state %s); "
                           "if the port is unused, exclude it with NCCL_IB_HCA",
                           ps);
                rs_verdict(out, active ? RS_WARN : RS_FAIL, "rdma.port", subj, fix, "port is %s (%s), %s%s", st, ps,
                           kind, active ? "" : "; no RDMA port on this host is ACTIVE");
                continue;
            }
            double r = rs_ib_rate_gbits(rate), best = eth ? best_eth : best_ib;
            if (r > 0 && r < best) {
                rs_fmt(fix, sizeof fix, "check cable, transceiver and switch port speed settings (ethtool / ibstat %s)",
                       devs[i]);
                rs_verdict(out, RS_WARN, "rdma.port", subj, fix,
                           "ACTIVE %s but negotiated %s, other %s ports run %.0f Gb/sec", ps, rate,
                           eth ? "Ethernet" : "InfiniBand", best);
            } else {
                rs_verdict(out, RS_PASS, "rdma.port", subj, NULL, "ACTIVE, %s, %s, %s", ps,
                           rate ? rate : "rate unknown", kind);
            }
            if (eth) roce_port(f, out, devs[i], ports[p], subj);
            else {
                const char *am = rs_facts_get(f, "ib/%s/port/%s/active_mtu", devs[i], ports[p]);
                if (am && atoi(am) < 4096)
                    rs_verdict(out, RS_WARN, "ib.mtu", subj,
                               "set the partition's MTU to 4096 in the subnet manager (opensm partitions.conf mtu=5)",
                               "active MTU %s (4096 expected on InfiniBand)", am);
                else if (am) rs_verdict(out, RS_PASS, "ib.mtu", subj, NULL, "active MTU %s", am);
            }
        }
    }
    /* IB active MTU is not in sysfs; say so once rather than per port. */
    int ib_without_mtu = 0;
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np; p++) {
            const char *ll = rs_facts_get(f, "ib/%s/port/%s/link_layer", devs[i], ports[p]);
            if (ll && strcmp(ll, "InfiniBand") == 0 && !rs_facts_get(f, "ib/%s/port/%s/active_mtu", devs[i], ports[p]))
                ib_without_mtu++;
        }
    }
    if (ib_without_mtu)
        rs_verdict(out, RS_INFO, "ib.mtu", "host", "ibv_devinfo | grep active_mtu (4096 expected)",
                   "unknown: the active MTU of %d InfiniBand port%s is not exposed in sysfs", ib_without_mtu,
                   ib_without_mtu == 1 ? "" : "s");
}
