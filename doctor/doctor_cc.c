/* Congestion-control hints for RoCE: the mlx5 DCQCN ECN knobs (/sys/class/net/<if>/ecn/roce_np and
 * roce_rp, enable/<priority>) when the driver exposes them; "unknown" otherwise. PFC lives in DCB
 * (netlink), not sysfs, so it is always reported as not visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

/* Priorities with enable=1 under net/<if>/ecn/<point>/enable/, as "3,4"; returns the count, -1 if none
 * are visible. */
static int enabled(struct rs_facts *f, const char *ifn, const char *point, char *buf, size_t n)
{
    char prios[16][RS_FACT_NAME];
    int np = rs_facts_children(f, prios, 16, "net/%s/ecn/%s/enable/", ifn, point), on = 0;
    buf[0] = '\0';
    if (np == 0) return -1;
    for (int i = 0; i < np; i++) {
        const char *v = rs_facts_get(f, "net/%s/ecn/%s/enable/%s", ifn, point, prios[i]);
        if (v && atoi(v) == 1) {
            rs_fmt(buf + strlen(buf), n - strlen(buf), "%s%s", on ? "," : "", prios[i]);
            on++;
        }
    }
    return on;
}

void rs_check_cc(struct rs_facts *f, struct rs_verdicts *out)
{
    char devs[RS_MAX_DEV][RS_FACT_NAME];
    int nd = rs_ib_devs(f, devs, RS_MAX_DEV), roce = 0;
    for (int i = 0; i < nd; i++) {
        char ports[16][RS_FACT_NAME];
        int np = rs_ib_ports(f, devs[i], ports, 16);
        for (int p = 0; p < np; p++) {
            const char *ll = rs_facts_get(f, "ib/%s/port/%s/link_layer", devs[i], ports[p]);
            if (!ll || strcmp(ll, "Ethernet") != 0) continue;
            roce++;
            char subj[RS_FACT_NAME * 2 + 2], nd_[64], npl[64], rpl[64], fix[512];
            rs_fmt(subj, sizeof subj, "%s:%s", devs[i], ports[p]);
            const char *ifn = rs_port_netdev(f, devs[i], ports[p], nd_, sizeof nd_);
            if (!ifn) continue;
            int a = enabled(f, ifn, "roce_np", npl, sizeof npl), b = enabled(f, ifn, "roce_rp", rpl, sizeof rpl);
            if (a < 0 || b < 0) {
                rs_fmt(fix, sizeof fix,
                       "check with the vendor tools (mlnx_qos -i %s; the ECN/DCQCN settings of the NIC and switch)",
                       ifn);
                rs_verdict(out, RS_INFO, "cc.ecn", subj, fix,
                           "unknown: ECN/DCQCN knobs not exposed for %s (no /sys/class/net/%s/ecn)", ifn, ifn);
            } else if (a == 0 || b == 0) {
                rs_fmt(fix, sizeof fix,
                       "enable DCQCN on the RoCE priority: echo 1 > /sys/class/net/%s/ecn/roce_np/enable/<prio> and "
                       ".../roce_rp/enable/<prio>, "
                       "and ECN marking on the switch",
                       ifn);
                rs_verdict(out, RS_WARN, "cc.ecn", subj, fix,
                           "DCQCN ECN on %s: notification point %s, reaction point %s: RoCE congestion then relies on "
                           "PFC pauses alone",
                           ifn, a ? npl : "off", b ? rpl : "off");
            } else {
                rs_verdict(out, RS_PASS, "cc.ecn", subj, NULL,
                           "DCQCN ECN on %s enabled: notification point priorities %s, reaction point %s", ifn, npl,
                           rpl);
            }
        }
    }
    if (roce)
        rs_verdict(out, RS_INFO, "cc.pfc", "host", "mlnx_qos -i <if> or dcb pfc show dev <if>",
                   "unknown: PFC settings are configured through DCB netlink, not visible in sysfs");
}
