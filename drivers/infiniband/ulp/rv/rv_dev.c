// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices: an ib_client tracks every device from its add callback to
 * its remove callback. Users find a device by name and hold a reference.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "rv.h"

static LIST_HEAD(rv_devices);
static DEFINE_MUTEX(rv_devices_lock);
static struct ib_client rv_client;

static void rv_device_release(struct kref *kref)
{
	struct rv_device *dev = container_of(kref, struct rv_device, kref);

	kfree(dev);
}

void rv_device_put(struct rv_device *dev)
{
	kref_put(&dev->kref, rv_device_release);
}

/**
 * rv_device_get_by_name - find a registered RDMA device
 * @name: the device name, NUL-terminated
 *
 * Return: the device with a reference held, or NULL.
 */
struct rv_device *rv_device_get_by_name(const char *name)
{
	struct rv_device *dev, *found = NULL;

	mutex_lock(&rv_devices_lock);
	list_for_each_entry(dev, &rv_devices, list) {
		if (!strcmp(dev_name(&dev->ib_dev->dev), name)) {
			kref_get(&dev->kref);
			found = dev;
			break;
		}
	}
	mutex_unlock(&rv_devices_lock);
	return found;
}

/* For debugfs: @fn runs for each device, under rv_devices_lock. */
void rv_devices_for_each(void (*fn)(struct rv_device *dev, void *arg),
			 void *arg)
{
	struct rv_device *dev;

	mutex_lock(&rv_devices_lock);
	list_for_each_entry(dev, &rv_devices, list)
		fn(dev, arg);
	mutex_unlock(&rv_devices_lock);
}

static int rv_add_one(struct ib_device *ib_dev)
{
	struct rv_device *dev;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ib_dev = ib_dev;
	kref_init(&dev->kref);

	mutex_lock(&rv_devices_lock);
	list_add_tail(&dev->list, &rv_devices);
	mutex_unlock(&rv_devices_lock);

	ib_set_client_data(ib_dev, &rv_client, dev);
	dev_dbg(&ib_dev->dev, "rv: added\n");
	return 0;
}

static void rv_remove_one(struct ib_device *ib_dev, void *client_data)
{
	struct rv_device *dev = client_data;

	mutex_lock(&rv_devices_lock);
	list_del(&dev->list);
	mutex_unlock(&rv_devices_lock);

	/* No new attach finds it; the jobs on it give it up now. */
	rv_jobs_remove_device(dev);
	dev_dbg(&ib_dev->dev, "rv: removed\n");
	rv_device_put(dev);
}

static struct ib_client rv_client = {
	.name = RV_DRV_NAME,
	.add = rv_add_one,
	.remove = rv_remove_one,
};

int rv_dev_init(void)
{
	return ib_register_client(&rv_client);
}

void rv_dev_exit(void)
{
	ib_unregister_client(&rv_client);
}
