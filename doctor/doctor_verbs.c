/* Active MTU through libibverbs, loaded at run time. Only devices the sysfs facts already list are
 * opened, only ibv_query_port is asked: no resources are created. */
#include "doctor_verbs.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define RS_HAVE_VERBS_H 1
#endif
#endif

#ifdef RS_HAVE_VERBS_H
typedef struct ibv_device **(*get_list_fn)(int *);
typedef void (*free_list_fn)(struct ibv_device **);
typedef const char *(*get_name_fn)(struct ibv_device *);
typedef struct ibv_context *(*open_fn)(struct ibv_device *);
typedef int (*close_fn)(struct ibv_context *);
/* The exported ibv_query_port (IBVERBS_1.1) fills the original struct layout, a prefix of today's
 * struct ibv_port_attr that holds active_mtu; the inline wrapper in verbs.h is not reachable by dlsym. */
typedef int (*query_port_fn)(struct ibv_context *, uint8_t, struct ibv_port_attr *);

int rs_facts_add_verbs(struct rs_facts *f, char *err, size_t errlen)
{
    void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "libibverbs.so.1 not loadable");
        return -1;
    }
    get_list_fn get_list = (get_list_fn)dlsym(h, "ibv_get_device_list");
    free_list_fn free_list = (free_list_fn)dlsym(h, "ibv_free_device_list");
    get_name_fn get_name = (get_name_fn)dlsym(h, "ibv_get_device_name");
    open_fn open_dev = (open_fn)dlsym(h, "ibv_open_device");
    close_fn close_dev = (close_fn)dlsym(h, "ibv_close_device");
    query_port_fn query_port = (query_port_fn)dlsym(h, "ibv_query_port");
    if (!get_list || !free_list || !get_name || !open_dev || !close_dev || !query_port) {
        snprintf(err, errlen, "libibverbs.so.1 lacks the device/port query functions");
        return -1; /* keep it loaded: unloading a verbs provider is not always safe */
    }
    int n = 0, added = 0;
    struct ibv_device **list = get_list(&n);
    if (!list) {
        snprintf(err, errlen, "ibv_get_device_list failed");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *name = get_name(list[i]);
        char ports[16][RS_FACT_NAME];
        int np = name ? rs_facts_children(f, ports, 16, "ib/%s/port/", name) : 0;
        if (np <= 0) continue; /* not a device sysfs showed us: leave it alone */
        struct ibv_context *ctx = open_dev(list[i]);
        if (!ctx) continue;
        char dev[RS_FACT_NAME];
        snprintf(dev, sizeof dev, "%s", name);
        for (int p = 0; p < np; p++) {
            struct ibv_port_attr a;
            memset(&a, 0, sizeof a);
            int pn = atoi(ports[p]);
            if (pn < 1 || pn > 255 || query_port(ctx, (uint8_t)pn, &a) != 0) continue;
            int mtu = a.active_mtu >= IBV_MTU_256 && a.active_mtu <= IBV_MTU_4096 ? 128 << a.active_mtu : 0;
            if (!mtu) continue;
            char key[256], val[16];
            snprintf(key, sizeof key, "ib/%s/port/%d/active_mtu", dev, pn);
            snprintf(val, sizeof val, "%d", mtu);
            if (rs_facts_add(f, key, val) == 0) added++;
        }
        close_dev(ctx);
    }
    free_list(list);
    return added;
}
#else
int rs_facts_add_verbs(struct rs_facts *f, char *err, size_t errlen)
{
    (void)f;
    snprintf(err, errlen, "built without infiniband/verbs.h");
    return -1;
}
#endif
