// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's message buffers as MRs within max_fmr_size, registered as
// PSM3 registers them. ATTACH answers max_fmr_size, the longest range
// REG_MEM takes (longer ones fail with E2BIG): with fast registration, the
// device's page list less one page, 2093056 bytes on soft-RoCE. So each
// buffer is registered in chunks of C bytes, C the largest power of two
// at most max_fmr_size (the last chunk may be shorter), each chunk an MR
// of its own, and no write spans two chunks: a write takes the lkey of
// the chunk its send slot is in, and the peer's iova and rkey of the
// chunk its receive slot is in.
//
// Slots of a size (at most C) are packed per chunk: chunk k holds slots
// k * per .. k * per + per - 1, per = C / size. A power of two size
// divides C, so slot j lies at j * size, as in a buffer of one MR; any
// other size leaves the last C % size bytes of each chunk unused.
#ifndef RV_BENCH_MR_CHUNKS_HPP
#define RV_BENCH_MR_CHUNKS_HPP

#include <bit>
#include <cstdint>

namespace rv::bench {

// C for max_fmr_size: the largest power of two at most it; 0 for 0.
[[nodiscard]] constexpr std::uint64_t mr_chunk(std::uint64_t max_fmr_size) noexcept
{
	return std::bit_floor(max_fmr_size);
}

// The chunks (MRs) of a buffer of len bytes: len / chunk, rounded up.
[[nodiscard]] constexpr std::uint64_t mr_chunks(std::uint64_t len,
						std::uint64_t chunk) noexcept
{
	return chunk ? len / chunk + (len % chunk != 0) : 0;
}

// Where the slots of one message size lie in a buffer of chunks.
struct SlotLayout {
	std::uint64_t size = 1;		// bytes per slot, 1..chunk
	std::uint64_t chunk = 1;	// bytes per chunk, a power of two

	[[nodiscard]] constexpr std::uint64_t per_chunk() const noexcept
	{
		return chunk / size;
	}
	// The offset of slot j in the buffer.
	[[nodiscard]] constexpr std::uint64_t offset(std::uint64_t j) const noexcept
	{
		return j / per_chunk() * chunk + j % per_chunk() * size;
	}
	// The bytes that slots 0..n-1 take from the buffer's start.
	[[nodiscard]] constexpr std::uint64_t end(std::uint64_t n) const noexcept
	{
		return n ? offset(n - 1) + size : 0;
	}
	// How many slots fit in the first `bytes` bytes of a buffer.
	[[nodiscard]] constexpr std::uint64_t fit(std::uint64_t bytes) const noexcept
	{
		return bytes / chunk * per_chunk() + bytes % chunk / size;
	}
};

} // namespace rv::bench

#endif // RV_BENCH_MR_CHUNKS_HPP
