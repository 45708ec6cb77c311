// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// What every rvbench command starts from and ends with: the RDMA device,
// the attached rv device (Session), the progress lines on stderr, the
// output on stdout.
#ifndef RV_BENCH_SESSION_HPP
#define RV_BENCH_SESSION_HPP

#include <cstdint>
#include <string>

#include <rv/attach.hpp>
#include <rv/capability.hpp>
#include <rv/device.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "bench/bench_util.hpp"
#include "bench/command_line.hpp"

namespace rvbench {

// The first node of $RV_NODES, else the first device whose port 1 has a
// RoCE v2 IPv4 GID; ENODEV if none.
std::string default_device(const rv::RdmaSysfs &sysfs);

struct Session {
	std::string device;
	unsigned port = 1;
	rv::Device dev;
	rv::Capability cap;
	rv::Attach attach;
};

// Opens the rv device, declares the current ABI and attaches to the port
// with PSM3's defaults (no event ring), mr_cache_size_mb 0 = default.
// What open_session() attaches with, mr_cache_size aside: the device
// (--device, else default_device()), PSM3's defaults for its RoCE v2 GID,
// a new random job key, no event ring.
rv::AttachParams session_params(const CommonOptions &o);

Session open_session(const CommonOptions &o, std::uint32_t mr_cache_size_mb);

// With --verbose, msg on stderr.
void progress(const CommonOptions &o, const std::string &msg);

// Where the progress lines of a long run go: stderr, never stdout (which
// may carry --json); nullptr when they are not wanted.
rv::bench::Progress::Sink progress_sink(const CommonOptions &o);

// out on stdout: 0, or 1 after saying why it could not be written.
int print(const std::string &out);

} // namespace rvbench

#endif // RV_BENCH_SESSION_HPP
