/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared RC connections: one struct rv_conn per (job-device, remote node),
 * holding num_conn struct rv_sconn, each one RC QP (completing to a pool
 * CQ) and CM id.
 *
 * Files, each calling only those below it:
 *   rv_conn.c  - the connection objects, their lifetime, the CONN_*
 *                ioctls and the listener's handler (which connection and
 *                QP a REQ is for);
 *   rv_sconn.c - the per-QP state machine (connect, recovery, deadlines):
 *                the only code that changes a QP's state; it handles the
 *                CM's events on the QP's CM ids and address resolution;
 *   rv_cm.c    - IB CM messages: listener, path, private data, the REQ,
 *                REP and REJ sent, address resolution; no state;
 *   rv_qp.c    - QPs, their room in pool CQs, their contexts and CM
 *                states, the liveness tick (heartbeat and stall watchdog);
 *   rv_send.c  - POST_WRITE, send completions, the heartbeat's SEND;
 *   rv_recv.c  - receive preposting and receive completions.
 * The data path, the QP's events and the watchdog report a loss with
 * rv_sconn_lost() (rv_sconn.h), which the state machine's work acts on.
 * The QP's states and their diagram are in rv_sconn.h.
 */
#ifndef RV_CONN_H
#define RV_CONN_H

#include "rv.h"
#include "rv_sconn.h"
#include "rv_wire.h"

struct rv_conn {
	struct kref kref;		/* one per process handle */
	struct list_head list;		/* jdev->conns, under jdev->conn_mutex */
	struct rv_job_dev *jdev;	/* reference held */
	u32 id;				/* conn_handle, in rv_conn_ids */
	bool global;
	bool server;			/* this side listens */
	union ib_gid dgid;
	u16 dlid;
	u32 rem_addr;

	bool have_path;			/* under jdev->conn_mutex */
	bool killed;			/* its device went (conn_mutex) */
	struct ib_user_path_rec upath;
	const struct ib_gid_attr *sgid_attr;	/* held once have_path */

	/* Its QPs (conn_mutex): the creating process's cgroup. */
	struct rv_rdmacg rdmacg;

	atomic_t rr;			/* round robin of the data path */
	struct work_struct destroy_work;
	u8 num_conn;
	struct rv_sconn sconn[];
};

/* rv_conn.c */
void rv_conn_put(struct rv_conn *conn);
int rv_conn_listen_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);

/* The GID table entry this QP's attempts go through. */
static inline const struct ib_gid_attr *
rv_sconn_sgid_attr(const struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	return s->sgid_attr ? s->sgid_attr : s->conn->sgid_attr;
}

/* rv_cm.c */
void rv_cm_init(ib_cm_handler listen_handler);
int rv_cm_listen(struct rv_job_dev *jdev);
void rv_cm_unlisten(struct rv_job_dev *jdev);
int rv_cm_path_init(struct rv_conn *conn);
void rv_cm_build_path(struct rv_sconn *s);
int rv_cm_send_req(struct rv_sconn *s, struct ib_cm_id *id);
int rv_cm_send_rep(struct rv_sconn *s, struct ib_cm_id *id);
int rv_cm_resolve(struct rv_sconn *s,
		  void (*done)(int status, struct sockaddr *src,
			       struct rdma_dev_addr *addr, void *context));
void rv_cm_cancel_resolve(struct rv_sconn *s);
void rv_cm_reject(struct ib_cm_id *id, u8 reason);
bool rv_cm_rej_is_final(const struct ib_cm_event *ev);
int rv_cm_event_status(const struct ib_cm_event *ev);
u8 rv_cm_rej_rv_reason(const struct ib_cm_event *ev);
u32 *rv_cm_counter(struct rv_conn_get_stats_params_out *st,
		   enum ib_cm_event_type event);

#endif /* RV_CONN_H */
