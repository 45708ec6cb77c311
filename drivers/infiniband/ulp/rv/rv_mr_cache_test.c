// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the MR cache core (rv_mr_cache.c), driven through a fake
 * backend that counts its calls and can be told to fail.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "rv_mr_cache.h"

#define PG		4096ULL
#define ACC_R		0x1U
#define ACC_RW		0x3U
#define DEF_LIMIT	(64ULL << 20)

struct fake_entry {
	struct rv_mr_entry e;
	bool registered;
};

struct fake {
	struct rv_mr_cache cache;
	struct kunit *test;
	int nalloc, nfree, nreg, ndereg, nvalid, nsame;
	int reg_err;		/* reg fails with this while non-zero */
	bool alloc_fails;
	bool valid_ret;		/* what valid() answers */
	bool same_ret;		/* what same() answers ... */
	u64 same_bad_len;	/* ... but false for entries this long */
	bool inv_in_same;	/* same() invalidates the entry, MAYBE */
	enum rv_mr_inval same_how;	/* what the last same() was asked */
	/* While reg runs: invalidate [inv_start, inv_end) if non-empty. */
	u64 inv_start, inv_end;
	u64 reg_calls;		/* valid rv_mr_cache_reg() calls made */
};

static struct fake *to_fake(struct rv_mr_cache *cache)
{
	return container_of(cache, struct fake, cache);
}

static struct fake_entry *to_fe(struct rv_mr_entry *e)
{
	return container_of(e, struct fake_entry, e);
}

/*
 * The core must never hold its lock across a backend call but valid().
 * (With lockdep a violation is a WARNING in the kernel log.)
 */
static void fake_expect_unlocked(struct fake *f)
{
	lockdep_assert_not_held(&f->cache.lock);
}

static struct rv_mr_entry *fake_alloc(struct rv_mr_cache *cache)
{
	struct fake *f = to_fake(cache);
	struct fake_entry *fe;

	fake_expect_unlocked(f);
	if (f->alloc_fails)
		return NULL;
	fe = kzalloc_obj(*fe, GFP_KERNEL);
	if (!fe)
		return NULL;
	f->nalloc++;
	return &fe->e;
}

static void fake_free(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct fake *f = to_fake(cache);

	fake_expect_unlocked(f);
	KUNIT_EXPECT_FALSE(f->test, to_fe(e)->registered);
	f->nfree++;
	kfree(to_fe(e));
}

static void fake_invalidate_how(struct fake *f, u64 start, u64 end,
				enum rv_mr_inval how)
{
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&f->cache.lock, flags);
	rv_mr_cache_invalidate_locked(&f->cache, start, end, how, &dead);
	spin_unlock_irqrestore(&f->cache.lock, flags);
	rv_mr_cache_destroy_list(&f->cache, &dead);
}

static void fake_invalidate(struct fake *f, u64 start, u64 end)
{
	fake_invalidate_how(f, start, end, RV_MR_INVAL_CHANGED);
}

static int fake_reg(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct fake *f = to_fake(cache);

	fake_expect_unlocked(f);
	KUNIT_EXPECT_FALSE(f->test, to_fe(e)->registered);
	KUNIT_EXPECT_NE(f->test, e->handle, 0U);
	if (f->inv_start < f->inv_end)
		fake_invalidate(f, f->inv_start, f->inv_end);
	if (f->reg_err)
		return f->reg_err;
	to_fe(e)->registered = true;
	f->nreg++;
	return 0;
}

static void fake_dereg(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct fake *f = to_fake(cache);

	fake_expect_unlocked(f);
	KUNIT_EXPECT_TRUE(f->test, to_fe(e)->registered);
	to_fe(e)->registered = false;
	f->ndereg++;
}

static bool fake_valid(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct fake *f = to_fake(cache);

	lockdep_assert_held(&cache->lock);
	KUNIT_EXPECT_TRUE(f->test, to_fe(e)->registered);
	f->nvalid++;
	return f->valid_ret;
}

static bool fake_same(struct rv_mr_cache *cache, struct rv_mr_entry *e,
		      enum rv_mr_inval how)
{
	struct fake *f = to_fake(cache);

	fake_expect_unlocked(f);
	KUNIT_EXPECT_EQ(f->test, how, (enum rv_mr_inval)e->recheck);
	KUNIT_EXPECT_TRUE(f->test, how == RV_MR_INVAL_ACCESS ||
			  how == RV_MR_INVAL_MAYBE);
	f->same_how = how;
	KUNIT_EXPECT_TRUE(f->test, to_fe(e)->registered);
	KUNIT_EXPECT_TRUE(f->test, e->recheck);
	KUNIT_EXPECT_FALSE(f->test, e->stale);
	KUNIT_EXPECT_GT(f->test, e->user_refs, 0U);
	f->nsame++;
	if (f->inv_in_same)
		fake_invalidate_how(f, e->addr, e->addr + 1, RV_MR_INVAL_MAYBE);
	return f->same_ret && e->len != f->same_bad_len;
}

static const struct rv_mr_cache_ops fake_ops = {
	.alloc = fake_alloc,
	.free = fake_free,
	.reg = fake_reg,
	.dereg = fake_dereg,
	.valid = fake_valid,
	.same = fake_same,
};

static const struct rv_mr_cache_ops fake_ops_novalid = {
	.alloc = fake_alloc,
	.free = fake_free,
	.reg = fake_reg,
	.dereg = fake_dereg,
};

static struct rv_cache_stats_params_out stats(struct fake *f)
{
	struct rv_cache_stats_params_out s;

	rv_mr_cache_get_stats(&f->cache, &s);
	return s;
}

/* Start again with an empty cache, @limit bytes and @ops. */
static void fake_reinit(struct fake *f, const struct rv_mr_cache_ops *ops,
			u64 limit)
{
	rv_mr_cache_deinit(&f->cache);
	rv_mr_cache_init(&f->cache, ops, limit);
	f->reg_calls = 0;
}

static struct rv_mr_entry *reg(struct fake *f, u64 addr, u64 len, u32 access)
{
	f->reg_calls++;
	return rv_mr_cache_reg(&f->cache, addr, len, access);
}

/* reg() that must succeed and return an entry containing the range. */
static struct rv_mr_entry *reg_ok(struct fake *f, u64 addr, u64 len,
				  u32 access)
{
	struct kunit *test = f->test;
	struct rv_mr_entry *e = reg(f, addr, len, access);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, e);
	KUNIT_EXPECT_LE(test, e->addr, addr);
	KUNIT_EXPECT_GE(test, e->addr + e->len, addr + len);
	KUNIT_EXPECT_EQ(test, e->access, access);
	KUNIT_EXPECT_FALSE(test, e->stale);
	KUNIT_EXPECT_GT(test, e->user_refs, 0U);
	KUNIT_EXPECT_NE(test, e->handle, 0U);
	return e;
}

static int dereg(struct fake *f, struct rv_mr_entry *e)
{
	return rv_mr_cache_dereg(&f->cache, e->handle, e->addr, e->len,
				 e->access);
}

static void dereg_ok(struct fake *f, struct rv_mr_entry *e)
{
	KUNIT_EXPECT_EQ(f->test, dereg(f, e), 0);
}

static struct rv_mr_entry *get_io(struct fake *f, struct rv_mr_entry *e)
{
	return rv_mr_cache_get_io(&f->cache, e->handle, e->addr, e->len,
				  e->access);
}

/* put_io, destroying what it hands back; returns whether it did. */
static bool put_io(struct fake *f, struct rv_mr_entry *e)
{
	LIST_HEAD(dead);
	bool ret;

	ret = rv_mr_cache_put_io(&f->cache, e, &dead);
	KUNIT_EXPECT_EQ(f->test, ret, !list_empty(&dead));
	rv_mr_cache_destroy_list(&f->cache, &dead);
	return ret;
}

/* Is a live entry at @handle found by the write path? */
static bool cached(struct fake *f, u32 handle, u64 addr, u64 len, u32 access)
{
	struct rv_mr_entry *e;

	e = rv_mr_cache_get_io(&f->cache, handle, addr, len, access);
	if (!e)
		return false;
	put_io(f, e);
	return true;
}

static u32 lru_len(struct fake *f)
{
	struct rv_mr_entry *e;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&f->cache.lock, flags);
	list_for_each_entry(e, &f->cache.lru, lru)
		n++;
	spin_unlock_irqrestore(&f->cache.lock, flags);
	return n;
}

/* The LRU entry at position @pos (0 = least recently used), or NULL. */
static struct rv_mr_entry *lru_at(struct fake *f, u32 pos)
{
	struct rv_mr_entry *e, *ret = NULL;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&f->cache.lock, flags);
	list_for_each_entry(e, &f->cache.lru, lru) {
		if (n++ == pos) {
			ret = e;
			break;
		}
	}
	spin_unlock_irqrestore(&f->cache.lock, flags);
	return ret;
}

/*
 * Walk every index of the cache and check it against the statistics and
 * the states of rv_mr_cache.h.
 */
static void check_cache(struct fake *f)
{
	struct kunit *test = f->test;
	struct rv_cache_stats_params_out s;
	struct interval_tree_node *node;
	u64 size = 0, inuse_bytes = 0;
	u32 count = 0, live = 0, in_tree = 0, unref_live = 0, inuse = 0;
	u32 on_lru = 0, bad = 0;
	struct rv_mr_entry *e;
	unsigned long flags, index;

	spin_lock_irqsave(&f->cache.lock, flags);
	s = f->cache.stats;
	xa_for_each(&f->cache.handles, index, e) {
		u32 refs = e->user_refs + e->io_refs;

		count++;
		size += e->len;
		if (index != e->handle)
			bad++;
		if (!e->stale)
			live++;
		else if (e->recheck)
			bad++;	/* only a live entry awaits a recheck */
		if (refs) {
			inuse++;
			inuse_bytes += e->len;
			if (refs > s.max_refcount)
				bad++;
		} else if (!e->stale) {
			unref_live++;
		} else {
			bad++;	/* a stale entry without references */
		}
		if (e->it.last != e->addr + e->len - 1 || e->it.start != e->addr)
			bad++;
	}
	for (node = interval_tree_iter_first(&f->cache.tree, 0, U64_MAX); node;
	     node = interval_tree_iter_next(node, 0, U64_MAX)) {
		e = container_of(node, struct rv_mr_entry, it);
		in_tree++;
		if (e->stale || xa_load(&f->cache.handles, e->handle) != e)
			bad++;
	}
	list_for_each_entry(e, &f->cache.lru, lru) {
		on_lru++;
		if (e->stale || e->user_refs || e->io_refs)
			bad++;
	}
	spin_unlock_irqrestore(&f->cache.lock, flags);

	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, s.count, count);
	KUNIT_EXPECT_EQ(test, s.cache_size, size);
	KUNIT_EXPECT_LE(test, s.cache_size, f->cache.limit);
	KUNIT_EXPECT_LE(test, s.cache_size, s.max_cache_size);
	KUNIT_EXPECT_LE(test, s.count, s.max_count);
	KUNIT_EXPECT_EQ(test, in_tree, live);
	KUNIT_EXPECT_EQ(test, on_lru, unref_live);
	KUNIT_EXPECT_EQ(test, s.inuse, inuse);
	KUNIT_EXPECT_EQ(test, s.inuse_bytes, inuse_bytes);
	KUNIT_EXPECT_LE(test, s.inuse, s.max_inuse);
	KUNIT_EXPECT_LE(test, s.inuse_bytes, s.max_inuse_bytes);
	KUNIT_EXPECT_EQ(test, s.hit + s.miss + s.full + s.failed, f->reg_calls);
	KUNIT_EXPECT_EQ(test, (u64)s.count, s.miss - s.evict - s.remove);
	KUNIT_EXPECT_EQ(test, s.limit_cache_size,
			(u32)min_t(u64, f->cache.limit >> 20, U32_MAX));
	/* Every entry alive is registered, everything else was undone. */
	KUNIT_EXPECT_EQ(test, f->nalloc - f->nfree, (int)count);
	KUNIT_EXPECT_EQ(test, f->nreg - f->ndereg, (int)count);
}

static int rv_mr_cache_test_init(struct kunit *test)
{
	struct fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->test = test;
	f->valid_ret = true;
	f->same_ret = true;
	rv_mr_cache_init(&f->cache, &fake_ops, DEF_LIMIT);
	test->priv = f;
	return 0;
}

static void rv_mr_cache_test_exit(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_cache_stats_params_out s;

	check_cache(f);
	f->inv_start = 0;
	f->inv_end = 0;
	rv_mr_cache_deinit(&f->cache);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.count, 0U);
	KUNIT_EXPECT_EQ(test, s.cache_size, 0ULL);
	KUNIT_EXPECT_EQ(test, s.inuse, 0U);
	KUNIT_EXPECT_EQ(test, s.inuse_bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, f->nalloc, f->nfree);
	KUNIT_EXPECT_EQ(test, f->nreg, f->ndereg);
	KUNIT_EXPECT_TRUE(test, xa_empty(&f->cache.handles));
	KUNIT_EXPECT_TRUE(test, list_empty(&f->cache.lru));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&f->cache.tree.rb_root));
}

/* A hit needs a live entry that contains the whole range. */
static void rv_mr_test_containment(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *e;
	u64 base = 0x100000, bytes;
	u32 count;

	a = reg_ok(f, base, 4 * PG, ACC_R);
	KUNIT_EXPECT_EQ(test, stats(f).miss, 1ULL);

	/* Sub-ranges, the whole range, the first and the last byte. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + PG, PG, ACC_R), a);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base, 4 * PG, ACC_R), a);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base, 1, ACC_R), a);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + 4 * PG - 1, 1, ACC_R), a);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + 100, 3 * PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 5ULL);
	KUNIT_EXPECT_EQ(test, a->user_refs, 6U);
	KUNIT_EXPECT_EQ(test, stats(f).max_refcount, 6U);

	/* Partial overlaps at either end: misses, new entries. */
	e = reg_ok(f, base + 3 * PG, 2 * PG, ACC_R);
	KUNIT_EXPECT_PTR_NE(test, e, a);
	dereg_ok(f, e);
	e = reg_ok(f, base - 1, 2, ACC_R);
	KUNIT_EXPECT_PTR_NE(test, e, a);
	dereg_ok(f, e);
	/* One byte past the end is not contained either. */
	e = reg_ok(f, base, 4 * PG + 1, ACC_R);
	KUNIT_EXPECT_PTR_NE(test, e, a);
	KUNIT_EXPECT_EQ(test, stats(f).miss, 4ULL);

	/* A super-range got its own entry, which now serves sub-ranges too. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + 4 * PG, 1, ACC_R), e);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 6ULL);
	dereg_ok(f, e);
	dereg_ok(f, e);
	/* Leave a as the only entry containing its sub-ranges. */
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, base + 4 * PG,
						      1, &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 2U);	/* with [base + 3 pages, +2) */

	/* Adjacent, not overlapping: a miss. */
	e = reg_ok(f, base + 8 * PG, PG, ACC_R);
	KUNIT_EXPECT_EQ(test, stats(f).miss, 5ULL);
	dereg_ok(f, e);

	while (a->user_refs)
		dereg_ok(f, a);
	/* Still cached, unreferenced: found again. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + PG, 2 * PG, ACC_R), a);
	dereg_ok(f, a);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 7ULL);
	check_cache(f);
}

/*
 * REG_MEM's hit alone (rv_mr_cache_hit_locked): a contained live entry
 * gets a user reference and a hit; anything else is NULL and counts
 * nothing, for rv_mr_cache_reg() to follow.
 */
static struct rv_mr_entry *hit(struct fake *f, u64 addr, u64 len, u32 access)
{
	struct rv_mr_entry *e;
	unsigned long flags;

	spin_lock_irqsave(&f->cache.lock, flags);
	e = rv_mr_cache_hit_locked(&f->cache, addr, len, access);
	spin_unlock_irqrestore(&f->cache.lock, flags);
	if (e)
		f->reg_calls++;		/* a REG_MEM, counted as its hit */
	return e;
}

static void rv_mr_test_hit_locked(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_cache_stats_params_out s;
	struct rv_mr_entry *a;

	/* Empty: nothing found, nothing counted. */
	KUNIT_EXPECT_NULL(test, hit(f, 0x10000, PG, ACC_R));
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.hit + s.miss + s.full + s.failed, 0ULL);

	/* Cached and unreferenced: found, referenced, counted once. */
	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	dereg_ok(f, a);
	KUNIT_EXPECT_PTR_EQ(test, hit(f, 0x10001, PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, a->user_refs, 1U);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.hit, 1ULL);
	KUNIT_EXPECT_EQ(test, s.miss, 1ULL);
	KUNIT_EXPECT_EQ(test, s.inuse, 1U);

	/* Another access, or a range not contained: NULL, nothing counted. */
	KUNIT_EXPECT_NULL(test, hit(f, 0x10000, PG, ACC_RW));
	KUNIT_EXPECT_NULL(test, hit(f, 0x10000, 2 * PG + 1, ACC_R));
	KUNIT_EXPECT_EQ(test, stats(f).hit, 1ULL);
	KUNIT_EXPECT_EQ(test, a->user_refs, 1U);

	/* To be rechecked: left to rv_mr_cache_reg(), nothing counted. */
	fake_invalidate_how(f, 0x10000, 0x11000, RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_TRUE(test, a->recheck);
	KUNIT_EXPECT_NULL(test, hit(f, 0x10000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, f->nsame, 0);

	/* Stale: no longer found. */
	fake_invalidate(f, 0x10000, 0x11000);
	KUNIT_EXPECT_TRUE(test, a->stale);
	KUNIT_EXPECT_NULL(test, hit(f, 0x10000, PG, ACC_R));
	dereg_ok(f, a);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 1ULL);
	check_cache(f);
}

/* The access must be equal, not merely compatible. */
static void rv_mr_test_access(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *r, *rw;
	u64 base = 0x200000;

	r = reg_ok(f, base, 2 * PG, ACC_R);
	rw = reg_ok(f, base, 2 * PG, ACC_RW);
	KUNIT_EXPECT_PTR_NE(test, r, rw);
	KUNIT_EXPECT_NE(test, r->handle, rw->handle);
	KUNIT_EXPECT_EQ(test, stats(f).miss, 2ULL);

	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base, PG, ACC_R), r);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, base + PG, PG, ACC_RW), rw);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 2ULL);

	/* Neither is found with a third access mask. */
	dereg_ok(f, reg_ok(f, base, PG, 0));
	KUNIT_EXPECT_EQ(test, stats(f).miss, 3ULL);

	/* The write path checks the access too. */
	KUNIT_EXPECT_FALSE(test, cached(f, r->handle, r->addr, r->len,
					ACC_RW));
	KUNIT_EXPECT_TRUE(test, cached(f, r->handle, r->addr, r->len, ACC_R));

	dereg_ok(f, r);
	dereg_ok(f, r);
	dereg_ok(f, rw);
	dereg_ok(f, rw);
	check_cache(f);
}

/* Unreferenced entries are evicted least recently used first. */
static void rv_mr_test_lru(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *b, *c, *d, *e;
	u32 ha, hb, hc;

	fake_reinit(f, &fake_ops, 3 * PG);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	b = reg_ok(f, 0x20000, PG, ACC_R);
	c = reg_ok(f, 0x30000, PG, ACC_R);
	KUNIT_EXPECT_EQ(test, lru_len(f), 0U);
	dereg_ok(f, a);
	dereg_ok(f, b);
	dereg_ok(f, c);
	KUNIT_EXPECT_EQ(test, lru_len(f), 3U);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), a);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 2), c);

	/* A hit refreshes a: b is now the oldest. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x10000, PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, lru_len(f), 2U);
	dereg_ok(f, a);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), b);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 2), a);

	/* So does an IO reference: now c is the oldest. */
	KUNIT_EXPECT_TRUE(test, cached(f, b->handle, b->addr, b->len, ACC_R));
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), c);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 2), b);

	ha = a->handle;
	hb = b->handle;
	hc = c->handle;
	d = reg_ok(f, 0x40000, PG, ACC_R);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 1ULL);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	KUNIT_EXPECT_FALSE(test, cached(f, hc, 0x30000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(&f->cache, hc, 0x30000, PG,
						ACC_R), -EINVAL);

	/* d is referenced: the next miss evicts a, then b. */
	e = reg_ok(f, 0x50000, PG, ACC_R);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 2ULL);
	KUNIT_EXPECT_FALSE(test, cached(f, ha, 0x10000, PG, ACC_R));
	KUNIT_EXPECT_TRUE(test, cached(f, hb, 0x20000, PG, ACC_R));
	dereg_ok(f, e);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), b);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 1), e);
	KUNIT_EXPECT_EQ(test, stats(f).count, 3U);
	dereg_ok(f, d);
	check_cache(f);
}

/* Room is made only if enough can be evicted; otherwise nothing changes. */
static void rv_mr_test_full(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *b, *c;
	struct rv_cache_stats_params_out s;

	fake_reinit(f, &fake_ops, 4 * PG);
	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);		/* referenced */
	b = reg_ok(f, 0x20000, PG, ACC_R);
	dereg_ok(f, b);					/* evictable */

	/* 3 pages need 2 freed, only 1 can be: full, b stays. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x30000, 3 * PG, ACC_R)),
			(long)-ENOMEM);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.full, 1ULL);
	KUNIT_EXPECT_EQ(test, s.evict, 0ULL);
	KUNIT_EXPECT_EQ(test, s.count, 2U);
	KUNIT_EXPECT_EQ(test, s.cache_size, 3 * PG);
	KUNIT_EXPECT_EQ(test, f->nalloc, 2);
	KUNIT_EXPECT_EQ(test, lru_len(f), 1U);

	/* More than the whole limit: full at once. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x40000, 5 * PG, ACC_R)),
			(long)-ENOMEM);
	KUNIT_EXPECT_EQ(test, stats(f).full, 2ULL);
	KUNIT_EXPECT_EQ(test, stats(f).count, 2U);

	/* Exactly fits once b goes: b evicted, one eviction. */
	c = reg_ok(f, 0x30000, 2 * PG, ACC_R);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.evict, 1ULL);
	KUNIT_EXPECT_EQ(test, s.cache_size, 4 * PG);
	KUNIT_EXPECT_EQ(test, s.max_cache_size, 4 * PG);
	KUNIT_EXPECT_EQ(test, s.miss, 3ULL);

	/* Fits without evicting: nothing more evicted. */
	dereg_ok(f, c);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x30000, PG, ACC_R), c);
	dereg_ok(f, c);
	dereg_ok(f, a);
	fake_reinit(f, &fake_ops, 4 * PG);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	b = reg_ok(f, 0x20000, PG, ACC_R);
	dereg_ok(f, a);
	dereg_ok(f, b);
	c = reg_ok(f, 0x30000, 2 * PG, ACC_R);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 0ULL);
	/* Needs one page: only the oldest goes. */
	dereg_ok(f, reg_ok(f, 0x40000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, stats(f).evict, 1ULL);
	KUNIT_EXPECT_TRUE(test, cached(f, b->handle, 0x20000, PG, ACC_R));
	dereg_ok(f, c);
	check_cache(f);
}

/* Neither a user nor an IO reference lets an entry be evicted. */
static void rv_mr_test_referenced(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *b, *io;
	u64 bytes;
	u32 count;

	fake_reinit(f, &fake_ops, 2 * PG);
	a = reg_ok(f, 0x10000, PG, ACC_R);		/* user reference */
	b = reg_ok(f, 0x20000, PG, ACC_R);
	io = get_io(f, b);
	KUNIT_ASSERT_PTR_EQ(test, io, b);
	dereg_ok(f, b);					/* IO reference only */
	KUNIT_EXPECT_EQ(test, b->user_refs, 0U);
	KUNIT_EXPECT_EQ(test, lru_len(f), 0U);

	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_exact(&f->cache, 0x10000, PG,
						      ACC_R, &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_exact(&f->cache, 0x20000, PG,
						      ACC_R, &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0, 1ULL << 40,
						      &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, count, 0U);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 1ULL << 40,
						       1000, &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x30000, PG, ACC_R)),
			(long)-ENOMEM);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 0ULL);
	KUNIT_EXPECT_EQ(test, stats(f).full, 1ULL);
	KUNIT_EXPECT_EQ(test, stats(f).count, 2U);
	KUNIT_EXPECT_EQ(test, f->ndereg, 0);

	/* The last IO reference puts b on the LRU: now it can go. */
	KUNIT_EXPECT_FALSE(test, put_io(f, b));
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), b);
	dereg_ok(f, reg_ok(f, 0x30000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, stats(f).evict, 1ULL);
	KUNIT_EXPECT_TRUE(test, cached(f, a->handle, 0x10000, PG, ACC_R));
	dereg_ok(f, a);
	check_cache(f);
}

/* Invalidation: stale entries while referenced, destroyed at the last. */
static void rv_mr_test_stale(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *a2, *b;
	struct rv_cache_stats_params_out s;
	unsigned long flags;
	LIST_HEAD(dead);
	bool ret;

	/* Unreferenced: handed back on the list at once, counted in remove. */
	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	dereg_ok(f, a);
	spin_lock_irqsave(&f->cache.lock, flags);
	/* Ranges touching it without overlapping change nothing. */
	ret = rv_mr_cache_invalidate_locked(&f->cache, 0x12000, 0x13000,
					    RV_MR_INVAL_CHANGED, &dead);
	ret |= rv_mr_cache_invalidate_locked(&f->cache, 0, 0x10000,
					     RV_MR_INVAL_CHANGED, &dead);
	ret |= rv_mr_cache_invalidate_locked(&f->cache, 0x11000, 0x11000,
					     RV_MR_INVAL_CHANGED, &dead);
	KUNIT_EXPECT_FALSE(test, ret);
	/* One byte of overlap is enough. */
	ret = rv_mr_cache_invalidate_locked(&f->cache, 0x11fff, 0x12000,
					    RV_MR_INVAL_CHANGED, &dead);
	spin_unlock_irqrestore(&f->cache.lock, flags);
	KUNIT_EXPECT_TRUE(test, ret);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry_or_null(&dead,
							   struct rv_mr_entry,
							   dead), a);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.remove, 1ULL);
	KUNIT_EXPECT_EQ(test, s.count, 0U);
	KUNIT_EXPECT_EQ(test, f->ndereg, 0);
	rv_mr_cache_destroy_list(&f->cache, &dead);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	KUNIT_EXPECT_EQ(test, f->nfree, 1);

	/*
	 * A user reference: stale, not found by REG_MEM, still usable for
	 * writes by its holder; dereg destroys it.
	 */
	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	fake_invalidate(f, 0x10000, 0x11000);
	KUNIT_EXPECT_TRUE(test, a->stale);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.count, 1U);
	KUNIT_EXPECT_EQ(test, s.cache_size, 2 * PG);
	KUNIT_EXPECT_EQ(test, s.inuse, 1U);
	KUNIT_EXPECT_EQ(test, s.remove, 1ULL);
	KUNIT_EXPECT_TRUE(test, cached(f, a->handle, a->addr, a->len, ACC_R));
	KUNIT_EXPECT_TRUE(test, cached(f, a->handle, a->addr + 1, PG, ACC_R));
	KUNIT_EXPECT_FALSE(test, cached(f, a->handle, a->addr, a->len, ACC_RW));
	KUNIT_EXPECT_EQ(test, stats(f).inuse, 1U);
	a2 = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	KUNIT_EXPECT_PTR_NE(test, a2, a);
	KUNIT_EXPECT_EQ(test, stats(f).count, 2U);
	check_cache(f);
	/* A second invalidation of the same range leaves a alone. */
	fake_invalidate(f, 0x10000, 0x12000);
	KUNIT_EXPECT_TRUE(test, a2->stale);
	dereg_ok(f, a);
	KUNIT_EXPECT_EQ(test, f->ndereg, 2);
	KUNIT_EXPECT_EQ(test, stats(f).remove, 2ULL);
	dereg_ok(f, a2);
	KUNIT_EXPECT_EQ(test, f->ndereg, 3);
	KUNIT_EXPECT_EQ(test, stats(f).count, 0U);

	/*
	 * User and IO references: writes go on while the user reference is
	 * held, none starts after its dereg; gone at the last put_io.
	 */
	b = reg_ok(f, 0x30000, PG, ACC_RW);
	KUNIT_ASSERT_PTR_EQ(test, get_io(f, b), b);
	fake_invalidate(f, 0, 1ULL << 40);
	KUNIT_EXPECT_TRUE(test, b->stale);
	KUNIT_ASSERT_PTR_EQ(test, get_io(f, b), b);
	dereg_ok(f, b);
	KUNIT_EXPECT_NULL(test, get_io(f, b));
	KUNIT_EXPECT_EQ(test, dereg(f, b), -EINVAL);
	KUNIT_EXPECT_EQ(test, f->ndereg, 3);
	KUNIT_EXPECT_FALSE(test, put_io(f, b));
	KUNIT_EXPECT_EQ(test, stats(f).count, 1U);
	KUNIT_EXPECT_TRUE(test, put_io(f, b));
	KUNIT_EXPECT_EQ(test, f->ndereg, 4);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.remove, 4ULL);
	KUNIT_EXPECT_EQ(test, s.count, 0U);
	KUNIT_EXPECT_EQ(test, s.inuse, 0U);
	KUNIT_EXPECT_EQ(test, s.evict, 0ULL);
	check_cache(f);
}

static int evict_exact(struct fake *f, u64 addr, u64 len, u32 access,
		       u64 *bytes, u32 *count)
{
	return rv_mr_cache_evict_exact(&f->cache, addr, len, access, bytes,
				       count);
}

static void rv_mr_test_evict(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *held, *e[4];
	u64 bytes;
	u32 count, i;

	/* Exact: address, length and access must all match. */
	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10000, PG, ACC_RW, &bytes,
					  &count), -ENOENT);
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10000, PG - 1, ACC_R, &bytes,
					  &count), -ENOENT);
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10001, PG - 1, ACC_R, &bytes,
					  &count), -ENOENT);
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10000, 2 * PG, ACC_R, &bytes,
					  &count), -ENOENT);
	KUNIT_EXPECT_EQ(test, stats(f).count, 1U);
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10000, PG, ACC_R, &bytes,
					  &count), 0);
	KUNIT_EXPECT_EQ(test, bytes, PG);
	KUNIT_EXPECT_EQ(test, count, 1U);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 1ULL);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	KUNIT_EXPECT_EQ(test, evict_exact(f, 0x10000, PG, ACC_R, &bytes,
					  &count), -ENOENT);

	/* Range: every unreferenced overlapping entry, any access. */
	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
	dereg_ok(f, reg_ok(f, 0x11000, 2 * PG, ACC_RW));
	dereg_ok(f, reg_ok(f, 0x12fff, 1, ACC_R));	/* last byte */
	dereg_ok(f, reg_ok(f, 0x13000, PG, ACC_R));	/* adjacent */
	held = reg_ok(f, 0x11000, PG, ACC_R);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0x11000,
						      2 * PG, &bytes, &count),
			0);
	KUNIT_EXPECT_EQ(test, count, 2U);
	KUNIT_EXPECT_EQ(test, bytes, 2 * PG + 1);
	KUNIT_EXPECT_EQ(test, stats(f).count, 3U);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0x11000,
						      2 * PG, &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, count, 0U);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0x80000, PG,
						      &bytes, &count), -ENOENT);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0, 1ULL << 40,
						      &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 2U);
	KUNIT_EXPECT_EQ(test, bytes, 2 * PG);
	KUNIT_EXPECT_EQ(test, stats(f).count, 1U);
	dereg_ok(f, held);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_range(&f->cache, 0x11000, 1,
						      &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 6ULL);

	/* Amount: LRU-first until both the bytes and the count are met. */
	for (i = 0; i < 4; i++) {
		e[i] = reg_ok(f, 0x100000 + i * 0x10000, (i + 1) * PG, ACC_R);
		dereg_ok(f, e[i]);
	}
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 0, 0,
						       &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 1, 0,
						       &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 1U);
	KUNIT_EXPECT_EQ(test, bytes, PG);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), e[1]);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 0, 2,
						       &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 2U);
	KUNIT_EXPECT_EQ(test, bytes, 5 * PG);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 100 * PG, 1,
						       &bytes, &count), 0);
	KUNIT_EXPECT_EQ(test, count, 1U);
	KUNIT_EXPECT_EQ(test, bytes, 4 * PG);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, PG, 1,
						       &bytes, &count),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 10ULL);
	KUNIT_EXPECT_EQ(test, stats(f).count, 0U);
	KUNIT_EXPECT_EQ(test, f->ndereg, 10);
	check_cache(f);
}

static void rv_mr_test_dereg_errors(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_cache_stats_params_out s0, s1;
	struct rv_mr_cache *c = &f->cache;
	struct rv_mr_entry *a;
	u32 h;

	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	h = a->handle;
	s0 = stats(f);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, 0, 0x10000, 2 * PG, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h + 1, 0x10000, 2 * PG,
						ACC_R), -EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, U32_MAX, 0x10000, 2 * PG,
						ACC_R), -EINVAL);
	/* The range must lie within the entry's, the access be equal. */
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10001, 2 * PG, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0xffff, PG, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10000, 2 * PG + 1,
						ACC_R), -EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x12000, 1, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10000, 0, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10000, 2 * PG, ACC_RW),
			-EINVAL);
	s1 = stats(f);
	KUNIT_EXPECT_EQ(test, memcmp(&s0, &s1, sizeof(s0)), 0);
	KUNIT_EXPECT_EQ(test, a->user_refs, 1U);

	/* A sub-range, as a hit's caller names it. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x11000, 0x800, ACC_R), a);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x11000, 0x800, ACC_R),
			0);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10000, 2 * PG, ACC_R),
			0);
	/* No user reference left: an error, the entry stays cached. */
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x10000, 2 * PG, ACC_R),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, h, 0x11000, 1, ACC_R),
			-EINVAL);
	KUNIT_ASSERT_PTR_EQ(test, get_io(f, a), a);
	KUNIT_EXPECT_EQ(test, dereg(f, a), -EINVAL);
	KUNIT_EXPECT_FALSE(test, put_io(f, a));
	KUNIT_EXPECT_EQ(test, stats(f).count, 1U);
	KUNIT_EXPECT_EQ(test, f->ndereg, 0);

	/* The write path rejects what DEREG_MEM rejects. */
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, 0, 0x10000, 2 * PG,
						   ACC_R));
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, h + 1, 0x10000, 2 * PG,
						   ACC_R));
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, h, 0x10000, 2 * PG + 1,
						   ACC_R));
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, h, 0xfff, 2, ACC_R));
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, h, 0x10000, 2 * PG,
						   ACC_RW));
	KUNIT_EXPECT_NULL(test, rv_mr_cache_get_io(c, h, 0x10000, 0, ACC_R));
	/* and accepts a sub-range. */
	KUNIT_EXPECT_TRUE(test, cached(f, h, 0x11fff, 1, ACC_R));

	/* Argument errors are the caller's: not counted in the stats. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(rv_mr_cache_reg(c, 0x10000, 0, ACC_R)),
			(long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rv_mr_cache_reg(c, U64_MAX, 2, ACC_R)),
			(long)-EINVAL);

	/* An entry that ends at the very top of the address space. */
	a = reg_ok(f, U64_MAX - PG + 1, PG, ACC_R);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, U64_MAX, 1, ACC_R), a);
	KUNIT_EXPECT_EQ(test, rv_mr_cache_dereg(c, a->handle, U64_MAX, 1,
						ACC_R), 0);
	KUNIT_EXPECT_TRUE(test, cached(f, a->handle, U64_MAX - 1, 2, ACC_R));
	dereg_ok(f, a);
	check_cache(f);
}

/* Backend failures: counted as failed, nothing leaks or stays. */
static void rv_mr_test_reg_failures(struct kunit *test)
{
	struct fake *f = test->priv;

	f->reg_err = -EFAULT;
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x10000, PG, ACC_R)),
			(long)-EFAULT);
	f->reg_err = 0;
	KUNIT_EXPECT_EQ(test, stats(f).failed, 1ULL);
	KUNIT_EXPECT_EQ(test, f->nalloc, 1);
	KUNIT_EXPECT_EQ(test, f->nfree, 1);
	KUNIT_EXPECT_EQ(test, f->nreg, 0);
	KUNIT_EXPECT_EQ(test, f->ndereg, 0);

	f->alloc_fails = true;
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x10000, PG, ACC_R)),
			(long)-ENOMEM);
	f->alloc_fails = false;
	KUNIT_EXPECT_EQ(test, stats(f).failed, 2ULL);
	KUNIT_EXPECT_EQ(test, stats(f).full, 0ULL);

	/* valid() says the range changed while reg ran: -EAGAIN. */
	f->valid_ret = false;
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x10000, PG, ACC_R)),
			(long)-EAGAIN);
	f->valid_ret = true;
	KUNIT_EXPECT_EQ(test, stats(f).failed, 3ULL);
	KUNIT_EXPECT_EQ(test, f->nvalid, 1);
	KUNIT_EXPECT_EQ(test, f->nreg, 1);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	KUNIT_EXPECT_EQ(test, stats(f).count, 0U);
	KUNIT_EXPECT_EQ(test, stats(f).miss, 0ULL);
	check_cache(f);

	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, f->nvalid, 2);

	/* Without valid() in the ops. */
	fake_reinit(f, &fake_ops_novalid, DEF_LIMIT);
	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
	KUNIT_EXPECT_EQ(test, f->nvalid, 2);

	/* Room made for a miss stays made when its reg fails. */
	fake_reinit(f, &fake_ops, PG);
	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
	f->reg_err = -EFAULT;
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x20000, PG, ACC_R)),
			(long)-EFAULT);
	f->reg_err = 0;
	KUNIT_EXPECT_EQ(test, stats(f).evict, 1ULL);
	KUNIT_EXPECT_EQ(test, stats(f).failed, 1ULL);
	KUNIT_EXPECT_EQ(test, stats(f).count, 0U);
	check_cache(f);
}

/* An invalidation that runs while the backend registers. */
static void rv_mr_test_invalidate_during_reg(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *b, *c;

	fake_reinit(f, &fake_ops, 3 * PG);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	dereg_ok(f, a);
	b = reg_ok(f, 0x20000, PG, ACC_R);
	/* c's miss evicts nothing, then a goes away meanwhile, b goes stale. */
	f->inv_start = 0x10000;
	f->inv_end = 0x21000;
	c = reg_ok(f, 0x30000, PG, ACC_R);
	f->inv_start = 0;
	f->inv_end = 0;
	KUNIT_EXPECT_FALSE(test, c->stale);
	KUNIT_EXPECT_TRUE(test, b->stale);
	KUNIT_EXPECT_EQ(test, stats(f).remove, 1ULL);
	KUNIT_EXPECT_EQ(test, stats(f).evict, 0ULL);
	KUNIT_EXPECT_EQ(test, stats(f).count, 2U);
	check_cache(f);

	/* The entry being registered is not in the tree yet: valid() decides. */
	f->inv_start = 0x40000;
	f->inv_end = 0x41000;
	f->valid_ret = false;
	KUNIT_EXPECT_EQ(test, PTR_ERR(reg(f, 0x40000, PG, ACC_R)),
			(long)-EAGAIN);
	f->valid_ret = true;
	f->inv_start = 0;
	f->inv_end = 0;
	KUNIT_EXPECT_EQ(test, stats(f).count, 2U);
	dereg_ok(f, b);
	dereg_ok(f, c);
	check_cache(f);
}

static void rv_mr_test_handles(struct kunit *test)
{
	struct fake *f = test->priv;
	const int n = 64;
	u32 *h = kunit_kcalloc(test, n + 1, sizeof(*h), GFP_KERNEL);
	struct rv_mr_entry *e;
	u64 bytes;
	u32 count;
	int i, j;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	for (i = 0; i < n; i++) {
		e = reg_ok(f, 0x100000 + i * PG, PG, i & 1 ? ACC_R : ACC_RW);
		h[i] = e->handle;
		dereg_ok(f, e);
	}
	KUNIT_EXPECT_EQ(test, rv_mr_cache_evict_amount(&f->cache, 0, n, &bytes,
						       &count), 0);
	KUNIT_EXPECT_EQ(test, count, (u32)n);
	/* Handles are cyclic: a freed one is not handed out again soon. */
	e = reg_ok(f, 0x100000, PG, ACC_RW);
	h[n] = e->handle;
	dereg_ok(f, e);
	for (i = 0; i <= n; i++) {
		KUNIT_EXPECT_NE(test, h[i], 0U);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, h[i], h[j]);
	}
	check_cache(f);
}

static void rv_mr_test_stats(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_cache_stats_params_out s;
	struct rv_mr_entry *a, *b;
	int i;

	fake_reinit(f, &fake_ops, (5ULL << 20) + PG);
	KUNIT_EXPECT_EQ(test, stats(f).limit_cache_size, 5U);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	b = reg_ok(f, 0x20000, 2 * PG, ACC_R);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_PTR_EQ(test, get_io(f, a), a);
	reg_ok(f, 0x10000, PG, ACC_R);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.max_refcount, 5U);
	KUNIT_EXPECT_EQ(test, s.inuse, 2U);
	KUNIT_EXPECT_EQ(test, s.max_inuse, 2U);
	KUNIT_EXPECT_EQ(test, s.inuse_bytes, 3 * PG);
	KUNIT_EXPECT_EQ(test, s.max_inuse_bytes, 3 * PG);
	KUNIT_EXPECT_EQ(test, s.cache_size, 3 * PG);
	KUNIT_EXPECT_EQ(test, s.count, 2U);
	for (i = 0; i < 3; i++)
		put_io(f, a);
	dereg_ok(f, a);
	dereg_ok(f, a);
	dereg_ok(f, b);
	fake_invalidate(f, 0x20000, 0x21000);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.inuse, 0U);
	KUNIT_EXPECT_EQ(test, s.inuse_bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, s.max_inuse, 2U);
	KUNIT_EXPECT_EQ(test, s.max_inuse_bytes, 3 * PG);
	KUNIT_EXPECT_EQ(test, s.count, 1U);
	KUNIT_EXPECT_EQ(test, s.max_count, 2U);
	KUNIT_EXPECT_EQ(test, s.cache_size, PG);
	KUNIT_EXPECT_EQ(test, s.max_cache_size, 3 * PG);
	KUNIT_EXPECT_EQ(test, s.max_refcount, 5U);
	KUNIT_EXPECT_EQ(test, s.hit, 1ULL);
	KUNIT_EXPECT_EQ(test, s.miss, 2ULL);
	KUNIT_EXPECT_EQ(test, s.remove, 1ULL);
	check_cache(f);
}

/* Teardown destroys everything, referenced or stale. */
static void rv_mr_test_deinit(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *s;
	struct rv_cache_stats_params_out st;

	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));	/* on the LRU */
	dereg_ok(f, reg_ok(f, 0x20000, PG, ACC_R));	/* on the LRU */
	reg_ok(f, 0x30000, PG, ACC_R);			/* user reference */
	s = reg_ok(f, 0x40000, PG, ACC_R);
	KUNIT_ASSERT_PTR_EQ(test, get_io(f, s), s);
	fake_invalidate(f, 0x40000, 0x41000);		/* stale, IO ref */
	KUNIT_EXPECT_TRUE(test, s->stale);
	check_cache(f);

	rv_mr_cache_deinit(&f->cache);
	st = stats(f);
	KUNIT_EXPECT_EQ(test, st.remove, 4ULL);
	KUNIT_EXPECT_EQ(test, st.count, 0U);
	KUNIT_EXPECT_EQ(test, st.inuse, 0U);
	KUNIT_EXPECT_EQ(test, f->nalloc, 4);
	KUNIT_EXPECT_EQ(test, f->nfree, 4);
	KUNIT_EXPECT_EQ(test, f->nreg, 4);
	KUNIT_EXPECT_EQ(test, f->ndereg, 4);
	/* The empty cache is usable again (and the exit deinits it again). */
	rv_mr_cache_init(&f->cache, &fake_ops, DEF_LIMIT);
	f->reg_calls = 0;
	dereg_ok(f, reg_ok(f, 0x10000, PG, ACC_R));
}

/*
 * The write path from a completion's strongest context: softirq (cq_poll
 * softirq). rv polls no CQ in hard interrupt context.
 */
struct irq_ctx {
	struct hrtimer timer;
	struct completion done;
	struct fake *f;
	struct rv_mr_entry *live, *stale;
	struct list_head dead;
	bool in_irq, got, put_live, put_stale;
};

static enum hrtimer_restart rv_mr_test_irq_fn(struct hrtimer *t)
{
	struct irq_ctx *x = container_of(t, struct irq_ctx, timer);
	struct rv_mr_entry *e = x->live;

	x->in_irq = in_softirq() && !in_hardirq();
	x->got = rv_mr_cache_get_io(&x->f->cache, e->handle, e->addr, e->len,
				    e->access) == e;
	if (x->got)
		x->put_live = rv_mr_cache_put_io(&x->f->cache, e, &x->dead);
	x->put_stale = rv_mr_cache_put_io(&x->f->cache, x->stale, &x->dead);
	complete(&x->done);
	return HRTIMER_NORESTART;
}

static void rv_mr_test_io_irq(struct kunit *test)
{
	struct fake *f = test->priv;
	struct irq_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, x);
	x->f = f;
	INIT_LIST_HEAD(&x->dead);
	init_completion(&x->done);
	x->live = reg_ok(f, 0x10000, PG, ACC_R);
	dereg_ok(f, x->live);
	x->stale = reg_ok(f, 0x20000, PG, ACC_R);
	KUNIT_ASSERT_PTR_EQ(test, get_io(f, x->stale), x->stale);
	dereg_ok(f, x->stale);
	fake_invalidate(f, 0x20000, 0x21000);
	KUNIT_EXPECT_TRUE(test, x->stale->stale);

	hrtimer_setup(&x->timer, rv_mr_test_irq_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&x->timer, ns_to_ktime(100 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&x->done, 10 * HZ),
			0UL);
	hrtimer_cancel(&x->timer);

	KUNIT_EXPECT_TRUE(test, x->in_irq);
	KUNIT_EXPECT_TRUE(test, x->got);
	KUNIT_EXPECT_FALSE(test, x->put_live);
	KUNIT_EXPECT_TRUE(test, x->put_stale);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry_or_null(&x->dead,
							   struct rv_mr_entry,
							   dead), x->stale);
	KUNIT_EXPECT_EQ(test, f->ndereg, 0);
	rv_mr_cache_destroy_list(&f->cache, &x->dead);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	KUNIT_EXPECT_PTR_EQ(test, lru_at(f, 0), x->live);
	check_cache(f);
}

/* xorshift64: a fixed sequence on every run. */
static u64 rnd_next(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static u32 rnd(u64 *s, u32 n)
{
	return (u32)(rnd_next(s) >> 32) % n;
}

struct held_ref {
	struct rv_mr_entry *e;
	u64 addr, len;		/* as the caller named it: a sub-range */
	bool io;
};

static int dereg_held(struct fake *f, struct held_ref *h)
{
	return rv_mr_cache_dereg(&f->cache, h->e->handle, h->addr, h->len,
				 h->e->access);
}

/*
 * A MAYBE invalidation of 0x10000, then a reg_ok() of [0x10000, 2 pages)
 * while same() answers @same (invalidating again if @inv_in_same).
 */
static struct rv_mr_entry *reg_after_maybe(struct fake *f, bool same,
					   bool inv_in_same)
{
	struct rv_mr_entry *e;

	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_MAYBE);
	f->same_ret = same;
	f->inv_in_same = inv_in_same;
	e = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	f->same_ret = true;
	f->inv_in_same = false;
	return e;
}

/*
 * An invalidation that may have changed nothing marks the entries for a
 * recheck: the next REG_MEM that finds one asks same(), and it is a hit
 * if the pages are unchanged, else it goes as if invalidated.
 */
static void rv_mr_test_recheck(struct kunit *test)
{
	struct fake *f = test->priv;
	struct rv_mr_entry *a, *b, *c, *d, *x, *y;
	struct rv_cache_stats_params_out s;

	/* Unreferenced, unchanged: stays cached, a hit after one same(). */
	a = reg_ok(f, 0x10000, 2 * PG, ACC_R);
	dereg_ok(f, a);
	fake_invalidate_how(f, 0x11000, 0x12000, RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_TRUE(test, a->recheck);
	KUNIT_EXPECT_FALSE(test, a->stale);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.count, 1U);
	KUNIT_EXPECT_EQ(test, s.remove, 0ULL);
	KUNIT_EXPECT_EQ(test, lru_len(f), 1U);
	check_cache(f);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x10000, PG, ACC_R), a);
	KUNIT_EXPECT_FALSE(test, a->recheck);
	KUNIT_EXPECT_EQ(test, f->nsame, 1);
	KUNIT_EXPECT_EQ(test, stats(f).hit, 1ULL);
	/* Checked once: the next hit asks nothing. */
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x10000, PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, f->nsame, 1);
	dereg_ok(f, a);
	dereg_ok(f, a);
	check_cache(f);

	/* Unreferenced, changed: removed, and the REG_MEM is a miss. */
	b = reg_after_maybe(f, false, false);
	KUNIT_EXPECT_PTR_NE(test, b, a);
	s = stats(f);
	KUNIT_EXPECT_EQ(test, f->nsame, 2);
	KUNIT_EXPECT_EQ(test, s.miss, 2ULL);
	KUNIT_EXPECT_EQ(test, s.remove, 1ULL);
	KUNIT_EXPECT_EQ(test, s.count, 1U);
	KUNIT_EXPECT_EQ(test, f->ndereg, 1);
	check_cache(f);

	/* Held, changed: stale but still serving its holder, then a miss. */
	c = reg_after_maybe(f, false, false);
	KUNIT_EXPECT_PTR_NE(test, c, b);
	KUNIT_EXPECT_TRUE(test, b->stale);
	KUNIT_EXPECT_FALSE(test, b->recheck);
	KUNIT_EXPECT_TRUE(test, cached(f, b->handle, b->addr, b->len, ACC_R));
	s = stats(f);
	KUNIT_EXPECT_EQ(test, s.count, 2U);
	KUNIT_EXPECT_EQ(test, s.inuse, 2U);
	dereg_ok(f, b);
	KUNIT_EXPECT_EQ(test, stats(f).remove, 2ULL);
	check_cache(f);

	/* Invalidated again while same() runs: its answer is not trusted. */
	d = reg_after_maybe(f, true, true);
	KUNIT_EXPECT_PTR_NE(test, d, c);
	KUNIT_EXPECT_TRUE(test, c->stale);
	dereg_ok(f, c);
	dereg_ok(f, d);
	check_cache(f);

	/* Changed after all: a CHANGED invalidation of a marked entry. */
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_TRUE(test, d->recheck);
	fake_invalidate(f, 0x10000, 0x10001);
	KUNIT_EXPECT_EQ(test, stats(f).count, 0U);
	check_cache(f);

	/*
	 * Two entries contain the range; the first found (the lower start)
	 * is changed, so the search goes on to the second.
	 */
	y = reg_ok(f, 0x20000, 2 * PG, ACC_R);
	dereg_ok(f, y);
	x = reg_ok(f, 0x1f000, 5 * PG, ACC_R);
	KUNIT_EXPECT_PTR_NE(test, x, y);
	dereg_ok(f, x);
	fake_invalidate_how(f, 0x20000, 0x21000, RV_MR_INVAL_MAYBE);
	f->same_bad_len = 5 * PG;
	a = reg_ok(f, 0x20000, PG, ACC_R);
	f->same_bad_len = 0;
	KUNIT_EXPECT_PTR_EQ(test, a, y);
	KUNIT_EXPECT_EQ(test, f->nsame, 6);
	KUNIT_EXPECT_EQ(test, stats(f).count, 1U);
	dereg_ok(f, a);
	check_cache(f);

	/* The strongest mark is what same() is asked about. */
	a = reg_ok(f, 0x10000, PG, ACC_R);
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_ACCESS);
	KUNIT_EXPECT_EQ(test, a->recheck, (u8)RV_MR_INVAL_ACCESS);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x10000, PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, f->same_how, RV_MR_INVAL_ACCESS);
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_MAYBE);
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_ACCESS);
	KUNIT_EXPECT_EQ(test, a->recheck, (u8)RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_PTR_EQ(test, reg_ok(f, 0x10000, PG, ACC_R), a);
	KUNIT_EXPECT_EQ(test, f->same_how, RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_EQ(test, a->recheck, (u8)RV_MR_INVAL_NONE);
	dereg_ok(f, a);
	dereg_ok(f, a);
	dereg_ok(f, a);
	check_cache(f);

	/* A backend without same(): ACCESS and MAYBE are CHANGED. */
	fake_reinit(f, &fake_ops_novalid, DEF_LIMIT);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_MAYBE);
	KUNIT_EXPECT_TRUE(test, a->stale);
	KUNIT_EXPECT_FALSE(test, a->recheck);
	dereg_ok(f, a);
	a = reg_ok(f, 0x10000, PG, ACC_R);
	fake_invalidate_how(f, 0x10000, 0x10001, RV_MR_INVAL_ACCESS);
	KUNIT_EXPECT_TRUE(test, a->stale);
	dereg_ok(f, a);

	/* NONE: nothing at all. */
	a = reg_ok(f, 0x10000, PG, ACC_R);
	fake_invalidate_how(f, 0, U64_MAX, RV_MR_INVAL_NONE);
	KUNIT_EXPECT_FALSE(test, a->stale);
	KUNIT_EXPECT_FALSE(test, a->recheck);
	dereg_ok(f, a);
	check_cache(f);
}

/* A long random mix of every operation; the invariants hold after each. */
static void rv_mr_test_random(struct kunit *test)
{
	struct fake *f = test->priv;
	const u32 max_held = 256, steps = 3000;
	struct held_ref *held;
	struct rv_mr_entry *e;
	u32 nheld = 0, i, k;
	u64 seed = 0x5eed0f0c0ffee123ULL, bytes, addr, len;
	u32 count, access;
	int ret;

	held = kunit_kcalloc(test, max_held, sizeof(*held), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, held);
	fake_reinit(f, &fake_ops, 48 * PG);

	for (i = 0; i < steps; i++) {
		u32 op = rnd(&seed, 100);

		addr = 0x100000 + (u64)rnd(&seed, 64) * PG;
		len = (u64)(1 + rnd(&seed, 8)) * PG - rnd(&seed, 2) * 17;
		access = rnd(&seed, 2) ? ACC_R : ACC_RW;
		k = nheld ? rnd(&seed, nheld) : 0;
		if (nheld && rnd(&seed, 3) == 0) {
			/* Within a held entry: a hit unless it went stale. */
			e = held[k].e;
			len = 1 + rnd(&seed, e->len);
			addr = e->addr + rnd(&seed, e->len - len + 1);
			access = e->access;
		}

		if (op < 35 && nheld < max_held) {
			u32 fail = rnd(&seed, 20);

			f->reg_err = fail == 0 ? -EFAULT : 0;
			f->valid_ret = fail != 1;
			e = reg(f, addr, len, access);
			f->reg_err = 0;
			f->valid_ret = true;
			if (IS_ERR(e)) {
				ret = PTR_ERR(e);
				KUNIT_EXPECT_TRUE(test, ret == -ENOMEM ||
						  ret == -EFAULT ||
						  ret == -EAGAIN);
			} else {
				KUNIT_EXPECT_LE(test, e->addr, addr);
				KUNIT_EXPECT_GE(test, e->addr + e->len,
						addr + len);
				KUNIT_EXPECT_EQ(test, e->access, access);
				held[nheld].addr = addr;
				held[nheld].len = len;
				held[nheld].e = e;
				held[nheld++].io = false;
			}
		} else if (op < 55 && nheld) {
			e = held[k].e;
			if (held[k].io)
				put_io(f, e);
			else
				KUNIT_EXPECT_EQ(test, dereg_held(f, &held[k]),
						0);
			held[k] = held[--nheld];
		} else if (op < 65 && nheld && nheld < max_held) {
			e = held[k].e;
			/* Refused only once stale and deregistered. */
			if (rv_mr_cache_get_io(&f->cache, e->handle,
					       held[k].addr, held[k].len,
					       e->access)) {
				KUNIT_EXPECT_TRUE(test, !e->stale ||
						  e->user_refs);
				held[nheld] = held[k];
				held[nheld++].io = true;
			} else {
				KUNIT_EXPECT_TRUE(test, e->stale &&
						  !e->user_refs);
			}
		} else if (op < 75) {
			f->same_ret = rnd(&seed, 2);
			fake_invalidate_how(f, addr,
					    addr + rnd(&seed, 4) * PG + 1,
					    (enum rv_mr_inval)(1 + rnd(&seed, 3)));
		} else if (op < 80) {
			ret = rv_mr_cache_evict_amount(&f->cache,
						       rnd(&seed, 4) * PG,
						       rnd(&seed, 3), &bytes,
						       &count);
			KUNIT_EXPECT_EQ(test, ret, count ? 0 : -ENOENT);
		} else if (op < 85) {
			ret = rv_mr_cache_evict_range(&f->cache, addr, len,
						      &bytes, &count);
			KUNIT_EXPECT_EQ(test, ret, count ? 0 : -ENOENT);
		} else if (op < 90 && nheld) {
			e = held[k].e;
			/* Held, so never evicted; a stale one may have a twin. */
			ret = evict_exact(f, e->addr, e->len, e->access, &bytes,
					  &count);
			KUNIT_EXPECT_EQ(test, ret, count ? 0 : -ENOENT);
			if (!e->stale)
				KUNIT_EXPECT_EQ(test, ret, -ENOENT);
		} else if (op < 95 && nheld) {
			e = held[k].e;
			KUNIT_EXPECT_EQ(test,
					rv_mr_cache_dereg(&f->cache, e->handle,
							  e->addr, e->len + 1,
							  e->access), -EINVAL);
		} else {
			ret = evict_exact(f, addr, len, access, &bytes, &count);
			KUNIT_EXPECT_EQ(test, ret, count ? 0 : -ENOENT);
		}
		if (i % 16 == 0)
			check_cache(f);
	}
	check_cache(f);
	kunit_info(test, "%llu hits, %llu misses, %llu full, %llu failed, %llu evicted, %llu removed, %d rechecks\n",
		   stats(f).hit, stats(f).miss, stats(f).full,
		   stats(f).failed, stats(f).evict, stats(f).remove, f->nsame);
	KUNIT_EXPECT_GT(test, f->nsame, 0);
	KUNIT_EXPECT_GT(test, stats(f).hit, 0ULL);
	KUNIT_EXPECT_GT(test, stats(f).full, 0ULL);
	KUNIT_EXPECT_GT(test, stats(f).evict, 0ULL);
	KUNIT_EXPECT_GT(test, stats(f).remove, 0ULL);

	while (nheld) {
		e = held[--nheld].e;
		if (held[nheld].io)
			put_io(f, e);
		else
			dereg_ok(f, e);
	}
	KUNIT_EXPECT_EQ(test, stats(f).inuse, 0U);
	KUNIT_EXPECT_EQ(test, lru_len(f), stats(f).count);
	check_cache(f);
}

static struct kunit_case rv_mr_cache_test_cases[] = {
	KUNIT_CASE(rv_mr_test_containment),
	KUNIT_CASE(rv_mr_test_hit_locked),
	KUNIT_CASE(rv_mr_test_access),
	KUNIT_CASE(rv_mr_test_lru),
	KUNIT_CASE(rv_mr_test_full),
	KUNIT_CASE(rv_mr_test_referenced),
	KUNIT_CASE(rv_mr_test_stale),
	KUNIT_CASE(rv_mr_test_evict),
	KUNIT_CASE(rv_mr_test_dereg_errors),
	KUNIT_CASE(rv_mr_test_reg_failures),
	KUNIT_CASE(rv_mr_test_invalidate_during_reg),
	KUNIT_CASE(rv_mr_test_handles),
	KUNIT_CASE(rv_mr_test_stats),
	KUNIT_CASE(rv_mr_test_deinit),
	KUNIT_CASE(rv_mr_test_io_irq),
	KUNIT_CASE(rv_mr_test_recheck),
	KUNIT_CASE(rv_mr_test_random),
	{}
};

static struct kunit_suite rv_mr_cache_test_suite = {
	.name = "rv_mr_cache",
	.init = rv_mr_cache_test_init,
	.exit = rv_mr_cache_test_exit,
	.test_cases = rv_mr_cache_test_cases,
};

kunit_test_suite(rv_mr_cache_test_suite);

/* The module rv_kunit: this file's suite and those of the other *_test.c. */
MODULE_DESCRIPTION("KUnit tests for rv");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
