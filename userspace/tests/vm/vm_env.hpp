// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Environment of the VM tests, which need the rv module loaded. The
// fuzzer (fuzz/) takes its nodes from here too.
//
//   RV_DEVICE  device node to test (default RV_FILE_NAME, /dev/rv)
//   RV_RVINFO  rvinfo binary (default: the one built with these tests,
//              else an rvinfo next to rv_vm_tests)
//   RV_NODES, RV_NETDEVS, RV_NODE_IPS, RV_NODE_GID_INDEXES
//              the RDMA nodes (tools/testing/vm/rxe-setup.sh): device,
//              netdev, IPv4 and RoCE v2 GID index of each, space
//              separated. Unset: every RDMA device whose port 1 has a
//              RoCE v2 IPv4 GID, in name order.
#ifndef RV_TEST_VM_ENV_HPP
#define RV_TEST_VM_ENV_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <rv/attach.hpp>
#include <rv/device.hpp>

#include <toolkit/rdma_sysfs.hpp>

namespace rv::test {

[[nodiscard]] std::string device_path();
[[nodiscard]] std::string rvinfo_path();

// ioctl(fd, request, arg): 0 on success, else the errno. For checking
// the exact error of malformed requests without the library's checks.
[[nodiscard]] int ioctl_errno(int fd, unsigned long request, void *arg);

// One RDMA node of the test bench.
struct Node {
	std::string dev;		// rxe0
	std::string netdev;		// va (may be empty)
	std::uint32_t ip = 0;		// host order
	std::uint16_t gid_index = 0;	// RoCE v2 GID of ip on port 1
	rv::Gid gid{};			// ::ffff:ip
};

// The node of device dev whose port 1 has the RoCE v2 GID g.
[[nodiscard]] Node roce_node(const std::string &dev, const rv::RoceGid &g);

// The nodes, from the environment or sysfs (see above).
[[nodiscard]] const std::vector<Node> &nodes();
// Node i, or nullopt if there are fewer.
[[nodiscard]] std::optional<Node> node(std::size_t i);

// n with the index its IPv4 GID has in the table now (after its device or
// address came back), waiting up to timeout for the GID to appear. Throws
// std::system_error(ENOENT) if it does not.
[[nodiscard]] Node current(const Node &n, std::chrono::milliseconds timeout);

// Attach parameters for node n: PSM3's defaults, port 1, the node's GID,
// index and address, and a fresh random job key (or key).
[[nodiscard]] rv::AttachParams params_for(
	const Node &n, std::optional<rv::JobKey> key = {});

// A new file of device_path() that declared abi with CAPABILITY.
[[nodiscard]] rv::Device open_declared(rv::Version abi = rv::Version::header());

// open_declared(abi) and attach(p); throws on failure.
[[nodiscard]] rv::Device attach_new(const rv::AttachParams &p,
				    rv::Version abi = rv::Version::header());

[[nodiscard]] bool is_root();

// uid and gid 65534: the unprivileged user of the tests.
inline constexpr unsigned nobody_id = 65534;
// Drops the calling process (which must be root) to nobody_id, with no
// supplementary groups. Throws std::system_error.
void become_nobody();

// The whole of a file; throws std::system_error if it cannot be opened.
[[nodiscard]] std::string read_file(const std::string &path);
// Writes v to path (sysfs, cgroupfs, debugfs); throws std::system_error
// with the write's errno.
void write_file(const std::string &path, const std::string &v);

// Running inside the bench's VM (tools/testing/vm/vm-run sets RV_VM=1),
// where tests may change the machine's network configuration.
[[nodiscard]] bool in_test_vm();

// The module under test is the form `make upstream` proposes
// (RV_MODULE_FORM=upstream, tools/testing/selftests/rv/series.sh): none
// of the out-of-tree module's older forms (QUERY_R2, ATTACH_R5, REG_MEM_R4
// and _R1, the 65-byte events, RV_RDMA_MODE_UPSIZE_CPU), and DEREG_MEM
// checks resv1 (docs/uapi-upstream.md). Otherwise the out-of-tree module.
[[nodiscard]] bool upstream_form();
// The errno of an older form: err from the out-of-tree module, EINVAL (a
// defined number, in a form the module lacks) from the upstream form.
[[nodiscard]] int older_form_errno(int err);
// The ATTACH forms of the module under test: current, and r5 unless
// upstream_form().
[[nodiscard]] std::vector<rv::AttachForm> attach_forms();

// Absolute path of a program found in PATH, or empty.
[[nodiscard]] std::string which(const std::string &prog);

// A one-line dump of the cache stats, for failure messages.
[[nodiscard]] std::string to_string(const rv::CacheStats &s);

// A TAP diagnostic line ("# s"), flushed at once.
void note(const std::string &s);

} // namespace rv::test

// Declares const rv::test::Node &var for node i, or skips the test.
#define RV_NODE_OR_SKIP(var, i)                                            \
	const auto var##_opt_ = ::rv::test::node(i);                        \
	if (!var##_opt_)                                                    \
		GTEST_SKIP() << "needs RDMA node " << (i)                   \
			     << " (RV_NODES or a RoCE v2 device in sysfs)"; \
	const ::rv::test::Node &var = *var##_opt_

// Skips a test of the out-of-tree module's older forms where the module
// under test is the upstream form, which has none (see upstream_form()).
#define RV_OOT_FORM_OR_SKIP()                                              \
	do {                                                                \
		if (::rv::test::upstream_form())                            \
			GTEST_SKIP() << "an older form of the out-of-tree " \
					"module; the upstream form has none"; \
	} while (0)

// Skips the test unless running as root.
#define RV_ROOT_OR_SKIP()                                                  \
	do {                                                                \
		if (!::rv::test::is_root())                                 \
			GTEST_SKIP() << "needs root";                       \
	} while (0)

#endif // RV_TEST_VM_ENV_HPP
