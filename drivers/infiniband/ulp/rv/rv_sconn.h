/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One QP of a shared connection: struct rv_sconn, its RC QP with its CQ
 * and CM id, and the state machine that runs it (rv_sconn.c).
 *
 * State of one QP (rv_sconn.state). Only rv_sconn.c changes it, under
 * both sconn->mutex and sconn->lock; it is read under either. In [] the
 * event of rv_sconn.c that makes each transition:
 *
 *   IDLE --CONNECT [start]--> WAITING (listener side) or DELAY (initiator)
 *   DELAY --[work]--> RESOLVING (RoCE) --dmac [resolved]--> CONNECTING
 *     (REQ sent); not RoCE: DELAY --[work]--> CONNECTING
 *   WAITING --REQ [req]--> CONNECTING (REP sent)
 *   CONNECTING --REP/RTU [cm_handler]--> CONNECTED
 *   DELAY/RESOLVING --no REQ sent, no dmac [work, resolved]--> DELAY
 *   CONNECTED/CONNECTING --loss, DREQ, REJ, CM error [lost, cm_handler;
 *     then work]--> RECOVERING --drain, new QP [work]--> DELAY or WAITING
 *   any --deadline passed (also with no CM event) [work, resolved] or a
 *     final REJ [cm_handler]--> FAILED
 *   any --device gone [stop]--> FAILED
 *   any --last reference [close]--> CLOSING
 */
#ifndef RV_SCONN_H
#define RV_SCONN_H

#include <linux/workqueue.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_sa.h>

#include "rv.h"

enum rv_sconn_state {
	RV_SCONN_IDLE,
	RV_SCONN_WAITING,
	RV_SCONN_DELAY,
	RV_SCONN_RESOLVING,
	RV_SCONN_CONNECTING,
	RV_SCONN_CONNECTED,
	RV_SCONN_RECOVERING,
	RV_SCONN_FAILED,
	RV_SCONN_CLOSING,
};

/*
 * The states' names, for debugfs and tracing, as { state, "name" } pairs:
 * RV_SCONN_STATE_NAMES(m) passes them all to the macro @m (the pairs are
 * what the tracepoint's __print_symbolic() takes as its arguments).
 */
#define RV_SCONN_STATE_NAMES(m)						\
	m({ RV_SCONN_IDLE, "idle" },					\
	  { RV_SCONN_WAITING, "waiting" },				\
	  { RV_SCONN_DELAY, "delay" },					\
	  { RV_SCONN_RESOLVING, "resolving" },				\
	  { RV_SCONN_CONNECTING, "connecting" },			\
	  { RV_SCONN_CONNECTED, "connected" },				\
	  { RV_SCONN_RECOVERING, "recovering" },			\
	  { RV_SCONN_FAILED, "failed" },				\
	  { RV_SCONN_CLOSING, "closing" })
#define RV_SCONN_LIST(...) __VA_ARGS__

/* One posted write (or the heartbeat), preallocated per QP. */
struct rv_send_ctx {
	struct ib_cqe cqe;
	/* On sconn->free_send, or on sconn->posted while posted. */
	struct list_head link;
	struct rv_sconn *sconn;
	struct rv_user *user;		/* reference held while posted */
	struct rv_mr_entry *mr;		/* IO reference held while posted */
	u64 wr_id;
	u32 len;
};

struct rv_recv_ctx {
	struct ib_cqe cqe;
	struct rv_sconn *sconn;
};

struct rv_sconn {
	struct rv_conn *conn;
	u8 index;

	struct mutex mutex;		/* CM and state machine steps */
	spinlock_t lock;		/* state, credits, stats */
	enum rv_sconn_state state;
	bool was_connected;
	bool lost;			/* loss seen, recovery pending */
	bool qp_inited;			/* QP left RESET: drain before destroy */
	bool established;		/* cm_id reached ESTABLISHED */
	bool hb_busy;			/* the heartbeat is posted */
	bool activity;			/* sends since the last heartbeat tick */
	bool rx_seen;			/* receives since the last tick */
	bool recv_err_reported;
	u64 hb_done;			/* send completions at the last tick */
	u32 stall_ms;			/* sends pending without progress */
	u32 quiet_ms;			/* ... and nothing received either */

	struct ib_cm_id *cm_id;
	struct ib_qp *qp;
	struct ib_cq *cq;		/* of ib_core's pool, shared */
	u32 cq_claimed;			/* its entries this QP holds */
	u32 conn_count;
	u32 rq_psn;			/* listener: receive PSN, sent in REP */
	u32 attempts;			/* connect attempts since last success */
	unsigned long deadline;		/* jiffies: give up after */

	/*
	 * Initiator: the table entry of the job's GID this QP's attempts
	 * use (a reference), once it differs from the connection's: an
	 * address that goes and comes back while the old entry is held
	 * gets a new entry, and resolving through the old one fails.
	 */
	const struct ib_gid_attr *sgid_attr;
	struct rdma_dev_addr dev_addr;	/* initiator: dmac resolution */
	bool resolve_pending;
	struct sa_path_rec path;	/* initiator: the REQ's primary path */

	u32 sq_depth;			/* writes in flight per QP */
	u32 rq_depth;			/* receives preposted */
	u32 outstanding;		/* writes posted, not completed */
	struct rv_send_ctx *sctx;	/* sq_depth */
	struct list_head free_send;
	struct list_head posted;	/* oldest first, as they complete */
	struct rv_send_ctx hb_ctx;
	struct rv_recv_ctx *rctx;	/* rq_depth */

	struct delayed_work work;	/* state machine */
	struct delayed_work hb_work;	/* heartbeat ticks */

	/* times, for statistics */
	ktime_t t_start;		/* current phase began */
	ktime_t t_connected;		/* connected since */

	struct rv_conn_get_stats_params_out stats;
};

/*
 * Least local ACK timeout: 4.096 us * 2^17, about half a second. Soft
 * RoCE under load (or emulation) can take longer than the path says to
 * answer, and each needless retry resends the whole window.
 */
#define RV_MIN_QP_TIMEOUT 17

/*
 * A send queue with work that neither completes nor fails for this long
 * while nothing arrives from the peer either is declared lost: twice the
 * transport's own give-up time, RV_MIN_QP_TIMEOUT times (retry_count +
 * 1). The peer's heartbeats show a link that works, however slowly: then
 * the limit grows by the time the oldest write in flight takes at
 * RV_STALL_MIN_KBPS, so that a long write on a crawling link is not a
 * loss but a QP whose sends are stuck still is.
 */
#define RV_STALL_MS 9000
#define RV_STALL_MIN_KBPS 128		/* kB/s, 1 kB = 1000 B */

/*
 * From any context: a connected or connecting QP was lost. Does nothing
 * when the QP is in no such state: rv itself is draining it (recovery,
 * failure, close) or it has not started. Only reports the loss: the
 * state machine's work (rv_sconn.c) acts on it, so that the data path and
 * the QP's event handler need nothing of the state machine but this.
 */
static inline void rv_sconn_lost(struct rv_sconn *s)
{
	unsigned long flags;
	bool kick = false;

	spin_lock_irqsave(&s->lock, flags);
	if (s->state == RV_SCONN_CONNECTED || s->state == RV_SCONN_CONNECTING) {
		kick = !s->lost;
		s->lost = true;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (kick)
		mod_delayed_work(rv_wq, &s->work, 0);
}

/* rv_sconn.c: the events of the state machine */
int rv_sconn_init(struct rv_sconn *s, struct rv_conn *conn, u8 index);
void rv_sconn_uninit(struct rv_sconn *s);
int rv_sconn_prepare(struct rv_sconn *s);
void rv_sconn_unprepare(struct rv_sconn *s);
void rv_sconn_start(struct rv_sconn *s);
void rv_sconn_stop(struct rv_sconn *s, enum rv_sconn_state state);
void rv_sconn_close(struct rv_sconn *s);
int rv_sconn_req(struct rv_sconn *s, struct ib_cm_id *id,
		 const struct ib_cm_event *ev);
int rv_sconn_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);

/* rv_qp.c */
int rv_sconn_ctx_alloc(struct rv_sconn *s);
void rv_sconn_ctx_free(struct rv_sconn *s);
int rv_qp_create(struct rv_sconn *s);
void rv_qp_destroy(struct rv_sconn *s);
int rv_qp_to_state(struct rv_sconn *s, enum ib_qp_state state);
void rv_hb_start(struct rv_sconn *s);
void rv_hb_work(struct work_struct *work);

/* rv_send.c */
void rv_send_done(struct ib_cq *cq, struct ib_wc *wc);
void rv_hb_done(struct ib_cq *cq, struct ib_wc *wc);
bool rv_hb_post(struct rv_sconn *s);

/* rv_recv.c */
int rv_post_recv(struct rv_recv_ctx *rc);
void rv_recv_done(struct ib_cq *cq, struct ib_wc *wc);

#endif /* RV_SCONN_H */
