// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The call classes of the fuzzer. Every class up to op_calls_end is a
// system call on /dev/rv or on one of its ring mappings and counts
// towards --calls; the rest are side actions (reading the event ring,
// remapping the process's buffers, fork) counted separately.
#ifndef RV_FUZZ_OPS_HPP
#define RV_FUZZ_OPS_HPP

#include <cstddef>
#include <optional>
#include <string_view>

namespace rvfuzz {

enum class Op : unsigned {
	open,
	close,
	dup,
	capability,
	query_r2,
	attach,
	attach_r5,
	reg_mem,
	reg_mem_r4,
	reg_mem_r1,
	dereg_mem,
	evict,
	cache_stats,
	event_stats,
	conn_create,
	conn_connect,
	conn_connected,
	conn_count,
	conn_stats,
	post_write,
	ioctl_raw,	// random command numbers and sizes
	mmap,
	munmap,
	mremap,
	// side actions, not counted as calls
	ring_poll,
	arena,
	fork,
	count
};

inline constexpr std::size_t op_count = static_cast<std::size_t>(Op::count);
inline constexpr std::size_t op_calls_end = static_cast<std::size_t>(Op::ring_poll);

[[nodiscard]] constexpr std::size_t idx(Op op) noexcept
{
	return static_cast<std::size_t>(op);
}

[[nodiscard]] constexpr bool counts_as_call(Op op) noexcept
{
	return idx(op) < op_calls_end;
}

[[nodiscard]] std::string_view op_name(Op op) noexcept;
[[nodiscard]] std::optional<Op> op_by_name(std::string_view name) noexcept;

} // namespace rvfuzz

#endif // RV_FUZZ_OPS_HPP
