// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "env.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace rvfuzz {

namespace {

std::vector<std::string> words(const char *env_name)
{
	std::vector<std::string> out;
	const char *v = std::getenv(env_name);

	if (!v)
		return out;
	std::istringstream in(v);
	std::string w;
	while (in >> w)
		out.push_back(w);
	return out;
}

Node node_of(const std::string &dev, const rv::RoceGid &g)
{
	Node n;

	n.dev = dev;
	n.ip = g.ipv4;
	n.gid_index = g.index;
	n.gid = g.gid;
	return n;
}

std::vector<Node> discover_nodes(const rv::RdmaSysfs &sysfs)
{
	std::vector<Node> out;
	const auto devs = words("RV_NODES");
	const auto ips = words("RV_NODE_IPS");
	const auto gid_indexes = words("RV_NODE_GID_INDEXES");

	if (devs.empty()) {
		for (const auto &d : sysfs.devices()) {
			auto gids = sysfs.roce_v2_ipv4_gids(d, 1);
			if (!gids.empty())
				out.push_back(node_of(d, gids.front()));
		}
		return out;
	}
	for (std::size_t i = 0; i < devs.size(); i++) {
		Node n;
		std::optional<rv::RoceGid> found;

		n.dev = devs[i];
		if (i < ips.size())
			n.ip = rv::parse_ipv4(ips[i]).value_or(0);
		try {
			found = sysfs.find_roce_v2_ipv4_gid(
				n.dev, 1, n.ip ? std::optional(n.ip) : std::nullopt);
		} catch (const std::system_error &) {
		}
		if (i < gid_indexes.size())
			n.gid_index = static_cast<std::uint16_t>(
				std::strtoul(gid_indexes[i].c_str(), nullptr, 10));
		else if (found)
			n.gid_index = found->index;
		if (!n.ip && found)
			n.ip = found->ipv4;
		n.gid = sysfs.gid(n.dev, 1, n.gid_index)
				.value_or(rv::ipv4_mapped_gid(n.ip));
		out.push_back(n);
	}
	return out;
}

bool port_is_ethernet(const rv::RdmaSysfs &sysfs, const std::string &dev,
		      unsigned port)
{
	std::ifstream f(sysfs.root() / dev / "ports" / std::to_string(port) /
			"link_layer");
	std::string ll;

	// Unknown: assume RoCE, like the rxe nodes of the bench.
	if (!(f >> ll))
		return true;
	return ll == "Ethernet";
}

} // namespace

Env discover_env()
{
	rv::RdmaSysfs sysfs;
	Env env;

	env.nodes = discover_nodes(sysfs);
	for (const auto &d : sysfs.devices()) {
		const unsigned ports = sysfs.port_count(d);

		env.oracle.devices.push_back(d);
		env.oracle.ports.push_back(ports);
		for (unsigned p = 1; p <= ports; p++)
			if (!port_is_ethernet(sysfs, d, p))
				env.oracle.all_roce = false;
	}
	return env;
}

} // namespace rvfuzz
