// SPDX-License-Identifier: GPL-2.0
/*
 * The IB CM messages of shared connections: the listener, the REQ's path
 * and private data, the REQ, REP and REJ sent, what a REJ or an event
 * received says, and the initiator's address resolution. This code
 * changes no QP state and calls nothing above it: the state machine
 * (rv_sconn.c) creates the CM ids and resolutions, owns their callbacks
 * and asks this file for the messages.
 *
 * Every job-device listens on its service id through ib_cm_insert_listen(),
 * so there is one CM listener per (device, service id), shared by the
 * CM among the jobs on it. A REQ names the job and the QP index in its
 * private data (network byte order); the listener's handler (rv_conn.c)
 * finds, among the jobs of the REQ's uid on the GID it is addressed to,
 * the job's connection to the REQ's source GID (or LID) and the QP
 * accepts, or it rejects with a reason: RETRY when the job or its
 * connection is not there yet (a job of another uid is not there for the
 * REQ) or the QP is busy recovering, which the initiator retries until
 * its deadline; any other reason is final.
 *
 * The initiator resolves the destination MAC of a RoCE path in the
 * kernel (rdma_resolve_ip) before each REQ, and sends none while the
 * local address is not configured (rv_sconn_can_send()).
 */
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/random.h>
#include <rdma/ib_cache.h>

#include "rv_conn.h"
#include "rv_wire.h"

/* CM response timeout: 4.096 us * 2^17, about half a second. */
#define RV_CM_RESPONSE_TIMEOUT 17
#define RV_CM_MAX_RETRIES 4
#define RV_RETRY_COUNT 7
#define RV_RNR_RETRY_COUNT 7		/* receives are reposted at once */
#define RV_RESOLVE_TIMEOUT_MS 2000

static_assert(sizeof(struct rv_req_pdata) <= IB_CM_REQ_PRIVATE_DATA_SIZE);
static_assert(sizeof(struct rv_rej_pdata) <= IB_CM_REJ_PRIVATE_DATA_SIZE);

/*
 * The listener's handler. It finds a REQ's connection among the jobs, so
 * it sits above them (rv_conn.c); rv_main.c hands it over once, so that
 * a job starts listening without calling up into the connections.
 */
static ib_cm_handler rv_cm_listen_handler;

void rv_cm_init(ib_cm_handler listen_handler)
{
	rv_cm_listen_handler = listen_handler;
}

int rv_cm_listen(struct rv_job_dev *jdev)
{
	struct ib_cm_id *id;

	id = ib_cm_insert_listen(jdev->dev->ib_dev, rv_cm_listen_handler,
				 cpu_to_be64(jdev->key.service_id));
	if (IS_ERR(id))
		return PTR_ERR(id);
	jdev->listen_id = id;
	return 0;
}

/*
 * The job gives up its share of the listener, once: when its last
 * process leaves, before its connections go (rv_job_leave()), or when
 * its device goes. Giving it up waits for any REQ being handled on the
 * listener, and from Linux 7.x the IB CM logs that wait (see
 * docs/connections.md): going first, the job turns away before it sends
 * the DREQs that make its peers come back with REQs.
 */
void rv_cm_unlisten(struct rv_job_dev *jdev)
{
	mutex_lock(&jdev->listen_mutex);
	if (jdev->listen_id)
		ib_destroy_cm_id(jdev->listen_id);
	jdev->listen_id = NULL;
	mutex_unlock(&jdev->listen_mutex);
}

/* On the first CONN_CONNECT of @conn. */
int rv_cm_path_init(struct rv_conn *conn)
{
	struct rv_job_dev *jdev = conn->jdev;
	const struct ib_gid_attr *attr;

	lockdep_assert_held(&conn->jdev->conn_mutex);
	attr = rdma_get_gid_attr(jdev->dev->ib_dev, jdev->key.port_num,
				 jdev->key.gid_index);
	if (IS_ERR(attr))
		return -ENOENT;
	if (memcmp(attr->gid.raw, jdev->gid.raw, sizeof(jdev->gid.raw))) {
		rdma_put_gid_attr(attr);
		return -ENOENT;
	}
	conn->sgid_attr = attr;
	return 0;
}

/* The REQ's primary path, from what the client gave CONN_CONNECT. */
void rv_cm_build_path(struct rv_sconn *s)
{
	const struct rv_conn *conn = s->conn;
	const struct ib_user_path_rec *u = &conn->upath;
	struct sa_path_rec *p = &s->path;
	struct ib_device *ibdev = conn->jdev->dev->ib_dev;

	memset(p, 0, sizeof(*p));
	if (rdma_protocol_roce(ibdev, conn->jdev->key.port_num))
		p->rec_type =
			sa_conv_gid_to_pathrec_type(conn->sgid_attr->gid_type);
	else
		p->rec_type = SA_PATH_REC_TYPE_IB;
	memcpy(p->dgid.raw, u->dgid, sizeof(p->dgid.raw));
	memcpy(p->sgid.raw, u->sgid, sizeof(p->sgid.raw));
	sa_path_set_dlid(p, be16_to_cpu(u->dlid));
	sa_path_set_slid(p, be16_to_cpu(u->slid));
	sa_path_set_raw_traffic(p, u->raw_traffic);
	p->flow_label = u->flow_label;
	p->hop_limit = u->hop_limit;
	p->traffic_class = u->traffic_class;
	p->reversible = !!u->reversible;
	p->numb_path = u->numb_path ?: 1;
	p->pkey = u->pkey;
	p->sl = u->sl;
	p->mtu_selector = u->mtu_selector;
	p->mtu = u->mtu;
	p->rate_selector = u->rate_selector;
	p->rate = u->rate;
	p->packet_life_time_selector = u->packet_life_time_selector;
	p->packet_life_time = u->packet_life_time;
	p->preference = u->preference;
	p->service_id = cpu_to_be64(conn->jdev->key.service_id);
}

static void rv_cm_fill_pdata(const struct rv_sconn *s, struct rv_req_pdata *pd)
{
	const struct rv_job_dev *jdev = s->conn->jdev;
	struct rv_req_info info = {
		.index = s->index,
		.num_conn = s->conn->num_conn,
		.job_key_len = jdev->key.job_key_len,
		.uid = from_kuid_munged(&init_user_ns, jdev->uid),
	};

	memcpy(info.job_key, jdev->key.job_key, jdev->key.job_key_len);
	rv_req_pdata_init(pd, &info);
}

/* Send the REQ for QP @s on its new CM id @id. 0 or an errno. */
int rv_cm_send_req(struct rv_sconn *s, struct ib_cm_id *id)
{
	struct rv_conn *conn = s->conn;
	struct ib_cm_req_param req = {};
	struct rv_req_pdata pd;

	lockdep_assert_held(&s->mutex);
	rv_cm_fill_pdata(s, &pd);
	/*
	 * RoCE v2: a flow label of rv's own when the client gave none, as
	 * the RDMA CM gives its connections (it picks the UDP source port
	 * of the QP's packets). With a flow label the CM needs the source
	 * GID's netdev to build each message of the connection
	 * (rdma_lag_get_ah_roce_slave()): once the GID is deleted (its
	 * address removed), the DREQ or DREP of a connection made through
	 * it cannot be built and the CM leaves it out. Without one it
	 * would be posted from a GID index that no longer exists, even after
	 * the address is back (at another index), which soft RoCE answers
	 * by moving QP1 to the error state for good.
	 */
	if (s->path.rec_type == SA_PATH_REC_TYPE_ROCE_V2 && !s->path.flow_label)
		s->path.flow_label = cpu_to_be32(hash_32(s->qp->qp_num, 20) ?: 1);
	req.primary_path = &s->path;
	req.ppath_sgid_attr = rv_sconn_sgid_attr(s);
	req.service_id = cpu_to_be64(conn->jdev->key.service_id);
	req.qp_num = s->qp->qp_num;
	req.qp_type = IB_QPT_RC;
	req.starting_psn = get_random_u32() & 0xffffff;
	req.private_data = &pd;
	req.private_data_len = sizeof(pd);
	req.responder_resources = 0;	/* no RDMA READ */
	req.initiator_depth = 0;
	req.remote_cm_response_timeout = RV_CM_RESPONSE_TIMEOUT;
	req.local_cm_response_timeout = RV_CM_RESPONSE_TIMEOUT;
	req.flow_control = 1;
	req.retry_count = RV_RETRY_COUNT;
	req.rnr_retry_count = RV_RNR_RETRY_COUNT;
	req.max_cm_retries = RV_CM_MAX_RETRIES;
	return ib_send_cm_req(id, &req);
}

/*
 * Listener: send the REP for QP @s, whose QP can receive from
 * s->rq_psn on. 0 or an errno.
 */
int rv_cm_send_rep(struct rv_sconn *s, struct ib_cm_id *id)
{
	struct ib_cm_rep_param rep = {};

	lockdep_assert_held(&s->mutex);
	rep.qp_num = s->qp->qp_num;
	rep.starting_psn = s->rq_psn;
	rep.responder_resources = 0;
	rep.initiator_depth = 0;
	rep.flow_control = 1;
	rep.rnr_retry_count = RV_RNR_RETRY_COUNT;
	return ib_send_cm_rep(id, &rep);
}

/*
 * Initiator: start resolving the destination MAC of QP @s's RoCE path;
 * @done gets the result unless this fails. 0 or an errno.
 */
int rv_cm_resolve(struct rv_sconn *s,
		  void (*done)(int status, struct sockaddr *src,
			       struct rdma_dev_addr *addr, void *context))
{
	struct rv_conn *conn = s->conn;
	union {
		struct sockaddr_storage ss;
		struct sockaddr sa;
	} src, dst;

	lockdep_assert_held(&s->mutex);
	rdma_gid2ip(&src.sa, &conn->jdev->gid);
	rdma_gid2ip(&dst.sa, &conn->dgid);
	memset(&s->dev_addr, 0, sizeof(s->dev_addr));
	s->dev_addr.net = conn->jdev->net;
	s->dev_addr.sgid_attr = rv_sconn_sgid_attr(s);
	return rdma_resolve_ip(&src.sa, &dst.sa, &s->dev_addr,
			       RV_RESOLVE_TIMEOUT_MS, done, true, s);
}

/* Without s->mutex: no resolution callback runs or will run after this. */
void rv_cm_cancel_resolve(struct rv_sconn *s)
{
	rdma_addr_cancel(&s->dev_addr);
}

void rv_cm_reject(struct ib_cm_id *id, u8 reason)
{
	struct rv_rej_pdata pd;

	rv_rej_pdata_init(&pd, reason);
	ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, &pd,
		       sizeof(pd));
}

/* A REJ we got: may the initiator try again? */
bool rv_cm_rej_is_final(const struct ib_cm_event *ev)
{
	if (ev->param.rej_rcvd.reason != IB_CM_REJ_CONSUMER_DEFINED)
		return false;	/* CM-level: stale, timeout, no listener */
	return rv_rej_pdata_is_final(ev->private_data);
}

/* For tracing: the reason an rv REJ gives; 0 for any other event. */
u8 rv_cm_rej_rv_reason(const struct ib_cm_event *ev)
{
	if (ev->event != IB_CM_REJ_RECEIVED ||
	    ev->param.rej_rcvd.reason != IB_CM_REJ_CONSUMER_DEFINED)
		return 0;
	return rv_rej_pdata_reason(ev->private_data);
}

/* For tracing: the send status of an error event, a REJ's reason, or 0. */
int rv_cm_event_status(const struct ib_cm_event *ev)
{
	switch (ev->event) {
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
	case IB_CM_DREQ_ERROR:
	case IB_CM_LAP_ERROR:
		return ev->param.send_status;
	case IB_CM_REJ_RECEIVED:
		return ev->param.rej_rcvd.reason;
	default:
		return 0;
	}
}

/* The counter of an event that only counts. */
u32 *rv_cm_counter(struct rv_conn_get_stats_params_out *st,
		   enum ib_cm_event_type event)
{
	switch (event) {
	case IB_CM_DREP_RECEIVED:
		return &st->drep_recv;
	case IB_CM_TIMEWAIT_EXIT:
		return &st->timewait;
	case IB_CM_MRA_RECEIVED:
		return &st->mra_recv;
	case IB_CM_LAP_ERROR:
		return &st->lap_error;
	case IB_CM_LAP_RECEIVED:
		return &st->lap_recv;
	case IB_CM_APR_RECEIVED:
		return &st->apr_recv;
	default:
		return &st->unexp_event;
	}
}
