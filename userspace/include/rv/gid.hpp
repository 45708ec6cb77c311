// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// A GID as the ABI carries it (ATTACH's loc_gid, CONN_CREATE's dgid, a
// path record's sgid and dgid: 16 bytes in network order), its text form
// as sysfs writes it, and the IPv4-mapped GIDs of RoCE v2, with the
// address in host order as ATTACH's loc_addr and CONN_CREATE's rem_addr
// take it.
#ifndef RV_GID_HPP
#define RV_GID_HPP

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rv {

using Gid = std::array<std::uint8_t, 16>;

// The value of a hex digit, either case; -1 for any other character.
[[nodiscard]] int hex_digit(char c) noexcept;

// "xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx" (sysfs' format: eight groups
// of four hex digits, either case) to bytes; nullopt for anything else.
[[nodiscard]] std::optional<Gid> parse_gid(std::string_view text) noexcept;

// The sysfs format, lower case.
[[nodiscard]] std::string format_gid(const Gid &gid);

// ::ffff:a.b.c.d
[[nodiscard]] bool is_ipv4_mapped(const Gid &gid) noexcept;
[[nodiscard]] Gid ipv4_mapped_gid(std::uint32_t ipv4_host_order) noexcept;
// a.b.c.d of an IPv4-mapped GID, in host order.
[[nodiscard]] std::uint32_t gid_ipv4(const Gid &gid) noexcept;

// "10.77.1.1" <-> host order; nullopt for anything but a dotted quad.
[[nodiscard]] std::optional<std::uint32_t> parse_ipv4(std::string_view text) noexcept;
[[nodiscard]] std::string format_ipv4(std::uint32_t ipv4_host_order);

} // namespace rv

#endif // RV_GID_HPP
