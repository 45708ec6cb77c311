// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel MRs over the attached process's own memory: the verbs and MMU
 * notifier backend of the MR cache (rv_mr_cache.c), and the REG_MEM,
 * DEREG_MEM, EVICT and GET_CACHE_STATS ioctls.
 *
 * Each cached MR is pinned and fast-registered in the job's PD
 * (rv_reg.c) and watched by its own mmu_interval_notifier. The MR pins its pages, so it
 * keeps describing them whatever the process does with its memory: the
 * notifier only decides whether a later REG_MEM may find it again
 * (rv_mr_invalidate() sorts the events). When one is taken out of the
 * cache, the MR itself is deregistered later, at its last reference, by a
 * work item on rv_wq, where sleeping is allowed and the notifier can be
 * removed (it cannot be removed from its own callback).
 *
 * To tell whether an event that may change nothing did change the pages,
 * each MR keeps a hash of the page frames its range was backed by when it
 * was pinned, taken from the pinned pages themselves (rv_mr_umem_hash());
 * the next REG_MEM that finds it looks the range's pages up again
 * (rv_mr_pages_hash()) and compares.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xxhash.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "rv.h"

#define RV_MR_ACCESS_OK (RV_ACCESS_KERNEL | IB_ACCESS_LOCAL_WRITE | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ)

/* Registrations of a range that is invalidated while it is pinned. */
#define RV_MR_REG_TRIES 3

/* Pages looked up at a time by rv_mr_pages_hash(). */
#define RV_MR_HASH_BATCH 64

struct rv_mr {
	struct rv_mr_entry entry;
	struct rv_user *user;
	struct rv_reg_mr reg;		/* its pinned pages and MR */
	struct mmu_interval_notifier mni;
	unsigned long seq;		/* notifier sequence at registration */
	u64 pages_hash;			/* of the pinned pages */
};

static struct rv_mr *to_rv_mr(struct rv_mr_entry *e)
{
	return container_of(e, struct rv_mr, entry);
}

/*
 * What an MMU notifier event can do to a range whose pages are pinned, as
 * the cache must take it (rv_mr_cache.h):
 *
 * - UNMAP (munmap, mremap, MAP_FIXED over it) and RELEASE (exit): the
 *   range no longer maps these pages. The entries go now, so that their
 *   pages are unpinned as soon as no MR holder is left.
 * - PROTECTION_PAGE (fork write-protecting the parent's copy-on-write
 *   pages, writeback cleaning shared file pages) and SOFT_DIRTY
 *   (clear_refs): the PTEs lose write access for a while, the mapping and
 *   the VMA's permissions stay. Fork copies pinned anonymous pages for the
 *   child at once, so the parent keeps its own. Ignored.
 * - PROTECTION_VMA (mprotect, NUMA hinting scans): the pages stay, the
 *   VMA's permissions may change. The next REG_MEM that finds the entries
 *   checks them against the access the MR was made with.
 * - CLEAR (khugepaged's collapse attempts, THP splits, migration and
 *   compaction attempts, KSM, MADV_DONTNEED and MADV_FREE, truncation,
 *   copy-on-write), MIGRATE and EXCLUSIVE (device memory), and any event
 *   a later kernel adds: they may replace the pages or change nothing at
 *   all (collapse, split, migration and KSM leave pinned pages where they
 *   are). The next REG_MEM that finds the entries compares their pages.
 */
static enum rv_mr_inval rv_mr_event_effect(enum mmu_notifier_event event)
{
	switch (event) {
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		return RV_MR_INVAL_NONE;
	case MMU_NOTIFY_PROTECTION_VMA:
		return RV_MR_INVAL_ACCESS;
	case MMU_NOTIFY_UNMAP:
	case MMU_NOTIFY_RELEASE:
		return RV_MR_INVAL_CHANGED;
	default:
		return RV_MR_INVAL_MAYBE;
	}
}

static bool rv_mr_invalidate(struct mmu_interval_notifier *mni,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct rv_user *user = container_of(mni, struct rv_mr, mni)->user;
	enum rv_mr_inval how = rv_mr_event_effect(range->event);
	unsigned long flags;
	bool dead;

	/* Not even the sequence: a registration under way is not disturbed. */
	if (how == RV_MR_INVAL_NONE)
		return true;

	/* Completions drop IO references from any context: irqsave. */
	spin_lock_irqsave(&user->cache.lock, flags);
	mmu_interval_set_seq(mni, cur_seq);
	dead = rv_mr_cache_invalidate_locked(&user->cache, range->start,
					     range->end, how, &user->zombies);
	spin_unlock_irqrestore(&user->cache.lock, flags);
	if (dead)
		queue_work(rv_wq, &user->zombie_work);
	return true;
}

static const struct mmu_interval_notifier_ops rv_mr_mni_ops = {
	.invalidate = rv_mr_invalidate,
};

static struct rv_mr_entry *rv_mr_alloc(struct rv_mr_cache *cache)
{
	struct rv_mr *mr = kzalloc_obj(*mr, GFP_KERNEL_ACCOUNT);

	return mr ? &mr->entry : NULL;
}

static void rv_mr_free(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	kfree(to_rv_mr(e));
}

/*
 * The frames backing a range, as runs of consecutive page frame numbers
 * (a huge page is one run), hashed: the same hash for the same frames in
 * the same order, whatever their batches.
 */
struct rv_mr_pfn_runs {
	struct xxh64_state state;
	u64 start;			/* the current run */
	u64 len;
};

static void rv_mr_runs_flush(struct rv_mr_pfn_runs *r)
{
	u64 run[2] = { r->start, r->len };

	if (r->len)
		xxh64_update(&r->state, run, sizeof(run));
}

/* Frames @pfn to @pfn + @n - 1 come next. */
static void rv_mr_runs_add(struct rv_mr_pfn_runs *r, u64 pfn, u64 n)
{
	if (r->len && pfn == r->start + r->len) {
		r->len += n;
		return;
	}
	rv_mr_runs_flush(r);
	r->start = pfn;
	r->len = n;
}

/* The hash of the frames of the pages ib_umem_get() pinned. */
static u64 rv_mr_umem_hash(struct rv_user *user, struct ib_umem *umem)
{
	struct rv_mr_pfn_runs runs = {};
	struct scatterlist *sg;
	unsigned int i;

	xxh64_reset(&runs.state, user->pages_hash_seed);
	for_each_sgtable_sg(&umem->sgt_append.sgt, sg, i)
		rv_mr_runs_add(&runs,
			       page_to_pfn(sg_page(sg)) +
			       (sg->offset >> PAGE_SHIFT),
			       DIV_ROUND_UP(sg->offset % PAGE_SIZE + sg->length,
					    PAGE_SIZE));
	rv_mr_runs_flush(&runs);
	return xxh64_digest(&runs.state);
}

/*
 * A hash of the frames of the pages that back @e's range in the current
 * process now, the same as rv_mr_umem_hash() of them, looked up as
 * ib_umem_get() pins them (for write if the MR
 * allows writes, faulting pages in): 0 or -errno. The pins taken here are
 * dropped at once, a folio at a time. Called from REG_MEM, whose process
 * is the attached one (current->mm is user->mm).
 */
static int rv_mr_pages_hash(struct rv_user *user, struct rv_mr_entry *e,
			    u64 *hash)
{
	unsigned int gup_flags = ib_access_writable(e->access) ? FOLL_WRITE : 0;
	unsigned long start = e->addr & PAGE_MASK;
	unsigned long npages = (PAGE_ALIGN(e->addr + e->len) - start) >>
			       PAGE_SHIFT;
	struct page *pages[RV_MR_HASH_BATCH];
	struct rv_mr_pfn_runs runs = {};
	int i, n;

	xxh64_reset(&runs.state, user->pages_hash_seed);
	while (npages) {
		n = pin_user_pages_fast(start, min_t(unsigned long, npages,
						     RV_MR_HASH_BATCH),
					gup_flags, pages);
		if (n <= 0)
			return n ? n : -EFAULT;
		for (i = 0; i < n; i++)
			rv_mr_runs_add(&runs, page_to_pfn(pages[i]), 1);
		unpin_user_pages(pages, n);
		start += (unsigned long)n << PAGE_SHIFT;
		npages -= n;
		cond_resched();
	}
	rv_mr_runs_flush(&runs);
	*hash = xxh64_digest(&runs.state);
	return 0;
}

/* Runs in the attached process (REG_MEM checks): current->mm is user->mm. */
static int rv_mr_reg(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct rv_user *user = container_of(cache, struct rv_user, cache);
	struct rv_mr *mr = to_rv_mr(e);
	struct rv_reg_mr prev = {};
	unsigned int tries;
	int ret;

	mr->user = user;
	ret = mmu_interval_notifier_insert(&mr->mni, user->mm, e->addr, e->len,
					   &rv_mr_mni_ops);
	if (ret)
		return ret;
	for (tries = 1;; tries++) {
		mr->seq = mmu_interval_read_begin(&mr->mni);
		ret = rv_reg_user(user->jdev, e->addr, e->len,
				  e->access & ~RV_ACCESS_KERNEL, &mr->reg);
		if (prev.mr) {
			rv_reg_user_put(&prev);
			/* Both may not fit RLIMIT_MEMLOCK: again, alone. */
			if (ret && tries < RV_MR_REG_TRIES)
				continue;
		}
		if (ret) {
			mmu_interval_notifier_remove(&mr->mni);
			return ret;
		}
		/*
		 * The pages the process maps now are the ones just pinned
		 * unless the sequence moved since before the pinning (then
		 * the MR is registered again, or valid() refuses it).
		 */
		mr->pages_hash = rv_mr_umem_hash(user, mr->reg.umem);
		/*
		 * Pinning for write breaks copy-on-write sharing (pages
		 * shared with a parent or child since fork, the zero page
		 * of memory only read so far), and each break invalidates
		 * the range: the MR holds the new pages, but the sequence
		 * moved. So do khugepaged's collapses of the range that
		 * began before the pinning. Once every page is the
		 * process's own and pinned, another pass sees no
		 * invalidation unless something else (munmap by another
		 * thread) really changed the range. The cache checks the
		 * sequence again under its lock.
		 */
		if (!mmu_interval_read_retry(&mr->mni, mr->seq) ||
		    tries == RV_MR_REG_TRIES)
			return 0;
		/*
		 * Unpinned until the next pass pins them, the pages would
		 * be fair game for khugepaged again: keep them pinned.
		 */
		prev = mr->reg;
	}
}

static void rv_mr_dereg(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct rv_mr *mr = to_rv_mr(e);

	rv_reg_user_put(&mr->reg);
	mmu_interval_notifier_remove(&mr->mni);
}

/* Under cache->lock, where rv_mr_invalidate() updates the sequence. */
static bool rv_mr_valid(struct rv_mr_cache *cache, struct rv_mr_entry *e)
{
	struct rv_mr *mr = to_rv_mr(e);

	return !mmu_interval_read_retry(&mr->mni, mr->seq);
}

/*
 * Do the VMAs over @e's range still allow the access the MR was made with,
 * as a registration checks it (get_user_pages(): readable, and writable
 * for a writable MR)?
 */
static bool rv_mr_vmas_allow(struct rv_user *user, struct rv_mr_entry *e)
{
	vm_flags_t need = VM_READ |
			  (ib_access_writable(e->access) ? VM_WRITE : 0);
	unsigned long addr = e->addr, end = e->addr + e->len;
	struct vm_area_struct *vma;
	bool ok = true;

	mmap_read_lock(user->mm);
	while (ok && addr < end) {
		vma = vma_lookup(user->mm, addr);
		ok = vma && (vma->vm_flags & need) == need;
		if (ok)
			addr = vma->vm_end;
	}
	mmap_read_unlock(user->mm);
	return ok;
}

/*
 * Are @e's pages still the ones the process maps there (unless only the
 * access may have changed), with the access the MR was made with? Waits
 * for invalidations in progress to end first; one that starts later makes
 * the cache discard this answer.
 */
static bool rv_mr_same(struct rv_mr_cache *cache, struct rv_mr_entry *e,
		       enum rv_mr_inval how)
{
	struct rv_user *user = container_of(cache, struct rv_user, cache);
	struct rv_mr *mr = to_rv_mr(e);
	u64 hash;

	if (how == RV_MR_INVAL_ACCESS)
		return rv_mr_vmas_allow(user, e);
	mmu_interval_read_begin(&mr->mni);
	return !rv_mr_pages_hash(user, e, &hash) && hash == mr->pages_hash;
}

static const struct rv_mr_cache_ops rv_mr_ops = {
	.alloc = rv_mr_alloc,
	.free = rv_mr_free,
	.reg = rv_mr_reg,
	.dereg = rv_mr_dereg,
	.valid = rv_mr_valid,
	.same = rv_mr_same,
};

static void rv_mr_destroy_zombies(struct rv_user *user)
{
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&user->cache.lock, flags);
	list_splice_init(&user->zombies, &dead);
	spin_unlock_irqrestore(&user->cache.lock, flags);
	rv_mr_cache_destroy_list(&user->cache, &dead);
}

static void rv_mr_zombie_work(struct work_struct *work)
{
	rv_mr_destroy_zombies(container_of(work, struct rv_user, zombie_work));
}

/* The lkey of a cached MR, for the write path (which holds an IO ref). */
u32 rv_mr_lkey(struct rv_mr_entry *e)
{
	return to_rv_mr(e)->reg.mr->lkey;
}

/*
 * Drop the IO reference of a completed write, from the completion's
 * context (softirq or a workqueue). An MR that became stale meanwhile is
 * destroyed by the zombie work.
 */
void rv_mr_put_io(struct rv_user *user, struct rv_mr_entry *e)
{
	if (rv_mr_cache_put_io(&user->cache, e, &user->zombies))
		queue_work(rv_wq, &user->zombie_work);
}

int rv_mr_user_init(struct rv_user *user)
{
	mutex_init(&user->reg_mutex);
	INIT_LIST_HEAD(&user->zombies);
	INIT_WORK(&user->zombie_work, rv_mr_zombie_work);
	user->pages_hash_seed = get_random_u64();
	rv_mr_cache_init(&user->cache, &rv_mr_ops,
			 (u64)user->mr_cache_mb << 20);
	user->cache.owner = user->tgid;
	return 0;
}

/*
 * Release every MR (on close, or when the device goes: the cache stays
 * usable, empty). Invalidations may still run until each MR's notifier
 * is removed, and may queue zombies and the work; once every notifier is
 * gone nothing can, so the second pass leaves nothing behind.
 */
void rv_mr_user_flush(struct rv_user *user)
{
	rv_mr_cache_deinit(&user->cache);
	cancel_work_sync(&user->zombie_work);
	rv_mr_destroy_zombies(user);
	cancel_work_sync(&user->zombie_work);
	rv_mr_destroy_zombies(user);
}

void rv_mr_user_exit(struct rv_user *user)
{
	rv_mr_user_flush(user);
	mutex_destroy(&user->reg_mutex);
}

static int rv_mr_check_range(struct rv_user *user, u64 addr, u64 len,
			     u32 access)
{
	if (!(access & RV_ACCESS_KERNEL))
		return -EOPNOTSUPP;
	if (access & ~RV_MR_ACCESS_OK)
		return -EINVAL;
	if ((access & IB_ACCESS_REMOTE_WRITE) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!len || addr + len < addr)
		return -EINVAL;
	if (len > user->max_fmr_size)
		return -E2BIG;
	return 0;
}

/* REG_MEM's answer for @e, which the caller keeps from a DEREG meanwhile. */
static void rv_mr_reg_out(struct rv_mr_entry *e, u64 addr,
			  struct rv_mem_params_out *out)
{
	struct ib_mr *mr = to_rv_mr(e)->reg.mr;

	out->mr_handle = e->handle;
	/* The MR maps virtual addresses 1:1, so a sub-range starts here. */
	out->iova = addr;
	out->lkey = mr->lkey;
	out->rkey = mr->rkey;
}

long rv_ioctl_reg_mem(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_mem_params_out out = {};
	struct rv_mem_params p = {};
	struct rv_mr_entry *e;
	unsigned long flags;
	int ret;

	if (rv_job_dead(user->jdev))
		return -ENODEV;

	if (copy_from_user(&p, ctx->uarg, _IOC_SIZE(ctx->cmd)))
		return -EFAULT;
	if (p.in.resv1 || p.in.resv2[0] || p.in.resv2[1])
		return -EINVAL;
	ret = rv_mr_check_range(user, p.in.addr, p.in.length, p.in.access);
	if (ret)
		return ret;

	/*
	 * A hit takes no mutex: the answer is read under the cache's lock,
	 * before a DEREG of the handle (from another thread) can drop the
	 * reference. A miss registers under reg_mutex and is read before a
	 * DEREG, which takes it too, can run.
	 */
	spin_lock_irqsave(&user->cache.lock, flags);
	e = rv_mr_cache_hit_locked(&user->cache, p.in.addr, p.in.length,
				   p.in.access);
	if (e)
		rv_mr_reg_out(e, p.in.addr, &out);
	spin_unlock_irqrestore(&user->cache.lock, flags);
	if (!e) {
		mutex_lock(&user->reg_mutex);
		e = rv_mr_cache_reg(&user->cache, p.in.addr, p.in.length,
				    p.in.access);
		if (!IS_ERR(e))
			rv_mr_reg_out(e, p.in.addr, &out);
		mutex_unlock(&user->reg_mutex);
		if (IS_ERR(e))
			return PTR_ERR(e);
	}
	if (copy_to_user(ctx->uarg, &out, sizeof(out))) {
		mutex_lock(&user->reg_mutex);
		rv_mr_cache_dereg(&user->cache, out.mr_handle, p.in.addr,
				  p.in.length, p.in.access);
		mutex_unlock(&user->reg_mutex);
		return -EFAULT;
	}
	return 0;
}

long rv_ioctl_dereg_mem(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_dereg_params_in p;
	int ret;

	if (rv_job_dead(user->jdev))
		return -ENODEV;
	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
#ifdef RV_UPSTREAM
	if (p.resv1)
		return -EINVAL;
#else
	/* p.resv1 is not checked: deployed clients leave it uninitialised. */
#endif
	if (p.mr_handle > U32_MAX)
		return -EINVAL;

	mutex_lock(&user->reg_mutex);
	ret = rv_mr_cache_dereg(&user->cache, p.mr_handle, p.addr, p.length,
				p.access);
	mutex_unlock(&user->reg_mutex);
	return ret;
}

/* EVICT's input, before anything is done: 0 or -EINVAL. */
static int rv_evict_check(const struct rv_evict_params_in *in)
{
	if (memchr_inv(in->pad, 0, sizeof(in->pad)))
		return -EINVAL;
	switch (in->type) {
	case RV_EVICT_TYPE_SEARCH_EXACT:
	case RV_EVICT_TYPE_SEARCH_RANGE:
		if (in->search.resv1 ||
		    rv_mr_bad_range(in->search.addr, in->search.length))
			return -EINVAL;
		return 0;
	case RV_EVICT_TYPE_AMOUNT:
		return in->amount.resv1 ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

long rv_ioctl_evict(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_evict_params p;
	u64 bytes = 0;
	u32 count = 0;
	int ret;

	if (rv_job_dead(user->jdev))
		return -ENODEV;
	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
	ret = rv_evict_check(&p.in);
	if (ret)
		return ret;
	/* Evicted MRs are gone: refuse an unwritable output before. */
	if (copy_to_user(ctx->uarg, &p, sizeof(p)))
		return -EFAULT;

	mutex_lock(&user->reg_mutex);
	switch (p.in.type) {
	case RV_EVICT_TYPE_SEARCH_EXACT:
		ret = rv_mr_cache_evict_exact(&user->cache, p.in.search.addr,
					      p.in.search.length,
					      p.in.search.access, &bytes,
					      &count);
		break;
	case RV_EVICT_TYPE_SEARCH_RANGE:
		ret = rv_mr_cache_evict_range(&user->cache, p.in.search.addr,
					      p.in.search.length, &bytes,
					      &count);
		break;
	default:
		ret = rv_mr_cache_evict_amount(&user->cache, p.in.amount.bytes,
					       p.in.amount.count, &bytes,
					       &count);
		break;
	}
	mutex_unlock(&user->reg_mutex);
	if (ret)
		return ret;

	memset(&p.out, 0, sizeof(p.out));
	p.out.bytes = bytes;
	p.out.count = count;
	if (copy_to_user(ctx->uarg, &p.out, sizeof(p.out)))
		return -EFAULT;
	return 0;
}

long rv_ioctl_get_cache_stats(const struct rv_ioctl_ctx *ctx)
{
	struct rv_cache_stats_params_out out;

	rv_mr_cache_get_stats(&ctx->user->cache, &out);
	if (copy_to_user(ctx->uarg, &out, sizeof(out)))
		return -EFAULT;
	return 0;
}
