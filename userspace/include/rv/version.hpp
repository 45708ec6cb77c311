// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Version: an rv ABI version, major.minor.
#ifndef RV_VERSION_HPP
#define RV_VERSION_HPP

#include <compare>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <rv/uapi.hpp>

namespace rv {

struct Version {
	std::uint16_t major = 0;
	std::uint16_t minor = 0;

	constexpr auto operator<=>(const Version &) const = default;

	// The ABI of the rv_user_ioctls.h this library was built with.
	static constexpr Version header() noexcept
	{
		return {RV_ABI_VER_MAJOR, RV_ABI_VER_MINOR};
	}

	// RV_ABI_VERSION(major, minor): (major << 16) | minor.
	[[nodiscard]] constexpr std::uint32_t packed() const noexcept
	{
		return static_cast<std::uint32_t>(major) << 16 | minor;
	}
	static constexpr Version from_packed(std::uint32_t v) noexcept
	{
		return {static_cast<std::uint16_t>(v >> 16),
			static_cast<std::uint16_t>(v & 0xffff)};
	}

	// "1.7"
	[[nodiscard]] std::string to_string() const;

	// Parses "MAJOR.MINOR", each a decimal number of at most 65535
	// without sign, spaces or superfluous leading zeros. nullopt when
	// text is anything else.
	static std::optional<Version> parse(std::string_view text) noexcept;
};

static_assert(Version::header().packed() == RV_ABI_VERSION_CURRENT);

inline std::string to_string(Version v) { return v.to_string(); }
std::ostream &operator<<(std::ostream &os, Version v);

} // namespace rv

#endif // RV_VERSION_HPP
