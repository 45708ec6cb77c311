// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The event ring: completions the module reports to a process, in memory
// the process maps from its /dev/rv file (offset 0) after an ATTACH with
// cq_entries > 0.
//
// Layout: struct rv_ring_header (64 bytes: head, tail, overflow_cnt),
// then cq_entries entries of 64 bytes (ABI 1.7) or RV_EVENT_LEGACY_SIZE
// = 65 bytes (ABI 1.6 and older; fields unaligned). The module writes
// entries at tail and publishes the new tail with release ordering; the
// consumer reads tail with acquire ordering, copies the entry at head and
// stores the new head with release ordering. It is empty when head ==
// tail and holds at most cq_entries - 1 events.
//
// RingView is that consumer over memory it does not own (so it runs over
// plain memory in tests); EventRing owns the mapping and a RingView of it.
//
//	rv::EventRing ring = rv::EventRing::map(dev);
//	while (auto ev = ring.poll())
//		handle(*ev);
#ifndef RV_EVENT_RING_HPP
#define RV_EVENT_RING_HPP

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include <rv/device.hpp>
#include <rv/mapping.hpp>
#include <rv/uapi.hpp>

namespace rv {

// One event, whichever layout it came from.
struct Event {
	std::uint8_t event_type = 0;	// RV_WC_*
	std::uint8_t status = 0;	// enum ib_wc_status
	std::uint32_t imm_data = 0;
	std::uint64_t wr_id = 0;
	std::uint64_t conn_handle = 0;
	std::uint32_t byte_len = 0;

	friend bool operator==(const Event &, const Event &) = default;
};

inline constexpr std::size_t ring_header_size = sizeof(rv_ring_header);

[[nodiscard]] constexpr std::size_t event_stride(EventLayout l) noexcept
{
	return l == EventLayout::abi_1_7 ? sizeof(rv_event)
					 : std::size_t{RV_EVENT_LEGACY_SIZE};
}

// Bytes a ring of cq_entries occupies: RV_RING_ALLOC_LEN() or
// RV_RING_LEGACY_ALLOC_LEN().
[[nodiscard]] constexpr std::size_t ring_alloc_len(EventLayout l,
						   std::uint32_t cq_entries) noexcept
{
	return std::size_t{cq_entries} * event_stride(l) + ring_header_size;
}

static_assert(ring_header_size == 64);

// Entry bytes <-> Event. entry points at event_stride(l) bytes; no
// alignment needed.
[[nodiscard]] Event decode_event(const std::byte *entry, EventLayout l) noexcept;
void encode_event(std::byte *entry, const Event &ev, EventLayout l) noexcept;

class RingView {
public:
	RingView() noexcept = default;
	// A consumer of the ring in memory, which must hold at least
	// ring_alloc_len(layout, cq_entries) bytes, 8-byte aligned.
	// Throws std::system_error(EINVAL) otherwise, or if cq_entries < 2.
	RingView(std::span<std::byte> memory, std::uint32_t cq_entries,
		 EventLayout layout);

	RingView(const RingView &) = delete;
	RingView &operator=(const RingView &) = delete;
	RingView(RingView &&other) noexcept { *this = std::move(other); }
	RingView &operator=(RingView &&other) noexcept;

	// The event at head, if any; head moves on. Throws
	// std::system_error(EBADMSG) if head or tail is out of range (the
	// header was overwritten); nothing is read then.
	std::optional<Event> poll();

	// poll()s at most max events into f(const Event &); returns how many.
	template <typename F>
	std::size_t drain(F &&f,
			  std::size_t max = std::numeric_limits<std::size_t>::max())
	{
		std::size_t n = 0;
		while (n < max) {
			std::optional<Event> ev = poll();
			if (!ev)
				break;
			f(*ev);
			n++;
		}
		return n;
	}

	// Events ready to poll (tail read with acquire ordering); throws
	// like poll().
	[[nodiscard]] std::uint32_t pending() const;

	// The raw header fields.
	[[nodiscard]] std::uint32_t head() const noexcept;
	[[nodiscard]] std::uint32_t tail() const noexcept;	// acquire
	[[nodiscard]] std::uint64_t overflow_count() const noexcept;

	[[nodiscard]] std::uint32_t cq_entries() const noexcept { return n_; }
	[[nodiscard]] std::uint32_t capacity() const noexcept
	{
		return n_ ? n_ - 1 : 0;
	}
	[[nodiscard]] EventLayout layout() const noexcept { return layout_; }
	[[nodiscard]] bool valid() const noexcept { return base_ != nullptr; }

	// Start of the header and of entry i (< cq_entries).
	[[nodiscard]] std::byte *header() const noexcept { return base_; }
	[[nodiscard]] std::byte *entry(std::uint32_t i) const noexcept
	{
		return base_ + ring_header_size + std::size_t{i} * event_stride(layout_);
	}

private:
	void check(std::uint32_t head, std::uint32_t tail) const;

	std::byte *base_ = nullptr;	// not owned
	std::uint32_t n_ = 0;
	EventLayout layout_ = EventLayout::abi_1_7;
};

class EventRing {
public:
	EventRing() noexcept = default;

	// Maps the ring of fd: ring_alloc_len(layout, cq_entries) bytes at
	// offset 0, PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags. Throws
	// std::system_error ("mmap") with the errno.
	EventRing(int fd, std::uint32_t cq_entries, EventLayout layout,
		  int extra_flags = MAP_POPULATE);

	// The ring of dev's attach (its cq_entries, dev.event_layout()).
	// Throws std::system_error(EINVAL) if dev has not attached.
	static EventRing map(const Device &dev, int extra_flags = MAP_POPULATE);

	std::optional<Event> poll() { return view_.poll(); }
	template <typename F>
	std::size_t drain(F &&f,
			  std::size_t max = std::numeric_limits<std::size_t>::max())
	{
		return view_.drain(std::forward<F>(f), max);
	}
	[[nodiscard]] std::uint32_t pending() const { return view_.pending(); }
	[[nodiscard]] std::uint64_t overflow_count() const noexcept
	{
		return view_.overflow_count();
	}
	[[nodiscard]] std::uint32_t capacity() const noexcept
	{
		return view_.capacity();
	}

	[[nodiscard]] RingView &view() noexcept { return view_; }
	[[nodiscard]] const RingView &view() const noexcept { return view_; }
	[[nodiscard]] const Mapping &mapping() const noexcept { return mapping_; }
	[[nodiscard]] bool valid() const noexcept { return mapping_.valid(); }

	// munmap now; throws std::system_error ("munmap").
	void unmap();

private:
	Mapping mapping_;
	RingView view_;
};

} // namespace rv

#endif // RV_EVENT_RING_HPP
