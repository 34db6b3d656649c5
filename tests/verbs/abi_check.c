/* Compares every offset railscope's preload/verbs_abi.h declares with the installed <infiniband/verbs.h>.
 * TAP output; run by abi.t. */
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>

#include "preload/verbs_abi.h"

static int n, bad;
static void check(const char *what, size_t ours, size_t theirs)
{
    n++;
    if (ours != theirs) bad++;
    printf("%s %d - %s: ours %zu, verbs.h %zu\n", ours == theirs ? "ok" : "not ok", n, what, ours, theirs);
}
#define OFF(vs, vf, is, if_) check(#is "." #if_, offsetof(struct vs, vf), offsetof(struct is, if_))
#define SZ(vs, is)           check("sizeof " #is, sizeof(struct vs), sizeof(struct is))

int main(void)
{
    OFF(vb_context_ops, poll_cq, ibv_context_ops, poll_cq);
    OFF(vb_context_ops, req_notify_cq, ibv_context_ops, req_notify_cq);
    OFF(vb_context_ops, post_srq_recv, ibv_context_ops, post_srq_recv);
    OFF(vb_context_ops, post_send, ibv_context_ops, post_send);
    OFF(vb_context_ops, post_recv, ibv_context_ops, post_recv);
    SZ(vb_context_ops, ibv_context_ops);
    OFF(vb_context, ops, ibv_context, ops);
    OFF(vb_context, abi_compat, ibv_context, abi_compat);
    OFF(vb_device, name, ibv_device, name);
    check("verbs_context size", VB_VCTX_SIZE, sizeof(struct verbs_context));
    check("verbs_context.context", VB_VCTX_CTX_OFF, offsetof(struct verbs_context, context));
    check("verbs_context.sz", VB_VCTX_SZ_OFF, offsetof(struct verbs_context, sz));
    check("verbs_context.create_cq_ex", VB_VCTX_CREATE_CQ_EX, offsetof(struct verbs_context, create_cq_ex));
    check("verbs_context.create_qp_ex", VB_VCTX_CREATE_QP_EX, offsetof(struct verbs_context, create_qp_ex));
    OFF(vb_qp, context, ibv_qp, context);
    OFF(vb_qp, send_cq, ibv_qp, send_cq);
    OFF(vb_qp, srq, ibv_qp, srq);
    OFF(vb_qp, qp_num, ibv_qp, qp_num);
    OFF(vb_qp, qp_type, ibv_qp, qp_type);
    SZ(vb_qp, ibv_qp);
    SZ(vb_cq, ibv_cq);
    OFF(vb_cq, cqe, ibv_cq, cqe);
    OFF(vb_comp_channel, context, ibv_comp_channel, context);
    OFF(vb_comp_channel, fd, ibv_comp_channel, fd);
    OFF(vb_comp_channel, refcnt, ibv_comp_channel, refcnt);
    SZ(vb_comp_channel, ibv_comp_channel);
    OFF(vb_srq, context, ibv_srq, context);
    OFF(vb_srq, pd, ibv_srq, pd);
    OFF(vb_srq, handle, ibv_srq, handle);
    OFF(vb_srq_init_attr, max_wr, ibv_srq_init_attr, attr.max_wr);
    OFF(vb_srq_init_attr_ex, max_wr, ibv_srq_init_attr_ex, attr.max_wr);
    OFF(vb_srq_init_attr_ex, comp_mask, ibv_srq_init_attr_ex, comp_mask);
    OFF(vb_srq_init_attr_ex, srq_type, ibv_srq_init_attr_ex, srq_type);
    OFF(vb_srq_init_attr_ex, pd, ibv_srq_init_attr_ex, pd);
    check("IBV_SRQ_INIT_ATTR_PD", VB_SRQ_INIT_ATTR_PD, IBV_SRQ_INIT_ATTR_PD);
    OFF(vb_wq, pd, ibv_wq, pd);
    OFF(vb_wq, cq, ibv_wq, cq);
    OFF(vb_wq, wq_num, ibv_wq, wq_num);
    OFF(vb_wq, wq_type, ibv_wq, wq_type);
    OFF(vb_wq, post_recv, ibv_wq, post_recv);
    OFF(vb_wq_init_attr, wq_type, ibv_wq_init_attr, wq_type);
    OFF(vb_wq_init_attr, max_wr, ibv_wq_init_attr, max_wr);
    OFF(vb_wq_init_attr, pd, ibv_wq_init_attr, pd);
    OFF(vb_wq_init_attr, cq, ibv_wq_init_attr, cq);
    check("verbs_context.destroy_wq", VB_VCTX_DESTROY_WQ, offsetof(struct verbs_context, destroy_wq));
    check("verbs_context.create_wq", VB_VCTX_CREATE_WQ, offsetof(struct verbs_context, create_wq));
    check("verbs_context.create_srq_ex", VB_VCTX_CREATE_SRQ_EX, offsetof(struct verbs_context, create_srq_ex));
    OFF(vb_pd, context, ibv_pd, context);
    SZ(vb_sge, ibv_sge);
    OFF(vb_send_wr, opcode, ibv_send_wr, opcode);
    OFF(vb_send_wr, send_flags, ibv_send_wr, send_flags);
    OFF(vb_send_wr, imm_data, ibv_send_wr, imm_data);
    OFF(vb_send_wr, wr.rdma.rkey, ibv_send_wr, wr.rdma.rkey);
    OFF(vb_send_wr, wr.atomic.rkey, ibv_send_wr, wr.atomic.rkey);
    SZ(vb_send_wr, ibv_send_wr);
    SZ(vb_recv_wr, ibv_recv_wr);
    OFF(vb_wc, byte_len, ibv_wc, byte_len);
    OFF(vb_wc, qp_num, ibv_wc, qp_num);
    OFF(vb_wc, wc_flags, ibv_wc, wc_flags);
    SZ(vb_wc, ibv_wc);
    OFF(vb_mr, lkey, ibv_mr, lkey);
    OFF(vb_mr, rkey, ibv_mr, rkey);
    OFF(vb_qp_init_attr, cap, ibv_qp_init_attr, cap);
    OFF(vb_qp_init_attr, qp_type, ibv_qp_init_attr, qp_type);
    OFF(vb_qp_init_attr_ex, comp_mask, ibv_qp_init_attr_ex, comp_mask);
    OFF(vb_qp_init_attr_ex, pd, ibv_qp_init_attr_ex, pd);
    OFF(vb_qp_init_attr_ex, send_ops_flags, ibv_qp_init_attr_ex, send_ops_flags);
    OFF(vb_cq_init_attr_ex, wc_flags, ibv_cq_init_attr_ex, wc_flags);
    OFF(vb_qp_attr, dest_qp_num, ibv_qp_attr, dest_qp_num);
    OFF(vb_qp_attr, path_mtu, ibv_qp_attr, path_mtu);
    OFF(vb_qp_attr, ah_attr.grh.sgid_index, ibv_qp_attr, ah_attr.grh.sgid_index);
    OFF(vb_qp_attr, port_num, ibv_qp_attr, port_num);
    OFF(vb_qp_attr, timeout, ibv_qp_attr, timeout);
    OFF(vb_qp_attr, retry_cnt, ibv_qp_attr, retry_cnt);
    OFF(vb_qp_attr, rnr_retry, ibv_qp_attr, rnr_retry);
    OFF(vb_qp_ex, wr_id, ibv_qp_ex, wr_id);
    OFF(vb_qp_ex, wr_set_sge_list, ibv_qp_ex, wr_set_sge_list);
    OFF(vb_qp_ex, wr_abort, ibv_qp_ex, wr_abort);
    OFF(vb_cq_ex, wr_id, ibv_cq_ex, wr_id);
    OFF(vb_cq_ex, start_poll, ibv_cq_ex, start_poll);
    OFF(vb_cq_ex, read_wc_flags, ibv_cq_ex, read_wc_flags);
    printf("1..%d\n", n); /* plan at the end: the count cannot go stale */
    return bad != 0;
}
