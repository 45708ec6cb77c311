/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 *
 * Objects
 *   struct rv_device  - one per RDMA device, from the ib_client add callback
 *                       until its remove callback; refcounted with a kref.
 *   struct rv_file    - one per open of /dev/rv.
 *
 * Locking order (outermost first). A lock may be taken while holding only
 * locks above it in this list:
 *   1. rv_file.lock        - serialises ioctls of one file
 *   2. rv_devices_lock     - the list of rv_device
 */
#ifndef RV_H
#define RV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rv_user_ioctls.h>

#define RV_DRV_NAME "rv"

/* Capability bits this build of the module implements. */
#define RV_CAPS_IMPLEMENTED 0ULL

/* Module parameters, validated at load (rv_params.c). */
struct rv_params {
	unsigned int num_conn;
	unsigned int q_depth;
	unsigned int mr_cache_size;		/* MB */
	unsigned int mr_cache_size_gpu;		/* MB, RV_RDMA_MODE_UPSIZE_CPU */
	u64 service_id;
	unsigned int min_hb_interval;		/* ms */
	unsigned int max_reconnect_timeout;	/* s */
};

extern struct rv_params rv_params;

struct rv_device {
	struct ib_device *ib_dev;
	struct kref kref;
	struct list_head list;		/* on rv_devices, under rv_devices_lock */
};

struct rv_file {
	struct mutex lock;		/* serialises this file's ioctls */
	u32 abi_version;		/* RV_ABI_VERSION() the client declared */
};

/* rv_dev.c */
int rv_dev_init(void);
void rv_dev_exit(void);
struct rv_device *rv_device_get_by_name(const char *name);
void rv_device_put(struct rv_device *dev);

/* rv_file.c */
extern const struct file_operations rv_fops;
unsigned int rv_event_stride(u32 abi_version);

#endif /* RV_H */
