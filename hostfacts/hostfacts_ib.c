/* ib/ facts: RDMA devices from /sys/class/infiniband — PCI function, ports (state, rate, link layer)
 * and the populated GID table entries with their RoCE type and netdev. */
#include <stdio.h>
#include <string.h>

#include "hostfacts_int.h"

/* An unused GID slot reads as all zeros (and its type file fails with EINVAL). */
static int gid_is_zero(const char *g)
{
    for (; *g; g++)
        if (*g != '0' && *g != ':') return 0;
    return 1;
}

static void port_facts(const struct hf_ctx *c, const char *dev, const char *port)
{
    static const char *const attrs[] = {"state", "phys_state", "rate", "link_layer", "lid", "sm_lid"};
    char key[256], v[HF_VAL];
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        hf_fmt(key, sizeof key, "ib/%s/port/%s/%s", dev, port, attrs[i]);
        hf_copy(c, key, "sys/class/infiniband/%s/ports/%s/%s", dev, port, attrs[i]);
    }
    int populated = 0;
    for (int g = 0; g < HF_MAX_GIDS; g++) {
        if (hf_read(c, v, sizeof v, "sys/class/infiniband/%s/ports/%s/gids/%d", dev, port, g) < 0)
            break; /* past the end of the table */
        if (gid_is_zero(v)) continue;
        populated++;
        hf_emit(c, v, "ib/%s/port/%s/gid/%d/addr", dev, port, g);
        hf_fmt(key, sizeof key, "ib/%s/port/%s/gid/%d/type", dev, port, g);
        hf_copy(c, key, "sys/class/infiniband/%s/ports/%s/gid_attrs/types/%d", dev, port, g);
        hf_fmt(key, sizeof key, "ib/%s/port/%s/gid/%d/ndev", dev, port, g);
        hf_copy(c, key, "sys/class/infiniband/%s/ports/%s/gid_attrs/ndevs/%d", dev, port, g);
    }
    snprintf(v, sizeof v, "%d", populated);
    hf_emit(c, v, "ib/%s/port/%s/gids", dev, port);
}

void hf_collect_ib(const struct hf_ctx *c)
{
    char devs[HF_MAX_IBDEV][HF_NAME];
    int n = hf_list(c, devs, HF_MAX_IBDEV, "sys/class/infiniband");
    char v[HF_VAL];
    snprintf(v, sizeof v, "%d", n < 0 ? 0 : n);
    hf_emit(c, n < 0 ? "absent" : v, "ib/count");
    for (int i = 0; i < n; i++) {
        const char *dev = devs[i];
        char path[PATH_MAX], bdf[HF_NAME], key[256];
        if (hf_devpath(c, path, sizeof path, "sys/class/infiniband/%s", dev) == 0 &&
            hf_last_bdf(path, bdf, sizeof bdf) == 0)
            hf_emit(c, bdf, "ib/%s/pci", dev);
        else hf_emit(c, "none", "ib/%s/pci", dev); /* software device (rxe, siw) or unresolvable */
        static const char *const attrs[] = {"node_type", "fw_ver", "hca_type", "board_id"};
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
            hf_fmt(key, sizeof key, "ib/%s/%s", dev, attrs[a]);
            hf_copy(c, key, "sys/class/infiniband/%s/%s", dev, attrs[a]);
        }
        char nets[16][HF_NAME];
        int nn = hf_list(c, nets, 16, "sys/class/infiniband/%s/device/net", dev);
        if (nn > 0) {
            size_t off = 0;
            v[0] = '\0';
            for (int k = 0; k < nn && off + strlen(nets[k]) + 2 < sizeof v; k++)
                off += (size_t)snprintf(v + off, sizeof v - off, "%s%s", k ? " " : "", nets[k]);
            hf_emit(c, v, "ib/%s/netdevs", dev);
        }
        char ports[HF_MAX_PORTS][HF_NAME];
        int np = hf_list(c, ports, HF_MAX_PORTS, "sys/class/infiniband/%s/ports", dev);
        for (int p = 0; p < np; p++) port_facts(c, dev, ports[p]);
    }
}
