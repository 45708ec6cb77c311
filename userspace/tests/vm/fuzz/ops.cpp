// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "ops.hpp"

#include <array>

namespace rvfuzz {

namespace {

constexpr std::array<std::string_view, op_count> names{
	"open",
	"close",
	"dup",
	"capability",
	"query_r2",
	"attach",
	"attach_r5",
	"reg_mem",
	"reg_mem_r4",
	"reg_mem_r1",
	"dereg_mem",
	"evict",
	"cache_stats",
	"event_stats",
	"conn_create",
	"conn_connect",
	"conn_connected",
	"conn_count",
	"conn_stats",
	"post_write",
	"ioctl_raw",
	"mmap",
	"munmap",
	"mremap",
	"ring_poll",
	"arena",
	"fork",
};

} // namespace

std::string_view op_name(Op op) noexcept
{
	return idx(op) < names.size() ? names[idx(op)] : "?";
}

std::optional<Op> op_by_name(std::string_view name) noexcept
{
	for (std::size_t i = 0; i < names.size(); i++)
		if (names[i] == name)
			return static_cast<Op>(i);
	return std::nullopt;
}

} // namespace rvfuzz
