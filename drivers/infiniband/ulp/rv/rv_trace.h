/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rv tracepoints, system "rdma_rv" (Runtime Verification has "rv").
 * docs/observability.md lists them; their objects carry the same ids as
 * /sys/kernel/debug/rv/: job, conn and qp.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdma_rv

#if !defined(RV_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RV_TRACE_H

#include <linux/tracepoint.h>

#include "rv_conn.h"

/* Enums shown by name: each value is exported to trace tools. */
TRACE_DEFINE_ENUM(RV_SCONN_IDLE);
TRACE_DEFINE_ENUM(RV_SCONN_WAITING);
TRACE_DEFINE_ENUM(RV_SCONN_DELAY);
TRACE_DEFINE_ENUM(RV_SCONN_RESOLVING);
TRACE_DEFINE_ENUM(RV_SCONN_CONNECTING);
TRACE_DEFINE_ENUM(RV_SCONN_CONNECTED);
TRACE_DEFINE_ENUM(RV_SCONN_RECOVERING);
TRACE_DEFINE_ENUM(RV_SCONN_FAILED);
TRACE_DEFINE_ENUM(RV_SCONN_CLOSING);

/* The names are rv_sconn.h's, which debugfs shows too. */
#define rv_show_sconn_state(x)						\
	__print_symbolic(x, RV_SCONN_STATE_NAMES(RV_SCONN_LIST))

TRACE_DEFINE_ENUM(RV_MR_TRACE_HIT);
TRACE_DEFINE_ENUM(RV_MR_TRACE_MISS);
TRACE_DEFINE_ENUM(RV_MR_TRACE_FULL);
TRACE_DEFINE_ENUM(RV_MR_TRACE_EVICT);
TRACE_DEFINE_ENUM(RV_MR_TRACE_INVALIDATE);
TRACE_DEFINE_ENUM(RV_MR_TRACE_REMOVE);
TRACE_DEFINE_ENUM(RV_MR_TRACE_RECHECK);

#define rv_show_mr_op(x)						\
	__print_symbolic(x, { RV_MR_TRACE_HIT, "hit" },			\
			 { RV_MR_TRACE_MISS, "miss" },			\
			 { RV_MR_TRACE_FULL, "full" },			\
			 { RV_MR_TRACE_EVICT, "evict" },		\
			 { RV_MR_TRACE_INVALIDATE, "invalidate" },	\
			 { RV_MR_TRACE_REMOVE, "remove" },		\
			 { RV_MR_TRACE_RECHECK, "recheck" })

TRACE_DEFINE_ENUM(IB_CM_REQ_ERROR);
TRACE_DEFINE_ENUM(IB_CM_REQ_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_REP_ERROR);
TRACE_DEFINE_ENUM(IB_CM_REP_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_RTU_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_USER_ESTABLISHED);
TRACE_DEFINE_ENUM(IB_CM_DREQ_ERROR);
TRACE_DEFINE_ENUM(IB_CM_DREQ_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_DREP_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_TIMEWAIT_EXIT);
TRACE_DEFINE_ENUM(IB_CM_MRA_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_REJ_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_LAP_ERROR);
TRACE_DEFINE_ENUM(IB_CM_LAP_RECEIVED);
TRACE_DEFINE_ENUM(IB_CM_APR_RECEIVED);

TRACE_DEFINE_ENUM(RV_REJ_RETRY);
TRACE_DEFINE_ENUM(RV_REJ_VERSION);
TRACE_DEFINE_ENUM(RV_REJ_UID);
TRACE_DEFINE_ENUM(RV_REJ_INDEX);
TRACE_DEFINE_ENUM(RV_REJ_ROLE);
TRACE_DEFINE_ENUM(RV_REJ_LOCAL);

/* rv's reasons in a REJ's private data; "-" where it gives none. */
#define rv_show_rej_reason(x)						\
	__print_symbolic(x, { 0, "-" },					\
			 { RV_REJ_RETRY, "retry" },			\
			 { RV_REJ_VERSION, "version" },			\
			 { RV_REJ_UID, "uid" },				\
			 { RV_REJ_INDEX, "index" },			\
			 { RV_REJ_ROLE, "role" },			\
			 { RV_REJ_LOCAL, "local" })

#define rv_show_cm_event(x)						\
	__print_symbolic(x, { IB_CM_REQ_ERROR, "req_error" },		\
			 { IB_CM_REQ_RECEIVED, "req_received" },	\
			 { IB_CM_REP_ERROR, "rep_error" },		\
			 { IB_CM_REP_RECEIVED, "rep_received" },	\
			 { IB_CM_RTU_RECEIVED, "rtu_received" },	\
			 { IB_CM_USER_ESTABLISHED, "established" },	\
			 { IB_CM_DREQ_ERROR, "dreq_error" },		\
			 { IB_CM_DREQ_RECEIVED, "dreq_received" },	\
			 { IB_CM_DREP_RECEIVED, "drep_received" },	\
			 { IB_CM_TIMEWAIT_EXIT, "timewait_exit" },	\
			 { IB_CM_MRA_RECEIVED, "mra_received" },	\
			 { IB_CM_REJ_RECEIVED, "rej_received" },	\
			 { IB_CM_LAP_ERROR, "lap_error" },		\
			 { IB_CM_LAP_RECEIVED, "lap_received" },	\
			 { IB_CM_APR_RECEIVED, "apr_received" })

TRACE_EVENT(rv_attach,
	    TP_PROTO(const struct rv_user *user),
	    TP_ARGS(user),
	    TP_STRUCT__entry(__field(u32, job)
			     __field(pid_t, pid)
			     __field(u32, rv_index)
			     __array(char, device, IB_DEVICE_NAME_MAX)
			     __field(u32, port)),
	    TP_fast_assign(__entry->job = user->jdev->id;
			   __entry->pid = user->tgid;
			   __entry->rv_index = user->rv_index;
			   strscpy(__entry->device,
				   dev_name(&user->jdev->dev->ib_dev->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->port = user->jdev->key.port_num;),
	    TP_printk("job=%u pid=%d rv_index=%u device=%s port=%u",
		      __entry->job, __entry->pid, __entry->rv_index,
		      __entry->device, __entry->port)
);

TRACE_EVENT(rv_detach,
	    TP_PROTO(const struct rv_user *user),
	    TP_ARGS(user),
	    TP_STRUCT__entry(__field(u32, job)
			     __field(pid_t, pid)
			     __field(u32, rv_index)),
	    TP_fast_assign(__entry->job = user->jdev->id;
			   __entry->pid = user->tgid;
			   __entry->rv_index = user->rv_index;),
	    TP_printk("job=%u pid=%d rv_index=%u",
		      __entry->job, __entry->pid, __entry->rv_index)
);

/*
 * The per-QP events share one record: the QP's ids, three numbers whose
 * meaning each event gives (and prints by name) and a status. The class
 * prints them as rv_recv_cmpl's, the only event that uses all three.
 */
DECLARE_EVENT_CLASS(rv_sconn_class,
		    TP_PROTO(const struct rv_sconn *s, u32 v1, u32 v2, u32 v3,
			     int status),
		    TP_ARGS(s, v1, v2, v3, status),
		    TP_STRUCT__entry(__field(u32, job)
				     __field(u32, conn)
				     __field(u8, qp)
				     __field(u32, v1)
				     __field(u32, v2)
				     __field(u32, v3)
				     __field(int, status)),
		    TP_fast_assign(__entry->job = s->conn->jdev->id;
				   __entry->conn = s->conn->id;
				   __entry->qp = s->index;
				   __entry->v1 = v1;
				   __entry->v2 = v2;
				   __entry->v3 = v3;
				   __entry->status = status;),
		    TP_printk("job=%u conn=%u qp=%u rv_index=%u len=%u imm=0x%x status=%d",
			      __entry->job, __entry->conn, __entry->qp,
			      __entry->v1, __entry->v2, __entry->v3,
			      __entry->status)
);

/* v1: the old state, v2: the new one. */
DEFINE_EVENT_PRINT(rv_sconn_class, rv_sconn_state,
		   TP_PROTO(const struct rv_sconn *s, u32 v1, u32 v2, u32 v3,
			    int status),
		   TP_ARGS(s, v1, v2, v3, status),
		   TP_printk("job=%u conn=%u qp=%u old=%s new=%s",
			     __entry->job, __entry->conn, __entry->qp,
			     rv_show_sconn_state(__entry->v1),
			     rv_show_sconn_state(__entry->v2))
);

/* v1: the CM event; v2: the reason an rv REJ gives. */
DEFINE_EVENT_PRINT(rv_sconn_class, rv_cm_event,
		   TP_PROTO(const struct rv_sconn *s, u32 v1, u32 v2, u32 v3,
			    int status),
		   TP_ARGS(s, v1, v2, v3, status),
		   TP_printk("job=%u conn=%u qp=%u event=%s rv_reason=%s status=%d",
			     __entry->job, __entry->conn, __entry->qp,
			     rv_show_cm_event(__entry->v1),
			     rv_show_rej_reason(__entry->v2), __entry->status)
);

/*
 * The listener turned a REQ away: no QP of the node's jobs was
 * waiting for it (or it was malformed). The REQ's QP index and uid are
 * 0 when its private data was not rv's.
 */
TRACE_EVENT(rv_req_reject,
	    TP_PROTO(const struct ib_device *ibdev, u32 port,
		     const struct rv_req_info *req, u8 reason),
	    TP_ARGS(ibdev, port, req, reason),
	    TP_STRUCT__entry(__array(char, device, IB_DEVICE_NAME_MAX)
			     __field(u32, port)
			     __field(u32, uid)
			     __field(u8, qp)
			     __field(u8, reason)),
	    TP_fast_assign(strscpy(__entry->device, dev_name(&ibdev->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->port = port;
			   __entry->uid = req->uid;
			   __entry->qp = req->index;
			   __entry->reason = reason;),
	    TP_printk("device=%s port=%u uid=%u qp=%u rv_reason=%s",
		      __entry->device, __entry->port, __entry->uid, __entry->qp,
		      rv_show_rej_reason(__entry->reason))
);

TRACE_EVENT(rv_mr_cache,
	    TP_PROTO(const struct rv_mr_cache *cache, u64 addr, u64 len,
		     u32 access, int op),
	    TP_ARGS(cache, addr, len, access, op),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __field(int, op)
			     __field(u64, addr)
			     __field(u64, len)
			     __field(u32, access)),
	    TP_fast_assign(__entry->pid = cache->owner;
			   __entry->op = op;
			   __entry->addr = addr;
			   __entry->len = len;
			   __entry->access = access;),
	    TP_printk("pid=%d op=%s addr=0x%llx len=%llu access=0x%x",
		      __entry->pid, rv_show_mr_op(__entry->op),
		      __entry->addr, __entry->len, __entry->access)
);

TRACE_EVENT(rv_post_write,
	    TP_PROTO(const struct rv_user *user, const struct rv_conn *conn,
		     u8 qp, u32 len, u32 imm, int ret),
	    TP_ARGS(user, conn, qp, len, imm, ret),
	    TP_STRUCT__entry(__field(u32, job)
			     __field(u32, conn)
			     __field(u8, qp)
			     __field(pid_t, pid)
			     __field(u32, len)
			     __field(u32, imm)
			     __field(int, ret)),
	    TP_fast_assign(__entry->job = conn->jdev->id;
			   __entry->conn = conn->id;
			   __entry->qp = qp;
			   __entry->pid = user->tgid;
			   __entry->len = len;
			   __entry->imm = imm;
			   __entry->ret = ret;),
	    TP_printk("job=%u conn=%u qp=%u pid=%d len=%u imm=0x%x ret=%d",
		      __entry->job, __entry->conn, __entry->qp, __entry->pid,
		      __entry->len, __entry->imm, __entry->ret)
);

/* v1: the posting process's pid, v2: the write's length. */
DEFINE_EVENT_PRINT(rv_sconn_class, rv_send_cmpl,
		   TP_PROTO(const struct rv_sconn *s, u32 v1, u32 v2, u32 v3,
			    int status),
		   TP_ARGS(s, v1, v2, v3, status),
		   TP_printk("job=%u conn=%u qp=%u pid=%d len=%u status=%d",
			     __entry->job, __entry->conn, __entry->qp,
			     (int)__entry->v1, __entry->v2, __entry->status)
);

/* v1: the rv_index of the immediate, v2: the length, v3: the immediate. */
DEFINE_EVENT(rv_sconn_class, rv_recv_cmpl,
	     TP_PROTO(const struct rv_sconn *s, u32 v1, u32 v2, u32 v3,
		      int status),
	     TP_ARGS(s, v1, v2, v3, status)
);

#endif /* RV_TRACE_H */

/* Out of tree the header is found next to this file. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rv_trace
#include <trace/define_trace.h>
