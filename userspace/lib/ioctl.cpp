// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/ioctl.hpp>

#include <array>
#include <cstdio>
#include <utility>

#include <rv/uapi.hpp>

namespace rv {

namespace {

struct Entry {
	unsigned long request;
	std::string_view name;
};

#define RV_ENTRY(req) Entry{req, #req}

constexpr std::array ioctls{
	RV_ENTRY(RV_IOCTL_CAPABILITY),
	RV_ENTRY(RV_IOCTL_QUERY_R2),
	RV_ENTRY(RV_IOCTL_ATTACH),
	RV_ENTRY(RV_IOCTL_ATTACH_R5),
	RV_ENTRY(RV_IOCTL_REG_MEM),
	RV_ENTRY(RV_IOCTL_REG_MEM_R4),
	RV_ENTRY(RV_IOCTL_REG_MEM_R1),
	RV_ENTRY(RV_IOCTL_DEREG_MEM),
	RV_ENTRY(RV_IOCTL_EVICT),
	RV_ENTRY(RV_IOCTL_GET_CACHE_STATS),
	RV_ENTRY(RV_IOCTL_CONN_CREATE),
	RV_ENTRY(RV_IOCTL_CONN_CONNECT),
	RV_ENTRY(RV_IOCTL_CONN_CONNECTED),
	RV_ENTRY(RV_IOCTL_CONN_GET_CONN_COUNT),
	RV_ENTRY(RV_IOCTL_CONN_GET_STATS),
	RV_ENTRY(RV_IOCTL_GET_EVENT_STATS),
	RV_ENTRY(RV_IOCTL_POST_RDMA_WR_IMMED),
};

#undef RV_ENTRY

// Every command must be distinct, or the names above would be ambiguous.
constexpr bool all_distinct()
{
	for (std::size_t i = 0; i < ioctls.size(); i++)
		for (std::size_t j = i + 1; j < ioctls.size(); j++)
			if (ioctls[i].request == ioctls[j].request)
				return false;
	return true;
}
static_assert(all_distinct());

} // namespace

std::string_view ioctl_name(unsigned long request) noexcept
{
	for (const auto &e : ioctls)
		if (e.request == request)
			return e.name;
	return {};
}

std::string ioctl_describe(unsigned long request)
{
	auto name = ioctl_name(request);
	if (!name.empty())
		return std::string(name);

	char buf[32];
	std::snprintf(buf, sizeof(buf), "ioctl 0x%lx", request);
	return buf;
}

} // namespace rv
