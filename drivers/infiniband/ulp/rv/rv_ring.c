// SPDX-License-Identifier: GPL-2.0
/*
 * The event ring: a header and cq_entries entries in vmalloc memory
 * that the attached process maps once with mmap at offset 0.
 *
 * The kernel is the only producer. It keeps its own tail and never trusts
 * the header: it reads head only to tell full from not full, bounded to
 * the ring, so a process that scribbles over the header can lose its own
 * events but never make the kernel write outside the ring. Entries are
 * written completely before the new tail is published with release
 * ordering; the consumer reads tail with acquire ordering.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>

#include "rv.h"

#ifndef RV_UPSTREAM
/* The entry layout of ABI 1.6 and older: packed, 65 bytes. */
struct rv_event_legacy {
	u8 event_type;
	u8 status;
	u16 resv1;
	u32 imm_data;
	u8 pad;
	u64 wr_id;
	u64 conn_handle;
	u32 byte_len;
	u32 resv2;
	u8 resv3[32];
} __packed;

static_assert(sizeof(struct rv_event_legacy) == RV_EVENT_LEGACY_SIZE);
static_assert(offsetof(struct rv_event_legacy, wr_id) == 9);
static_assert(offsetof(struct rv_event_legacy, byte_len) == 25);
#endif
static_assert(sizeof(struct rv_event) == 64);

#ifdef RV_UPSTREAM
/* Every client has declared 1.7 or newer (RV_IOCTL_CAPABILITY). */
static unsigned int rv_event_stride(u32 abi_version)
{
	return sizeof(struct rv_event);
}
#else
/**
 * rv_event_stride - bytes per event ring entry for a client ABI
 * @abi_version: RV_ABI_VERSION() the client declared
 *
 * Return: sizeof(struct rv_event) for ABI 1.7 and newer, else the 65-byte
 * packed layout of the older headers.
 */
unsigned int rv_event_stride(u32 abi_version)
{
	if (abi_version >= RV_ABI_VERSION(1, 7))
		return sizeof(struct rv_event);
	return RV_EVENT_LEGACY_SIZE;
}
EXPORT_SYMBOL_IF_KUNIT(rv_event_stride);
#endif

int rv_ring_init(struct rv_ring *ring, u32 num, u32 abi_version)
{
	spin_lock_init(&ring->lock);
	ring->num = num;
	if (!num)
		return 0;
	ring->stride = rv_event_stride(abi_version);
	ring->len = sizeof(struct rv_ring_header) + (size_t)num * ring->stride;
	/* Zeroed whole pages, all of which the process maps: charged to it. */
	ring->buf = __vmalloc(PAGE_ALIGN(ring->len),
			      GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!ring->buf)
		return -ENOMEM;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rv_ring_init);

void rv_ring_free(struct rv_ring *ring)
{
	vfree(ring->buf);
	ring->buf = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rv_ring_free);

/*
 * The one mapping of the ring: shared, offset 0, exactly the pages of the
 * client's RV_RING_ALLOC_LEN() for the layout its ABI gets. It is not
 * inherited across fork and cannot grow.
 */
int rv_ring_mmap(struct rv_ring *ring, struct vm_area_struct *vma)
{
	unsigned long off;
	int ret = 0;

	if (!ring->num || vma->vm_pgoff ||
	    vma_pages(vma) != PAGE_ALIGN(ring->len) >> PAGE_SHIFT ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (test_and_set_bit(0, &ring->mapped))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	/* What remap_vmalloc_range() does, which wants VM_USERMAP memory. */
	for (off = 0; off < PAGE_ALIGN(ring->len) && !ret; off += PAGE_SIZE)
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(ring->buf + off));
	if (ret)	/* e.g. no memory for page tables: may be tried again */
		clear_bit(0, &ring->mapped);
	return ret;
}

static void rv_ring_fill(struct rv_ring *ring, void *slot, u8 event_type,
			 const struct rv_event_wc *wc)
{
	struct rv_event *ev = slot;
#ifndef RV_UPSTREAM
	struct rv_event_legacy *old = slot;

	if (ring->stride == RV_EVENT_LEGACY_SIZE) {
		memset(old, 0, sizeof(*old));
		old->event_type = event_type;
		old->status = wc->status;
		old->imm_data = wc->imm_data;
		old->wr_id = wc->wr_id;
		old->conn_handle = wc->conn_handle;
		old->byte_len = wc->byte_len;
		return;
	}
#endif

	ev->wc = *wc;
	ev->wc.resv0 = 0;
	ev->event_type = event_type;
}

static void rv_ring_count(struct rv_event_stats_params_out *st,
			  u8 event_type, const struct rv_event_wc *wc)
{
	bool ok = wc->status == IB_WC_SUCCESS;

	if (event_type == RV_WC_RDMA_WRITE) {
		st->send_write_cqe += ok;
		st->send_write_cqe_fail += !ok;
		st->send_write_bytes += ok ? wc->byte_len : 0;
	} else {
		st->recv_write_cqe += ok;
		st->recv_write_cqe_fail += !ok;
		st->recv_write_bytes += ok ? wc->byte_len : 0;
	}
}

/**
 * rv_ring_post - add one event to a process's ring
 * @ring: the ring
 * @event_type: RV_WC_*
 * @wc: the completion; wc->resv0 is ignored
 *
 * Does not sleep. The event is counted in the process's event statistics
 * whether or not it fits. When the ring is full the event is dropped and
 * counted in the header's overflow_cnt, which the kernel rewrites from
 * its own count.
 *
 * Return: true if the event was added.
 */
bool rv_ring_post(struct rv_ring *ring, u8 event_type,
		  const struct rv_event_wc *wc)
{
	struct rv_ring_header *hdr = ring->buf;
	unsigned long flags;
	u32 head, next;
	bool added;

	spin_lock_irqsave(&ring->lock, flags);
	rv_ring_count(&ring->stats, event_type, wc);
	if (!ring->num) {
		spin_unlock_irqrestore(&ring->lock, flags);
		return false;
	}
	next = ring->tail + 1 == ring->num ? 0 : ring->tail + 1;
	/* The user owns head: read it once and bound it to the ring. */
	head = READ_ONCE(hdr->head);
	added = head >= ring->num || next != head;
	if (added) {
		rv_ring_fill(ring, (u8 *)(hdr + 1) +
			     (size_t)ring->tail * ring->stride,
			     event_type, wc);
		ring->tail = next;
		/* Pairs with the consumer's acquire read of tail. */
		smp_store_release(&hdr->tail, next);
	} else {
		WRITE_ONCE(hdr->overflow_cnt, ++ring->overflow);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	return added;
}
EXPORT_SYMBOL_IF_KUNIT(rv_ring_post);

long rv_ioctl_get_event_stats(const struct rv_ioctl_ctx *ctx)
{
	struct rv_ring *ring = &ctx->user->ring;
	struct rv_event_stats_params_out st;
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	st = ring->stats;
	spin_unlock_irqrestore(&ring->lock, flags);
	if (copy_to_user(ctx->uarg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}
