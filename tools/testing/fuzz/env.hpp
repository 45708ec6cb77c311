// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The RDMA nodes the fuzzer attaches to, found the way the VM tests find
// them (userspace/tests/vm/vm_env.cpp): RV_NODES, RV_NODE_IPS and
// RV_NODE_GID_INDEXES from tools/testing/vm/vm-run --rxe N, else every
// device whose port 1 has a RoCE v2 IPv4 GID. Read once, before any
// worker starts, so that workers open no file but /dev/rv.
#ifndef RV_FUZZ_ENV_HPP
#define RV_FUZZ_ENV_HPP

#include <cstdint>
#include <string>
#include <vector>

#include <rv/rdma_sysfs.hpp>

#include "oracle.hpp"

namespace rvfuzz {

struct Node {
	std::string dev;		// rxe0
	std::uint32_t ip = 0;		// host order
	std::uint16_t gid_index = 0;	// RoCE v2 GID of ip on port 1
	rv::Gid gid{};
};

struct Env {
	std::vector<Node> nodes;
	OracleEnv oracle;
};

[[nodiscard]] Env discover_env();

} // namespace rvfuzz

#endif // RV_FUZZ_ENV_HPP
