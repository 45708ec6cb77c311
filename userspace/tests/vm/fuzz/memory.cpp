// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "memory.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <sys/mman.h>

#include <rv/error.hpp>

namespace rvfuzz {

namespace {

void *to_ptr(std::uint64_t a) noexcept
{
	return reinterpret_cast<void *>(static_cast<std::uintptr_t>(a));
}

} // namespace

std::string_view ptr_kind_name(PtrKind k) noexcept
{
	static constexpr std::array<std::string_view,
				    static_cast<std::size_t>(PtrKind::count)> names{
		"valid", "unaligned", "readonly", "straddle", "unmapped",
		"null", "low", "kernel", "noncanonical",
	};
	const auto i = static_cast<std::size_t>(k);

	return i < names.size() ? names[i] : "?";
}

// --- ArgBuf ------------------------------------------------------------------

ArgBuf::ArgBuf() : page_(rv::page_size())
{
	rw_ = rv::Mapping::map(max_len + page_, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS);
	if (::mprotect(rw_.bytes() + max_len, page_, PROT_NONE))
		rv::throw_errno("mprotect");
	ro_ = rv::Mapping::map(max_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
}

PtrKind ArgBuf::pick(Rng &rng, unsigned bad_percent) noexcept
{
	constexpr auto n = static_cast<std::uint64_t>(PtrKind::count);

	if (!rng.chance(bad_percent))
		return rng.chance(90) ? PtrKind::valid : PtrKind::unaligned;
	return static_cast<PtrKind>(rng.range(2, n - 1));
}

Placed ArgBuf::place(std::span<const std::byte> data, PtrKind k, Rng &rng)
{
	const std::size_t n = std::min(data.size(), max_len);
	const std::uint64_t end = rw_.addr() + max_len;
	const bool empty = n == 0;
	Placed p;

	p.kind = k;
	p.acc = {empty, empty};
	switch (k) {
	case PtrKind::unaligned: {
		const std::size_t off = 1 + rng.below(7);
		if (n + off <= max_len) {
			p.ptr = to_ptr(end - n - off);
			std::memcpy(p.ptr, data.data(), n);
			p.acc = {true, true};
			break;
		}
		p.kind = PtrKind::valid;
		[[fallthrough]];
	}
	case PtrKind::valid:
		p.ptr = to_ptr((end - n) & ~std::uint64_t{7});
		std::memcpy(p.ptr, data.data(), n);
		p.acc = {true, true};
		break;
	case PtrKind::readonly:
		if (::mprotect(ro_.data(), max_len, PROT_READ | PROT_WRITE))
			rv::throw_errno("mprotect");
		p.ptr = to_ptr(ro_.addr() + max_len - n);
		std::memcpy(p.ptr, data.data(), n);
		if (::mprotect(ro_.data(), max_len, PROT_READ))
			rv::throw_errno("mprotect");
		p.acc = {true, empty};
		break;
	case PtrKind::straddle:
		if (n >= 2) {
			const std::size_t out = 1 + rng.below(n - 1);
			p.ptr = to_ptr(end - n + out);
			std::memcpy(p.ptr, data.data(), n - out);
			p.acc = {false, false};
			break;
		}
		p.kind = PtrKind::unmapped;
		[[fallthrough]];
	case PtrKind::unmapped:
		p.ptr = to_ptr(end + rng.below(page_ / 8) * 8);
		break;
	case PtrKind::null:
		p.ptr = nullptr;
		break;
	case PtrKind::low:
		p.ptr = to_ptr(0x100 + rng.below(0x100) * 8);
		break;
	case PtrKind::kernel:
		p.ptr = to_ptr(0xffff888000000000ULL + rng.below(1 << 20) * 8);
		break;
	case PtrKind::noncanonical:
	default:
		p.kind = PtrKind::noncanonical;
		p.ptr = to_ptr(rng.pick({0x0000800000000000ULL, 0x8000000000000000ULL,
					 0xdead000000000000ULL}) +
			       rng.below(1 << 16) * 8);
		break;
	}
	return p;
}

// --- Arena -------------------------------------------------------------------

Arena::Arena(std::size_t slots, std::size_t slot_size)
	: slot_size_(slot_size), state_(slots), page_(rv::page_size())
{
	void *p = ::mmap(nullptr, slots * slot_size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		rv::throw_errno("mmap arena");
	base_ = reinterpret_cast<std::uintptr_t>(p);
	for (std::size_t i = 0; i < slots; i++)
		map_slot(i, i % 4 == 3 ? Kind::shared : Kind::priv, true, false);
}

Arena::~Arena()
{
	for (std::size_t i = 0; i < state_.size(); i++)
		if (state_[i].kind != Kind::lost)
			::munmap(slot(i), slot_size_);
}

void *Arena::slot(std::size_t i) const noexcept
{
	return to_ptr(base_ + i * slot_size_);
}

bool Arena::mapped(std::size_t i) const noexcept
{
	const Kind k = state_[i].kind;

	return k == Kind::priv || k == Kind::shared;
}

std::size_t Arena::pick_slot(Rng &rng, bool want_mapped) const noexcept
{
	std::size_t i = rng.below(state_.size());

	for (int tries = 0; tries < 8; tries++) {
		if (state_[i].kind != Kind::lost && (!want_mapped || mapped(i)))
			return i;
		i = rng.below(state_.size());
	}
	return i;
}

bool Arena::map_slot(std::size_t i, Kind k, bool writable, bool populate)
{
	const int prot = k == Kind::none ? PROT_NONE :
		writable ? PROT_READ | PROT_WRITE : PROT_READ;
	const int flags = MAP_FIXED | MAP_ANONYMOUS |
		(k == Kind::shared ? MAP_SHARED : MAP_PRIVATE) |
		(populate ? MAP_POPULATE : 0) | (k == Kind::none ? MAP_NORESERVE : 0);

	if (::mmap(slot(i), slot_size_, prot, flags, -1, 0) == MAP_FAILED) {
		check_slot(i);
		return false;
	}
	state_[i] = {k, writable && k != Kind::none};
	return true;
}

// A hole at slot i: reserve it again, unless something else got there.
void Arena::refill_hole(std::size_t i)
{
	void *want = slot(i);
	void *p = ::mmap(want, slot_size_, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED_NOREPLACE, -1, 0);

	if (p == want) {
		state_[i] = {Kind::none, false};
		return;
	}
	if (p != MAP_FAILED)
		::munmap(p, slot_size_);
	state_[i] = {Kind::lost, false};
}

// An operation on slot i failed: is it still mapped?
void Arena::check_slot(std::size_t i)
{
	unsigned char vec[1];
	auto *p = static_cast<std::byte *>(slot(i));
	const bool first = !::mincore(p, page_, vec);
	const bool last = !::mincore(p + slot_size_ - page_, page_, vec);

	if (first && last) {
		state_[i] = {Kind::unknown, false};
		return;
	}
	if (first || last) {
		// Half a slot: never used again.
		state_[i] = {Kind::lost, false};
		return;
	}
	refill_hole(i);
}

void Arena::random_op(Rng &rng)
{
	std::lock_guard lock(m_);
	const std::size_t n = state_.size();
	const std::size_t i = pick_slot(rng, false);
	const unsigned r = static_cast<unsigned>(rng.below(100));

	if (state_[i].kind == Kind::lost)
		return;
	if (r < 30) {
		// A fresh mapping over the slot.
		const Kind k = rng.chance(70) ? Kind::priv : Kind::shared;
		map_slot(i, k, rng.chance(85), rng.chance(30));
	} else if (r < 42) {
		::munmap(slot(i), slot_size_);
		refill_hole(i);
	} else if (r < 67) {
		// mremap to another slot; MREMAP_DONTUNMAP keeps the source.
		const std::size_t j = pick_slot(rng, false);
		const bool keep = r < 57;
		if (j == i || !mapped(i) || state_[j].kind == Kind::lost)
			return;
		void *p = ::mremap(slot(i), slot_size_, slot_size_,
				   MREMAP_MAYMOVE | MREMAP_FIXED |
				   (keep ? MREMAP_DONTUNMAP : 0), slot(j));
		if (p == MAP_FAILED) {
			check_slot(i);
			check_slot(j);
			return;
		}
		state_[j] = state_[i];
		if (!keep)
			refill_hole(i);
	} else if (r < 82) {
		if (!mapped(i))
			return;
		const std::size_t pages = slot_size_ / page_;
		const std::size_t first = rng.below(pages);
		const std::size_t count = 1 + rng.below(pages - first);
		::madvise(static_cast<std::byte *>(slot(i)) + first * page_,
			  count * page_, rng.chance(80) ? MADV_DONTNEED : MADV_FREE);
	} else if (r < 94) {
		if (!mapped(i))
			return;
		const bool w = rng.chance(60);
		if (!::mprotect(slot(i), slot_size_,
				w ? PROT_READ | PROT_WRITE : PROT_READ))
			state_[i].writable = w;
	} else {
		// munmap across adjacent slots.
		const std::size_t count = std::min<std::size_t>(
			2 + rng.below(2), n - i);
		for (std::size_t k = i; k < i + count; k++)
			if (state_[k].kind == Kind::lost)
				return;
		::munmap(slot(i), count * slot_size_);
		for (std::size_t k = i; k < i + count; k++)
			refill_hole(k);
	}
}

Range Arena::pick_range(Rng &rng, std::uint64_t max_len)
{
	std::lock_guard lock(m_);
	const std::size_t n = state_.size();
	const std::size_t i = pick_slot(rng, rng.chance(90));
	const std::size_t count = std::min<std::size_t>(
		rng.chance(75) ? 1 : 2 + rng.below(3), n - i);
	std::uint64_t off = 0;
	Range r;

	switch (rng.below(4)) {
	case 0:
		off = rng.below(slot_size_ / page_) * page_;
		break;
	case 1:
		off = rng.below(slot_size_);
		break;
	default:
		break;
	}
	r.addr = base_ + i * slot_size_ + off;
	const std::uint64_t room = count * slot_size_ - off;
	r.len = rng.chance(40) ? room : 1 + rng.below(room);
	if (max_len && r.len > max_len)
		r.len = max_len;
	return r;
}

bool Arena::contains(std::uint64_t addr, std::uint64_t len) noexcept
{
	if (!len || len > size() || addr < base_ || addr - base_ > size() - len)
		return false;

	std::lock_guard lock(m_);
	for (std::uint64_t i = (addr - base_) / slot_size_;
	     i <= (addr + len - 1 - base_) / slot_size_; i++)
		if (state_[i].kind == Kind::lost)
			return false;
	return true;
}

} // namespace rvfuzz
