// SPDX-License-Identifier: GPL-2.0
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 * Module entry points and the /dev/rv misc device.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "rv_conn.h"

/* Connection state machines, teardown and deferred frees. */
struct workqueue_struct *rv_wq;

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

	rv_wq = alloc_workqueue("rv", WQ_MEM_RECLAIM, 0);
	if (!rv_wq)
		return -ENOMEM;
	rv_cm_init(rv_conn_listen_handler);
	ret = rv_dev_init();
	if (ret)
		goto err_wq;
	rv_debugfs_init();
	ret = misc_register(&rv_miscdev);
	if (ret)
		goto err_debugfs;
	return 0;

err_debugfs:
	rv_debugfs_exit();
	rv_dev_exit();
err_wq:
	destroy_workqueue(rv_wq);
	return ret;
}

static void __exit rv_exit(void)
{
	misc_deregister(&rv_miscdev);
	rv_debugfs_exit();
	/*
	 * Every file is closed. What their teardown left on rv_wq finishes
	 * in the devices' remove callbacks, which flush it.
	 */
	rv_dev_exit();
	destroy_workqueue(rv_wq);
}

module_init(rv_init);
module_exit(rv_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Shared kernel RC connections and MR cache for PSM3 rendezvous");
MODULE_VERSION(__stringify(RV_ABI_VER_MAJOR) "." __stringify(RV_ABI_VER_MINOR));
