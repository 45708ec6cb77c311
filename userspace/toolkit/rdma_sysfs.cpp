// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <toolkit/rdma_sysfs.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <thread>
#include <system_error>

#include <rv/error.hpp>

#include "sysfs_line.hpp"

namespace rv {

std::filesystem::path RdmaSysfs::port_dir(const std::string &dev,
					  unsigned port) const
{
	return root_ / dev / "ports" / std::to_string(port);
}

std::vector<std::string> RdmaSysfs::devices() const
{
	std::vector<std::string> names;
	std::error_code ec;

	for (const auto &e : std::filesystem::directory_iterator(root_, ec))
		names.push_back(e.path().filename().string());
	std::sort(names.begin(), names.end());
	return names;
}

unsigned RdmaSysfs::port_count(const std::string &dev) const
{
	unsigned n = 0;
	std::error_code ec;

	for (auto it = std::filesystem::directory_iterator(root_ / dev / "ports",
							   ec);
	     !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
		n++;
	return n;
}

PortState RdmaSysfs::port_state(const std::string &dev, unsigned port) const
{
	auto path = port_dir(dev, port) / "state";
	auto line = detail::read_sysfs_line(path);
	if (!line)
		throw_errno(path.string());

	PortState st;
	st.text = *line;
	std::from_chars(line->data(), line->data() + line->size(), st.code);
	return st;
}

std::optional<std::uint64_t> RdmaSysfs::hw_counter(const std::string &dev,
						   unsigned port,
						   const std::string &name) const
{
	const auto dir = port_dir(dev, port) / "hw_counters";
	unsigned lifespan_ms = 0;

	// Two jiffies of rounding at HZ 100 on top of the lifespan.
	if (auto line = detail::read_sysfs_line(dir / "lifespan"))
		std::from_chars(line->data(), line->data() + line->size(),
				lifespan_ms);
	std::this_thread::sleep_for(std::chrono::milliseconds(lifespan_ms + 20));

	auto line = detail::read_sysfs_line(dir / name);
	std::uint64_t v = 0;
	if (!line || std::from_chars(line->data(), line->data() + line->size(),
				     v).ec != std::errc())
		return std::nullopt;
	return v;
}

} // namespace rv
