// SPDX-License-Identifier: GPL-2.0
/*
 * QPs of shared connections and the write data path.
 *
 * Each QP has one CQ (ib_alloc_cq, workqueue poll context) for both
 * directions; every work request carries a struct ib_cqe whose done
 * callback handles its completion. The send side uses contexts
 * preallocated per QP (sq_depth of them: the send credits), so posting
 * allocates nothing. The receive side keeps rq_depth zero-SGE receives
 * posted for inbound RDMA WRITE with immediate (and heartbeats), and
 * reposts each as it completes.
 *
 * Exactly one event reaches the posting process for each write it
 * posted: the send completion, successful or not; a QP that is drained
 * for recovery or teardown flushes what it holds with an error status.
 *
 * Any completion in error, a flush too, on a QP that rv holds connected
 * (or connecting) is a loss: a QP that the device moved to the error state
 * by itself may report nothing but flushes (soft RoCE on 6.12, once the
 * node's address was removed). Only the flushes of rv's own drain come
 * when the QP is in another state.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rv_conn.h"
#include "rv_quirks.h"
#include "rv_trace.h"

static void rv_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void rv_hb_done(struct ib_cq *cq, struct ib_wc *wc);
static void rv_recv_done(struct ib_cq *cq, struct ib_wc *wc);

int rv_sconn_ctx_alloc(struct rv_sconn *s)
{
	struct rv_job_dev *jdev = s->conn->jdev;
	const struct ib_device_attr *attrs = &jdev->dev->ib_dev->attrs;
	u32 depth, i, cqe_room;

	depth = DIV_ROUND_UP(jdev->params.q_depth, jdev->params.num_conn);
	depth = max(depth, 8U);
	/* sends + heartbeat + drain, receives + drain, in one CQ */
	cqe_room = (min_t(u32, attrs->max_cqe, S32_MAX) - 4) / 2;
	depth = min3(depth, (u32)attrs->max_qp_wr - 2, cqe_room);
	s->sq_depth = depth;
	/* The peer's writes and its heartbeat. */
	s->rq_depth = depth + 1;

	s->sctx = kcalloc(s->sq_depth, sizeof(*s->sctx), GFP_KERNEL);
	s->rctx = kcalloc(s->rq_depth, sizeof(*s->rctx), GFP_KERNEL);
	if (!s->sctx || !s->rctx) {
		rv_sconn_ctx_free(s);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&s->free_send);
	INIT_LIST_HEAD(&s->posted);
	for (i = 0; i < s->sq_depth; i++) {
		s->sctx[i].sconn = s;
		s->sctx[i].cqe.done = rv_send_done;
		list_add_tail(&s->sctx[i].link, &s->free_send);
	}
	for (i = 0; i < s->rq_depth; i++) {
		s->rctx[i].sconn = s;
		s->rctx[i].cqe.done = rv_recv_done;
	}
	s->hb_ctx.sconn = s;
	s->hb_ctx.cqe.done = rv_hb_done;
	return 0;
}

void rv_sconn_ctx_free(struct rv_sconn *s)
{
	kfree(s->sctx);
	kfree(s->rctx);
	s->sctx = NULL;
	s->rctx = NULL;
}

static void rv_qp_event(struct ib_event *ev, void *context)
{
	struct rv_sconn *s = context;
	unsigned long flags;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/* Data before the RTU: tell the CM, which reports it. */
		spin_lock_irqsave(&s->lock, flags);
		if (s->cm_id)
			ib_cm_notify(s->cm_id, IB_EVENT_COMM_EST);
		spin_unlock_irqrestore(&s->lock, flags);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		rv_sconn_lost(s);
		break;
	default:
		break;
	}
}

/* A new QP and CQ in RESET; nothing is posted yet. */
int rv_qp_create(struct rv_sconn *s)
{
	struct rv_job_dev *jdev = s->conn->jdev;
	struct ib_device *ibdev = jdev->dev->ib_dev;
	struct ib_qp_init_attr init = {};
	struct ib_cq *cq;
	struct ib_qp *qp;
	int ncqe = s->sq_depth + 2 + s->rq_depth + 1;

	lockdep_assert_held(&s->mutex);
	cq = ib_alloc_cq(ibdev, s, ncqe, s->index % ibdev->num_comp_vectors,
			 IB_POLL_WORKQUEUE);
	if (IS_ERR(cq))
		return PTR_ERR(cq);

	init.event_handler = rv_qp_event;
	init.qp_context = s;
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = s->sq_depth + 2;	/* heartbeat, drain */
	init.cap.max_recv_wr = s->rq_depth + 1;	/* drain */
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;
	init.port_num = jdev->key.port_num;
	qp = ib_create_qp(jdev->pd, &init);
	if (IS_ERR(qp)) {
		ib_free_cq(cq);
		return PTR_ERR(qp);
	}
	s->cq = cq;
	s->qp = qp;
	s->qp_inited = false;
	s->hb_busy = false;
	s->stall_ms = 0;
	s->quiet_ms = 0;
	s->recv_err_reported = false;
	return 0;
}

/*
 * Flush whatever the QP holds (each write completes, with
 * an error status if it had not), then free it and its CQ.
 */
void rv_qp_destroy(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	if (!s->qp)
		return;
	/* A QP still in RESET holds nothing and cannot move to ERR. */
	if (s->qp_inited)
		ib_drain_qp(s->qp);
	ib_destroy_qp(s->qp);
	rv_quirk_free_cq(s->cq);
	s->qp = NULL;
	s->cq = NULL;
}

static int rv_post_recv(struct rv_recv_ctx *rc)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &rc->cqe,
		.num_sge = 0,
	};

	return ib_post_recv(rc->sconn->qp, &wr, NULL);
}

/* Move the QP to @state with the CM's attributes. */
int rv_qp_to_state(struct rv_sconn *s, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;
	u32 i;

	lockdep_assert_held(&s->mutex);
	ret = ib_cm_init_qp_attr(s->cm_id, &attr, &mask);
	if (ret)
		return ret;
	if (state == IB_QPS_RTR && s->conn->server)
		attr.rq_psn = s->rq_psn;
	if (state == IB_QPS_RTS && attr.timeout < RV_MIN_QP_TIMEOUT) {
		attr.timeout = RV_MIN_QP_TIMEOUT;
		mask |= IB_QP_TIMEOUT;
	}
	ret = ib_modify_qp(s->qp, &attr, mask);
	if (ret)
		return ret;
	if (state != IB_QPS_INIT)
		return 0;
	s->qp_inited = true;
	for (i = 0; i < s->rq_depth; i++) {
		ret = rv_post_recv(&s->rctx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void rv_send_done(struct ib_cq *cq, struct ib_wc *wc)
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

/* A receive failed: for a job without recovery, tell its processes. */
static void rv_recv_error(struct rv_sconn *s, struct ib_wc *wc)
{
	struct rv_job_dev *jdev = s->conn->jdev;
	struct rv_event_wc ev = {
		.status = wc->status,
		.conn_handle = s->conn->id,
	};
	struct rv_user *user;
	unsigned long index;

	if (jdev->params.reconnect_timeout || s->recv_err_reported)
		return;
	s->recv_err_reported = true;
	rcu_read_lock();
	xa_for_each(&jdev->users, index, user)
		rv_ring_post(&user->ring, RV_WC_RECV_RDMA_WITH_IMM, &ev);
	rcu_read_unlock();
}

static void rv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rv_recv_ctx *rc = container_of(wc->wr_cqe, struct rv_recv_ctx,
					      cqe);
	struct rv_sconn *s = rc->sconn;
	struct rv_job_dev *jdev = s->conn->jdev;
	u8 bits = jdev->params.index_bits;
	struct rv_event_wc ev = {};
	struct rv_user *user;
	unsigned long flags;
	bool delivered = false;
	u32 imm;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * A flush is the QP's error state, not a failure of this
		 * receive: not counted, and a loss only if rv holds the QP
		 * connected (else it is rv's own drain).
		 */
		if (wc->status == IB_WC_WR_FLUSH_ERR) {
			rv_sconn_lost(s);
			return;
		}
		trace_rv_recv_cmpl(s, 0, 0, 0, wc->status);
		spin_lock_irqsave(&s->lock, flags);
		s->stats.recv_cqe_fail++;
		spin_unlock_irqrestore(&s->lock, flags);
		rv_recv_error(s, wc);
		rv_sconn_lost(s);
		return;
	}

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		imm = be32_to_cpu(wc->ex.imm_data);
		ev.imm_data = imm;
		ev.byte_len = wc->byte_len;
		ev.conn_handle = s->conn->id;
		trace_rv_recv_cmpl(s, rv_imm_index(imm, bits), wc->byte_len,
				   imm, wc->status);
		rcu_read_lock();
		user = xa_load(&jdev->users, rv_imm_index(imm, bits));
		if (user) {
			rv_ring_post(&user->ring, RV_WC_RECV_RDMA_WITH_IMM,
				     &ev);
			delivered = true;
		}
		rcu_read_unlock();
	}

	spin_lock_irqsave(&s->lock, flags);
	s->rx_seen = true;
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		s->stats.recv_write_cqe++;
		s->stats.recv_write_bytes += wc->byte_len;
		if (!delivered)
			s->stats.recv_drop++;
	} else {
		s->stats.recv_hb_cqe++;
	}
	spin_unlock_irqrestore(&s->lock, flags);

	/* A failure here means the QP is going down; recovery follows. */
	rv_post_recv(rc);
}

static void rv_hb_done(struct ib_cq *cq, struct ib_wc *wc)
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
 * On (re)establishment, under s->mutex, and from the heartbeat tick,
 * without it: (re)arm the tick.
 */
void rv_hb_start(struct rv_sconn *s)
{
	unsigned int ms = s->conn->jdev->params.hb_interval;

	if (ms)
		mod_delayed_work(rv_wq, &s->hb_work, msecs_to_jiffies(ms));
}

/*
 * On a heartbeat tick of @ms: has the send side made no
 * progress for too long while it had work (see RV_STALL_MS)? The
 * transport should give up on an unanswered send by itself (retry_count
 * local ACK timeouts), but soft RoCE can leave a QP whose sends neither
 * complete nor fail, after its link flaps or while every packet is lost.
 */
static bool rv_sconn_stalled(struct rv_sconn *s, unsigned int ms)
{
	const struct rv_conn_get_stats_params_out *st = &s->stats;
	u64 done = st->send_write_cqe + st->send_write_cqe_fail +
		   st->send_hb_cqe + st->send_hb_cqe_fail;
	bool rx = s->rx_seen;
	struct rv_send_ctx *oldest;
	u32 limit = RV_STALL_MS;

	lockdep_assert_held(&s->lock);
	s->rx_seen = false;
	if ((!s->outstanding && !s->hb_busy) || done != s->hb_done) {
		s->hb_done = done;
		s->stall_ms = 0;
		s->quiet_ms = 0;
		return false;
	}
	s->stall_ms += ms;
	s->quiet_ms = rx ? 0 : s->quiet_ms + ms;
	if (s->quiet_ms >= RV_STALL_MS)
		return true;
	oldest = list_first_entry_or_null(&s->posted, struct rv_send_ctx,
					  link);
	if (oldest)
		limit += oldest->len / RV_STALL_MIN_KBPS;	/* B / (kB/s): ms */
	return s->stall_ms >= limit;
}

/*
 * A heartbeat tick: a QP that posted no write since the last tick sends a
 * zero-length SEND (so one that only receives sends one every tick, which
 * the writer's watchdog takes as a sign of a working link). Its failure
 * (the peer is gone), or a send queue that stopped moving, is a loss.
 */
void rv_hb_work(struct work_struct *work)
{
	struct rv_sconn *s = container_of(to_delayed_work(work),
					  struct rv_sconn, hb_work);
	unsigned int ms = s->conn->jdev->params.hb_interval;
	struct ib_send_wr wr = {
		.wr_cqe = &s->hb_ctx.cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned long flags;
	bool post, failed = false;

	spin_lock_irqsave(&s->lock, flags);
	if (s->state != RV_SCONN_CONNECTED) {
		spin_unlock_irqrestore(&s->lock, flags);
		return;
	}
	if (rv_sconn_stalled(s, ms)) {
		spin_unlock_irqrestore(&s->lock, flags);
		rv_sconn_lost(s);
		return;
	}
	post = !s->activity && !s->hb_busy;
	s->activity = false;
	if (post) {
		if (ib_post_send(s->qp, &wr, NULL)) {
			s->stats.post_hb_fail++;
			failed = true;
		} else {
			s->stats.post_hb++;
			s->hb_busy = true;
		}
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (failed)
		rv_sconn_lost(s);
	else
		rv_hb_start(s);
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
	    !(in->loc_mr_access & IBV_ACCESS_KERNEL) ||
	    in->loc_addr < in->loc_mr_addr ||
	    in->loc_addr + in->length < in->loc_addr ||
	    in->loc_mr_addr + in->loc_mr_length < in->loc_mr_addr ||
	    in->loc_addr + in->length > in->loc_mr_addr + in->loc_mr_length)
		return -EINVAL;
	conn = xa_load(&user->conns, in->handle);
	if (!conn)
		return -EINVAL;
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
