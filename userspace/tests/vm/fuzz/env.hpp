// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The RDMA nodes the fuzzer attaches to, found by the VM tests' code
// (rv::test::nodes(), userspace/tests/vm/vm_env.cpp): RV_NODES,
// RV_NODE_IPS and RV_NODE_GID_INDEXES from tools/testing/vm/vm-run
// --rxe N, else every device whose port 1 has a RoCE v2 IPv4 GID. Read
// once, before any worker starts, so that workers open no file but
// /dev/rv.
#ifndef RV_FUZZ_ENV_HPP
#define RV_FUZZ_ENV_HPP

#include <vector>

#include "oracle.hpp"
#include "vm_env.hpp"

namespace rvfuzz {

using rv::test::Node;

struct Env {
	std::vector<Node> nodes;
	OracleEnv oracle;
};

[[nodiscard]] Env discover_env();

} // namespace rvfuzz

#endif // RV_FUZZ_ENV_HPP
