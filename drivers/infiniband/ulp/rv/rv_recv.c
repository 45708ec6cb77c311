// SPDX-License-Identifier: GPL-2.0
/*
 * The receive side of the write data path. Each QP keeps rq_depth
 * zero-SGE receives posted for inbound RDMA WRITE with immediate (and
 * heartbeats), and reposts each as it completes. The immediate names the
 * process of the job the write is for (rv_imm_index()); its event goes to
 * that process's ring.
 *
 * Any receive completion in error, a flush too, on a QP that rv holds
 * connected (or connecting) is a loss: a QP that the device moved to the
 * error state by itself may report nothing but flushes (soft RoCE on
 * 6.12, once the node's address was removed). Only the flushes of rv's
 * own drain come when the QP is in another state.
 */
#include "rv_conn.h"
#include "rv_trace.h"

int rv_post_recv(struct rv_recv_ctx *rc)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &rc->cqe,
		.num_sge = 0,
	};

	return ib_post_recv(rc->sconn->qp, &wr, NULL);
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

void rv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
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
