// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices: the list of those rv's ib_client (rv_main.c) has seen,
 * from its add callback to its remove callback. Users find a device by
 * name and hold a reference.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "rv.h"

static LIST_HEAD(rv_devices);
static DEFINE_MUTEX(rv_devices_lock);

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

/* A new RDMA device (the ib_client's add callback), listed. Or NULL. */
struct rv_device *rv_device_add(struct ib_device *ib_dev)
{
	struct rv_device *dev;

	dev = kzalloc_obj(*dev, GFP_KERNEL);
	if (!dev)
		return NULL;
	dev->ib_dev = ib_dev;
	kref_init(&dev->kref);

	mutex_lock(&rv_devices_lock);
	list_add_tail(&dev->list, &rv_devices);
	mutex_unlock(&rv_devices_lock);
	return dev;
}

/* The device is going (remove callback): no new attach finds it. */
void rv_device_unlist(struct rv_device *dev)
{
	mutex_lock(&rv_devices_lock);
	list_del(&dev->list);
	mutex_unlock(&rv_devices_lock);
}
