/* Doctor's checks: host facts (doctor_facts.h) in, verdicts out. Pure functions of the facts table, so
 * the same checks run on a live host (`railscope doctor`), on a captured sysfs tree, on a facts file and
 * on a trace's HOST_FACT snapshot (the analyzer: load the HOST_FACT key/value pairs into a struct
 * rs_facts and call rs_doctor_check()).
 *
 * Levels: PASS (checked, fine), WARN (costs performance or is fragile), FAIL (broken or badly slow),
 * INFO (a fact worth knowing, or a check that could not be made: "unknown"). Exit status of doctor:
 * rs_verdicts_status(). */
#ifndef RAILSCOPE_DOCTOR_CHECKS_H
#define RAILSCOPE_DOCTOR_CHECKS_H

#include <stddef.h>

#include "doctor_facts.h"

enum rs_level { RS_INFO, RS_PASS, RS_WARN, RS_FAIL };

struct rs_verdict {
    enum rs_level level;
    char check[32];   /* e.g. "rdma.port", "pcie.link", "nccl.gid_index" (docs/doctor.md lists them) */
    char subject[64]; /* what it is about: "mlx5_0:1", "gpu0", "0000:17:00.0", "host" */
    char msg[512];    /* one line, self-contained (names the device and the numbers) */
    char fix[512];    /* what to do; "" for PASS/INFO without advice */
};

struct rs_verdicts {
    struct rs_verdict *v;
    size_t n, cap;
};

/* Runs every check on the facts (sorting them) and appends the verdicts in a fixed order. */
void rs_doctor_check(struct rs_facts *facts, struct rs_verdicts *out);
/* 0 = no WARN/FAIL, 1 = warnings only, 2 = at least one FAIL. */
int rs_verdicts_status(const struct rs_verdicts *v);
void rs_verdicts_free(struct rs_verdicts *v);
const char *rs_level_name(enum rs_level l); /* "pass", "warn", "fail", "info" */

/* Units the analyzer can reuse to explain a run by its host. */
/* Usable bandwidth of one PCIe lane in GB/s for a sysfs speed string ("16.0 GT/s PCIe"), 0 if unknown;
 * gen (if not NULL) gets the generation number (1..6). */
double rs_pcie_lane_gbytes(const char *speed, int *gen);
/* A sysfs rate string ("400 Gb/sec (4X NDR)") in Gb/s, 0 if unknown. */
double rs_ib_rate_gbits(const char *rate);

/* PCIe distance between two PCI functions, NCCL's vocabulary (nvidia-smi topo -m). */
enum rs_pci_dist { RS_DIST_UNKNOWN = 0, RS_DIST_PIX = 1, RS_DIST_PXB, RS_DIST_PHB, RS_DIST_NODE, RS_DIST_SYS };
enum rs_pci_dist rs_pci_distance(struct rs_facts *facts, const char *bdf_a, const char *bdf_b);
const char *rs_pci_dist_name(enum rs_pci_dist d);  /* "PIX" ... */
const char *rs_pci_dist_words(enum rs_pci_dist d); /* "same PCIe switch" ... */
/* The NCCL_NET_GDR_LEVEL name covering a distance (NCCL has no NODE: PHB covers it). */
const char *rs_pci_dist_nccl(enum rs_pci_dist d);

#endif
