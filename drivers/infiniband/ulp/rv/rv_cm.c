// SPDX-License-Identifier: GPL-2.0
/*
 * The IB CM side of shared connections.
 *
 * Every job-device listens on its service id through ib_cm_insert_listen(),
 * so there is one CM listener per (device, service id), shared by the
 * CM among the jobs on it. A REQ names the job and the QP index in its
 * private data (network byte order); the listener finds the job's
 * connection to the REQ's source GID (or LID) and accepts on that QP, or
 * rejects with a reason: RETRY when the job or its connection is not
 * there yet or the QP is busy recovering, which the initiator retries
 * until its deadline; any other reason is final.
 *
 * The initiator resolves the destination MAC of a RoCE path in the
 * kernel (rdma_resolve_ip) before each REQ, and sends none while the
 * local address is not configured (rv_sconn_can_send()).
 */
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/random.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>

#include "rv_conn.h"
#include "rv_trace.h"
#include "rv_wire.h"

/* CM response timeout: 4.096 us * 2^17, about half a second. */
#define RV_CM_RESPONSE_TIMEOUT 17
#define RV_CM_MAX_RETRIES 4
#define RV_RETRY_COUNT 7
#define RV_RNR_RETRY_COUNT 7		/* receives are reposted at once */
#define RV_RESOLVE_TIMEOUT_MS 2000

static_assert(sizeof(struct rv_req_pdata) <= IB_CM_REQ_PRIVATE_DATA_SIZE);
static_assert(sizeof(struct rv_rej_pdata) <= IB_CM_REJ_PRIVATE_DATA_SIZE);

static int rv_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);

int rv_cm_listen(struct rv_job_dev *jdev)
{
	struct ib_cm_id *id;

	id = ib_cm_insert_listen(jdev->dev->ib_dev, rv_cm_handler,
				 cpu_to_be64(jdev->key.service_id));
	if (IS_ERR(id))
		return PTR_ERR(id);
	jdev->listen_id = id;
	return 0;
}

void rv_cm_unlisten(struct rv_job_dev *jdev)
{
	if (jdev->listen_id)
		ib_destroy_cm_id(jdev->listen_id);
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
static void rv_cm_build_path(struct rv_sconn *s)
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

static void rv_sconn_set_cm_id(struct rv_sconn *s, struct ib_cm_id *id)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->cm_id = id;
	spin_unlock_irqrestore(&s->lock, flags);
}

/*
 * Take the QP's CM id away from the handler (whose
 * events on it are ignored from now on), sending a DREQ if it was
 * connected. The caller destroys it without holding s->mutex.
 */
struct ib_cm_id *rv_sconn_take_cm_id(struct rv_sconn *s)
{
	struct ib_cm_id *id = s->cm_id;

	lockdep_assert_held(&s->mutex);
	if (id && s->established && !ib_send_cm_dreq(id, NULL, 0))
		s->stats.dreq_sent++;
	s->established = false;
	rv_sconn_set_cm_id(s, NULL);
	return id;
}

/* State RESOLVING or DELAY: send the REQ for this QP. */
static void rv_cm_send_req(struct rv_sconn *s)
{
	struct rv_conn *conn = s->conn;
	struct ib_device *ibdev = conn->jdev->dev->ib_dev;
	struct ib_cm_req_param req = {};
	struct rv_req_pdata pd;
	struct ib_cm_id *id;
	int ret;

	lockdep_assert_held(&s->mutex);
	id = ib_create_cm_id(ibdev, rv_cm_handler, s);
	if (IS_ERR(id)) {
		rv_sconn_retry(s, false);
		return;
	}
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

	rv_sconn_set_cm_id(s, id);
	rv_sconn_connecting(s);
	s->t_start = ktime_get();
	ret = ib_send_cm_req(id, &req);
	if (ret) {
		rv_sconn_set_cm_id(s, NULL);
		ib_destroy_cm_id(id);
		rv_sconn_retry(s, false);
		return;
	}
	s->stats.req_sent++;
}

/* An address resolution failed, or could not start. */
static void rv_cm_resolve_failed(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	if (s->was_connected)
		s->stats.reresolve_fail++;
	else
		s->stats.resolve_fail++;
}

/* Count an address resolution that ended with @status. */
static void rv_cm_resolve_count(struct rv_sconn *s, int status)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;

	lockdep_assert_held(&s->mutex);
	if (s->was_connected)
		st->reresolve++;
	else
		st->resolve++;
	rv_sconn_step_time(s, &st->resolve_time, &st->reresolve_time,
			   &st->max_reresolve_time);
	if (status)
		rv_cm_resolve_failed(s);
}

static void rv_cm_resolved(int status, struct sockaddr *src,
			   struct rdma_dev_addr *addr, void *context)
{
	struct rv_sconn *s = context;

	mutex_lock(&s->mutex);
	s->resolve_pending = false;
	if (s->state != RV_SCONN_RESOLVING)
		goto out;
	/*
	 * The route was looked up when the resolution started (or last
	 * retried): the address may have gone since, or come back at
	 * another GID index. No REQ leaves from an address that is not
	 * configured, nor through another GID entry than the one resolved.
	 */
	if (!status) {
		const struct ib_gid_attr *attr = s->dev_addr.sgid_attr;

		if (!rv_sconn_can_send(s) || attr != rv_sconn_sgid_attr(s))
			status = -ENETUNREACH;
	}
	rv_cm_resolve_count(s, status);
	if (status) {
		rv_sconn_retry(s, false);
		goto out;
	}
	sa_path_set_dmac(&s->path, addr->dst_dev_addr);
	if (addr->hoplimit > 0)
		s->path.hop_limit = addr->hoplimit;
	rv_cm_send_req(s);
out:
	mutex_unlock(&s->mutex);
}

/* State DELAY: the initiator's next attempt. */
void rv_cm_start_connect(struct rv_sconn *s)
{
	struct rv_conn *conn = s->conn;
	union {
		struct sockaddr_storage ss;
		struct sockaddr sa;
	} src, dst;
	int ret;

	lockdep_assert_held(&s->mutex);
	rv_cm_build_path(s);
	s->t_start = ktime_get();
	if (!sa_path_is_roce(&s->path)) {
		rv_cm_send_req(s);
		return;
	}

	rdma_gid2ip(&src.sa, &conn->jdev->gid);
	rdma_gid2ip(&dst.sa, &conn->dgid);
	memset(&s->dev_addr, 0, sizeof(s->dev_addr));
	s->dev_addr.net = &init_net;
	s->dev_addr.sgid_attr = rv_sconn_sgid_attr(s);
	rv_sconn_set_state(s, RV_SCONN_RESOLVING);
	s->resolve_pending = true;
	ret = rdma_resolve_ip(&src.sa, &dst.sa, &s->dev_addr,
			      RV_RESOLVE_TIMEOUT_MS, rv_cm_resolved, true, s);
	if (ret) {
		s->resolve_pending = false;
		rv_cm_resolve_failed(s);
		rv_sconn_retry(s, false);
	}
}

/* Without s->mutex: no resolution callback runs or will run after this. */
void rv_cm_cancel_resolve(struct rv_sconn *s)
{
	rdma_addr_cancel(&s->dev_addr);
}

static void rv_cm_reject(struct ib_cm_id *id, u8 reason)
{
	struct rv_rej_pdata pd;

	rv_rej_pdata_init(&pd, reason);
	ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, &pd,
		       sizeof(pd));
}

/* A REJ we got: may the initiator try again? */
static bool rv_cm_rej_is_final(const struct ib_cm_event *ev)
{
	if (ev->param.rej_rcvd.reason != IB_CM_REJ_CONSUMER_DEFINED)
		return false;	/* CM-level: stale, timeout, no listener */
	return rv_rej_pdata_is_final(ev->private_data);
}

/* Accept a REQ on this waiting QP. 0, or a REJ reason. */
static int rv_cm_accept(struct rv_sconn *s, struct ib_cm_id *id,
			const struct ib_cm_event *ev)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;
	struct ib_cm_rep_param rep = {};

	lockdep_assert_held(&s->mutex);
	rv_sconn_step_time(s, &st->wait_time, &st->rewait_time,
			   &st->max_rewait_time);
	s->t_start = ktime_get();

	id->context = s;
	rv_sconn_set_cm_id(s, id);
	rv_sconn_connecting(s);
	/*
	 * The CM learns our receive PSN only from the REP, which is sent
	 * once the QP can receive: choose it now and give it to both.
	 */
	s->rq_psn = get_random_u32() & 0xffffff;
	if (rv_qp_to_state(s, IB_QPS_INIT) || rv_qp_to_state(s, IB_QPS_RTR))
		goto err;

	rep.qp_num = s->qp->qp_num;
	rep.starting_psn = s->rq_psn;
	rep.responder_resources = 0;
	rep.initiator_depth = 0;
	rep.flow_control = 1;
	rep.rnr_retry_count = RV_RNR_RETRY_COUNT;
	if (ib_send_cm_rep(id, &rep))
		goto err;
	st->rep_sent++;
	return 0;

err:
	/* The QP left RESET: recovery replaces it, then waits again. */
	rv_sconn_set_cm_id(s, NULL);
	rv_sconn_lost(s);
	return RV_REJ_LOCAL;
}

static int rv_cm_req(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	struct rv_req_info pd;
	struct rv_conn *conn;
	struct rv_sconn *s;
	int reason;

	if (rv_req_pdata_parse(ev->private_data, &pd) ||
	    req->qp_type != IB_QPT_RC) {
		reason = RV_REJ_VERSION;
		goto reject;
	}
	/* The CM turned the path around: dgid/dlid are the initiator's. */
	conn = rv_job_conn_for_req(id->device, req->port,
				   req->listen_id->service_id, pd.job_key,
				   pd.job_key_len, pd.uid,
				   &req->primary_path->dgid,
				   be32_to_cpu(sa_path_get_dlid(req->primary_path)),
				   &reason);
	if (!conn)
		goto reject;
	if (pd.index >= conn->num_conn || pd.num_conn != conn->num_conn) {
		reason = RV_REJ_INDEX;
		goto put;
	}
	if (!conn->server) {
		reason = RV_REJ_ROLE;
		goto put;
	}
	s = &conn->sconn[pd.index];
	mutex_lock(&s->mutex);
	s->stats.req_recv++;
	trace_rv_cm_event(s, ev->event, 0, 0, 0);
	switch (s->state) {
	case RV_SCONN_WAITING:
		reason = rv_cm_accept(s, id, ev);
		break;
	case RV_SCONN_CONNECTED:
	case RV_SCONN_CONNECTING:
		/* The initiator started over: so does this side. */
		rv_sconn_lost(s);
		fallthrough;
	default:
		reason = RV_REJ_RETRY;
		break;
	}
	if (reason)
		s->stats.rej_sent++;
	mutex_unlock(&s->mutex);
put:
	rv_conn_put(conn);
	if (!reason)
		return 0;
reject:
	rv_cm_reject(id, reason);
	return 1;	/* the CM destroys the new id */
}

/* Initiator: the listener accepted. */
static int rv_cm_rep(struct rv_sconn *s, struct ib_cm_id *id)
{
	lockdep_assert_held(&s->mutex);
	if (s->state != RV_SCONN_CONNECTING)
		return 0;
	if (rv_qp_to_state(s, IB_QPS_INIT) || rv_qp_to_state(s, IB_QPS_RTR) ||
	    rv_qp_to_state(s, IB_QPS_RTS) || ib_send_cm_rtu(id, NULL, 0)) {
		rv_cm_reject(id, RV_REJ_LOCAL);
		s->stats.rej_sent++;
		return -1;
	}
	s->stats.rtu_sent++;
	s->established = true;
	rv_sconn_established(s);
	return 0;
}

/* Listener: RTU (or the first packet) arrived. */
static int rv_cm_rtu(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	if (s->state != RV_SCONN_CONNECTING)
		return 0;
	if (rv_qp_to_state(s, IB_QPS_RTS))
		return -1;
	s->established = true;
	rv_sconn_established(s);
	return 0;
}

/* For tracing: the send status of an error event, a REJ's reason, or 0. */
static int rv_cm_event_status(const struct ib_cm_event *ev)
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

/* A REJ: a final one fails the QP (1: the CM destroys the id), else -1. */
static int rv_cm_rej(struct rv_sconn *s, const struct ib_cm_event *ev)
{
	if (!rv_cm_rej_is_final(ev))
		return -1;
	rv_sconn_set_cm_id(s, NULL);
	rv_sconn_retry(s, true);
	return 1;
}

/* The peer left, or our DREQ went unanswered: the QP is lost. */
static void rv_cm_disconnected(struct rv_sconn *s)
{
	s->established = false;
	rv_sconn_lost(s);
}

/* Events that only count. */
static void rv_cm_count(struct rv_conn_get_stats_params_out *st,
			enum ib_cm_event_type event)
{
	switch (event) {
	case IB_CM_DREP_RECEIVED:
		st->drep_recv++;
		break;
	case IB_CM_TIMEWAIT_EXIT:
		st->timewait++;
		break;
	case IB_CM_MRA_RECEIVED:
		st->mra_recv++;
		break;
	case IB_CM_LAP_ERROR:
		st->lap_error++;
		break;
	case IB_CM_LAP_RECEIVED:
		st->lap_recv++;
		break;
	case IB_CM_APR_RECEIVED:
		st->apr_recv++;
		break;
	default:
		st->unexp_event++;
		break;
	}
}

/*
 * An event on the QP's current CM id. Returns 0, -1 when
 * this attempt is over, or 1 when the id is already given up (final REJ).
 */
static int rv_cm_qp_event(struct rv_sconn *s, struct ib_cm_id *id,
			  const struct ib_cm_event *ev)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;

	lockdep_assert_held(&s->mutex);
	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		st->rep_recv++;
		return rv_cm_rep(s, id);
	case IB_CM_RTU_RECEIVED:
		st->rtu_recv++;
		return rv_cm_rtu(s);
	case IB_CM_USER_ESTABLISHED:
		st->established++;
		return rv_cm_rtu(s);
	case IB_CM_REJ_RECEIVED:
		st->rej_recv++;
		return rv_cm_rej(s, ev);
	case IB_CM_REQ_ERROR:
		st->req_error++;
		return -1;
	case IB_CM_REP_ERROR:
		st->rep_error++;
		return -1;
	case IB_CM_DREQ_RECEIVED:
		st->dreq_recv++;
		if (!ib_send_cm_drep(id, NULL, 0))
			st->drep_sent++;
		rv_cm_disconnected(s);
		return 0;
	case IB_CM_DREQ_ERROR:
		st->dreq_error++;
		rv_cm_disconnected(s);
		return 0;
	default:
		rv_cm_count(st, ev->event);
		return 0;
	}
}

static int rv_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct rv_sconn *s = id->context;
	int ret = 0;

	if (ev->event == IB_CM_REQ_RECEIVED)
		return rv_cm_req(id, ev);
	if (!s)
		return 0;

	mutex_lock(&s->mutex);
	/* Else an id the QP gave up; it is being destroyed. */
	if (s->cm_id == id) {
		trace_rv_cm_event(s, ev->event, 0, 0, rv_cm_event_status(ev));
		ret = rv_cm_qp_event(s, id, ev);
	}
	if (ret < 0) {
		/* This attempt is over: the CM destroys the id. */
		rv_sconn_set_cm_id(s, NULL);
		rv_cm_disconnected(s);
	}
	mutex_unlock(&s->mutex);
	return ret ? 1 : 0;
}
