// SPDX-License-Identifier: GPL-2.0
/*
 * The MR cache core; see rv_mr_cache.h for the entry states and the
 * contract with the backend.
 *
 * Accounting: cache_size and count cover live and stale entries (a stale
 * entry is still registered and pins its memory); the limit applies to
 * that sum. An entry leaves them when it becomes dead, i.e. when it is
 * put on a destroy list, shortly before the backend deregisters it. Each
 * entry that was a miss leaves exactly once, counted in evict (room for a
 * miss, EVICT) or remove (invalidation, last reference of a stale entry,
 * deinit), so count == miss - evict - remove at all times.
 *
 * inuse and inuse_bytes cover the live and stale entries with
 * user_refs + io_refs > 0.
 *
 * Locking: cache->lock is taken with interrupts disabled, so that
 * get_io and put_io work from any context, completion handlers included.
 * The handle xarray is XA_FLAGS_LOCK_IRQ: it is changed under cache->lock
 * (its own lock nested inside), and its handles are reserved outside
 * cache->lock, where allocating may sleep.
 */
#include <kunit/visibility.h>
#include <linux/bug.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "rv_mr_cache.h"
#include "rv_trace.h"

static void rv_mr_trace(const struct rv_mr_cache *cache,
			const struct rv_mr_entry *e, enum rv_mr_trace_op op)
{
	trace_rv_mr_cache(cache, e->addr, e->len, e->access, op);
}

static u32 rv_mr_refs(const struct rv_mr_entry *e)
{
	return e->user_refs + e->io_refs;
}

static bool rv_mr_same(const struct rv_mr_entry *e, u64 addr, u64 len,
		       u32 access)
{
	return e->addr == addr && e->len == len && e->access == access;
}

/*
 * Callers name an MR by its handle and the range and access they gave to
 * REG_MEM, which may be a sub-range of the entry that a hit returned.
 */
static bool rv_mr_covers(const struct rv_mr_entry *e, u64 addr, u64 len,
			 u32 access)
{
	return e->access == access && !rv_mr_bad_range(addr, len) &&
	       addr >= e->it.start && addr + len - 1 <= e->it.last;
}

/* An entry was added to the cache (a miss). */
static void rv_mr_account_add(struct rv_mr_cache *cache,
			      struct rv_mr_entry *e)
{
	struct rv_cache_stats_params_out *s = &cache->stats;

	s->cache_size += e->len;
	s->max_cache_size = max(s->max_cache_size, s->cache_size);
	s->count++;
	s->max_count = max(s->max_count, s->count);
}

/* An entry was taken out of the cache: it is dead from now on. */
static void rv_mr_account_del(struct rv_mr_cache *cache,
			      struct rv_mr_entry *e)
{
	cache->stats.cache_size -= e->len;
	cache->stats.count--;
}

/*
 * A reference was just taken on @e (a live or stale entry). On its first
 * one it leaves the LRU and becomes in use.
 */
static void rv_mr_ref_taken(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct rv_cache_stats_params_out *s = &cache->stats;
	u32 refs = rv_mr_refs(e);

	s->max_refcount = max(s->max_refcount, refs);
	if (refs != 1)
		return;
	list_del_init(&e->lru);
	s->inuse++;
	s->max_inuse = max(s->max_inuse, s->inuse);
	s->inuse_bytes += e->len;
	s->max_inuse_bytes = max(s->max_inuse_bytes, s->inuse_bytes);
}

/* Take @e out of the handle xarray. Called with cache->lock held. */
static void rv_mr_erase_handle(struct rv_mr_cache *cache,
			       struct rv_mr_entry *e)
{
	xa_lock(&cache->handles);
	__xa_erase(&cache->handles, e->handle);
	xa_unlock(&cache->handles);
}

/*
 * Take an unreferenced live or stale entry out of every index and of the
 * accounting, and queue it on @dead.
 */
static void rv_mr_kill(struct rv_mr_cache *cache, struct rv_mr_entry *e,
		       struct list_head *dead)
{
	if (!e->stale)
		interval_tree_remove(&e->it, &cache->tree);
	list_del_init(&e->lru);
	rv_mr_erase_handle(cache, e);
	rv_mr_account_del(cache, e);
	list_add_tail(&e->dead, dead);
}

/*
 * A reference of @e was just dropped. On the last one a live entry goes
 * to the MRU end of the LRU and a stale one is queued on @dead (counted in
 * remove). Returns true if @dead was extended.
 */
static bool rv_mr_ref_dropped(struct rv_mr_cache *cache,
			      struct rv_mr_entry *e, struct list_head *dead)
{
	if (rv_mr_refs(e))
		return false;
	cache->stats.inuse--;
	cache->stats.inuse_bytes -= e->len;
	if (!e->stale) {
		list_add_tail(&e->lru, &cache->lru);
		return false;
	}
	rv_mr_kill(cache, e, dead);
	cache->stats.remove++;
	rv_mr_trace(cache, e, RV_MR_TRACE_REMOVE);
	return true;
}

/*
 * The memory of the live entry @e changed: it leaves the tree. Queued on
 * @dead (counted in remove) if unreferenced, else stale. Returns true if
 * @dead was extended.
 */
static bool rv_mr_invalidate_one(struct rv_mr_cache *cache,
				 struct rv_mr_entry *e, struct list_head *dead)
{
	rv_mr_trace(cache, e, RV_MR_TRACE_INVALIDATE);
	e->recheck = RV_MR_INVAL_NONE;
	if (rv_mr_refs(e)) {
		interval_tree_remove(&e->it, &cache->tree);
		e->stale = true;
		return false;
	}
	rv_mr_kill(cache, e, dead);
	cache->stats.remove++;
	return true;
}

/* Evict the unreferenced live entry @e onto @dead. */
static void rv_mr_evict_one(struct rv_mr_cache *cache, struct rv_mr_entry *e,
			    struct list_head *dead, u64 *bytes, u32 *count)
{
	*bytes += e->len;
	(*count)++;
	rv_mr_kill(cache, e, dead);
	cache->stats.evict++;
	rv_mr_trace(cache, e, RV_MR_TRACE_EVICT);
}

void rv_mr_cache_init(struct rv_mr_cache *cache,
		      const struct rv_mr_cache_ops *ops, u64 limit_bytes)
{
	spin_lock_init(&cache->lock);
	cache->owner = 0;
	cache->tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&cache->lru);
	xa_init_flags(&cache->handles, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	cache->next_handle = 1;
	cache->limit = limit_bytes;
	cache->ops = ops;
	memset(&cache->stats, 0, sizeof(cache->stats));
	cache->stats.limit_cache_size = min_t(u64, limit_bytes >> 20, U32_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_init);

void rv_mr_cache_destroy_list(struct rv_mr_cache *cache,
			      struct list_head *dead)
{
	struct rv_mr_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, dead, dead) {
		list_del_init(&e->dead);
		cache->ops->dereg(cache, e);
		cache->ops->free(cache, e);
	}
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_destroy_list);

/* A live entry containing [addr, addr + len) with exactly @access. */
static struct rv_mr_entry *rv_mr_find(struct rv_mr_cache *cache, u64 addr,
				      u64 len, u32 access)
{
	u64 last = addr + len - 1;
	struct interval_tree_node *node;

	for (node = interval_tree_iter_first(&cache->tree, addr, last); node;
	     node = interval_tree_iter_next(node, addr, last)) {
		struct rv_mr_entry *e = container_of(node, struct rv_mr_entry,
						     it);

		if (node->start <= addr && node->last >= last &&
		    e->access == access)
			return e;
	}
	return NULL;
}

/*
 * Make room for @len more bytes by evicting unreferenced live entries
 * LRU-first onto @dead. Nothing is evicted unless enough can be: false
 * means the cache is full of referenced (or stale) entries.
 */
static bool rv_mr_make_room(struct rv_mr_cache *cache, u64 len,
			    struct list_head *dead)
{
	u64 size = cache->stats.cache_size, freeable = 0, bytes = 0;
	struct rv_mr_entry *e, *tmp;
	u32 count = 0;

	if (len > cache->limit)
		return false;
	if (size <= cache->limit - len)
		return true;
	list_for_each_entry(e, &cache->lru, lru) {
		freeable += e->len;
		if (size - freeable <= cache->limit - len)
			break;
	}
	if (size - freeable > cache->limit - len)
		return false;
	list_for_each_entry_safe(e, tmp, &cache->lru, lru) {
		if (cache->stats.cache_size <= cache->limit - len)
			break;
		rv_mr_evict_one(cache, e, dead, &bytes, &count);
	}
	return true;
}

/* REG_MEM found the live entry @e: a new user reference, a hit. */
static void rv_mr_hit(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	e->user_refs++;
	rv_mr_ref_taken(cache, e);
	cache->stats.hit++;
	rv_mr_trace(cache, e, RV_MR_TRACE_HIT);
}

struct rv_mr_entry *rv_mr_cache_hit_locked(struct rv_mr_cache *cache,
					   u64 addr, u64 len, u32 access)
{
	struct rv_mr_entry *e;

	lockdep_assert_held(&cache->lock);
	e = rv_mr_find(cache, addr, len, access);
	if (!e || e->recheck)
		return NULL;
	rv_mr_hit(cache, e);
	return e;
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_hit_locked);

/*
 * The live entry @e, found by REG_MEM, is marked for a recheck. Called and
 * returns with cache->lock held (as *@flags), dropping it meanwhile: the
 * backend compares its pages with the process's memory. Unchanged, it is
 * a hit and is returned with a user reference; changed (or invalidated
 * again meanwhile), it is invalidated and NULL is returned, anything to
 * destroy on @dead.
 */
static struct rv_mr_entry *rv_mr_recheck(struct rv_mr_cache *cache,
					 struct rv_mr_entry *e,
					 unsigned long *flags,
					 struct list_head *dead)
{
	enum rv_mr_inval how = e->recheck;
	u32 gen = e->inval_gen;
	bool same;

	/* This reference keeps @e from being destroyed while unlocked. */
	e->user_refs++;
	rv_mr_ref_taken(cache, e);
	spin_unlock_irqrestore(&cache->lock, *flags);
	same = cache->ops->same(cache, e, how);
	spin_lock_irqsave(&cache->lock, *flags);

	if (same && !e->stale && e->inval_gen == gen) {
		/* The reference taken above is the hit's. */
		e->recheck = RV_MR_INVAL_NONE;
		cache->stats.hit++;
		rv_mr_trace(cache, e, RV_MR_TRACE_HIT);
		return e;
	}
	if (!e->stale)
		rv_mr_invalidate_one(cache, e, dead);
	e->user_refs--;
	rv_mr_ref_dropped(cache, e, dead);
	return NULL;
}

/*
 * REG_MEM's look-up, under cache->lock: a live entry (a hit, with a new
 * user reference; one marked for a recheck once its pages are found
 * unchanged), ERR_PTR(-ENOMEM) if there is no room for a new one (full),
 * or NULL once room is made. What it takes out is put on @dead.
 */
static struct rv_mr_entry *rv_mr_lookup(struct rv_mr_cache *cache, u64 addr,
					u64 len, u32 access,
					struct list_head *dead)
{
	struct rv_mr_entry *e;
	unsigned long flags;

	spin_lock_irqsave(&cache->lock, flags);
	/* One to recheck is a hit, or is gone and the search goes on. */
	while ((e = rv_mr_find(cache, addr, len, access))) {
		if (!e->recheck) {
			rv_mr_hit(cache, e);
			break;
		}
		e = rv_mr_recheck(cache, e, &flags, dead);
		if (e)
			break;
	}
	if (!e && !rv_mr_make_room(cache, len, dead)) {
		cache->stats.full++;
		trace_rv_mr_cache(cache, addr, len, access, RV_MR_TRACE_FULL);
		e = ERR_PTR(-ENOMEM);
	}
	spin_unlock_irqrestore(&cache->lock, flags);
	return e;
}

/* A new entry for [addr, addr + len), its handle reserved; or ERR_PTR. */
static struct rv_mr_entry *rv_mr_new(struct rv_mr_cache *cache, u64 addr,
				     u64 len, u32 access)
{
	struct rv_mr_entry *e = cache->ops->alloc(cache);
	u32 handle;
	int ret;

	if (!e)
		return ERR_PTR(-ENOMEM);
	e->addr = addr;
	e->len = len;
	e->access = access;
	e->it.start = addr;
	e->it.last = addr + len - 1;
	e->user_refs = 0;
	e->io_refs = 0;
	e->inval_gen = 0;
	e->stale = false;
	e->recheck = RV_MR_INVAL_NONE;
	INIT_LIST_HEAD(&e->lru);
	INIT_LIST_HEAD(&e->dead);

	/* Reserve the handle now: storing it later under the lock cannot fail. */
	ret = xa_alloc_cyclic_irq(&cache->handles, &handle, NULL,
				  XA_LIMIT(1, U32_MAX), &cache->next_handle,
				  GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		cache->ops->free(cache, e);
		return ERR_PTR(ret);
	}
	e->handle = handle;
	return e;
}

/*
 * Insert the registered entry @e (a miss, with a user reference), unless
 * its range was invalidated while it was being registered (-EAGAIN).
 */
static int rv_mr_insert(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	unsigned long flags;
	int ret = -EAGAIN;

	spin_lock_irqsave(&cache->lock, flags);
	if (cache->ops->valid && !cache->ops->valid(cache, e))
		goto out;
	WARN_ON_ONCE(cache->stats.cache_size + e->len > cache->limit);
	xa_lock(&cache->handles);
	ret = xa_err(__xa_store(&cache->handles, e->handle, e, GFP_ATOMIC));
	xa_unlock(&cache->handles);
	if (WARN_ON_ONCE(ret))
		goto out;
	interval_tree_insert(&e->it, &cache->tree);
	rv_mr_account_add(cache, e);
	e->user_refs = 1;
	rv_mr_ref_taken(cache, e);
	cache->stats.miss++;
	rv_mr_trace(cache, e, RV_MR_TRACE_MISS);
out:
	spin_unlock_irqrestore(&cache->lock, flags);
	return ret;
}

struct rv_mr_entry *rv_mr_cache_reg(struct rv_mr_cache *cache, u64 addr,
				    u64 len, u32 access)
{
	struct rv_mr_entry *e;
	unsigned long flags;
	LIST_HEAD(dead);
	int ret;

	if (rv_mr_bad_range(addr, len))
		return ERR_PTR(-EINVAL);
	e = rv_mr_lookup(cache, addr, len, access, &dead);
	rv_mr_cache_destroy_list(cache, &dead);
	if (e)
		return e;

	/*
	 * Unlocked from here until the insert. Only a miss adds bytes to the
	 * cache, and misses are serialised by the caller, so what runs
	 * meanwhile (invalidation, put_io, dereg, EVICT) can only shrink it:
	 * the room made above is still there at the insert.
	 */
	e = rv_mr_new(cache, addr, len, access);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto fail;
	}
	ret = cache->ops->reg(cache, e);
	if (ret)
		goto fail_free;
	ret = rv_mr_insert(cache, e);
	if (ret)
		goto fail_dereg;
	return e;

fail_dereg:
	cache->ops->dereg(cache, e);
fail_free:
	xa_erase_irq(&cache->handles, e->handle);
	cache->ops->free(cache, e);
fail:
	spin_lock_irqsave(&cache->lock, flags);
	cache->stats.failed++;
	spin_unlock_irqrestore(&cache->lock, flags);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_reg);

int rv_mr_cache_dereg(struct rv_mr_cache *cache, u32 handle, u64 addr,
		      u64 len, u32 access)
{
	struct rv_mr_entry *e;
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&cache->lock, flags);
	e = handle ? xa_load(&cache->handles, handle) : NULL;
	if (!e || !rv_mr_covers(e, addr, len, access) || !e->user_refs) {
		spin_unlock_irqrestore(&cache->lock, flags);
		return -EINVAL;
	}
	e->user_refs--;
	rv_mr_ref_dropped(cache, e, &dead);
	spin_unlock_irqrestore(&cache->lock, flags);

	rv_mr_cache_destroy_list(cache, &dead);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_dereg);

struct rv_mr_entry *rv_mr_cache_get_io(struct rv_mr_cache *cache, u32 handle,
				       u64 addr, u64 len, u32 access)
{
	struct rv_mr_entry *e;
	unsigned long flags;

	spin_lock_irqsave(&cache->lock, flags);
	e = handle ? xa_load(&cache->handles, handle) : NULL;
	/* A stale entry serves its holders until their DEREG_MEM. */
	if (e && ((e->stale && !e->user_refs) ||
		  !rv_mr_covers(e, addr, len, access)))
		e = NULL;
	if (e) {
		e->io_refs++;
		rv_mr_ref_taken(cache, e);
	}
	spin_unlock_irqrestore(&cache->lock, flags);
	return e;
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_get_io);

bool rv_mr_cache_put_io(struct rv_mr_cache *cache, struct rv_mr_entry *e,
			struct list_head *dead)
{
	unsigned long flags;
	bool ret = false;

	spin_lock_irqsave(&cache->lock, flags);
	if (!WARN_ON_ONCE(!e->io_refs)) {
		e->io_refs--;
		ret = rv_mr_ref_dropped(cache, e, dead);
	}
	spin_unlock_irqrestore(&cache->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_put_io);

bool rv_mr_cache_invalidate_locked(struct rv_mr_cache *cache, u64 start,
				   u64 end, enum rv_mr_inval how,
				   struct list_head *dead)
{
	struct interval_tree_node *node, *next;
	bool recheck = how != RV_MR_INVAL_CHANGED && cache->ops->same;
	bool ret = false;

	lockdep_assert_held(&cache->lock);
	if (how == RV_MR_INVAL_NONE || start >= end)
		return false;

	for (node = interval_tree_iter_first(&cache->tree, start, end - 1);
	     node; node = next) {
		struct rv_mr_entry *e = container_of(node, struct rv_mr_entry,
						     it);

		/* Found before @node leaves the tree; still valid after. */
		next = interval_tree_iter_next(node, start, end - 1);
		e->inval_gen++;
		if (recheck) {
			e->recheck = max_t(u8, e->recheck, how);
			rv_mr_trace(cache, e, RV_MR_TRACE_RECHECK);
			continue;
		}
		ret |= rv_mr_invalidate_one(cache, e, dead);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_invalidate_locked);

/*
 * Report what was evicted, then destroy it. 0, or -ENOENT if nothing was
 * evicted.
 */
static int rv_mr_evict_done(struct rv_mr_cache *cache, struct list_head *dead,
			    u64 evicted_bytes, u32 evicted_count, u64 *bytes,
			    u32 *count)
{
	rv_mr_cache_destroy_list(cache, dead);
	*bytes = evicted_bytes;
	*count = evicted_count;
	return evicted_count ? 0 : -ENOENT;
}

/*
 * Evict unreferenced entries overlapping [addr, addr + len): with @exact,
 * only the first one with exactly this range and access; else all of them.
 */
static int rv_mr_evict_search(struct rv_mr_cache *cache, u64 addr, u64 len,
			      bool exact, u32 access, u64 *bytes, u32 *count)
{
	struct interval_tree_node *node, *next;
	u64 evicted_bytes = 0;
	u32 evicted_count = 0;
	unsigned long flags;
	LIST_HEAD(dead);

	*bytes = 0;
	*count = 0;
	if (rv_mr_bad_range(addr, len))
		return -EINVAL;

	spin_lock_irqsave(&cache->lock, flags);
	for (node = interval_tree_iter_first(&cache->tree, addr,
					     addr + len - 1);
	     node; node = next) {
		struct rv_mr_entry *e = container_of(node, struct rv_mr_entry,
						     it);

		next = interval_tree_iter_next(node, addr, addr + len - 1);
		if (rv_mr_refs(e) ||
		    (exact && !rv_mr_same(e, addr, len, access)))
			continue;
		rv_mr_evict_one(cache, e, &dead, &evicted_bytes,
				&evicted_count);
		if (exact)
			break;
	}
	spin_unlock_irqrestore(&cache->lock, flags);

	return rv_mr_evict_done(cache, &dead, evicted_bytes, evicted_count,
				bytes, count);
}

int rv_mr_cache_evict_exact(struct rv_mr_cache *cache, u64 addr, u64 len,
			    u32 access, u64 *bytes, u32 *count)
{
	return rv_mr_evict_search(cache, addr, len, true, access, bytes, count);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_evict_exact);

int rv_mr_cache_evict_range(struct rv_mr_cache *cache, u64 addr, u64 len,
			    u64 *bytes, u32 *count)
{
	return rv_mr_evict_search(cache, addr, len, false, 0, bytes, count);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_evict_range);

int rv_mr_cache_evict_amount(struct rv_mr_cache *cache, u64 bytes_wanted,
			     u32 count_wanted, u64 *bytes, u32 *count)
{
	struct rv_mr_entry *e, *tmp;
	u64 evicted_bytes = 0;
	u32 evicted_count = 0;
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&cache->lock, flags);
	list_for_each_entry_safe(e, tmp, &cache->lru, lru) {
		if (evicted_bytes >= bytes_wanted &&
		    evicted_count >= count_wanted)
			break;
		rv_mr_evict_one(cache, e, &dead, &evicted_bytes,
				&evicted_count);
	}
	spin_unlock_irqrestore(&cache->lock, flags);

	return rv_mr_evict_done(cache, &dead, evicted_bytes, evicted_count,
				bytes, count);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_evict_amount);

void rv_mr_cache_get_stats(struct rv_mr_cache *cache,
			   struct rv_cache_stats_params_out *out)
{
	unsigned long flags;

	spin_lock_irqsave(&cache->lock, flags);
	*out = cache->stats;
	spin_unlock_irqrestore(&cache->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_get_stats);

void rv_mr_cache_deinit(struct rv_mr_cache *cache)
{
	struct rv_mr_entry *e;
	unsigned long flags, index;
	LIST_HEAD(dead);

	spin_lock_irqsave(&cache->lock, flags);
	xa_for_each(&cache->handles, index, e) {
		if (rv_mr_refs(e)) {
			cache->stats.inuse--;
			cache->stats.inuse_bytes -= e->len;
		}
		rv_mr_kill(cache, e, &dead);
		cache->stats.remove++;
		rv_mr_trace(cache, e, RV_MR_TRACE_REMOVE);
	}
	spin_unlock_irqrestore(&cache->lock, flags);

	rv_mr_cache_destroy_list(cache, &dead);
	xa_destroy(&cache->handles);
}
EXPORT_SYMBOL_IF_KUNIT(rv_mr_cache_deinit);
