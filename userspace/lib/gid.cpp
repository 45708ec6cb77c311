// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/gid.hpp>

#include <charconv>

namespace rv {

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

} // namespace rv
