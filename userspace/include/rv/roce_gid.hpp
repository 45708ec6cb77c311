// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The local GID that ATTACH names (loc_gid_index, loc_gid, loc_addr): a
// RoCE v2 GID carrying an IPv4 address, as PSM3 attaches with, found in
// the port's GID table in sysfs (/sys/class/infiniband/DEV/ports/P/...):
//
//	gids/N             "0000:0000:0000:0000:0000:ffff:0a4d:0101"
//	gid_attrs/types/N  "RoCE v2" (reading an unused entry fails)
//	gid_attrs/ndevs/N  the netdev the GID belongs to
//
//	rv::RoceGid g = rv::GidTable("rxe0", 1).find_roce_v2_ipv4();
//
// The module refuses an ATTACH whose loc_gid is not the port's GID at
// loc_gid_index (ENOENT). The root directory is a parameter so that tests
// can use a fake tree.
#ifndef RV_ROCE_GID_HPP
#define RV_ROCE_GID_HPP

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rv/gid.hpp>

namespace rv {

inline constexpr std::string_view rdma_sysfs_root = "/sys/class/infiniband";

// A RoCE v2 GID carrying an IPv4 address.
struct RoceGid {
	std::uint16_t index = 0;	// in the port's GID table
	Gid gid{};
	std::uint32_t ipv4 = 0;		// host order
	std::string netdev;		// empty if sysfs does not say
};

// The GID table of one port, read from sysfs on each call.
class GidTable {
public:
	explicit GidTable(std::string dev, unsigned port = 1,
			  const std::filesystem::path &root =
				  std::filesystem::path(rdma_sysfs_root));

	// Entries in the table (files under gids/); 0 for an unknown port.
	[[nodiscard]] std::size_t size() const;

	// Entry index; nullopt if it cannot be read or parsed.
	[[nodiscard]] std::optional<Gid> gid(std::size_t index) const;

	// "RoCE v2", "IB/RoCE v1", ...; nullopt for an unused entry.
	[[nodiscard]] std::optional<std::string> type(std::size_t index) const;

	// Entry index if it is a RoCE v2 IPv4-mapped GID; nullopt if not.
	[[nodiscard]] std::optional<RoceGid> roce_v2_ipv4_at(std::size_t index) const;

	// Every RoCE v2 IPv4-mapped GID, by index. Reads each entry of the
	// table: rxe's has 1024, and on a debug kernel under emulation each
	// read takes tens of milliseconds.
	[[nodiscard]] std::vector<RoceGid> roce_v2_ipv4() const;

	// The RoCE v2 GID for ipv4 if given, else the first one. Throws
	// std::system_error(ENOENT) naming the port if there is none. Entry
	// hint, where the caller saw it last, is read first, and the table
	// only if that entry no longer holds it.
	[[nodiscard]] RoceGid find_roce_v2_ipv4(
		std::optional<std::uint32_t> ipv4 = {},
		std::optional<std::size_t> hint = {}) const;

private:
	std::string dev_;
	unsigned port_;
	std::filesystem::path dir_;	// root/DEV/ports/PORT
};

} // namespace rv

#endif // RV_ROCE_GID_HPP
