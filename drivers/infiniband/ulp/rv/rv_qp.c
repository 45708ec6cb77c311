// SPDX-License-Identifier: GPL-2.0
/*
 * QPs of shared connections: their contexts, QP and CQ, the QP's moves
 * through the CM's states, and the liveness tick (heartbeat and stall
 * watchdog). The data path is in rv_send.c and rv_recv.c.
 *
 * Each QP takes room for both directions' completions in a CQ of the RDMA
 * core's pool (ib_cq_pool_get(), poll context as cq_poll says), as
 * nvme-rdma and rtrs do: the pool's CQs are shared by every kernel user of
 * the device, spread over its completion vectors, and stay until the device
 * goes. The core picks the vector, round robin. Every work request carries
 * a struct ib_cqe whose done callback (rv_send.c, rv_recv.c) handles its
 * completion; a QP is drained before it is destroyed, so no completion of
 * it is left in the shared CQ.
 */
#include <linux/slab.h>

#include "rv_conn.h"

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

	s->sctx = kzalloc_objs(*s->sctx, s->sq_depth, GFP_KERNEL_ACCOUNT);
	s->rctx = kzalloc_objs(*s->rctx, s->rq_depth, GFP_KERNEL_ACCOUNT);
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

/* A new QP in RESET, with room in a pool CQ; nothing is posted yet. */
int rv_qp_create(struct rv_sconn *s)
{
	struct rv_job_dev *jdev = s->conn->jdev;
	struct ib_device *ibdev = jdev->dev->ib_dev;
	struct ib_qp_init_attr init = {};
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 ncqe = s->sq_depth + 2 + s->rq_depth + 1;

	lockdep_assert_held(&s->mutex);
	cq = ib_cq_pool_get(ibdev, ncqe, -1, rv_params.cq_poll);
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
		ib_cq_pool_put(cq, ncqe);
		return PTR_ERR(qp);
	}
	s->cq = cq;
	s->cq_claimed = ncqe;
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
 * an error status if it had not), then free it and give its CQ room back.
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
	ib_cq_pool_put(s->cq, s->cq_claimed);
	s->qp = NULL;
	s->cq = NULL;
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
 * zero-length SEND (rv_hb_post(); so one that only receives sends one
 * every tick, which the writer's watchdog takes as a sign of a working
 * link). Its failure (the peer is gone), or a send queue that stopped
 * moving, is a loss.
 */
void rv_hb_work(struct work_struct *work)
{
	struct rv_sconn *s = container_of(to_delayed_work(work),
					  struct rv_sconn, hb_work);
	unsigned int ms = s->conn->jdev->params.hb_interval;
	unsigned long flags;
	bool failed;

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
	failed = rv_hb_post(s);
	spin_unlock_irqrestore(&s->lock, flags);
	if (failed)
		rv_sconn_lost(s);
	else
		rv_hb_start(s);
}
