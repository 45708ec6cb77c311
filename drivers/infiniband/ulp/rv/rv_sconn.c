// SPDX-License-Identifier: GPL-2.0
/*
 * The state machine of one QP of a shared connection (struct rv_sconn;
 * the states and their diagram are in rv_sconn.h). This file is the only
 * code that changes a QP's state. Its entry points are events:
 *
 *   rv_sconn_prepare/start    - CONN_CONNECT: a QP, then wait or connect
 *   rv_sconn_stop/close       - the device went, or the last handle did
 *   rv_sconn_work()           - the QP's work: a deadline or retry delay
 *                               expired, or a loss was reported
 *                               (rv_sconn_lost(), from any context: the
 *                               data path, the QP's events, the watchdog)
 *   rv_sconn_resolved()       - the initiator's address resolution ended
 *   rv_sconn_req()            - a REQ for this QP arrived (rv_conn.c
 *                               found the connection it is for)
 *   rv_sconn_cm_handler()     - any other CM event on the QP's CM id:
 *                               REP, RTU, REJ, DREQ, errors
 *
 * The CM's callbacks are here, with the state they act on, because this
 * code creates the CM ids and starts the resolutions that deliver them;
 * rv_cm.c below builds, sends and parses the CM's messages and changes
 * no state.
 *
 * Loss of a connected QP (heartbeat or write failure, QP error, DREQ)
 * starts recovery: the QP is drained (every write in flight completes,
 * with an error status), replaced by a new one and connected again
 * within the job's reconnect_timeout; past it, or with reconnect_timeout
 * 0, the QP and so the connection have failed for good.
 */
#include <linux/inetdevice.h>
#include <linux/random.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>

#include "rv_conn.h"
#include "rv_trace.h"

/* Initial connection deadline when the job has no reconnect_timeout. */
#define RV_CONNECT_TIMEOUT_S 60
/* Initiator: delay before resending a REQ, growing to the maximum. */
#define RV_RETRY_MIN_MS 20
#define RV_RETRY_MAX_MS 1000
/* How often a QP waiting until CM messages can leave its port looks again. */
#define RV_SEND_POLL_MS 100

static u32 rv_conn_timeout_s(const struct rv_conn *conn)
{
	return conn->jdev->params.reconnect_timeout ?: RV_CONNECT_TIMEOUT_S;
}

/*
 * Leaving RV_SCONN_CONNECTED adds the time connected to its counter in the
 * same step, so that GET_STATS (the time so far while connected) never
 * sees it counted twice or not at all.
 */
static void rv_sconn_set_state(struct rv_sconn *s,
			       enum rv_sconn_state state)
{
	unsigned long flags;

	lockdep_assert_held(&s->mutex);
	spin_lock_irqsave(&s->lock, flags);
	if (s->state != state) {
		trace_rv_sconn_state(s, s->state, state, 0, 0);
		if (s->state == RV_SCONN_CONNECTED)
			s->stats.connected_time +=
				ktime_us_delta(ktime_get(), s->t_connected);
	}
	s->state = state;
	spin_unlock_irqrestore(&s->lock, flags);
}

/*
 * A REQ or REP was sent. The CM reports how that ends,
 * except when its MAD never completes (a port whose QP1 stopped sending
 * after the address went); the work then fails the QP at its deadline,
 * as it would any other attempt still unanswered by then.
 */
static void rv_sconn_connecting(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	/* Armed first: a loss seen once the state is set runs it at once. */
	if (time_before(jiffies, s->deadline))
		mod_delayed_work(rv_wq, &s->work, s->deadline - jiffies + 1);
	rv_sconn_set_state(s, RV_SCONN_CONNECTING);
}

/*
 * The CM's and the state machine's counters and times are written under
 * s->mutex and, like the data path's, s->lock: GET_STATS reads them all
 * under s->lock alone, and so never waits for a step (a drain, a CM call).
 */
static void rv_sconn_count(struct rv_sconn *s, u32 *counter)
{
	unsigned long flags;

	lockdep_assert_held(&s->mutex);
	spin_lock_irqsave(&s->lock, flags);
	(*counter)++;
	spin_unlock_irqrestore(&s->lock, flags);
}

static void rv_stat_time(struct rv_sconn *s, u64 *sum, u64 *max,
			 ktime_t since)
{
	u64 us = ktime_us_delta(ktime_get(), since);
	unsigned long flags;

	lockdep_assert_held(&s->mutex);
	spin_lock_irqsave(&s->lock, flags);
	*sum += us;
	if (max && us > *max)
		*max = us;
	spin_unlock_irqrestore(&s->lock, flags);
}

/*
 * A step of connecting (waiting for a REQ, resolving,
 * connecting) that began at s->t_start ended. Its time adds to @first,
 * or once the QP was connected to @again and the maximum @max_again.
 */
static void rv_sconn_step_time(struct rv_sconn *s, u64 *first, u64 *again,
			       u64 *max_again)
{
	lockdep_assert_held(&s->mutex);
	if (s->was_connected)
		rv_stat_time(s, again, max_again, s->t_start);
	else
		rv_stat_time(s, first, NULL, s->t_start);
}

/* From the CM handler: the QP is connected. */
static void rv_sconn_established(struct rv_sconn *s)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;
	unsigned long flags;

	lockdep_assert_held(&s->mutex);
	rv_sconn_step_time(s, &st->connect_time, &st->reconnect_time,
			   &st->max_reconnect_time);
	s->attempts = 0;
	spin_lock_irqsave(&s->lock, flags);
	s->t_connected = ktime_get();
	trace_rv_sconn_state(s, s->state, RV_SCONN_CONNECTED, 0, 0);
	s->state = RV_SCONN_CONNECTED;
	s->was_connected = true;
	s->lost = false;
	s->conn_count++;
	spin_unlock_irqrestore(&s->lock, flags);
	rv_hb_start(s);
}

static void rv_sconn_fail(struct rv_sconn *s)
{
	rv_sconn_set_state(s, RV_SCONN_FAILED);
}

/*
 * The initiator's connect attempt ended without a
 * connection: try again after a delay, unless @hard or the deadline
 * passed. The listener goes back to waiting for a REQ.
 */
static void rv_sconn_retry(struct rv_sconn *s, bool hard)
{
	unsigned long delay;

	lockdep_assert_held(&s->mutex);
	if (s->state == RV_SCONN_CLOSING || s->state == RV_SCONN_FAILED)
		return;
	if (hard || time_after(jiffies, s->deadline)) {
		rv_sconn_fail(s);
		/* the work drains and destroys the QP */
		mod_delayed_work(rv_wq, &s->work, 0);
		return;
	}
	if (s->conn->server) {
		rv_sconn_set_state(s, RV_SCONN_WAITING);
		mod_delayed_work(rv_wq, &s->work, s->deadline - jiffies + 1);
		return;
	}
	delay = min(RV_RETRY_MIN_MS << min(s->attempts, 6U), RV_RETRY_MAX_MS);
	s->attempts++;
	rv_sconn_set_state(s, RV_SCONN_DELAY);
	mod_delayed_work(rv_wq, &s->work, msecs_to_jiffies(delay));
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
static struct ib_cm_id *rv_sconn_take_cm_id(struct rv_sconn *s)
{
	struct ib_cm_id *id = s->cm_id;

	lockdep_assert_held(&s->mutex);
	if (id && s->established && !ib_send_cm_dreq(id, NULL, 0))
		rv_sconn_count(s, &s->stats.dreq_sent);
	s->established = false;
	rv_sconn_set_cm_id(s, NULL);
	return id;
}

/*
 * Drop the QP's CM id, drain and replace its QP. Called with s->mutex
 * held; drops it around the calls that wait for the CM handler.
 */
static int rv_sconn_reset(struct rv_sconn *s)
{
	struct ib_cm_id *id = rv_sconn_take_cm_id(s);

	lockdep_assert_held(&s->mutex);
	mutex_unlock(&s->mutex);
	rv_cm_cancel_resolve(s);
	if (id)
		ib_destroy_cm_id(id);
	cancel_delayed_work_sync(&s->hb_work);
	mutex_lock(&s->mutex);

	rv_qp_destroy(s);
	if (s->state == RV_SCONN_FAILED || s->state == RV_SCONN_CLOSING) {
		/* Nothing connects again: let go of the GID entry. */
		if (s->sgid_attr)
			rdma_put_gid_attr(s->sgid_attr);
		s->sgid_attr = NULL;
		return 0;
	}
	return rv_qp_create(s);
}

/*
 * Can a packet leave from RoCE GID entry @attr? Its netdev must be up,
 * with carrier: the port's cached state follows a link going down only
 * after the IB core's cache work has run. And the entry's IP address must
 * be configured on that netdev: a GID made from an address is deleted
 * when the address is, but later (from a workqueue); until then the
 * entry looks valid while no packet can leave from it. Link-local IPv6
 * GIDs are made from the MAC address and need no configured address.
 */
static bool rv_gid_can_send(const struct ib_gid_attr *attr)
{
	union {
		struct sockaddr_storage ss;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	struct net_device *ndev;
	bool ok = false;

	rdma_gid2ip((struct sockaddr *)&a.ss, &attr->gid);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(ndev) || !netif_running(ndev) || !netif_carrier_ok(ndev))
		goto out;
	if (a.ss.ss_family == AF_INET)
		ok = __ip_dev_find(dev_net(ndev), a.in.sin_addr.s_addr,
				   false) == ndev;
#if IS_ENABLED(CONFIG_IPV6)
	else if (ipv6_addr_type(&a.in6.sin6_addr) & IPV6_ADDR_LINKLOCAL)
		ok = true;
	else
		ok = ipv6_chk_addr(dev_net(ndev), &a.in6.sin6_addr, ndev, 0);
#endif
out:
	rcu_read_unlock();
	return ok;
}

/*
 * Can CM messages leave through the QP's port? Its link
 * must be up (port ACTIVE and, on RoCE, the netdev up with carrier), the
 * job's GID in the port's table and, on RoCE, its address configured
 * (not removed; when it comes back while the old entry is still
 * referenced, the GID is at another index: s->sgid_attr follows it).
 * While they cannot, nothing is sent: no REQ,
 * and no DREQ (which destroying a connected CM id sends). Soft RoCE moves
 * its management QP (QP1) to the error state for good when a CM message
 * cannot leave (no link, no route from the source address, a deleted
 * source GID), after which no CM traffic of that device gets through.
 */
static bool rv_sconn_can_send(struct rv_sconn *s)
{
	const struct rv_job_dev *jdev = s->conn->jdev;
	struct ib_device *ibdev = jdev->dev->ib_dev;
	const struct ib_gid_attr *attr;
	enum ib_port_state state;

	lockdep_assert_held(&s->mutex);
	if (ib_get_cached_port_state(ibdev, jdev->key.port_num, &state) ||
	    state != IB_PORT_ACTIVE)
		return false;
	attr = rdma_find_gid_by_port(ibdev, &jdev->gid, jdev->gid_type,
				     jdev->key.port_num, NULL);
	if (IS_ERR(attr))
		return false;
	if (rdma_protocol_roce(ibdev, jdev->key.port_num) &&
	    !rv_gid_can_send(attr)) {
		rdma_put_gid_attr(attr);
		return false;
	}
	/* The next attempt goes through the entry the GID has now. */
	if (attr == rv_sconn_sgid_attr(s)) {
		rdma_put_gid_attr(attr);
	} else {
		if (s->sgid_attr)
			rdma_put_gid_attr(s->sgid_attr);
		s->sgid_attr = attr;
	}
	return true;
}

/* A connected or connecting QP was lost. */
static void rv_sconn_recover(struct rv_sconn *s)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;
	bool connected = s->state == RV_SCONN_CONNECTED;

	lockdep_assert_held(&s->mutex);
	rv_sconn_set_state(s, RV_SCONN_RECOVERING);
	if (connected) {
		if (!s->conn->jdev->params.reconnect_timeout) {
			rv_sconn_fail(s);
			rv_sconn_reset(s);
			return;
		}
		rv_sconn_count(s, &st->conn_recovery);
		s->deadline = jiffies +
			      s->conn->jdev->params.reconnect_timeout * HZ;
		s->t_start = ktime_get();
		s->attempts = 0;
	}
	mod_delayed_work(rv_wq, &s->work, 0);
}

/*
 * Past its deadline the QP has failed for good (and is
 * drained and destroyed now). Returns true then.
 */
static bool rv_sconn_expired(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	if (!time_after(jiffies, s->deadline))
		return false;
	rv_sconn_fail(s);
	rv_sconn_reset(s);
	return true;
}

/* State RECOVERING: replace the QP, then connect again. */
static void rv_sconn_rebuild(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	if (rv_sconn_expired(s))
		return;
	if (!rv_sconn_can_send(s)) {
		mod_delayed_work(rv_wq, &s->work,
				 msecs_to_jiffies(RV_SEND_POLL_MS));
		return;
	}
	if (rv_sconn_reset(s)) {
		rv_sconn_fail(s);
		return;
	}
	if (s->state == RV_SCONN_RECOVERING)
		rv_sconn_retry(s, false);
}

/* State RESOLVING or DELAY: send the REQ for this QP. */
static void rv_sconn_send_req(struct rv_sconn *s)
{
	struct ib_device *ibdev = s->conn->jdev->dev->ib_dev;
	struct ib_cm_id *id;

	lockdep_assert_held(&s->mutex);
	id = ib_create_cm_id(ibdev, rv_sconn_cm_handler, s);
	if (IS_ERR(id)) {
		rv_sconn_retry(s, false);
		return;
	}
	rv_sconn_set_cm_id(s, id);
	rv_sconn_connecting(s);
	s->t_start = ktime_get();
	if (rv_cm_send_req(s, id)) {
		rv_sconn_set_cm_id(s, NULL);
		ib_destroy_cm_id(id);
		rv_sconn_retry(s, false);
		return;
	}
	rv_sconn_count(s, &s->stats.req_sent);
}

/* An address resolution failed, or could not start. */
static void rv_sconn_resolve_failed(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	rv_sconn_count(s, s->was_connected ? &s->stats.reresolve_fail :
					     &s->stats.resolve_fail);
}

/* Count an address resolution that ended with @status. */
static void rv_sconn_resolve_count(struct rv_sconn *s, int status)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;

	lockdep_assert_held(&s->mutex);
	rv_sconn_count(s, s->was_connected ? &st->reresolve : &st->resolve);
	rv_sconn_step_time(s, &st->resolve_time, &st->reresolve_time,
			   &st->max_reresolve_time);
	if (status)
		rv_sconn_resolve_failed(s);
}

/* The initiator's address resolution ended (rv_cm_resolve()'s callback). */
static void rv_sconn_resolved(int status, struct sockaddr *src,
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
	rv_sconn_resolve_count(s, status);
	if (status) {
		rv_sconn_retry(s, false);
		goto out;
	}
	sa_path_set_dmac(&s->path, addr->dst_dev_addr);
	if (addr->hoplimit > 0)
		s->path.hop_limit = addr->hoplimit;
	rv_sconn_send_req(s);
out:
	mutex_unlock(&s->mutex);
}

/* State DELAY: the initiator's next attempt. */
static void rv_sconn_start_connect(struct rv_sconn *s)
{
	lockdep_assert_held(&s->mutex);
	rv_cm_build_path(s);
	s->t_start = ktime_get();
	if (!sa_path_is_roce(&s->path)) {
		rv_sconn_send_req(s);
		return;
	}
	rv_sconn_set_state(s, RV_SCONN_RESOLVING);
	s->resolve_pending = true;
	if (rv_cm_resolve(s, rv_sconn_resolved)) {
		s->resolve_pending = false;
		rv_sconn_resolve_failed(s);
		rv_sconn_retry(s, false);
	}
}

/*
 * The QP's work: a deadline or a retry delay expired, a loss was
 * reported (rv_sconn_lost()), or a step asked for the next one.
 */
static void rv_sconn_work(struct work_struct *work)
{
	struct rv_sconn *s = container_of(to_delayed_work(work),
					  struct rv_sconn, work);
	unsigned long flags;
	bool lost;

	mutex_lock(&s->mutex);
	spin_lock_irqsave(&s->lock, flags);
	lost = s->lost;
	s->lost = false;
	spin_unlock_irqrestore(&s->lock, flags);

	switch (s->state) {
	case RV_SCONN_CONNECTED:
		if (lost)
			rv_sconn_recover(s);
		break;
	case RV_SCONN_CONNECTING:
		if (lost)
			rv_sconn_recover(s);
		else
			rv_sconn_expired(s);
		break;
	case RV_SCONN_RECOVERING:
		rv_sconn_rebuild(s);
		break;
	case RV_SCONN_DELAY:
		if (rv_sconn_expired(s))
			break;
		if (rv_sconn_can_send(s))
			rv_sconn_start_connect(s);
		else
			mod_delayed_work(rv_wq, &s->work,
					 msecs_to_jiffies(RV_SEND_POLL_MS));
		break;
	case RV_SCONN_WAITING:
		rv_sconn_expired(s);
		break;
	case RV_SCONN_FAILED:
		/* flush what is in flight; nothing will connect again */
		if (s->qp)
			rv_sconn_reset(s);
		break;
	default:
		break;
	}
	mutex_unlock(&s->mutex);
}

/*
 * On the first CONN_CONNECT, before anything
 * starts: the QP, or nothing and an errno.
 */
int rv_sconn_prepare(struct rv_sconn *s)
{
	int ret;

	lockdep_assert_held(&s->conn->jdev->conn_mutex);
	mutex_lock(&s->mutex);
	ret = rv_qp_create(s);
	mutex_unlock(&s->mutex);
	return ret;
}

/* CONN_CONNECT failed for another QP: back to where prepare found it. */
void rv_sconn_unprepare(struct rv_sconn *s)
{
	mutex_lock(&s->mutex);
	rv_qp_destroy(s);
	mutex_unlock(&s->mutex);
}

/* CONN_CONNECT, once every QP is prepared: wait for, or send, the REQ. */
void rv_sconn_start(struct rv_sconn *s)
{
	mutex_lock(&s->mutex);
	s->t_start = ktime_get();
	s->deadline = jiffies + rv_conn_timeout_s(s->conn) * HZ;
	if (s->conn->server) {
		rv_sconn_set_state(s, RV_SCONN_WAITING);
		mod_delayed_work(rv_wq, &s->work, s->deadline - jiffies + 1);
	} else {
		rv_sconn_set_state(s, RV_SCONN_DELAY);
		mod_delayed_work(rv_wq, &s->work, 0);
	}
	mutex_unlock(&s->mutex);
}

/*
 * The QP stops for good in @state, FAILED or CLOSING (one already closing
 * stays so): its state machine is stopped, its QP drained and destroyed.
 */
void rv_sconn_stop(struct rv_sconn *s, enum rv_sconn_state state)
{
	mutex_lock(&s->mutex);
	if (s->state != RV_SCONN_CLOSING)
		rv_sconn_set_state(s, state);
	mutex_unlock(&s->mutex);
	cancel_delayed_work_sync(&s->work);
	mutex_lock(&s->mutex);
	rv_sconn_reset(s);
	mutex_unlock(&s->mutex);
}

/* The last handle of the connection went: the QP goes for good. */
void rv_sconn_close(struct rv_sconn *s)
{
	rv_sconn_stop(s, RV_SCONN_CLOSING);
	cancel_delayed_work_sync(&s->work);
	rv_sconn_uninit(s);
}

/* Undo rv_sconn_init(): the QP never started, or has stopped for good. */
void rv_sconn_uninit(struct rv_sconn *s)
{
	rv_sconn_ctx_free(s);
	mutex_destroy(&s->mutex);
}

/* QP @index of the new connection @conn: IDLE, its contexts allocated. */
int rv_sconn_init(struct rv_sconn *s, struct rv_conn *conn, u8 index)
{
	s->conn = conn;
	s->index = index;
	mutex_init(&s->mutex);
	spin_lock_init(&s->lock);
	INIT_DELAYED_WORK(&s->work, rv_sconn_work);
	INIT_DELAYED_WORK(&s->hb_work, rv_hb_work);
	return rv_sconn_ctx_alloc(s);
}

/* Accept a REQ on this waiting QP. 0, or a REJ reason. */
static int rv_sconn_accept(struct rv_sconn *s, struct ib_cm_id *id)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;

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
	if (rv_cm_send_rep(s, id))
		goto err;
	rv_sconn_count(s, &st->rep_sent);
	return 0;

err:
	/* The QP left RESET: recovery replaces it, then waits again. */
	rv_sconn_set_cm_id(s, NULL);
	rv_sconn_lost(s);
	return RV_REJ_LOCAL;
}

/*
 * A REQ for this QP arrived on the new CM id @id (the listener found the
 * connection it is for). Returns 0 (accepted) or the REJ reason.
 */
int rv_sconn_req(struct rv_sconn *s, struct ib_cm_id *id,
		 const struct ib_cm_event *ev)
{
	int reason;

	mutex_lock(&s->mutex);
	rv_sconn_count(s, &s->stats.req_recv);
	trace_rv_cm_event(s, ev->event, 0, 0, 0);
	switch (s->state) {
	case RV_SCONN_WAITING:
		reason = rv_sconn_accept(s, id);
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
		rv_sconn_count(s, &s->stats.rej_sent);
	mutex_unlock(&s->mutex);
	return reason;
}

/* Initiator: the listener accepted. */
static int rv_sconn_rep(struct rv_sconn *s, struct ib_cm_id *id)
{
	lockdep_assert_held(&s->mutex);
	if (s->state != RV_SCONN_CONNECTING)
		return 0;
	if (rv_qp_to_state(s, IB_QPS_INIT) || rv_qp_to_state(s, IB_QPS_RTR) ||
	    rv_qp_to_state(s, IB_QPS_RTS) || ib_send_cm_rtu(id, NULL, 0)) {
		rv_cm_reject(id, RV_REJ_LOCAL);
		rv_sconn_count(s, &s->stats.rej_sent);
		return -1;
	}
	rv_sconn_count(s, &s->stats.rtu_sent);
	s->established = true;
	rv_sconn_established(s);
	return 0;
}

/* Listener: RTU (or the first packet) arrived. */
static int rv_sconn_rtu(struct rv_sconn *s)
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

/* A REJ: a final one fails the QP (1: the CM destroys the id), else -1. */
static int rv_sconn_rej(struct rv_sconn *s, const struct ib_cm_event *ev)
{
	if (!rv_cm_rej_is_final(ev))
		return -1;
	rv_sconn_set_cm_id(s, NULL);
	rv_sconn_retry(s, true);
	return 1;
}

/* The peer left, or our DREQ went unanswered: the QP is lost. */
static void rv_sconn_disconnected(struct rv_sconn *s)
{
	s->established = false;
	rv_sconn_lost(s);
}

/*
 * An event on the QP's current CM id. Returns 0, -1 when
 * this attempt is over, or 1 when the id is already given up (final REJ).
 */
static int rv_sconn_cm_event(struct rv_sconn *s, struct ib_cm_id *id,
			     const struct ib_cm_event *ev)
{
	struct rv_conn_get_stats_params_out *st = &s->stats;

	lockdep_assert_held(&s->mutex);
	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		rv_sconn_count(s, &st->rep_recv);
		return rv_sconn_rep(s, id);
	case IB_CM_RTU_RECEIVED:
		rv_sconn_count(s, &st->rtu_recv);
		return rv_sconn_rtu(s);
	case IB_CM_USER_ESTABLISHED:
		rv_sconn_count(s, &st->established);
		return rv_sconn_rtu(s);
	case IB_CM_REJ_RECEIVED:
		rv_sconn_count(s, &st->rej_recv);
		return rv_sconn_rej(s, ev);
	case IB_CM_REQ_ERROR:
		rv_sconn_count(s, &st->req_error);
		return -1;
	case IB_CM_REP_ERROR:
		rv_sconn_count(s, &st->rep_error);
		return -1;
	case IB_CM_DREQ_RECEIVED:
		rv_sconn_count(s, &st->dreq_recv);
		if (!ib_send_cm_drep(id, NULL, 0))
			rv_sconn_count(s, &st->drep_sent);
		rv_sconn_disconnected(s);
		return 0;
	case IB_CM_DREQ_ERROR:
		rv_sconn_count(s, &st->dreq_error);
		rv_sconn_disconnected(s);
		return 0;
	default:
		rv_sconn_count(s, rv_cm_counter(st, ev->event));
		return 0;
	}
}

/*
 * The handler of the QP's CM ids: those it creates to send a REQ, and
 * (through the listener's handler) those a REQ created. Events on an id
 * the QP gave up are ignored.
 */
int rv_sconn_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct rv_sconn *s = id->context;
	int ret = 0;

	if (!s)
		return 0;

	mutex_lock(&s->mutex);
	/* Else an id the QP gave up; it is being destroyed. */
	if (s->cm_id == id) {
		trace_rv_cm_event(s, ev->event, rv_cm_rej_rv_reason(ev), 0,
				  rv_cm_event_status(ev));
		ret = rv_sconn_cm_event(s, id, ev);
	}
	if (ret < 0) {
		/* This attempt is over: the CM destroys the id. */
		rv_sconn_set_cm_id(s, NULL);
		rv_sconn_disconnected(s);
	}
	mutex_unlock(&s->mutex);
	return ret ? 1 : 0;
}
