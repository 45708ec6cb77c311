// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/roce_gid.hpp>

#include <cerrno>
#include <system_error>
#include <utility>

#include <rv/error.hpp>

#include "sysfs_line.hpp"

namespace rv {

GidTable::GidTable(std::string dev, unsigned port,
		   const std::filesystem::path &root)
	: dev_(std::move(dev)), port_(port),
	  dir_(root / dev_ / "ports" / std::to_string(port))
{
}

std::size_t GidTable::size() const
{
	std::size_t n = 0;
	std::error_code ec;

	for (auto it = std::filesystem::directory_iterator(dir_ / "gids", ec);
	     !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
		n++;
	return n;
}

std::optional<Gid> GidTable::gid(std::size_t index) const
{
	auto line = detail::read_sysfs_line(dir_ / "gids" / std::to_string(index));
	if (!line)
		return std::nullopt;
	return parse_gid(*line);
}

std::optional<std::string> GidTable::type(std::size_t index) const
{
	return detail::read_sysfs_line(dir_ / "gid_attrs" / "types" /
				       std::to_string(index));
}

std::optional<RoceGid> GidTable::roce_v2_ipv4_at(std::size_t index) const
{
	if (index > 0xffff)
		return std::nullopt;
	auto g = gid(index);
	if (!g || !is_ipv4_mapped(*g))
		return std::nullopt;
	auto t = type(index);
	if (!t || *t != "RoCE v2")
		return std::nullopt;
	RoceGid r;
	r.index = static_cast<std::uint16_t>(index);
	r.gid = *g;
	r.ipv4 = gid_ipv4(*g);
	r.netdev = detail::read_sysfs_line(dir_ / "gid_attrs" / "ndevs" /
					   std::to_string(index))
			   .value_or("");
	return r;
}

std::vector<RoceGid> GidTable::roce_v2_ipv4() const
{
	std::vector<RoceGid> found;
	std::size_t n = size();

	for (std::size_t i = 0; i < n && i <= 0xffff; i++) {
		auto r = roce_v2_ipv4_at(i);
		if (r)
			found.push_back(std::move(*r));
	}
	return found;
}

RoceGid GidTable::find_roce_v2_ipv4(std::optional<std::uint32_t> ipv4,
				    std::optional<std::size_t> hint) const
{
	if (hint) {
		auto r = roce_v2_ipv4_at(*hint);
		if (r && (!ipv4 || r->ipv4 == *ipv4))
			return std::move(*r);
	}
	for (auto &g : roce_v2_ipv4())
		if (!ipv4 || g.ipv4 == *ipv4)
			return g;

	std::string what = "no RoCE v2 IPv4 GID";
	if (ipv4)
		what += " for " + format_ipv4(*ipv4);
	what += " on " + dev_ + " port " + std::to_string(port_);
	throw_errno(ENOENT, what);
}

} // namespace rv
