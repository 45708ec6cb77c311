// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/session.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include <unistd.h>

#include <rv/error.hpp>

namespace rvbench {

std::string default_device(const rv::RdmaSysfs &sysfs)
{
	if (const char *nodes = std::getenv("RV_NODES")) {
		std::istringstream in(nodes);
		std::string first;
		if (in >> first)
			return first;
	}
	for (const auto &d : sysfs.devices())
		if (!sysfs.roce_v2_ipv4_gids(d, 1).empty())
			return d;
	rv::throw_errno(ENODEV, "no RDMA device with a RoCE v2 IPv4 GID "
				"(use --device)");
}

rv::AttachParams session_params(const CommonOptions &o)
{
	const rv::RdmaSysfs sysfs(o.sysfs);
	std::string device = o.device.empty() ? default_device(sysfs) : o.device;
	rv::AttachParams p = rv::AttachParams::for_roce(device, o.port, {}, sysfs.root());
	p.cq_entries = 0;
	return p;
}

Session open_session(const CommonOptions &o, std::uint32_t mr_cache_size_mb)
{
	rv::AttachParams p = session_params(o);
	p.mr_cache_size = mr_cache_size_mb;

	rv::Device dev(o.rv_path);
	rv::Capability cap = dev.capability();
	rv::Attach a = dev.attach(p);
	return Session{p.dev_name, o.port, std::move(dev), cap, a};
}

void progress(const CommonOptions &o, const std::string &msg)
{
	if (o.verbose)
		std::fprintf(stderr, "%s: %s\n", prog, msg.c_str());
}

rv::bench::Progress::Sink progress_sink(const CommonOptions &o)
{
	if (!rv::bench::progress_enabled(o.progress, ::isatty(STDERR_FILENO) == 1))
		return nullptr;
	return [](const std::string &line) {
		std::fprintf(stderr, "%s: %s\n", prog, line.c_str());
		std::fflush(stderr);
	};
}

int print(const std::string &out)
{
	if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
		std::fprintf(stderr, "%s: write error: %s\n", prog, std::strerror(errno));
		return 1;
	}
	return 0;
}

} // namespace rvbench
