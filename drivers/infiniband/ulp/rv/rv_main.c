// SPDX-License-Identifier: GPL-2.0
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 * Module entry points and the /dev/rv misc device.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "rv.h"

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

	ret = rv_dev_init();
	if (ret)
		return ret;

	ret = misc_register(&rv_miscdev);
	if (ret) {
		rv_dev_exit();
		return ret;
	}
	return 0;
}

static void __exit rv_exit(void)
{
	misc_deregister(&rv_miscdev);
	rv_dev_exit();
}

module_init(rv_init);
module_exit(rv_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Shared kernel RC connections and MR cache for PSM3 rendezvous");
MODULE_VERSION(__stringify(RV_ABI_VER_MAJOR) "." __stringify(RV_ABI_VER_MINOR));
