// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/event_ring.hpp>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include <rv/error.hpp>

namespace rv {

namespace {

// Field offsets within an entry: {event_type, status, imm_data, wr_id,
// conn_handle, byte_len}.
struct Offsets {
	std::size_t type, status, imm, wr_id, conn, byte_len;
};

constexpr Offsets offsets_1_7{
	offsetof(rv_event, event_type),
	offsetof(rv_event, wc.status),
	offsetof(rv_event, wc.imm_data),
	offsetof(rv_event, wc.wr_id),
	offsetof(rv_event, wc.conn_handle),
	offsetof(rv_event, wc.byte_len),
};

// ABI 1.6 packed the entry but kept the 8-byte alignment of the u64
// members inside struct rv_event_wc, which moved them by one byte.
constexpr Offsets offsets_legacy{0, 1, 4, 9, 17, 25};

static_assert(offsets_1_7.type == 0 && offsets_1_7.status == 1 &&
	      offsets_1_7.imm == 4 && offsets_1_7.wr_id == 8 &&
	      offsets_1_7.conn == 16 && offsets_1_7.byte_len == 24);
static_assert(sizeof(rv_event) == 64);

// The header's length macros cast C-style.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
static_assert(ring_alloc_len(EventLayout::abi_1_7, RV_MAX_CQ_ENTRIES) ==
	      RV_RING_ALLOC_LEN(RV_MAX_CQ_ENTRIES));
static_assert(ring_alloc_len(EventLayout::legacy, RV_MAX_CQ_ENTRIES) ==
	      RV_RING_LEGACY_ALLOC_LEN(RV_MAX_CQ_ENTRIES));
#pragma GCC diagnostic pop
static_assert(offsets_legacy.byte_len + 4 <= RV_EVENT_LEGACY_SIZE);

constexpr const Offsets &offsets(EventLayout l) noexcept
{
	return l == EventLayout::abi_1_7 ? offsets_1_7 : offsets_legacy;
}

template <typename T>
T load(const std::byte *p) noexcept
{
	T v;
	std::memcpy(&v, p, sizeof(v));
	return v;
}

template <typename T>
void store(std::byte *p, T v) noexcept
{
	std::memcpy(p, &v, sizeof(v));
}

std::uint32_t &head_field(std::byte *base) noexcept
{
	return *reinterpret_cast<std::uint32_t *>(
		base + offsetof(rv_ring_header, head));
}

std::uint32_t &tail_field(std::byte *base) noexcept
{
	return *reinterpret_cast<std::uint32_t *>(
		base + offsetof(rv_ring_header, tail));
}

std::uint64_t &overflow_field(std::byte *base) noexcept
{
	return *reinterpret_cast<std::uint64_t *>(
		base + offsetof(rv_ring_header, overflow_cnt));
}

} // namespace

Event decode_event(const std::byte *entry, EventLayout l) noexcept
{
	const Offsets &o = offsets(l);
	Event ev;

	ev.event_type = load<std::uint8_t>(entry + o.type);
	ev.status = load<std::uint8_t>(entry + o.status);
	ev.imm_data = load<std::uint32_t>(entry + o.imm);
	ev.wr_id = load<std::uint64_t>(entry + o.wr_id);
	ev.conn_handle = load<std::uint64_t>(entry + o.conn);
	ev.byte_len = load<std::uint32_t>(entry + o.byte_len);
	return ev;
}

void encode_event(std::byte *entry, const Event &ev, EventLayout l) noexcept
{
	const Offsets &o = offsets(l);

	std::memset(entry, 0, event_stride(l));
	store(entry + o.type, ev.event_type);
	store(entry + o.status, ev.status);
	store(entry + o.imm, ev.imm_data);
	store(entry + o.wr_id, ev.wr_id);
	store(entry + o.conn, ev.conn_handle);
	store(entry + o.byte_len, ev.byte_len);
}

RingView::RingView(std::span<std::byte> memory, std::uint32_t cq_entries,
		   EventLayout layout)
	: n_(cq_entries), layout_(layout)
{
	if (cq_entries < 2)
		throw_errno(EINVAL, "rv::RingView: " +
					    std::to_string(cq_entries) +
					    " entries");
	if (memory.size() < ring_alloc_len(layout, cq_entries))
		throw_errno(EINVAL, "rv::RingView: " +
					    std::to_string(memory.size()) +
					    " bytes for " +
					    std::to_string(cq_entries) +
					    " entries");
	if (reinterpret_cast<std::uintptr_t>(memory.data()) %
	    alignof(rv_ring_header))
		throw_errno(EINVAL, "rv::RingView: misaligned memory");
	base_ = memory.data();
}

RingView &RingView::operator=(RingView &&other) noexcept
{
	base_ = std::exchange(other.base_, nullptr);
	n_ = std::exchange(other.n_, 0);
	layout_ = other.layout_;
	return *this;
}

std::uint32_t RingView::head() const noexcept
{
	if (!base_)
		return 0;
	// Only the consumer (this object) writes head.
	return std::atomic_ref<std::uint32_t>(head_field(base_))
		.load(std::memory_order_relaxed);
}

std::uint32_t RingView::tail() const noexcept
{
	if (!base_)
		return 0;
	// Pairs with the producer's release store: the entries before tail
	// are complete once this load sees it.
	return std::atomic_ref<std::uint32_t>(tail_field(base_))
		.load(std::memory_order_acquire);
}

std::uint64_t RingView::overflow_count() const noexcept
{
	if (!base_)
		return 0;
	return std::atomic_ref<std::uint64_t>(overflow_field(base_))
		.load(std::memory_order_relaxed);
}

void RingView::check(std::uint32_t h, std::uint32_t t) const
{
	if (!base_)
		throw_errno(EINVAL, "rv::RingView: no ring");
	if (h >= n_ || t >= n_)
		throw_errno(EBADMSG, "rv event ring: head " + std::to_string(h) +
					     ", tail " + std::to_string(t) +
					     " with " + std::to_string(n_) +
					     " entries");
}

std::uint32_t RingView::pending() const
{
	std::uint32_t h = head();
	std::uint32_t t = tail();

	check(h, t);
	return t >= h ? t - h : n_ - h + t;
}

std::optional<Event> RingView::poll()
{
	std::uint32_t h = head();
	std::uint32_t t = tail();	// acquire

	check(h, t);
	if (h == t)
		return std::nullopt;

	Event ev = decode_event(entry(h), layout_);
	// Release: the copy above is complete before the producer may see
	// the slot as free and overwrite it.
	std::atomic_ref<std::uint32_t>(head_field(base_))
		.store(h + 1 == n_ ? 0 : h + 1, std::memory_order_release);
	return ev;
}

EventRing::EventRing(int fd, std::uint32_t cq_entries, EventLayout layout,
		     int extra_flags)
	: mapping_(Mapping::map(ring_alloc_len(layout, cq_entries),
				PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags,
				fd, 0)),
	  view_(mapping_.span(), cq_entries, layout)
{
}

EventRing EventRing::map(const Device &dev, int extra_flags)
{
	const auto &att = dev.attachment();
	if (!att)
		throw_errno(EINVAL, "rv::EventRing: " + dev.path() +
					    " is not attached");
	return EventRing(dev.fd(), att->cq_entries, dev.event_layout(),
			 extra_flags);
}

void EventRing::unmap()
{
	view_ = RingView();
	mapping_.unmap();
}

} // namespace rv
