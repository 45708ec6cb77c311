// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of the write data path: POST_WRITE, its send completions
 * and the heartbeat's SEND.
 *
 * Writes use the send contexts preallocated per QP (sq_depth of them: the
 * send credits), so posting allocates nothing. Exactly one event reaches
 * the posting process for each write it posted: the send completion,
 * successful or not; a QP that is drained for recovery or teardown
 * flushes what it holds with an error status. A failed completion or post
 * reports a loss to the QP's state machine (rv_sconn_lost()).
 */
#include <linux/bottom_half.h>
#include <linux/uaccess.h>

#include "rv_conn.h"
#include "rv_trace.h"

void rv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rv_send_ctx *ctx = container_of(wc->wr_cqe, struct rv_send_ctx,
					       cqe);
	struct rv_sconn *s = ctx->sconn;
	struct rv_user *user = ctx->user;
	struct rv_event_wc ev = {
		.status = wc->status,
		.wr_id = ctx->wr_id,
		.conn_handle = s->conn->id,
		.byte_len = ctx->len,
	};
	unsigned long flags;

	trace_rv_send_cmpl(s, user->tgid, ctx->len, 0, wc->status);
	rv_ring_post(&user->ring, RV_WC_RDMA_WRITE, &ev);
	rv_mr_put_io(user, ctx->mr);

	spin_lock_irqsave(&s->lock, flags);
	s->outstanding--;
	if (wc->status == IB_WC_SUCCESS)
		s->stats.send_write_cqe++;
	else
		s->stats.send_write_cqe_fail++;
	ctx->user = NULL;
	ctx->mr = NULL;
	list_move(&ctx->link, &s->free_send);
	spin_unlock_irqrestore(&s->lock, flags);

	if (wc->status != IB_WC_SUCCESS)
		rv_sconn_lost(s);
	rv_user_put(user);
}

void rv_hb_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rv_sconn *s = container_of(wc->wr_cqe, struct rv_send_ctx,
					  cqe)->sconn;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->hb_busy = false;
	if (wc->status == IB_WC_SUCCESS)
		s->stats.send_hb_cqe++;
	else
		s->stats.send_hb_cqe_fail++;
	spin_unlock_irqrestore(&s->lock, flags);
	if (wc->status != IB_WC_SUCCESS)
		rv_sconn_lost(s);
}

/*
 * On a heartbeat tick, under s->lock: a QP that posted no write since the
 * last tick sends a zero-length SEND. Returns true if that post failed.
 */
bool rv_hb_post(struct rv_sconn *s)
{
	struct ib_send_wr wr = {
		.wr_cqe = &s->hb_ctx.cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	bool post = !s->activity && !s->hb_busy;

	lockdep_assert_held(&s->lock);
	s->activity = false;
	if (!post)
		return false;
	if (ib_post_send(s->qp, &wr, NULL)) {
		s->stats.post_hb_fail++;
		return true;
	}
	s->stats.post_hb++;
	s->hb_busy = true;
	return false;
}

/*
 * Post on QP @s if it is connected and has a free send context. Returns
 * 0, or -EBUSY (no credit), -EAGAIN (not connected, or the post failed
 * because the QP is going down) or -EIO (failed for good).
 */
static int rv_sconn_post_write(struct rv_sconn *s, struct rv_user *user,
			       struct rv_mr_entry *mr,
			       const struct rv_post_write_params_in *in,
			       struct rv_post_write_params_out *out)
{
	struct rv_send_ctx *ctx;
	struct ib_sge sge = {
		.addr = in->loc_addr,
		.length = in->length,
		.lkey = rv_mr_lkey(mr),
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
			.ex.imm_data = cpu_to_be32(in->immed),
		},
		.remote_addr = in->rem_addr,
		.rkey = in->rkey,
	};
	unsigned long flags;
	bool lost = false;
	int ret;

	/*
	 * Softirq work the post raises (a driver's send tasklet, as rxe's for
	 * kernel QPs up to 6.3) then runs at local_bh_enable(), in this call,
	 * not after a wakeup of ksoftirqd.
	 */
	local_bh_disable();
	spin_lock_irqsave(&s->lock, flags);
	out->sconn_index = s->index;
	out->conn_count = s->conn_count;
	if (s->state != RV_SCONN_CONNECTED) {
		/* not connected yet or recovering, or failed for good */
		ret = s->state == RV_SCONN_FAILED ||
		      s->state == RV_SCONN_CLOSING ? -EIO : -EAGAIN;
		goto out;
	}
	ctx = list_first_entry_or_null(&s->free_send, struct rv_send_ctx,
				       link);
	if (!ctx) {
		ret = -EBUSY;
		goto out;
	}
	list_move_tail(&ctx->link, &s->posted);
	ctx->user = user;
	ctx->mr = mr;
	ctx->wr_id = in->wr_id;
	ctx->len = in->length;
	wr.wr.wr_cqe = &ctx->cqe;
	kref_get(&user->kref);
	ret = ib_post_send(s->qp, &wr.wr, NULL);
	if (ret) {
		/* not the last reference: the caller's file holds one */
		rv_user_put(user);
		ctx->user = NULL;
		ctx->mr = NULL;
		list_move(&ctx->link, &s->free_send);
		s->stats.post_write_fail++;
		/* the QP is going down: recovery follows */
		lost = true;
		ret = -EAGAIN;
		goto out;
	}
	s->outstanding++;
	s->activity = true;
	s->stats.post_write++;
	s->stats.post_write_bytes += in->length;
out:
	spin_unlock_irqrestore(&s->lock, flags);
	local_bh_enable();
	if (lost)
		rv_sconn_lost(s);
	return ret;
}

long rv_ioctl_post_write(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_post_write_params p;
	struct rv_post_write_params_in *in = &p.in;
	struct rv_post_write_params_out out = {};
	struct rv_mr_entry *mr;
	struct rv_conn *conn;
	unsigned int i, start;
	int ret = 0, err;

	/* The device is gone: the connection has failed for good. */
	if (rv_job_dead(user->jdev))
		return -EIO;
	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
	if (in->resv1 || !in->handle || in->handle > U32_MAX ||
	    !in->length || in->length > U32_MAX ||
	    in->loc_mr_handle > U32_MAX ||
	    !(in->loc_mr_access & RV_ACCESS_KERNEL) ||
	    in->loc_addr < in->loc_mr_addr ||
	    in->loc_addr + in->length < in->loc_addr ||
	    in->loc_mr_addr + in->loc_mr_length < in->loc_mr_addr ||
	    in->loc_addr + in->length > in->loc_mr_addr + in->loc_mr_length)
		return -EINVAL;
	conn = xa_load(&user->conns, in->handle);
	if (!conn)
		return -EINVAL;
	if (in->length > user->jdev->max_msg_sz)
		return -EMSGSIZE;
	/*
	 * A write once posted cannot be taken back: an output that cannot
	 * be written is refused first (rewriting what was read changes
	 * nothing).
	 */
	if (copy_to_user(ctx->uarg, &p, sizeof(p)))
		return -EFAULT;

	mr = rv_mr_cache_get_io(&user->cache, in->loc_mr_handle,
				in->loc_mr_addr, in->loc_mr_length,
				in->loc_mr_access);
	if (!mr)
		return -EINVAL;

	/*
	 * Round robin over the QPs, skipping those without credit. The
	 * answer when none takes it: EBUSY if one is connected (credit
	 * comes back with completions), EAGAIN while recovering, EIO once
	 * failed for good.
	 */
	start = (unsigned int)atomic_inc_return(&conn->rr);
	err = -EIO;
	for (i = 0; i < conn->num_conn; i++) {
		struct rv_sconn *s = &conn->sconn[(start + i) % conn->num_conn];
		struct rv_post_write_params_out o = {};

		ret = rv_sconn_post_write(s, user, mr, in, &o);
		if (!i || !ret)
			out = o;
		if (!ret)
			break;
		/* Prefer the most hopeful answer: EBUSY, EAGAIN, EIO. */
		if (ret == -EBUSY || (ret == -EAGAIN && err == -EIO))
			err = ret;
	}
	if (ret) {
		ret = err;
		rv_mr_put_io(user, mr);
	}
	trace_rv_post_write(user, conn, out.sconn_index, in->length,
			    in->immed, ret);
	if (copy_to_user(&((struct rv_post_write_params __user *)
			   ctx->uarg)->out, &out, sizeof(out)) && !ret)
		ret = -EFAULT;
	return ret;
}
