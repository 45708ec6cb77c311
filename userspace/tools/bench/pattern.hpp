// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The payload of rvbench's transfers, so that the receiver can check
// every message: message seq of size bytes is the little-endian byte
// stream of 64-bit words w[0], w[1], ... cut to size bytes, where
//
//	w[j] = base(size, j)		for most words,
//	w[j] = stamp(size, seq, j)	for the first word of every 4 KiB and
//					the word holding the last byte.
//
// The bulk of a message depends on its size only, so the sender fills a
// buffer once per size and then only rewrites the stamps (one word per
// 4 KiB) before each post. A message that did not land (its slot still
// holds an older one), landed in the wrong place, or arrived cut or
// damaged fails the check: the stamps name size and seq, the bulk names
// size and offset.
#ifndef RV_BENCH_PATTERN_HPP
#define RV_BENCH_PATTERN_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rv::bench {

inline constexpr std::uint64_t pattern_stamp_every = 4096;	// bytes

// Whether word j of a message of size bytes is a stamp.
[[nodiscard]] bool pattern_stamped(std::uint64_t size, std::uint64_t j) noexcept;

// w[j] of message seq of size bytes.
[[nodiscard]] std::uint64_t pattern_word(std::uint64_t size, std::uint64_t seq,
					 std::uint64_t j) noexcept;

// Writes message seq (size bytes) to dst.
void pattern_fill(std::byte *dst, std::uint64_t size, std::uint64_t seq) noexcept;

// Rewrites only the stamps of dst, which holds some message of this
// size: afterwards it is message seq.
void pattern_stamp(std::byte *dst, std::uint64_t size, std::uint64_t seq) noexcept;

// Checks messages of one size against a copy of the bulk made once.
class PatternChecker {
public:
	explicit PatternChecker(std::uint64_t size);

	[[nodiscard]] std::uint64_t size() const noexcept { return size_; }

	// nullopt if msg is message seq; else the offset of the first byte
	// that differs.
	[[nodiscard]] std::optional<std::uint64_t> check(const std::byte *msg,
							 std::uint64_t seq) const noexcept;

private:
	std::uint64_t size_;
	std::vector<std::byte> ref_;	// message 0
};

// The sequence number nearest to base whose low bits are low: what the
// receiver of an immediate carrying seq mod 2^bits recovers, as long as
// seq is less than 2^(bits - 1) away from base (before base: only down
// to 0). bits 1..32.
[[nodiscard]] std::uint64_t seq_nearest(std::uint64_t base, std::uint32_t low,
					unsigned bits) noexcept;

} // namespace rv::bench

#endif // RV_BENCH_PATTERN_HPP
