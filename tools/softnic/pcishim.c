/* Test-only LD_PRELOAD shim: gives the software NIC a PCI place in sysfs for NCCL's IB transport.
 *
 * NCCL finds an IB device's PCI path with realpath("/sys/class/infiniband/<dev>/device") and builds its
 * topology from the sysfs attributes under it (class, link speed/width, parent bridges). softnic's device
 * has no sysfs entry, so that realpath fails, NCCL keeps pciPath NULL and crashes later in libnccl (see
 * docs/dev/journal/softnic.md). This shim answers that one realpath (and __realpath_chk) for devices whose
 * name starts with "softnic" with a real PCI function's directory: $SOFTNIC_PCI_PATH, else the first PCI
 * network function (class 0x02xxxx) in /sys/bus/pci/devices, else the first function that is neither a
 * bridge (0x06xxxx) nor a display controller (0x03xxxx). Every other path goes to the real realpath.
 * Not part of softnic's libibverbs.so.1 (NCCL dlopens that one locally: it cannot interpose libc calls).
 * Build: cc -shared -fPIC -o libsn_pcishim.so tools/softnic/pcishim.c -ldl
 * Use:   LD_PRELOAD=libsn_pcishim.so (SOFTNIC_PCI_DEBUG=1 prints what it resolved). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*realpath_fn)(const char *, char *);

static realpath_fn real_rp(void)
{
    static realpath_fn f;
    if (!f) f = (realpath_fn)dlsym(RTLD_NEXT, "realpath");
    return f;
}

static unsigned read_class(const char *dev)
{
    char p[PATH_MAX], b[32] = {0};
    snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/class", dev);
    FILE *f = fopen(p, "r");
    if (!f) return 0xffffffu;
    if (!fgets(b, sizeof b, f)) b[0] = 0;
    fclose(f);
    return (unsigned)strtoul(b, NULL, 0);
}

/* The PCI function to present, as a /sys/bus/pci/devices/... path (resolved by the caller). */
static int pick(char *out, size_t n)
{
    const char *e = getenv("SOFTNIC_PCI_PATH");
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return 0;
    }
    DIR *d = opendir("/sys/bus/pci/devices");
    if (!d) return -1;
    char net[256] = "", other[256] = "";
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        unsigned c = read_class(de->d_name) >> 16;
        if (c == 0x02 && !net[0]) snprintf(net, sizeof net, "%s", de->d_name);
        else if (c != 0x06 && c != 0x03 && c != 0xff && !other[0]) snprintf(other, sizeof other, "%s", de->d_name);
    }
    closedir(d);
    const char *name = net[0] ? net : other;
    if (!name[0]) return -1;
    snprintf(out, n, "/sys/bus/pci/devices/%s", name);
    return 0;
}

static char *shim(const char *path, char *resolved)
{
    static const char pre[] = "/sys/class/infiniband/softnic";
    if (path && !strncmp(path, pre, sizeof pre - 1)) {
        const char *rest = strchr(path + sizeof pre - 1, '/');
        if (rest && !strncmp(rest, "/device", 7) && (rest[7] == 0 || rest[7] == '/')) {
            char base[PATH_MAX], full[PATH_MAX];
            if (pick(base, sizeof base) == 0) {
                snprintf(full, sizeof full, "%s%s", base, rest + 7);
                char *r = real_rp()(full, resolved);
                if (getenv("SOFTNIC_PCI_DEBUG"))
                    fprintf(stderr, "softnic-pcishim: %s -> %s\n", path, r ? r : "(unresolved)");
                return r;
            }
        }
    }
    return real_rp()(path, resolved);
}

__attribute__((visibility("default"))) char *realpath(const char *path, char *resolved) { return shim(path, resolved); }

__attribute__((visibility("default"))) char *__realpath_chk(const char *path, char *resolved, size_t n)
{
    (void)n;
    return shim(path, resolved);
}
