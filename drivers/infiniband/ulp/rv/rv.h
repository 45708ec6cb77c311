/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 *
 * Objects
 *   struct rv_device  - one per RDMA device, from the ib_client add callback
 *                       until its remove callback; refcounted with a kref.
 *   struct rv_job_dev - the processes of one job on one device port: key
 *                       (device, port, GID index, uid, network namespace,
 *                       job key, service id),
 *                       the agreed parameters, the kernel PD and the map
 *                       rv_index -> rv_user. Refcounted: each attached
 *                       process holds a reference; the last put frees it.
 *   struct rv_user    - one attached process (rv_user.c): its rv_index,
 *                       event ring, MR cache and connection handles.
 *                       Refcounted: its rv_file holds one reference until
 *                       release, each write in flight another; the last
 *                       put frees it from rv_wq.
 *   struct rv_conn    - the job's RC QPs to one remote node (rv_conn.h;
 *                       each QP a struct rv_sconn, rv_sconn.h),
 *                       refcounted by the process handles on it.
 *   struct rv_file    - one per open of /dev/rv.
 *
 * Locking order (outermost first). A lock may be taken while holding only
 * locks above it in this list:
 *   0. rv_dev_srcu         - an SRCU read section around ATTACH and every
 *                            ioctl of an attached process (no lock on the
 *                            post path); the removal of an RDMA device
 *                            unlists it and waits for the ATTACHes that
 *                            may have found it, then marks each job on
 *                            it dead, waits for the sections that may
 *                            not have seen that, and frees every verbs
 *                            object of the job
 *   1. rv_file.lock        - ATTACH and CAPABILITY of one file
 *   2. rv_user.reg_mutex   - REG_MEM's misses and EVICT of one process
 *   3. mm->mmap_lock       - taken by ib_umem_get(), MMU notifier
 *                            registration and the page look-ups that
 *                            check an MR's pages (get_user_pages_fast());
 *                            held when rv_mmap() and the
 *                            MMU notifier callback run, so neither may take
 *                            1 or 2 (rv_file.user is published once, with
 *                            release ordering, and read without a lock)
 *   3a. rv_reg_qp.mutex    - the job's registration QP (rv_reg.c): held
 *                            across one REG_MR and the wait for its
 *                            completion; taken under 2, never under 3
 *   3b. rv_job_dev.listen_mutex - the job's share of its CM listener:
 *                            held across ib_destroy_cm_id(), which waits
 *                            for the listener's REQ handlers, and they
 *                            take 4, 5 and 7; so taken under none of 3a
 *                            to 11
 *   4. rv_jobs_lock        - the lists of rv_job_dev, their members
 *                            count and creating flag (the CM REQ handler
 *                            takes it to find the job of a REQ); never
 *                            held across a device call: a job-device is
 *                            listed before its verbs objects are made,
 *                            and ATTACHes of its key wait for them
 *                            without it (rv_job_get())
 *   5. rv_job_dev.conn_mutex - the job's list of rv_conn, their paths
 *   6. rv_devices_lock     - the list of rv_device
 *   7. rv_sconn.mutex      - CM and state machine steps of one QP; never
 *                            held across ib_destroy_cm_id(),
 *                            rdma_addr_cancel() or cancel_*_sync() of the
 *                            QP's own work, all of which wait for code
 *                            that takes it
 *   8. rv_sconn.lock       - spinlock (irqsave): a QP's state, send
 *                            credits and counters (those of the CM and
 *                            the state machine are written under 7 too;
 *                            GET_STATS takes only 8)
 *   9. rv_mr_cache.lock    - spinlock (irqsave): one process's MR cache
 *  10. rv_ring.lock        - spinlock (irqsave): the producer side of one
 *                            event ring and its event counters
 *  11. rv_owners_lock      - spinlock: the per-uid counters of the
 *                            per-user limits (rv_account.c); a leaf
 *
 * The rdma cgroup's own mutex is taken by rv's charges (rv_account.c)
 * under 2, 4 and 5, and by their return under 5 and in teardown; it is
 * never held around rv's code.
 *
 * Completion handlers (softirq or a kworker, as cq_poll says) take only
 * 8, 9 and 10, and the receive side reads rv_job_dev.users under RCU: a
 * user is freed only after a grace period that follows its removal from
 * the xarray. POST_WRITE takes 8 with bottom halves disabled, so that
 * softirq work its ib_post_send() raises runs when it re-enables them.
 */
#ifndef RV_H
#define RV_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/srcu.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rv_user_ioctls.h>

#include "rv_account.h"
#include "rv_mr_cache.h"
#include "rv_reg.h"

#define RV_DRV_NAME "rv"

struct rv_conn;

/* Capability bits this build of the module implements. */
#define RV_CAPS_IMPLEMENTED RV_CAP_EVICT

/*
 * Ranges that bound both the module parameters (rv_params.c) and what
 * ATTACH accepts (rv_user.c).
 */
#define RV_Q_DEPTH_MIN 16
#define RV_Q_DEPTH_MAX 65536
#define RV_MR_CACHE_SIZE_MAX 1048576	/* MB */

/*
 * The IB CM service ids of the RDMA CM's IP port spaces (IBTA Annex A11):
 * the RDMA CM, and through it NFS/RDMA, iSER and NVMe-oF, listen there.
 * rv never does.
 */
#define RV_IP_CM_SERVICE_ID_MIN 0x0000000001000000ULL
#define RV_IP_CM_SERVICE_ID_MAX 0x0000000001ffffffULL

static inline bool rv_service_id_is_ip_cm(u64 v)
{
	return v >= RV_IP_CM_SERVICE_ID_MIN && v <= RV_IP_CM_SERVICE_ID_MAX;
}

/* Module parameters, validated at load (rv_params.c). */
struct rv_params {
	unsigned int num_conn;
	unsigned int q_depth;
	unsigned int mr_cache_size;		/* MB */
#ifndef RV_UPSTREAM
	unsigned int mr_cache_size_gpu;		/* MB, RV_RDMA_MODE_UPSIZE_CPU */
#endif
	u64 service_id;
	u64 user_service_id_min;		/* any uid may listen on these */
	u64 user_service_id_max;
	unsigned int min_hb_interval;		/* ms */
	unsigned int max_jobs_per_user;		/* 0: no limit */
	unsigned int max_conns_per_user;
	unsigned int max_qps_per_user;
	unsigned int max_reconnect_timeout;	/* s */
	enum ib_poll_context cq_poll;		/* where completions run */
};

extern struct rv_params rv_params;
extern struct srcu_struct rv_dev_srcu;
/* rv_main.c: every deferred step (state machines, teardown, frees). */
extern struct workqueue_struct *rv_wq;

struct rv_device {
	struct ib_device *ib_dev;
	struct kref kref;
	atomic_t jobs;			/* job-devices on it, for debugfs */
	struct list_head list;		/* on rv_devices, under rv_devices_lock */
};

/* What identifies a job on a device, besides the device and the uid. */
struct rv_job_key {
	u32 port_num;
	u16 gid_index;
	u8 job_key_len;
	u8 job_key[RV_MAX_JOB_KEY_LEN];
	u64 service_id;
};

/* What every process of a job must agree on. */
struct rv_job_params {
	u8 num_conn;
	u8 index_bits;
	u32 q_depth;
	u32 reconnect_timeout;		/* s */
	u32 hb_interval;		/* ms, 0: no heartbeats */
};

struct rv_job_dev {
	struct list_head list;		/* on rv_jobs while it has members */
	struct kref kref;
	u32 id;				/* for debugfs and tracing, not reused */
	unsigned int members;		/* attached or attaching processes */
	struct rv_device *dev;		/* reference held */
	/* The device's name at attach: once dead, ib_dev may be freed. */
	char dev_name[RV_MAX_DEV_NAME_LEN];
	kuid_t uid;
	struct rv_owner *owner;		/* uid's counters; reference held */
	struct rv_rdmacg rdmacg;	/* PD and registration QP */
	struct net *net;		/* the first attach's; reference held */
	struct rv_job_key key;
	struct rv_job_params params;
	u32 max_msg_sz;			/* the port's, for POST_WRITE */
	struct ib_pd *pd;
	struct rv_reg_qp reg;		/* registers its MRs (rv_reg.c) */
	struct xarray users;		/* rv_index -> struct rv_user */
	union ib_gid gid;		/* the GID at key.gid_index */
	enum ib_gid_type gid_type;	/* and its type */
	u32 loc_addr;			/* the first attach's loc_addr */
	struct mutex listen_mutex;	/* listen_id */
	struct ib_cm_id *listen_id;	/* shared by the CM per service id */
	struct mutex conn_mutex;	/* conns */
	struct list_head conns;		/* struct rv_conn */
	struct list_head all;		/* rv_all_jobs, once created */
	bool dead;			/* its device is gone: rv_job_dead() */
	bool creating;			/* verbs objects not made yet */
	struct completion created;	/* done (or failed): creating false */
};

/* Under rv_dev_srcu: the job's device is gone, its verbs objects too. */
static inline bool rv_job_dead(const struct rv_job_dev *jdev)
{
	return READ_ONCE(jdev->dead);
}

/*
 * The event ring shared with one process. The kernel is the only producer:
 * it keeps its own tail and reads the user-written head only to bound its
 * writes.
 */
struct rv_ring {
	spinlock_t lock;		/* producer side */
	void *buf;			/* vmalloc, header then entries */
	size_t len;			/* bytes userspace maps */
	u32 num;			/* entries */
	u32 stride;			/* bytes per entry: 64 or 65 */
	u32 tail;			/* next entry to write */
	u64 overflow;			/* events dropped: ring full */
	unsigned long mapped;		/* bit 0: mmap done (only once) */
	struct rv_event_stats_params_out stats;	/* under lock */
};

struct rv_user {
	struct kref kref;
	struct rcu_work free_rwork;	/* the last put frees from rv_wq */
	struct rv_job_dev *jdev;	/* reference held */
	struct rv_rdmacg rdmacg;	/* its rdma cgroup handle */
	u32 rv_index;
	pid_t tgid;			/* the attaching process */
	struct mm_struct *mm;		/* its mm, mmgrab()ed */
	u32 mr_cache_mb;
	u64 max_fmr_size;		/* REG_MEM's largest length */
	struct rv_ring ring;		/* num == 0: no ring */
	struct mutex reg_mutex;		/* REG_MEM misses, EVICT: lock order */
	struct rv_mr_cache cache;
	struct list_head zombies;	/* dead MRs, under cache.lock */
	struct work_struct zombie_work;	/* destroys zombies */
	u64 pages_hash_seed;		/* of its MRs' page hashes */
	struct xarray conns;		/* handle -> struct rv_conn, ref held */
};

struct rv_file {
	struct mutex lock;		/* ATTACH, CAPABILITY */
	u32 abi_version;		/* RV_ABI_VERSION() the client declared */
	struct rv_user *user;		/* set once by ATTACH, release order */
};

/* rv_dev.c */
struct rv_device *rv_device_add(struct ib_device *ib_dev);
void rv_device_unlist(struct rv_device *dev);
struct rv_device *rv_device_get_by_name(const char *name);
void rv_device_put(struct rv_device *dev);
void rv_devices_for_each(void (*fn)(struct rv_device *dev, void *arg),
			 void *arg);

/* rv_debugfs.c */
void rv_debugfs_init(void);
void rv_debugfs_exit(void);

/*
 * ioctl handlers. Those given the file run for any caller; those given a
 * user run only for the process that attached (the dispatcher checks).
 */
struct rv_ioctl_ctx {
	struct rv_file *rf;
	struct rv_user *user;		/* NULL unless the ioctl needs it */
	void __user *uarg;
	unsigned int cmd;
};

/* rv_file.c */
extern const struct file_operations rv_fops;
struct rv_user *rv_file_user(struct rv_file *rf, int *err);

/* rv_user.c */
long rv_ioctl_attach(const struct rv_ioctl_ctx *ctx);
void rv_user_release(struct rv_user *user);
void rv_user_put(struct rv_user *user);

/* rv_job.c */
void rv_job_leave(struct rv_job_dev *jdev);
struct rv_req_info;
struct rv_conn *
rv_jobs_find_conn(struct ib_device *ibdev, u32 port, __be64 service_id,
		  const union ib_gid *dgid,
		  const struct rv_req_info *req,
		  struct rv_conn *(*find)(struct rv_job_dev *jdev,
					  const void *arg),
		  const void *arg, int *reason);
void rv_job_put(struct rv_job_dev *jdev);
struct rv_job_dev *rv_job_get_live(struct rv_device *dev);
void rv_job_mark_dead(struct rv_job_dev *jdev);
void rv_job_free_verbs(struct rv_job_dev *jdev);
void rv_jobs_for_each(void (*fn)(struct rv_job_dev *jdev, void *arg),
		      void *arg);

/* rv_conn.c */
void rv_conn_user_exit(struct rv_user *user);
void rv_conns_kill(struct rv_job_dev *jdev);
long rv_ioctl_conn_create(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_conn_connect(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_conn_connected(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_conn_get_conn_count(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_conn_get_stats(const struct rv_ioctl_ctx *ctx);

/* rv_send.c */
long rv_ioctl_post_write(const struct rv_ioctl_ctx *ctx);

/* rv_ring.c */
#ifndef RV_UPSTREAM
unsigned int rv_event_stride(u32 abi_version);
#endif
int rv_ring_init(struct rv_ring *ring, u32 num, u32 abi_version);
void rv_ring_free(struct rv_ring *ring);
int rv_ring_mmap(struct rv_ring *ring, struct vm_area_struct *vma);
bool rv_ring_post(struct rv_ring *ring, u8 event_type,
		  const struct rv_event_wc *wc);
long rv_ioctl_get_event_stats(const struct rv_ioctl_ctx *ctx);

/* rv_mr.c */
int rv_mr_user_init(struct rv_user *user);
void rv_mr_user_flush(struct rv_user *user);
void rv_mr_user_exit(struct rv_user *user);
u32 rv_mr_lkey(struct rv_mr_entry *e);
void rv_mr_put_io(struct rv_user *user, struct rv_mr_entry *e);
long rv_ioctl_reg_mem(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_dereg_mem(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_evict(const struct rv_ioctl_ctx *ctx);
long rv_ioctl_get_cache_stats(const struct rv_ioctl_ctx *ctx);

#endif /* RV_H */
