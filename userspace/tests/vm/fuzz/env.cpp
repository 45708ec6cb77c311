// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "env.hpp"

#include <fstream>
#include <string>

#include <toolkit/rdma_sysfs.hpp>

namespace rvfuzz {

namespace {

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

	env.nodes = rv::test::nodes();
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
