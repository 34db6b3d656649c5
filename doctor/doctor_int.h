/* Internals shared by the doctor_*.c check families. */
#ifndef RAILSCOPE_DOCTOR_INT_H
#define RAILSCOPE_DOCTOR_INT_H

#include "doctor_checks.h"

#define RS_MAX_DEV 64

/* Appends a verdict; fix may be NULL. msg is printf-formatted. */
void rs_verdict(struct rs_verdicts *out, enum rs_level lvl, const char *check, const char *subject, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* snprintf without gcc's -Wformat-truncation guesses (names are bounded by RS_FACT_NAME; long output is
 * cut, never overflowed). */
int rs_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The word after "N: " in "4: ACTIVE" / "5: LinkUp" (or the whole string). */
const char *rs_state_word(const char *s, char *buf, size_t n);
/* RDMA device names (children of ib/, without "count"). */
int rs_ib_devs(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max);
/* An IB device's port numbers. */
int rs_ib_ports(struct rs_facts *f, const char *dev, char (*out)[RS_FACT_NAME], int max);
/* GPU bdfs in gpu/<n> order. */
int rs_gpus(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max);
/* The netdev carrying a RoCE port: the ndev of its GIDs, else the device's first netdev; NULL if none. */
const char *rs_port_netdev(struct rs_facts *f, const char *dev, const char *port, char *buf, size_t n);
/* Whether two PCI addresses are functions of one slot (one physical link). */
int rs_same_slot(const char *a, const char *b);
/* Sum of the active ports' rates (Gb/s) of the RDMA devices on bdf and on the other NIC functions of its
 * slot, and their names. */
double rs_nic_line_gbits(struct rs_facts *f, const char *bdf, char *names, size_t n);
/* Whether the GID at addr is an IPv4-mapped address; writes the dotted quad. */
int rs_gid_ipv4(const char *addr, char *buf, size_t n);

void rs_check_rdma(struct rs_facts *f, struct rs_verdicts *out);
void rs_check_pcie(struct rs_facts *f, struct rs_verdicts *out);
void rs_check_topo(struct rs_facts *f, struct rs_verdicts *out);
void rs_check_gdr(struct rs_facts *f, struct rs_verdicts *out);
void rs_check_nccl(struct rs_facts *f, struct rs_verdicts *out);
void rs_check_cc(struct rs_facts *f, struct rs_verdicts *out);

#endif
