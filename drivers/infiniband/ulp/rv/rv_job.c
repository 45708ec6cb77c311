// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs.
 *
 * The processes of one job on one device port share a struct rv_job_dev,
 * found by (device, port, GID index, caller's euid and network namespace,
 * job key, service id):
 * the first attach (rv_user.c) creates it with a kernel PD and its
 * registration QP (rv_reg.c), later ones join it if they agree on its
 * parameters.
 */
#include <kunit/visibility.h>
#include <linux/cred.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rv_conn.h"
#include "rv_job.h"
#include "rv_wire.h"

/* See the locking order in rv.h. */
DEFINE_SRCU(rv_dev_srcu);

static LIST_HEAD(rv_jobs);		/* jobs with members or being made, by key */
static LIST_HEAD(rv_all_jobs);		/* every job-device made, until released */
static DEFINE_MUTEX(rv_jobs_lock);
static u32 rv_next_job_id;		/* under rv_jobs_lock */

/* Called with rv_jobs_lock held (kref_put_mutex); drops it. */
static void rv_job_release(struct kref *kref)
{
	struct rv_job_dev *jdev = container_of(kref, struct rv_job_dev, kref);

	if (!list_empty(&jdev->list))
		list_del(&jdev->list);
	if (!list_empty(&jdev->all))
		list_del(&jdev->all);
	mutex_unlock(&rv_jobs_lock);

	WARN_ON(!xa_empty(&jdev->users));
	WARN_ON(!list_empty(&jdev->conns));
	xa_destroy(&jdev->users);
	mutex_destroy(&jdev->conn_mutex);
	if (jdev->pd)
		rv_job_free_verbs(jdev);
	mutex_destroy(&jdev->listen_mutex);
	rv_owner_uncharge(jdev->owner, RV_OWNER_JOBS, 1);
	rv_owner_put(jdev->owner);
	put_net(jdev->net);
	atomic_dec(&jdev->dev->jobs);
	rv_device_put(jdev->dev);
	kfree(jdev);
}

void rv_job_put(struct rv_job_dev *jdev)
{
	kref_put_mutex(&jdev->kref, rv_job_release, &rv_jobs_lock);
}

/*
 * A process leaves the job (or fails to join it). When the last one has
 * left, the job-device leaves the list and gives up its listener
 * although connections and writes in flight may keep it a while: a new
 * attach with the same key starts a new job, and inbound REQs find that
 * one. The caller holds none of the locks a REQ handler takes.
 */
void rv_job_leave(struct rv_job_dev *jdev)
{
	bool last;

	mutex_lock(&rv_jobs_lock);
	last = !--jdev->members;
	if (last)
		list_del_init(&jdev->list);
	mutex_unlock(&rv_jobs_lock);
	if (last)
		rv_cm_unlisten(jdev);
}

/* Is @jdev's key for @port, @service_id and this job key? */
static bool rv_job_key_matches(const struct rv_job_dev *jdev, u32 port,
			       u64 service_id, const u8 *job_key,
			       u8 job_key_len)
{
	const struct rv_job_key *k = &jdev->key;

	return k->port_num == port && k->service_id == service_id &&
	       k->job_key_len == job_key_len &&
	       !memcmp(k->job_key, job_key, job_key_len);
}

/* Visible to the KUnit suite of ATTACH. */
VISIBLE_IF_KUNIT bool rv_job_matches(const struct rv_job_dev *jdev,
				     const struct rv_device *dev,
				     const struct rv_job_key *key, kuid_t uid,
				     const struct net *net)
{
	return jdev->dev == dev && uid_eq(jdev->uid, uid) &&
	       net_eq(jdev->net, net) &&
	       jdev->key.gid_index == key->gid_index &&
	       rv_job_key_matches(jdev, key->port_num, key->service_id,
				  key->job_key, key->job_key_len);
}
EXPORT_SYMBOL_IF_KUNIT(rv_job_matches);

static bool rv_job_agrees(const struct rv_job_params *a,
			  const struct rv_job_params *b)
{
	return a->num_conn == b->num_conn && a->index_bits == b->index_bits &&
	       a->q_depth == b->q_depth &&
	       a->reconnect_timeout == b->reconnect_timeout &&
	       a->hb_interval == b->hb_interval;
}

/*
 * Join the listed job-device @jdev, which matches the caller's key, with
 * rv_jobs_lock held; drops it. One still being created by another ATTACH
 * is waited for, without the lock. Returns @jdev with a reference held,
 * NULL if it did not come to be (or lost its last member meanwhile) and
 * the caller looks again, or ERR_PTR.
 */
static struct rv_job_dev *rv_job_join(struct rv_job_dev *jdev,
				      const struct rv_job_params *params)
{
	int ret;

	/* Under rv_jobs_lock a listed job holds a reference. */
	if (!rv_job_agrees(&jdev->params, params)) {
		mutex_unlock(&rv_jobs_lock);
		return ERR_PTR(-EBUSY);
	}
	kref_get(&jdev->kref);
	if (jdev->creating) {
		mutex_unlock(&rv_jobs_lock);
		ret = wait_for_completion_killable(&jdev->created);
		if (ret) {
			rv_job_put(jdev);
			return ERR_PTR(-EINTR);
		}
		mutex_lock(&rv_jobs_lock);
	}
	if (list_empty(&jdev->list)) {
		mutex_unlock(&rv_jobs_lock);
		rv_job_put(jdev);
		return NULL;
	}
	jdev->members++;
	mutex_unlock(&rv_jobs_lock);
	return jdev;
}

/*
 * A new job-device for the caller's key, listed at once so that other
 * ATTACHes with the key wait for it (rv_job_join()) rather than make a
 * second one, but with no verbs object yet. Takes over the reference on
 * @dev. Called with rv_jobs_lock held.
 */
static struct rv_job_dev *rv_job_alloc(struct rv_device *dev,
				       const struct rv_attach_req *req)
{
	struct rv_job_dev *jdev;
	kuid_t uid = current_euid();
	int ret;

	lockdep_assert_held(&rv_jobs_lock);
	jdev = kzalloc_obj(*jdev, GFP_KERNEL_ACCOUNT);
	if (!jdev)
		return ERR_PTR(-ENOMEM);
	jdev->owner = rv_owner_get(uid);
	if (!jdev->owner) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = rv_owner_charge(jdev->owner, RV_OWNER_JOBS, 1);
	if (ret)
		goto err_owner;
	kref_init(&jdev->kref);
	jdev->id = ++rv_next_job_id;
	jdev->members = 1;
	jdev->creating = true;
	init_completion(&jdev->created);
	jdev->dev = dev;
	strscpy(jdev->dev_name, req->dev_name, sizeof(jdev->dev_name));
	jdev->uid = uid;
	jdev->net = get_net(current->nsproxy->net_ns);
	jdev->max_msg_sz = req->max_msg_sz;
	jdev->key = req->key;
	jdev->params = req->params;
	memcpy(jdev->gid.raw, req->gid, sizeof(jdev->gid.raw));
	jdev->gid_type = req->gid_type;
	jdev->loc_addr = req->loc_addr;
	xa_init_flags(&jdev->users, XA_FLAGS_ALLOC);
	mutex_init(&jdev->conn_mutex);
	mutex_init(&jdev->listen_mutex);
	INIT_LIST_HEAD(&jdev->conns);
	INIT_LIST_HEAD(&jdev->all);
	atomic_inc(&dev->jobs);
	list_add_tail(&jdev->list, &rv_jobs);
	return jdev;

err_owner:
	rv_owner_put(jdev->owner);
err_free:
	kfree(jdev);
	return ERR_PTR(ret);
}

/* The job-device's own verbs objects (rv_job_free_verbs() undoes them). */
static int rv_job_alloc_verbs(struct rv_job_dev *jdev)
{
	struct ib_device *ib_dev = jdev->dev->ib_dev;
	struct ib_pd *pd;
	int ret;

	/* The PD and the registration QP (whose CQ is a pool's). */
	ret = rv_rdmacg_charge(&jdev->rdmacg, ib_dev,
			       RDMACG_RESOURCE_HCA_OBJECT, 2);
	if (ret)
		return ret;
	pd = ib_alloc_pd(ib_dev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_rdmacg;
	}
	jdev->pd = pd;
	ret = rv_reg_qp_init(jdev);
	if (ret)
		goto err_pd;
	ret = rv_cm_listen(jdev);
	if (ret)
		goto err_reg;
	return 0;

err_reg:
	rv_reg_qp_destroy(jdev);
err_pd:
	ib_dealloc_pd(pd);
	jdev->pd = NULL;
err_rdmacg:
	rv_rdmacg_uncharge(&jdev->rdmacg, ib_dev);
	return ret;
}

/*
 * Find the caller's job-device or create it. Takes over the reference on
 * @dev. Returns the job-device with a reference held, or ERR_PTR.
 *
 * rv_jobs_lock is not held across the device calls that create one: the
 * new job-device is listed first, marked creating, and ATTACHes with its
 * key wait for it; others, and the CM's REQ handlers, go on meanwhile.
 * The caller's rv_dev_srcu read section keeps the device's removal from
 * killing its jobs before this one is complete.
 */
struct rv_job_dev *rv_job_get(struct rv_device *dev,
			      const struct rv_attach_req *req)
{
	struct net *net = current->nsproxy->net_ns;
	kuid_t uid = current_euid();
	struct rv_job_dev *jdev;
	int ret;

again:
	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_jobs, list) {
		if (!rv_job_matches(jdev, dev, &req->key, uid, net))
			continue;
		jdev = rv_job_join(jdev, &req->params);
		if (!jdev)
			goto again;
		rv_device_put(dev);
		return jdev;
	}
	jdev = rv_job_alloc(dev, req);
	mutex_unlock(&rv_jobs_lock);
	if (IS_ERR(jdev)) {
		rv_device_put(dev);
		return jdev;
	}

	ret = rv_job_alloc_verbs(jdev);
	mutex_lock(&rv_jobs_lock);
	jdev->creating = false;
	if (ret)
		list_del_init(&jdev->list);
	else
		list_add_tail(&jdev->all, &rv_all_jobs);
	mutex_unlock(&rv_jobs_lock);
	complete_all(&jdev->created);
	if (ret) {
		rv_job_put(jdev);
		return ERR_PTR(ret);
	}
	return jdev;
}

/*
 * The device of @jdev is going away (rv_main.c): the job is dead from
 * now on, and once this returns no ioctl that may not have seen it dead
 * is running. A new attach with its key starts a new job.
 */
void rv_job_mark_dead(struct rv_job_dev *jdev)
{
	mutex_lock(&rv_jobs_lock);
	WRITE_ONCE(jdev->dead, true);
	if (!list_empty(&jdev->list))
		list_del_init(&jdev->list);
	mutex_unlock(&rv_jobs_lock);
	/* Every later ioctl of the job sees it dead and keeps off. */
	synchronize_srcu(&rv_dev_srcu);
}

/*
 * The job's own verbs objects: its listener, registration QP and PD, and
 * their rdma cgroup charges. At the job's release, or when its device
 * goes (the job is dead then).
 */
void rv_job_free_verbs(struct rv_job_dev *jdev)
{
	rv_cm_unlisten(jdev);
	rv_reg_qp_destroy(jdev);
	ib_dealloc_pd(jdev->pd);
	jdev->pd = NULL;
	rv_rdmacg_uncharge(&jdev->rdmacg, jdev->dev->ib_dev);
}

/*
 * For debugfs: @fn runs for each job-device not yet released, under
 * rv_jobs_lock (a listed job-device cannot be released meanwhile).
 */
void rv_jobs_for_each(void (*fn)(struct rv_job_dev *jdev, void *arg),
		      void *arg)
{
	struct rv_job_dev *jdev;

	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_all_jobs, all)
		fn(jdev, arg);
	mutex_unlock(&rv_jobs_lock);
}

/*
 * For the removal of @dev: a job on it not yet dead, with a reference
 * held; or NULL.
 */
struct rv_job_dev *rv_job_get_live(struct rv_device *dev)
{
	struct rv_job_dev *jdev;

	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_all_jobs, all) {
		if (jdev->dev == dev && !jdev->dead &&
		    kref_get_unless_zero(&jdev->kref)) {
			mutex_unlock(&rv_jobs_lock);
			return jdev;
		}
	}
	mutex_unlock(&rv_jobs_lock);
	return NULL;
}

/**
 * rv_jobs_find_conn - the connection an inbound CM REQ is for
 * @ibdev: device the REQ arrived on
 * @port: and its port
 * @service_id: the listener's service id
 * @dgid: the GID the REQ is addressed to: a job gets only the REQs to its
 *	own GID, hence, on RoCE, of its own namespace
 * @req: the job key and uid (in the initial user namespace) of the REQ
 * @find: looks for the connection in one job (rv_conn.c), under
 *	rv_jobs_lock; returns it with a reference held, or NULL
 * @arg: for @find: where the REQ comes from
 * @reason: set when NULL is returned: RV_REJ_RETRY, whether the job or
 *	its connection is not there yet or the job is another uid's (a
 *	REJ tells no other uid whether a job key is in use)
 *
 * Return: what @find returned for the first listed job of the REQ's key
 * and uid that has the connection, or NULL.
 */
struct rv_conn *
rv_jobs_find_conn(struct ib_device *ibdev, u32 port, __be64 service_id,
		  const union ib_gid *dgid, const struct rv_req_info *req,
		  struct rv_conn *(*find)(struct rv_job_dev *jdev,
					  const void *arg),
		  const void *arg, int *reason)
{
	struct rv_conn *conn = NULL;
	struct rv_job_dev *jdev;

	*reason = RV_REJ_RETRY;
	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_jobs, list) {
		if (jdev->dev->ib_dev != ibdev ||
		    memcmp(jdev->gid.raw, dgid->raw, sizeof(dgid->raw)) ||
		    !rv_job_key_matches(jdev, port, be64_to_cpu(service_id),
					req->job_key, req->job_key_len) ||
		    from_kuid_munged(&init_user_ns, jdev->uid) != req->uid)
			continue;
		conn = find(jdev, arg);
		if (conn)
			break;
	}
	mutex_unlock(&rv_jobs_lock);
	return conn;
}
