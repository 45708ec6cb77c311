// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The tools' view of the RDMA devices in sysfs
// (/sys/class/infiniband/DEV/ports/P/...): the devices, their ports,
// each port's state and GID table (rv::GidTable) and packet counters:
//
//	state              "4: ACTIVE"
//	hw_counters/NAME   a packet counter, e.g. rcvd_pkts
//
// The root directory is a parameter so that tests can use a fake tree.
#ifndef RV_TOOLKIT_RDMA_SYSFS_HPP
#define RV_TOOLKIT_RDMA_SYSFS_HPP

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rv/gid.hpp>
#include <rv/roce_gid.hpp>

namespace rv {

struct PortState {
	int code = 0;		// 4 = IB_PORT_ACTIVE
	std::string text;	// "4: ACTIVE"

	[[nodiscard]] bool active() const noexcept { return code == 4; }
};

class RdmaSysfs {
public:
	static constexpr std::string_view default_root = rdma_sysfs_root;

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

	// The port's GID table.
	[[nodiscard]] GidTable gid_table(const std::string &dev,
					 unsigned port) const
	{
		return GidTable(dev, port, root_);
	}
	// gid_table(dev, port)'s size(), gid(), type(), roce_v2_ipv4() and
	// find_roce_v2_ipv4().
	[[nodiscard]] std::size_t gid_table_len(const std::string &dev,
						unsigned port) const
	{
		return gid_table(dev, port).size();
	}
	[[nodiscard]] std::optional<Gid> gid(const std::string &dev,
					     unsigned port,
					     std::size_t index) const
	{
		return gid_table(dev, port).gid(index);
	}
	[[nodiscard]] std::optional<std::string> gid_type(
		const std::string &dev, unsigned port, std::size_t index) const
	{
		return gid_table(dev, port).type(index);
	}
	[[nodiscard]] std::vector<RoceGid> roce_v2_ipv4_gids(
		const std::string &dev, unsigned port) const
	{
		return gid_table(dev, port).roce_v2_ipv4();
	}
	[[nodiscard]] RoceGid find_roce_v2_ipv4_gid(
		const std::string &dev, unsigned port,
		std::optional<std::uint32_t> ipv4 = {},
		std::optional<std::size_t> hint = {}) const
	{
		return gid_table(dev, port).find_roce_v2_ipv4(ipv4, hint);
	}

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

#endif // RV_TOOLKIT_RDMA_SYSFS_HPP
