// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// What ATTACH needs to know about an RDMA port, read from sysfs
// (/sys/class/infiniband/DEV/ports/P/...):
//
//	state              "4: ACTIVE"
//	gids/N             "0000:0000:0000:0000:0000:ffff:0a4d:0101"
//	gid_attrs/types/N  "RoCE v2" (reading an unused entry fails)
//	gid_attrs/ndevs/N  the netdev the GID belongs to
//	hw_counters/NAME   a packet counter, e.g. rcvd_pkts
//
// The root directory is a parameter so that tests can use a fake tree.
#ifndef RV_RDMA_SYSFS_HPP
#define RV_RDMA_SYSFS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// A RoCE v2 GID carrying an IPv4 address: what PSM3 attaches with.
struct RoceGid {
	std::uint16_t index = 0;	// in the port's GID table
	Gid gid{};
	std::uint32_t ipv4 = 0;		// host order
	std::string netdev;		// empty if sysfs does not say
};

struct PortState {
	int code = 0;		// 4 = IB_PORT_ACTIVE
	std::string text;	// "4: ACTIVE"

	[[nodiscard]] bool active() const noexcept { return code == 4; }
};

class RdmaSysfs {
public:
	static constexpr std::string_view default_root = "/sys/class/infiniband";

	explicit RdmaSysfs(std::filesystem::path root =
				   std::filesystem::path(default_root))
		: root_(std::move(root)) {}

	[[nodiscard]] const std::filesystem::path &root() const noexcept
	{
		return root_;
	}

	// The RDMA devices, sorted by name; empty if there are none.
	[[nodiscard]] std::vector<std::string> devices() const;

	// Number of entries under DEV/ports; 0 if the device is unknown.
	[[nodiscard]] unsigned port_count(const std::string &dev) const;

	// Throws std::system_error (the errno of the read) if unreadable.
	[[nodiscard]] PortState port_state(const std::string &dev,
					   unsigned port) const;

	// Entries in the port's GID table (files under gids/).
	[[nodiscard]] std::size_t gid_table_len(const std::string &dev,
						unsigned port) const;

	// GID table entry; nullopt if it cannot be read or parsed.
	[[nodiscard]] std::optional<Gid> gid(const std::string &dev,
					     unsigned port,
					     std::size_t index) const;

	// "RoCE v2", "IB/RoCE v1", ...; nullopt for an unused entry.
	[[nodiscard]] std::optional<std::string> gid_type(
		const std::string &dev, unsigned port, std::size_t index) const;

	// Every RoCE v2 IPv4-mapped GID of the port, by index.
	[[nodiscard]] std::vector<RoceGid> roce_v2_ipv4_gids(
		const std::string &dev, unsigned port) const;

	// The RoCE v2 GID for ipv4 if given, else the first one. Throws
	// std::system_error(ENOENT) naming the port if there is none.
	[[nodiscard]] RoceGid find_roce_v2_ipv4_gid(
		const std::string &dev, unsigned port,
		std::optional<std::uint32_t> ipv4 = {}) const;

	// A counter under hw_counters/ (rxe: rcvd_pkts, sent_pkts, ...);
	// nullopt if the port has no such counter. The core caches a port's
	// counters for hw_counters/lifespan ms after each read, so this
	// first waits that long (plus jiffy rounding): every read is fresh,
	// and two reads always see the packets that passed between them.
	[[nodiscard]] std::optional<std::uint64_t> hw_counter(
		const std::string &dev, unsigned port,
		const std::string &name) const;

private:
	[[nodiscard]] std::filesystem::path port_dir(const std::string &dev,
						     unsigned port) const;

	std::filesystem::path root_;
};

} // namespace rv

#endif // RV_RDMA_SYSFS_HPP
