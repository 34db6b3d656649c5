/* net/ facts: every netdev's MTU and state (NCCL_SOCKET_IFNAME is checked against them), its PCI
 * function, link speed, and the mlx5 ECN knobs (ecn/roce_np|roce_rp/enable/<prio>) where exposed. */
#include <stdio.h>
#include <string.h>

#include "hostfacts_int.h"

static void ecn_facts(const struct hf_ctx *c, const char *ifn)
{
    static const char *const points[] = {"roce_np", "roce_rp"};
    for (size_t p = 0; p < 2; p++) {
        char prios[8][HF_NAME];
        int n = hf_list(c, prios, 8, "sys/class/net/%s/ecn/%s/enable", ifn, points[p]);
        for (int i = 0; i < n; i++) {
            char key[256];
            hf_fmt(key, sizeof key, "net/%s/ecn/%s/enable/%s", ifn, points[p], prios[i]);
            hf_copy(c, key, "sys/class/net/%s/ecn/%s/enable/%s", ifn, points[p], prios[i]);
        }
    }
}

void hf_collect_net(const struct hf_ctx *c)
{
    char ifs[HF_MAX_NETDEV][HF_NAME];
    int n = hf_list(c, ifs, HF_MAX_NETDEV, "sys/class/net");
    for (int i = 0; i < n; i++) {
        const char *ifn = ifs[i];
        static const char *const attrs[] = {"mtu", "operstate", "speed"};
        char key[256], path[PATH_MAX], bdf[HF_NAME];
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
            hf_fmt(key, sizeof key, "net/%s/%s", ifn, attrs[a]);
            hf_copy(c, key, "sys/class/net/%s/%s", ifn, attrs[a]); /* speed fails (EINVAL) when down */
        }
        if (hf_devpath(c, path, sizeof path, "sys/class/net/%s/device", ifn) == 0 &&
            hf_last_bdf(path, bdf, sizeof bdf) == 0)
            hf_emit(c, bdf, "net/%s/pci", ifn);
        ecn_facts(c, ifn);
    }
}
