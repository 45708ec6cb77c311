// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "pattern.hpp"

#include <algorithm>
#include <cstring>

namespace rv::bench {

namespace {

constexpr std::uint64_t words_per_stamp = pattern_stamp_every / 8;

std::uint64_t mix(std::uint64_t x) noexcept
{
	// splitmix64's finalizer
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

std::uint64_t base_word(std::uint64_t size, std::uint64_t j) noexcept
{
	return mix(mix(size) ^ j);
}

// Index of the word holding the last byte.
std::uint64_t last_word(std::uint64_t size) noexcept
{
	return (size - 1) / 8;
}

// Stores the low bytes of v at dst[0 .. n), little-endian.
void put(std::byte *dst, std::uint64_t v, std::size_t n) noexcept
{
	for (std::size_t i = 0; i < n; i++)
		dst[i] = static_cast<std::byte>(v >> (8 * i));
}

std::size_t word_bytes(std::uint64_t size, std::uint64_t j) noexcept
{
	return static_cast<std::size_t>(std::min<std::uint64_t>(8, size - 8 * j));
}

} // namespace

bool pattern_stamped(std::uint64_t size, std::uint64_t j) noexcept
{
	return size && (j % words_per_stamp == 0 || j == last_word(size));
}

std::uint64_t pattern_word(std::uint64_t size, std::uint64_t seq,
			   std::uint64_t j) noexcept
{
	const std::uint64_t b = base_word(size, j);
	return pattern_stamped(size, j) ? mix(b ^ mix(~seq)) : b;
}

void pattern_fill(std::byte *dst, std::uint64_t size, std::uint64_t seq) noexcept
{
	if (!size)
		return;
	for (std::uint64_t j = 0; j <= last_word(size); j++)
		put(dst + 8 * j, pattern_word(size, seq, j), word_bytes(size, j));
}

void pattern_stamp(std::byte *dst, std::uint64_t size, std::uint64_t seq) noexcept
{
	if (!size)
		return;
	const std::uint64_t last = last_word(size);
	for (std::uint64_t j = 0; j < last; j += words_per_stamp)
		put(dst + 8 * j, pattern_word(size, seq, j), 8);
	put(dst + 8 * last, pattern_word(size, seq, last), word_bytes(size, last));
}

PatternChecker::PatternChecker(std::uint64_t size)
	: size_(size), ref_(static_cast<std::size_t>(size))
{
	pattern_fill(ref_.data(), size, 0);
}

std::optional<std::uint64_t> PatternChecker::check(const std::byte *msg,
						   std::uint64_t seq) const noexcept
{
	if (!size_)
		return std::nullopt;
	const std::uint64_t last = last_word(size_);
	std::byte word[8];

	auto first_diff = [&](std::uint64_t off, const std::byte *want,
			      std::size_t n) -> std::optional<std::uint64_t> {
		for (std::size_t i = 0; i < n; i++)
			if (msg[off + i] != want[i])
				return off + i;
		return std::nullopt;
	};

	for (std::uint64_t j = 0; j <= last; j += words_per_stamp) {
		// The stamp at j, then the bulk up to the next stamp.
		const std::uint64_t off = 8 * j;
		const std::uint64_t stamp_j = std::min(j, last);
		const std::size_t n = word_bytes(size_, stamp_j);
		put(word, pattern_word(size_, seq, stamp_j), n);
		if (std::memcmp(msg + off, word, n))
			return first_diff(off, word, n);
		if (j == last)
			break;
		const std::uint64_t bulk_end =
			std::min(j + words_per_stamp, last) * 8;
		const std::uint64_t bulk = off + 8;
		if (bulk < bulk_end &&
		    std::memcmp(msg + bulk, ref_.data() + bulk, bulk_end - bulk))
			return first_diff(bulk, ref_.data() + bulk,
					  static_cast<std::size_t>(bulk_end - bulk));
	}
	// The last word, when it is not on a 4 KiB boundary.
	if (last % words_per_stamp) {
		const std::size_t n = word_bytes(size_, last);
		put(word, pattern_word(size_, seq, last), n);
		if (std::memcmp(msg + 8 * last, word, n))
			return first_diff(8 * last, word, n);
	}
	return std::nullopt;
}

std::uint64_t seq_nearest(std::uint64_t base, std::uint32_t low,
			  unsigned bits) noexcept
{
	if (bits == 0)
		return base;
	if (bits > 32)
		bits = 32;
	const std::uint64_t span = std::uint64_t{1} << bits;
	const std::uint64_t ahead = (std::uint64_t{low} - base) & (span - 1);
	if (ahead < span / 2)
		return base + ahead;
	const std::uint64_t behind = span - ahead;
	return behind <= base ? base - behind : base + ahead;
}

} // namespace rv::bench
