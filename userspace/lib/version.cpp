// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/version.hpp>

#include <charconv>
#include <limits>

namespace rv {

std::string Version::to_string() const
{
	return std::to_string(major) + '.' + std::to_string(minor);
}

std::ostream &operator<<(std::ostream &os, Version v)
{
	return os << v.to_string();
}

namespace {

// A decimal number in [0, 65535]: digits only, no leading zero unless the
// number is 0.
std::optional<std::uint16_t> parse_component(std::string_view s) noexcept
{
	if (s.empty() || (s.size() > 1 && s.front() == '0'))
		return std::nullopt;
	for (char c : s)
		if (c < '0' || c > '9')
			return std::nullopt;

	unsigned long v = 0;
	auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || ptr != s.data() + s.size() ||
	    v > std::numeric_limits<std::uint16_t>::max())
		return std::nullopt;
	return static_cast<std::uint16_t>(v);
}

} // namespace

std::optional<Version> Version::parse(std::string_view text) noexcept
{
	auto dot = text.find('.');
	if (dot == std::string_view::npos)
		return std::nullopt;

	auto maj = parse_component(text.substr(0, dot));
	auto min = parse_component(text.substr(dot + 1));
	if (!maj || !min)
		return std::nullopt;
	return Version{*maj, *min};
}

} // namespace rv
