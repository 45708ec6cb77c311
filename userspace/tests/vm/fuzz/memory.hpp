// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Memory the fuzzer hands to the kernel.
//
// ArgBuf places an ioctl argument where the test wants it: in readable
// and writable memory (aligned or not), in read-only memory, straddling
// the end of a mapping, in unmapped memory, at NULL, at a kernel address
// or at a non-canonical one.
//
// Arena is a reservation of equal slots that hold the buffers the
// fuzzer registers as MRs. Its operations change them behind the
// module's back: a fresh mapping over a slot (MAP_FIXED), munmap,
// mremap to another slot, MADV_DONTNEED, mprotect. Holes are filled
// again at once with a PROT_NONE reservation (MAP_FIXED_NOREPLACE), so
// no other mapping of the process lands inside the arena; the caller
// serialises the operations that open a hole with every mmap that lets
// the kernel choose the address. Only arena memory is ever registered
// with remote write access: whatever a peer writes lands there.
#ifndef RV_FUZZ_MEMORY_HPP
#define RV_FUZZ_MEMORY_HPP

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include <rv/mapping.hpp>

#include "oracle.hpp"
#include "rng.hpp"

namespace rvfuzz {

enum class PtrKind : std::uint8_t {
	valid,		// aligned, readable and writable
	unaligned,	// odd address, readable and writable
	readonly,	// readable only
	straddle,	// its tail is in an unmapped page
	unmapped,	// a PROT_NONE page
	null,
	low,		// below mmap_min_addr
	kernel,		// the kernel's direct map
	noncanonical,
	count
};

[[nodiscard]] std::string_view ptr_kind_name(PtrKind k) noexcept;

struct Placed {
	void *ptr = nullptr;
	PtrKind kind = PtrKind::valid;
	ArgAccess acc;
};

class ArgBuf {
public:
	static constexpr std::size_t max_len = 16384;

	ArgBuf();

	// Copies data (at most max_len bytes) to a place of kind k and
	// says how the kernel can access it there.
	Placed place(std::span<const std::byte> data, PtrKind k, Rng &rng);

	// Valid most of the time, another kind with bad_percent percent.
	[[nodiscard]] static PtrKind pick(Rng &rng, unsigned bad_percent) noexcept;

	// An address that is mapped (for MAP_FIXED_NOREPLACE).
	[[nodiscard]] std::uint64_t mapped_addr() const noexcept { return rw_.addr(); }
	// The read-only page, for registering read-only memory.
	[[nodiscard]] std::uint64_t readonly_addr() const noexcept { return ro_.addr(); }

private:
	rv::Mapping rw_;	// max_len bytes read-write, then a PROT_NONE page
	rv::Mapping ro_;	// max_len bytes, read-only but while filled
	std::size_t page_;
};

struct Range {
	std::uint64_t addr = 0;
	std::uint64_t len = 0;
};

class Arena {
public:
	Arena(std::size_t slots, std::size_t slot_size);
	~Arena();
	Arena(const Arena &) = delete;
	Arena &operator=(const Arena &) = delete;

	// One random operation on the slots (the caller holds the lock
	// that keeps other mmaps of the process out, see above).
	void random_op(Rng &rng);

	// A range of one or more slots, whole or in part, at page or odd
	// offsets; most of the time over mapped slots.
	[[nodiscard]] Range pick_range(Rng &rng, std::uint64_t max_len);

	// The range is inside the arena, in slots that are still its own.
	[[nodiscard]] bool contains(std::uint64_t addr, std::uint64_t len) noexcept;
	[[nodiscard]] std::uint64_t base() const noexcept { return base_; }
	[[nodiscard]] std::uint64_t size() const noexcept { return slot_size_ * state_.size(); }

	// In a child after fork: forget the lock state (the forking thread
	// held it).
	std::mutex &mutex() noexcept { return m_; }

private:
	// What a slot holds. unknown: mapped, but an operation on it
	// failed half way; lost: a hole another mapping may have filled,
	// never touched again.
	enum class Kind : std::uint8_t { none, priv, shared, unknown, lost };
	struct State {
		Kind kind = Kind::none;
		bool writable = false;
	};

	[[nodiscard]] void *slot(std::size_t i) const noexcept;
	[[nodiscard]] bool mapped(std::size_t i) const noexcept;
	[[nodiscard]] std::size_t pick_slot(Rng &rng, bool want_mapped) const noexcept;
	bool map_slot(std::size_t i, Kind k, bool writable, bool populate);
	void refill_hole(std::size_t i);
	void check_slot(std::size_t i);

	std::mutex m_;
	std::uint64_t base_ = 0;
	std::size_t slot_size_ = 0;
	std::vector<State> state_;
	std::size_t page_;
};

} // namespace rvfuzz

#endif // RV_FUZZ_MEMORY_HPP
