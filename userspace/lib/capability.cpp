// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/capability.hpp>

#include <cstdio>

namespace rv {

std::string capability_bit_name(unsigned bit)
{
	if (bit >= 64)
		return {};

	std::uint64_t mask = std::uint64_t{1} << bit;
	switch (mask) {
	case RV_CAP_USER_MR:
		return "user_mr";
	case RV_CAP_EVICT:
		return "evict";
	default:
		break;
	}

	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%llx",
		      static_cast<unsigned long long>(mask));
	return buf;
}

std::vector<std::string> capability_names(std::uint64_t caps)
{
	std::vector<std::string> names;

	for (unsigned bit = 0; bit < 64; bit++)
		if (caps & (std::uint64_t{1} << bit))
			names.push_back(capability_bit_name(bit));
	return names;
}

std::string format_capabilities(std::uint64_t caps)
{
	if (!caps)
		return "none";

	std::string s;
	for (const auto &name : capability_names(caps)) {
		if (!s.empty())
			s += ", ";
		s += name;
	}
	return s;
}

} // namespace rv
