// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/rdma_sysfs.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <thread>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

namespace rv {

namespace {

// The first line of a sysfs attribute, without its newline; nullopt with
// errno set if it cannot be read (sysfs reports a failing show() as a
// read error, e.g. EINVAL for an unused GID type entry).
std::optional<std::string> read_line(const std::filesystem::path &p)
{
	UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return std::nullopt;

	std::string text;
	char buf[256];
	for (;;) {
		ssize_t n = ::read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return std::nullopt;
		}
		if (n == 0)
			break;
		text.append(buf, static_cast<std::size_t>(n));
		if (text.find('\n') != std::string::npos || text.size() > 4096)
			break;
	}
	return text.substr(0, text.find('\n'));
}

} // namespace

int hex_digit(char c) noexcept
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

std::optional<Gid> parse_gid(std::string_view text) noexcept
{
	// 8 groups of 4 hex digits separated by ':' = 39 characters.
	if (text.size() != 39)
		return std::nullopt;

	Gid gid{};
	for (std::size_t g = 0; g < 8; g++) {
		std::size_t pos = g * 5;
		if (g && text[pos - 1] != ':')
			return std::nullopt;
		unsigned v = 0;
		for (std::size_t k = 0; k < 4; k++) {
			int d = hex_digit(text[pos + k]);
			if (d < 0)
				return std::nullopt;
			v = v << 4 | static_cast<unsigned>(d);
		}
		gid[2 * g] = static_cast<std::uint8_t>(v >> 8);
		gid[2 * g + 1] = static_cast<std::uint8_t>(v & 0xff);
	}
	return gid;
}

std::string format_gid(const Gid &gid)
{
	static constexpr char hex[] = "0123456789abcdef";
	std::string s;

	s.reserve(39);
	for (std::size_t i = 0; i < gid.size(); i++) {
		if (i && !(i % 2))
			s += ':';
		s += hex[gid[i] >> 4];
		s += hex[gid[i] & 0xf];
	}
	return s;
}

bool is_ipv4_mapped(const Gid &gid) noexcept
{
	for (std::size_t i = 0; i < 10; i++)
		if (gid[i])
			return false;
	return gid[10] == 0xff && gid[11] == 0xff;
}

Gid ipv4_mapped_gid(std::uint32_t ipv4) noexcept
{
	Gid gid{};

	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = static_cast<std::uint8_t>(ipv4 >> 24);
	gid[13] = static_cast<std::uint8_t>(ipv4 >> 16);
	gid[14] = static_cast<std::uint8_t>(ipv4 >> 8);
	gid[15] = static_cast<std::uint8_t>(ipv4);
	return gid;
}

std::uint32_t gid_ipv4(const Gid &gid) noexcept
{
	return std::uint32_t{gid[12]} << 24 | std::uint32_t{gid[13]} << 16 |
	       std::uint32_t{gid[14]} << 8 | std::uint32_t{gid[15]};
}

std::optional<std::uint32_t> parse_ipv4(std::string_view text) noexcept
{
	std::uint32_t ip = 0;

	for (int part = 0; part < 4; part++) {
		if (part) {
			if (text.empty() || text.front() != '.')
				return std::nullopt;
			text.remove_prefix(1);
		}
		std::size_t n = 0;
		while (n < text.size() && text[n] >= '0' && text[n] <= '9')
			n++;
		if (n == 0 || n > 3 || (n > 1 && text[0] == '0'))
			return std::nullopt;
		unsigned v = 0;
		std::from_chars(text.data(), text.data() + n, v);
		if (v > 255)
			return std::nullopt;
		ip = ip << 8 | v;
		text.remove_prefix(n);
	}
	if (!text.empty())
		return std::nullopt;
	return ip;
}

std::string format_ipv4(std::uint32_t ip)
{
	return std::to_string(ip >> 24) + '.' + std::to_string(ip >> 16 & 0xff) +
	       '.' + std::to_string(ip >> 8 & 0xff) + '.' +
	       std::to_string(ip & 0xff);
}

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
	auto line = read_line(path);
	if (!line)
		throw_errno(path.string());

	PortState st;
	st.text = *line;
	std::from_chars(line->data(), line->data() + line->size(), st.code);
	return st;
}

std::size_t RdmaSysfs::gid_table_len(const std::string &dev,
				     unsigned port) const
{
	std::size_t n = 0;
	std::error_code ec;

	for (auto it = std::filesystem::directory_iterator(
		     port_dir(dev, port) / "gids", ec);
	     !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
		n++;
	return n;
}

std::optional<Gid> RdmaSysfs::gid(const std::string &dev, unsigned port,
				  std::size_t index) const
{
	auto line = read_line(port_dir(dev, port) / "gids" /
			      std::to_string(index));
	if (!line)
		return std::nullopt;
	return parse_gid(*line);
}

std::optional<std::string> RdmaSysfs::gid_type(const std::string &dev,
					       unsigned port,
					       std::size_t index) const
{
	return read_line(port_dir(dev, port) / "gid_attrs" / "types" /
			 std::to_string(index));
}

std::optional<std::uint64_t> RdmaSysfs::hw_counter(const std::string &dev,
						   unsigned port,
						   const std::string &name) const
{
	const auto dir = port_dir(dev, port) / "hw_counters";
	unsigned lifespan_ms = 0;

	// Two jiffies of rounding at HZ 100 on top of the lifespan.
	if (auto line = read_line(dir / "lifespan"))
		std::from_chars(line->data(), line->data() + line->size(),
				lifespan_ms);
	std::this_thread::sleep_for(std::chrono::milliseconds(lifespan_ms + 20));

	auto line = read_line(dir / name);
	std::uint64_t v = 0;
	if (!line || std::from_chars(line->data(), line->data() + line->size(),
				     v).ec != std::errc())
		return std::nullopt;
	return v;
}

std::vector<RoceGid> RdmaSysfs::roce_v2_ipv4_gids(const std::string &dev,
						  unsigned port) const
{
	std::vector<RoceGid> found;
	std::size_t n = gid_table_len(dev, port);

	for (std::size_t i = 0; i < n && i <= 0xffff; i++) {
		auto g = gid(dev, port, i);
		if (!g || !is_ipv4_mapped(*g))
			continue;
		auto type = gid_type(dev, port, i);
		if (!type || *type != "RoCE v2")
			continue;
		RoceGid r;
		r.index = static_cast<std::uint16_t>(i);
		r.gid = *g;
		r.ipv4 = gid_ipv4(*g);
		r.netdev = read_line(port_dir(dev, port) / "gid_attrs" /
				     "ndevs" / std::to_string(i))
				   .value_or("");
		found.push_back(std::move(r));
	}
	return found;
}

RoceGid RdmaSysfs::find_roce_v2_ipv4_gid(const std::string &dev,
					 unsigned port,
					 std::optional<std::uint32_t> ipv4) const
{
	for (auto &g : roce_v2_ipv4_gids(dev, port))
		if (!ipv4 || g.ipv4 == *ipv4)
			return g;

	std::string what = "no RoCE v2 IPv4 GID";
	if (ipv4)
		what += " for " + format_ipv4(*ipv4);
	what += " on " + dev + " port " + std::to_string(port);
	throw_errno(ENOENT, what);
}

} // namespace rv
