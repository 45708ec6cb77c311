// SPDX-License-Identifier: GPL-2.0
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 * Module entry points, the /dev/rv misc device, and the ib_client: what
 * rv does when an RDMA device comes or goes.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>

#include "rv_conn.h"

/* Connection state machines, teardown and deferred frees. */
struct workqueue_struct *rv_wq;

static struct ib_client rv_client;

/*
 * Waits for what is on rv_wq, and for the users' frees still waiting for
 * their grace period (queue_rcu_work()) before they reach it.
 */
static void rv_wq_flush(void)
{
	rcu_barrier();
	flush_workqueue(rv_wq);
}

static int rv_add_one(struct ib_device *ib_dev)
{
	struct rv_device *dev;

	dev = rv_device_add(ib_dev);
	if (!dev)
		return -ENOMEM;
	ib_set_client_data(ib_dev, &rv_client, dev);
	dev_dbg(&ib_dev->dev, "rv: added\n");
	return 0;
}

/*
 * The device of @jdev is going away: free every verbs object of the job
 * now, once no ioctl that may not have seen it dead is running. Its
 * connections fail for good (their writes in flight complete with an
 * error status), its processes' MRs are deregistered, and what is left
 * is a job-device without a device: its processes get ENODEV (EIO from
 * POST and the connection ioctls) until they close.
 */
static void rv_job_kill(struct rv_job_dev *jdev)
{
	struct rv_user *user;
	unsigned long index;

	rv_job_mark_dead(jdev);
	rv_conns_kill(jdev);
	/* Teardown of dropped connections and frees of finished users. */
	rv_wq_flush();

	xa_for_each(&jdev->users, index, user) {
		if (!kref_get_unless_zero(&user->kref))
			continue;
		rv_mr_user_flush(user);
		rv_rdmacg_uncharge(&user->rdmacg, jdev->dev->ib_dev);
		rv_user_put(user);
	}
	rv_job_free_verbs(jdev);
}

static void rv_remove_one(struct ib_device *ib_dev, void *client_data)
{
	struct rv_device *dev = client_data;
	struct rv_job_dev *jdev;

	/*
	 * No new attach finds it. One that found it before runs in an
	 * rv_dev_srcu read section: once those are over, every job on the
	 * device is listed, with its users, and gives the device up now.
	 */
	rv_device_unlist(dev);
	synchronize_srcu(&rv_dev_srcu);
	while ((jdev = rv_job_get_live(dev))) {
		rv_job_kill(jdev);
		rv_job_put(jdev);
	}
	/* Jobs whose last reference went meanwhile are released there. */
	rv_wq_flush();
	dev_dbg(&ib_dev->dev, "rv: removed\n");
	rv_device_put(dev);
}

static struct ib_client rv_client = {
	.name = RV_DRV_NAME,
	.add = rv_add_one,
	.remove = rv_remove_one,
};

static struct miscdevice rv_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = RV_DRV_NAME,
	.fops = &rv_fops,
	/* Any user may open; access is checked per job at attach. */
	.mode = 0666,
};

static int __init rv_init(void)
{
	int ret;

	/*
	 * Per-CPU, as it has always been. (Made unbound, one two-VM soak on
	 * 6.1 lost 13 of 1444 grants after a link flap: not until that is
	 * understood.)
	 */
	rv_wq = alloc_workqueue("rv", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	if (!rv_wq)
		return -ENOMEM;
	rv_cm_init(rv_conn_listen_handler);
	ret = ib_register_client(&rv_client);
	if (ret)
		goto err_wq;
	ret = misc_register(&rv_miscdev);
	if (ret)
		goto err_client;
	rv_debugfs_init();
	return 0;

err_client:
	ib_unregister_client(&rv_client);
err_wq:
	destroy_workqueue(rv_wq);
	return ret;
}

static void __exit rv_exit(void)
{
	rv_debugfs_exit();
	misc_deregister(&rv_miscdev);
	/*
	 * Every file is closed. What their teardown left on rv_wq finishes
	 * in the devices' remove callbacks, which flush it.
	 */
	ib_unregister_client(&rv_client);
	rcu_barrier();
	destroy_workqueue(rv_wq);
}

module_init(rv_init);
module_exit(rv_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Shared kernel RC connections and MR cache for PSM3 rendezvous");
MODULE_VERSION(__stringify(RV_ABI_VER_MAJOR) "." __stringify(RV_ABI_VER_MINOR));
