/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-process MR cache core: lookup, reference counting, LRU,
 * size limit, eviction, invalidation and statistics. It knows nothing of
 * verbs or MMU notifiers: a backend (struct rv_mr_cache_ops) registers
 * and deregisters, so that KUnit can drive the core with a fake one.
 *
 * An entry covers [addr, addr + len) with one access mask. It is in one
 * of these states:
 *   live    - in the interval tree and the handle xarray; found by lookup;
 *             on the LRU when it holds no reference. A live entry may be
 *             marked for a recheck: an invalidation that need not have
 *             changed its pages came, and the next REG_MEM that finds it
 *             asks the backend (ops->same) before it counts as a hit;
 *   stale   - its memory changed while referenced: out of the tree and the
 *             LRU, still in the xarray so DEREG_MEM finds it, and still
 *             usable for writes while a REG_MEM reference is held (the MR
 *             keeps the pages it registered); destroyed when the last
 *             reference goes;
 *   dead    - out of every index, handed back to the caller on a list to
 *             be destroyed (ops->dereg, ops->free) where sleeping is
 *             allowed.
 *
 * The contract with userspace: an MR that REG_MEM returned stays valid,
 * for the writes it posts and for the peer's writes, until its DEREG_MEM,
 * whatever happens to the memory meanwhile. An invalidation only decides
 * whether a later REG_MEM may find it.
 *
 * References: user_refs counts REG_MEM calls not yet matched by DEREG_MEM;
 * io_refs counts in-flight writes. Only an entry with neither is evicted.
 *
 * Locking: cache->lock (a spinlock) protects everything in the cache and
 * every entry's state; it is never held across a backend call. Calls that
 * may register (rv_mr_cache_reg) are serialised by the caller.
 */
#ifndef RV_MR_CACHE_H
#define RV_MR_CACHE_H

#include <linux/interval_tree.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/rv_user_ioctls.h>

struct rv_mr_cache;

struct rv_mr_entry {
	struct interval_tree_node it;	/* [addr, addr + len - 1] */
	struct list_head lru;		/* on cache->lru while unreferenced */
	struct list_head dead;		/* on a caller's destroy list */
	u64 addr;
	u64 len;
	u32 access;
	u32 handle;			/* id in cache->handles, never 0 */
	u32 user_refs;
	u32 io_refs;
	u32 inval_gen;			/* invalidations since it went live */
	bool stale;
	u8 recheck;			/* live: enum rv_mr_inval to check */
};

/*
 * What an invalidation of a range says of the entries it overlaps, from
 * the least to the most.
 */
enum rv_mr_inval {
	RV_MR_INVAL_NONE,	/* nothing a hit depends on changed */
	RV_MR_INVAL_ACCESS,	/* same pages, the access may have changed */
	RV_MR_INVAL_MAYBE,	/* the pages may have changed */
	RV_MR_INVAL_CHANGED,	/* the pages are gone or replaced */
};

/**
 * struct rv_mr_cache_ops - what a backend provides
 * @alloc: allocate an entry (the backend may embed it in a larger struct)
 * @free: free an entry from @alloc
 * @reg: register the entry's range; may sleep; 0 or -errno
 * @dereg: undo @reg; may sleep
 * @valid: optional; called with cache->lock held just before a newly
 *	registered entry is inserted. False means its range was invalidated
 *	while @reg ran: the entry is destroyed and REG_MEM fails with -EAGAIN
 *	(counted as failed).
 * @same: optional; may sleep; called for a live entry marked for a recheck,
 *	which the caller holds a user reference on, with the strongest mark
 *	(RV_MR_INVAL_ACCESS or RV_MR_INVAL_MAYBE): true if the process's
 *	memory in the entry's range is still the pages it registered, with
 *	the access it was registered with. Without it, RV_MR_INVAL_ACCESS and
 *	RV_MR_INVAL_MAYBE are handled as RV_MR_INVAL_CHANGED.
 */
struct rv_mr_cache_ops {
	struct rv_mr_entry *(*alloc)(struct rv_mr_cache *cache);
	void (*free)(struct rv_mr_cache *cache, struct rv_mr_entry *e);
	int (*reg)(struct rv_mr_cache *cache, struct rv_mr_entry *e);
	void (*dereg)(struct rv_mr_cache *cache, struct rv_mr_entry *e);
	bool (*valid)(struct rv_mr_cache *cache, struct rv_mr_entry *e);
	bool (*same)(struct rv_mr_cache *cache, struct rv_mr_entry *e,
		     enum rv_mr_inval how);
};

/* What the rv_mr_cache tracepoint reports (rv_trace.h). */
enum rv_mr_trace_op {
	RV_MR_TRACE_HIT,		/* REG_MEM found a live entry */
	RV_MR_TRACE_MISS,		/* REG_MEM registered a new entry */
	RV_MR_TRACE_FULL,		/* REG_MEM found no room: -ENOMEM */
	RV_MR_TRACE_EVICT,		/* made room, or EVICT */
	RV_MR_TRACE_INVALIDATE,		/* its memory changed */
	RV_MR_TRACE_REMOVE,		/* destroyed: stale, or teardown */
	RV_MR_TRACE_RECHECK,		/* its memory may have changed */
};

struct rv_mr_cache {
	spinlock_t lock;		/* see the top of this file */
	pid_t owner;			/* for tracing; 0 if none */
	struct rb_root_cached tree;	/* live entries */
	struct list_head lru;		/* unreferenced live entries, LRU first */
	struct xarray handles;		/* handle -> live or stale entry */
	u32 next_handle;
	u64 limit;			/* bytes */
	const struct rv_mr_cache_ops *ops;
	struct rv_cache_stats_params_out stats;	/* under lock */
};

/* True if [addr, addr + len) is empty or wraps past the end of u64. */
static inline bool rv_mr_bad_range(u64 addr, u64 len)
{
	return !len || addr + len - 1 < addr;
}

void rv_mr_cache_init(struct rv_mr_cache *cache,
		      const struct rv_mr_cache_ops *ops, u64 limit_bytes);

/*
 * REG_MEM: find a live entry containing [addr, addr + len) with exactly
 * @access (a hit: user_refs++; one marked for a recheck is a hit only if
 * ops->same says its pages are unchanged, else it goes as if invalidated
 * and the search goes on), or make room within the limit by evicting
 * unreferenced entries LRU-first, register a new entry and insert it (a
 * miss). Returns the entry with a user reference, or ERR_PTR: -ENOMEM
 * when the cache is full of referenced entries (counted as full), the
 * backend's error (counted as failed). Evicted entries are destroyed
 * before returning. May sleep.
 */
struct rv_mr_entry *rv_mr_cache_reg(struct rv_mr_cache *cache, u64 addr,
				    u64 len, u32 access);

/*
 * REG_MEM's hit alone, with cache->lock held: the live entry containing
 * [addr, addr + len) with exactly @access, a user reference taken and the
 * hit counted; or NULL, also when that entry is marked for a recheck
 * (nothing is counted: rv_mr_cache_reg() follows).
 * Lets the caller read the entry before the lock is dropped, so a hit
 * needs no lock the caller serialises misses with. Does not sleep.
 */
struct rv_mr_entry *rv_mr_cache_hit_locked(struct rv_mr_cache *cache,
					   u64 addr, u64 len, u32 access);

/*
 * DEREG_MEM: drop one user reference of the entry @handle, which must
 * contain [addr, addr + len) (the range given to REG_MEM, possibly a
 * sub-range of the entry), have exactly this access and hold a user
 * reference (else -EINVAL). May sleep (destroys a stale entry on its last
 * reference).
 */
int rv_mr_cache_dereg(struct rv_mr_cache *cache, u32 handle, u64 addr,
		      u64 len, u32 access);

/*
 * The write path: take an IO reference on the entry @handle if it contains
 * [addr, addr + len) with exactly this access and is live, or stale with a
 * user reference (REG_MEM's MR stays usable until DEREG_MEM); NULL if
 * there is none. Does not sleep.
 */
struct rv_mr_entry *rv_mr_cache_get_io(struct rv_mr_cache *cache, u32 handle,
				       u64 addr, u64 len, u32 access);

/*
 * Drop an IO reference. Does not sleep: if the entry must now be
 * destroyed (it is stale), it is moved onto @dead and true is returned;
 * the caller destroys it later with rv_mr_cache_destroy_list().
 */
bool rv_mr_cache_put_io(struct rv_mr_cache *cache, struct rv_mr_entry *e,
			struct list_head *dead);

/*
 * The range [start, end) of the process's memory is changing. With
 * RV_MR_INVAL_NONE nothing is done. With RV_MR_INVAL_ACCESS or
 * RV_MR_INVAL_MAYBE (and ops->same), every live entry overlapping it is
 * marked for a recheck (the strongest mark stays) and stays. Otherwise
 * each leaves the tree (lookup can no longer find it): unreferenced ones
 * are moved onto @dead (counted in remove), referenced ones become stale.
 * Called with cache->lock held (the MMU notifier glue updates its
 * sequence number under the same lock). Does not sleep. Returns true if
 * @dead was extended.
 */
bool rv_mr_cache_invalidate_locked(struct rv_mr_cache *cache, u64 start,
				   u64 end, enum rv_mr_inval how,
				   struct list_head *dead);

/*
 * EVICT. Unreferenced entries only: the one matching exactly (-ENOENT if
 * none), all overlapping [addr, addr + len) (access ignored), or LRU-first
 * until at least @bytes and at least @count were evicted. Reports what was
 * evicted; -ENOENT if nothing was. May sleep.
 */
int rv_mr_cache_evict_exact(struct rv_mr_cache *cache, u64 addr, u64 len,
			    u32 access, u64 *bytes, u32 *count);
int rv_mr_cache_evict_range(struct rv_mr_cache *cache, u64 addr, u64 len,
			    u64 *bytes, u32 *count);
int rv_mr_cache_evict_amount(struct rv_mr_cache *cache, u64 bytes_wanted,
			     u32 count_wanted, u64 *bytes, u32 *count);

void rv_mr_cache_get_stats(struct rv_mr_cache *cache,
			   struct rv_cache_stats_params_out *out);

/* Deregister and free every entry on @dead. May sleep. */
void rv_mr_cache_destroy_list(struct rv_mr_cache *cache,
			      struct list_head *dead);

/*
 * Teardown (close): every entry, referenced or not, is destroyed (counted
 * in remove). The caller guarantees no other call is running or will run.
 */
void rv_mr_cache_deinit(struct rv_mr_cache *cache);

#endif /* RV_MR_CACHE_H */
