/* ibv_get_cq_event as a program sees it, on the software test NIC (tools/softnic): one CQ with a completion
 * channel, four waits, each printed as what the call returned (return value, errno, the CQ and CQ context it handed
 * back), so that tests/softnic/cqevent.t can compare a traced run with an untraced one and the trace with the truth.
 *   blocked          the CQ armed, a thread sends 50 ms later: the call blocks until the completion's event
 *   pending          the CQ armed, the completion landed before the call: it returns at once
 *   nonblock_empty   the channel's descriptor made O_NONBLOCK, nothing there: -1 with EAGAIN, outputs untouched
 *   nonblock_pending the same descriptor, a completion landed: it returns the event at once
 * errno is set to 1234 before each call: a call that succeeds leaves it there (the tracer's own looks must not
 * change it). Lines starting with "ptr " or "ms " carry this run's pointers and times. */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "t_util.h"

static struct ibv_qp *qa;
static struct ibv_mr *mra;
static char sbuf[64], rbuf[16][64];

static void send_one(uint64_t wr_id)
{
    if (t_post(qa, IBV_WR_SEND, wr_id, sbuf, 8, mra->lkey, 0, 0, 0)) t_die("post_send");
}

static void *late_send(void *arg)
{
    (void)arg;
    usleep(50000);
    send_one(1);
    return NULL;
}

/* one call: what it returned and what it handed back */
static void wait_case(const char *name, struct ibv_comp_channel *ch, struct ibv_cq *want, void *want_ctx)
{
    struct ibv_cq *got = (struct ibv_cq *)(uintptr_t)0x5eed;
    void *ctx = (void *)(uintptr_t)0xc0de;
    errno = 1234;
    double t0 = t_now();
    int ret = ibv_get_cq_event(ch, &got, &ctx);
    int e = errno;
    double ms = (t_now() - t0) * 1e3;
    printf("%s: ret=%d errno=%d cq=%s ctx=%s\n", name, ret, e,
           got == want                                 ? "the CQ"
           : got == (struct ibv_cq *)(uintptr_t)0x5eed ? "untouched"
                                                       : "OTHER",
           ctx == want_ctx                    ? "its context"
           : ctx == (void *)(uintptr_t)0xc0de ? "untouched"
                                              : "OTHER");
    printf("ms %s %.3f\n", name, ms);
    if (!ret) ibv_ack_cq_events(got, 1);
}

/* the receive completion of a case, taken off the CQ */
static void drain(struct ibv_cq *cq, struct ibv_qp *qb, struct ibv_mr *mrb, int slot)
{
    struct ibv_wc wc;
    if (!t_wait(cq, &wc, 10) || wc.status != IBV_WC_SUCCESS) t_die("receive completion");
    if (t_recv(qb, (uint64_t)slot, rbuf[slot], 64, mrb->lkey)) t_die("post_recv");
}

int main(void)
{
    struct t_port a, b;
    t_port_open(&a, 64);
    t_port_open(&b, 64);
    static int marker;
    struct ibv_comp_channel *ch = ibv_create_comp_channel(b.ctx);
    struct ibv_cq *cq = ch ? ibv_create_cq(b.ctx, 64, &marker, ch, 0) : NULL;
    if (!cq) t_die("channel/cq");
    qa = t_qp(&a, NULL, 16);
    struct ibv_qp *qb = t_qp(&b, cq, 16);
    t_connect(qa, qb->qp_num, 7, 1);
    t_connect(qb, qa->qp_num, 7, 1);
    mra = ibv_reg_mr(a.pd, sbuf, sizeof sbuf, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *mrb = ibv_reg_mr(b.pd, rbuf, sizeof rbuf, IBV_ACCESS_LOCAL_WRITE);
    if (!mra || !mrb) t_die("reg_mr");
    for (int i = 0; i < 4; i++)
        if (t_recv(qb, (uint64_t)i, rbuf[i], 64, mrb->lkey)) t_die("post_recv");
    printf("ptr cq=%p channel=%p\n", (void *)cq, (void *)ch);
    struct ibv_wc wc;

    if (ibv_req_notify_cq(cq, 0)) t_die("req_notify");
    pthread_t th;
    if (pthread_create(&th, NULL, late_send, NULL)) t_die("thread");
    wait_case("blocked", ch, cq, &marker);
    pthread_join(th, NULL);
    drain(cq, qb, mrb, 0);
    if (!t_wait(a.cq, &wc, 10)) t_die("send completion");

    if (ibv_req_notify_cq(cq, 0)) t_die("req_notify");
    send_one(2); /* its send completion follows the receive's landing (the ACK): the event is there */
    if (!t_wait(a.cq, &wc, 10)) t_die("send completion");
    usleep(5000);
    wait_case("pending", ch, cq, &marker);
    drain(cq, qb, mrb, 1);

    int fl = fcntl(ch->fd, F_GETFL);
    if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK)) t_die("O_NONBLOCK");
    if (ibv_req_notify_cq(cq, 0)) t_die("req_notify");
    wait_case("nonblock_empty", ch, cq, &marker);
    send_one(3);
    if (!t_wait(a.cq, &wc, 10)) t_die("send completion");
    usleep(5000);
    wait_case("nonblock_pending", ch, cq, &marker);
    drain(cq, qb, mrb, 2);
    if (fcntl(ch->fd, F_SETFL, fl)) t_die("blocking again");

    int bad = ibv_destroy_qp(qa) | ibv_destroy_qp(qb) | ibv_destroy_cq(cq) | ibv_destroy_comp_channel(ch);
    printf("summary: teardown=%d\n", bad);
    return bad ? 1 : 0;
}
