// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/rv/: the module's objects as they are now, one line
 * per object of `key=value` fields (docs/observability.md describes them;
 * rvstat reads them). For debugging, not ABI: a key may come or go.
 * Objects are named by their ids, never by address. Each file is produced
 * under the locks of the objects it shows, taken in the order of rv.h.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uidgid.h>

#include "rv_conn.h"

static struct dentry *rv_debugfs_root;

static const struct {
	enum rv_sconn_state state;
	const char *name;
} rv_sconn_state_names[] = { RV_SCONN_STATE_NAMES(RV_SCONN_LIST) };

/* Every state has its name. */
static_assert(ARRAY_SIZE(rv_sconn_state_names) == RV_SCONN_CLOSING + 1);

static const char *rv_sconn_state_name(enum rv_sconn_state state)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rv_sconn_state_names); i++)
		if (rv_sconn_state_names[i].state == state)
			return rv_sconn_state_names[i].name;
	return "unknown";
}

static void rv_debugfs_device(struct rv_device *dev, void *arg)
{
	seq_printf(arg, "device=%s jobs=%d\n", dev_name(&dev->ib_dev->dev),
		   atomic_read(&dev->jobs));
}

static int rv_devices_show(struct seq_file *m, void *unused)
{
	rv_devices_for_each(rv_debugfs_device, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rv_devices);

/*
 * Under rv_jobs_lock, which also keeps a job that is not dead from
 * losing its device: rv_job_mark_dead() marks it dead under the lock before
 * the device's remove callback returns.
 */
static void rv_debugfs_job(struct rv_job_dev *jdev, void *arg)
{
	const struct rv_job_params *p = &jdev->params;
	struct seq_file *m = arg;
	unsigned int conns = 0;
	struct rv_conn *conn;
	const char *dev;

	mutex_lock(&jdev->conn_mutex);
	list_for_each_entry(conn, &jdev->conns, list)
		conns++;
	mutex_unlock(&jdev->conn_mutex);
	dev = rv_job_dead(jdev) ? jdev->dev_name :
				  dev_name(&jdev->dev->ib_dev->dev);

	seq_printf(m, "job=%u device=%s port=%u gid_index=%u uid=%u job_key=%*phN service_id=0x%llx",
		   jdev->id, dev,
		   jdev->key.port_num, jdev->key.gid_index,
		   from_kuid(&init_user_ns, jdev->uid),
		   (int)jdev->key.job_key_len, jdev->key.job_key,
		   jdev->key.service_id);
	seq_printf(m, " num_conn=%u index_bits=%u q_depth=%u reconnect_timeout=%u hb_interval=%u procs=%u conns=%u dead=%d\n",
		   p->num_conn, p->index_bits, p->q_depth,
		   p->reconnect_timeout, p->hb_interval, jdev->members, conns,
		   rv_job_dead(jdev));
}

static int rv_jobs_show(struct seq_file *m, void *unused)
{
	rv_jobs_for_each(rv_debugfs_job, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rv_jobs);

/* With a reference on its connection: one QP. */
static void rv_debugfs_sconn(struct seq_file *m, struct rv_sconn *s)
{
	struct rv_conn_get_stats_params_out st;
	const struct rv_conn *conn = s->conn;
	enum rv_sconn_state state;
	u32 outstanding, conn_count;
	unsigned long flags;

	lockdep_assert_held(&s->mutex);
	spin_lock_irqsave(&s->lock, flags);
	state = s->state;
	outstanding = s->outstanding;
	conn_count = s->conn_count;
	st = s->stats;
	spin_unlock_irqrestore(&s->lock, flags);

	seq_printf(m, "job=%u conn=%u qp=%u rem_addr=0x%x dgid=%pI6 server=%d state=%s qpn=%u users=%u outstanding=%u",
		   conn->jdev->id, conn->id, s->index, conn->rem_addr,
		   conn->dgid.raw, conn->server, rv_sconn_state_name(state),
		   s->qp ? s->qp->qp_num : 0, kref_read(&conn->kref) - 1,
		   outstanding);
	seq_printf(m, " conn_count=%u conn_recovery=%u req_sent=%u rep_sent=%u rtu_sent=%u rej_sent=%u dreq_sent=%u req_recv=%u rep_recv=%u rtu_recv=%u rej_recv=%u dreq_recv=%u",
		   conn_count, st.conn_recovery, st.req_sent, st.rep_sent,
		   st.rtu_sent, st.rej_sent, st.dreq_sent, st.req_recv,
		   st.rep_recv, st.rtu_recv, st.rej_recv, st.dreq_recv);
	seq_printf(m, " post_write=%llu post_write_fail=%llu post_write_bytes=%llu send_write_cqe=%llu send_write_cqe_fail=%llu recv_write_cqe=%llu recv_write_bytes=%llu recv_cqe_fail=%llu recv_drop=%u post_hb=%llu recv_hb_cqe=%llu\n",
		   st.post_write, st.post_write_fail, st.post_write_bytes,
		   st.send_write_cqe, st.send_write_cqe_fail,
		   st.recv_write_cqe, st.recv_write_bytes, st.recv_cqe_fail,
		   st.recv_drop, st.post_hb, st.recv_hb_cqe);
}

/* Under rv_jobs_lock. */
static void rv_debugfs_conns(struct rv_job_dev *jdev, void *arg)
{
	struct rv_conn *conn;
	unsigned int i;

	mutex_lock(&jdev->conn_mutex);
	list_for_each_entry(conn, &jdev->conns, list) {
		/* One being destroyed is left out: its QPs are going. */
		if (!kref_get_unless_zero(&conn->kref))
			continue;
		for (i = 0; i < conn->num_conn; i++) {
			struct rv_sconn *s = &conn->sconn[i];

			mutex_lock(&s->mutex);
			rv_debugfs_sconn(arg, s);
			mutex_unlock(&s->mutex);
		}
		/* The last reference only queues the teardown to rv_wq. */
		rv_conn_put(conn);
	}
	mutex_unlock(&jdev->conn_mutex);
}

static int rv_conns_show(struct seq_file *m, void *unused)
{
	rv_jobs_for_each(rv_debugfs_conns, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rv_conns);

/* Under RCU: an attached process (freed only after a grace period). */
static void rv_debugfs_user(struct seq_file *m, struct rv_user *user)
{
	struct rv_event_stats_params_out ev;
	struct rv_cache_stats_params_out cs;
	unsigned int conns = 0;
	unsigned long index, flags;
	struct rv_conn *conn;
	u64 overflow;

	spin_lock_irqsave(&user->ring.lock, flags);
	ev = user->ring.stats;
	overflow = user->ring.overflow;
	spin_unlock_irqrestore(&user->ring.lock, flags);
	rv_mr_cache_get_stats(&user->cache, &cs);

	seq_printf(m, "job=%u pid=%d rv_index=%u conn_ids=",
		   user->jdev->id, user->tgid, user->rv_index);
	/* A handle's reference keeps its connection while it is listed. */
	xa_lock(&user->conns);
	xa_for_each(&user->conns, index, conn)
		seq_printf(m, conns++ ? ",%u" : "%u", conn->id);
	xa_unlock(&user->conns);
	seq_printf(m, " conns=%u ring_entries=%u ring_overflow=%llu", conns,
		   user->ring.num, overflow);
	seq_printf(m, " cache_limit=%llu cache_size=%llu cache_count=%u cache_inuse=%u cache_hit=%llu cache_miss=%llu cache_full=%llu cache_failed=%llu cache_remove=%llu cache_evict=%llu",
		   user->cache.limit, cs.cache_size, cs.count, cs.inuse,
		   cs.hit, cs.miss, cs.full, cs.failed, cs.remove, cs.evict);
	seq_printf(m, " send_write_cqe=%llu send_write_cqe_fail=%llu send_write_bytes=%llu recv_write_cqe=%llu recv_write_cqe_fail=%llu recv_write_bytes=%llu\n",
		   ev.send_write_cqe, ev.send_write_cqe_fail,
		   ev.send_write_bytes, ev.recv_write_cqe,
		   ev.recv_write_cqe_fail, ev.recv_write_bytes);
}

/* Under rv_jobs_lock. */
static void rv_debugfs_procs(struct rv_job_dev *jdev, void *arg)
{
	struct rv_user *user;
	unsigned long index;

	rcu_read_lock();
	xa_for_each(&jdev->users, index, user)
		rv_debugfs_user(arg, user);
	rcu_read_unlock();
}

static int rv_procs_show(struct seq_file *m, void *unused)
{
	rv_jobs_for_each(rv_debugfs_procs, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rv_procs);

/* What each uid holds against the per-user limits (rv_account.c). */
static int rv_users_show(struct seq_file *m, void *unused)
{
	rv_owners_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rv_users);

void rv_debugfs_init(void)
{
	rv_debugfs_root = debugfs_create_dir(RV_DRV_NAME, NULL);
	debugfs_create_file("devices", 0400, rv_debugfs_root, NULL,
			    &rv_devices_fops);
	debugfs_create_file("jobs", 0400, rv_debugfs_root, NULL,
			    &rv_jobs_fops);
	debugfs_create_file("conns", 0400, rv_debugfs_root, NULL,
			    &rv_conns_fops);
	debugfs_create_file("procs", 0400, rv_debugfs_root, NULL,
			    &rv_procs_fops);
	debugfs_create_file("users", 0400, rv_debugfs_root, NULL,
			    &rv_users_fops);
	rv_reg_debugfs_init(rv_debugfs_root);
}

void rv_debugfs_exit(void)
{
	debugfs_remove_recursive(rv_debugfs_root);
}
