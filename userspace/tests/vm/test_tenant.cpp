// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Tenants of a shared node: what a process of uid 65534, in the initial
// network namespace or in one of its own, may make rv do. Each refusal
// is asserted by its errno and leaves the device as it was.
//   - Service ids: the module's default and its user range for anyone;
//     the RDMA CM's IP port spaces for no one; any other id only with
//     CAP_NET_BIND_SERVICE.
//   - Network namespaces: a RoCE GID only from its netdev's namespace;
//     in exclusive mode, a device only from its own namespace (as uverbs).
//   - mr_cache_size: the module's value is a ceiling.
//   - POST_RDMA_WR_IMMED: the port's largest message.
// (A REQ from another uid's job: Security.OtherUidCannotConnectToTheJob.)
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/error.hpp>

#include "../support/subprocess.hpp"
#include "child.hpp"
#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr uid_t nobody = 65534;
constexpr gid_t nogroup = 65534;

void become_nobody()
{
	if (::setgroups(0, nullptr) < 0)
		rv::throw_errno("setgroups");
	if (::setresgid(nogroup, nogroup, nogroup) < 0)
		rv::throw_errno("setresgid");
	if (::setresuid(nobody, nobody, nobody) < 0)
		rv::throw_errno("setresuid");
}

// A network namespace of the calling process's own (it must be root).
void enter_new_netns()
{
	if (::unshare(CLONE_NEWNET) < 0)
		rv::throw_errno("unshare(CLONE_NEWNET)");
}

// ATTACH on a new file: 0, or the errno it failed with.
int attach_errno(const rv::AttachParams &p)
{
	try {
		rv::Device d = open_declared();
		(void)d.attach(p);
		return 0;
	} catch (const std::system_error &e) {
		return e.code().value();
	}
}

// `rdma system set netns MODE`: 0, or non-zero if it failed (EBUSY while
// a namespace other than the initial one exists).
int set_netns_mode(const std::string &mode)
{
	const auto r = run_process({which("rdma"), "system", "set", "netns", mode});
	return r.ok() ? 0 : 1;
}

// The RDMA subsystem in exclusive namespace mode for one test, shared
// again after it. Switching needs the initial namespace to be the only
// one: a namespace left by a process that exited is freed by a kworker
// soon after, so the switch back waits for that.
class ExclusiveNetns {
public:
	ExclusiveNetns() { ok_ = set_netns_mode("exclusive") == 0; }
	~ExclusiveNetns()
	{
		if (!ok_)
			return;
		const auto deadline = std::chrono::steady_clock::now() + seconds(60);
		while (set_netns_mode("shared") != 0) {
			if (std::chrono::steady_clock::now() > deadline) {
				ADD_FAILURE() << "rdma system set netns shared: still busy after 60 s";
				return;
			}
			std::this_thread::sleep_for(milliseconds(100));
		}
	}
	ExclusiveNetns(const ExclusiveNetns &) = delete;
	ExclusiveNetns &operator=(const ExclusiveNetns &) = delete;
	[[nodiscard]] bool ok() const { return ok_; }

private:
	bool ok_ = false;
};

// The port's largest message, from ibv_devinfo -v; 0 if unknown.
std::uint64_t max_msg_sz(const std::string &dev)
{
	if (which("ibv_devinfo").empty())
		return 0;
	const auto r = run_process({which("ibv_devinfo"), "-v", "-d", dev, "-i", "1"});
	const auto at = r.out.find("max_msg_sz:");
	if (!r.ok() || at == std::string::npos)
		return 0;
	return std::strtoull(r.out.c_str() + at + 11, nullptr, 0);
}

// Why a child's outcome is not ok.
std::string how(const ExitStatus &st)
{
	if (!st.exited)
		return "the child was killed by signal " + std::to_string(st.signal);
	return "the child exited with " + std::to_string(st.exit_code) +
	       " (2: it threw, 3: no report)";
}

struct ServiceIdReport {
	int user_default = -1;
	int user_range_top = -1;
	int outside = -1;
	int ip_cm_tcp_18515 = -1;
	int ip_cm_first = -1;
	int ip_cm_last = -1;
};

} // namespace

TEST(Tenant, ServiceIdsOfTheUserRangeOnlyWithoutCapability)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	auto with = [&](std::uint64_t id) {
		rv::AttachParams p = params_for(n);
		p.service_id = id;
		return attach_errno(p);
	};

	const auto out = run_in_child<ServiceIdReport>([&] {
		become_nobody();
		ServiceIdReport r;
		r.user_default = with(0);
		r.user_range_top = with(0x10001255ffffffffULL);
		r.outside = with(0x1000125600000000ULL);
		r.ip_cm_tcp_18515 = with(0x0000000001064853ULL);
		r.ip_cm_first = with(0x0000000001000000ULL);
		r.ip_cm_last = with(0x0000000001ffffffULL);
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->user_default, 0);
	EXPECT_EQ(out.report->user_range_top, 0);
	EXPECT_EQ(out.report->outside, EACCES);
	EXPECT_EQ(out.report->ip_cm_tcp_18515, EADDRNOTAVAIL);
	EXPECT_EQ(out.report->ip_cm_first, EADDRNOTAVAIL);
	EXPECT_EQ(out.report->ip_cm_last, EADDRNOTAVAIL);

	// Root has CAP_NET_BIND_SERVICE; the RDMA CM's ids are its own.
	EXPECT_EQ(with(0x1000125600000000ULL), 0);
	EXPECT_EQ(with(0x0000000001064853ULL), EADDRNOTAVAIL);
}

struct NetnsReport {
	int own_netns = -1;
	int new_netns = -1;
};

// Shared namespace mode (the default): the device is visible from every
// namespace, but a RoCE GID is an address of its netdev's.
TEST(Tenant, RoceGidOnlyFromItsNetdevsNamespace)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams p = params_for(n);

	const auto out = run_in_child<NetnsReport>([&] {
		NetnsReport r;
		become_nobody();
		r.own_netns = attach_errno(p);
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->own_netns, 0);

	const auto in_new = run_in_child<NetnsReport>([&] {
		NetnsReport r;
		enter_new_netns();
		become_nobody();
		r.new_netns = attach_errno(p);
		return r;
	});
	ASSERT_TRUE(in_new.ok()) << how(in_new);
	EXPECT_EQ(in_new.report->new_netns, EADDRNOTAVAIL);
}

struct ExclusiveReport {
	int uverbs_open = -1;
	int attach = -1;
};

// Exclusive namespace mode: a device of another namespace is refused
// with EPERM, as uverbs refuses the open of its character device.
TEST(Tenant, DeviceOfAnotherNamespaceInExclusiveMode)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	if (which("rdma").empty())
		GTEST_SKIP() << "needs the rdma tool (iproute2)";
	const rv::AttachParams p = params_for(n);
	const std::string uverbs = "/dev/infiniband/uverbs0";

	ExclusiveNetns mode;
	ASSERT_TRUE(mode.ok()) << "rdma system set netns exclusive failed: is a namespace other than the initial one alive?";
	// The initial namespace is the devices': nothing changes there.
	EXPECT_EQ(attach_errno(p), 0);
	const auto out = run_in_child<ExclusiveReport>([&] {
		ExclusiveReport r;
		enter_new_netns();
		become_nobody();
		const int fd = ::open(uverbs.c_str(), O_RDWR | O_CLOEXEC);
		r.uverbs_open = fd < 0 ? errno : 0;
		if (fd >= 0)
			::close(fd);
		r.attach = attach_errno(p);
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->uverbs_open, EPERM) << uverbs;
	EXPECT_EQ(out.report->attach, EPERM);
}

struct CacheReport {
	std::uint32_t asked_more = 0;
	std::uint32_t limit = 0;
	std::uint32_t asked_less = 0;
};

TEST(Tenant, MrCacheSizeIsACeiling)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	const auto ceiling = module_param("mr_cache_size");
	ASSERT_TRUE(ceiling);

	const auto out = run_in_child<CacheReport>([&] {
		become_nobody();
		CacheReport r;
		rv::AttachParams p = params_for(n);
		p.mr_cache_size = 1048576;	// 1 TiB
		rv::Device d = open_declared();
		r.asked_more = d.attach(p).mr_cache_size;
		r.limit = d.cache_stats().limit_cache_size;
		p = params_for(n);
		p.mr_cache_size = 3;
		rv::Device d2 = open_declared();
		r.asked_less = d2.attach(p).mr_cache_size;
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->asked_more, *ceiling);
	EXPECT_EQ(out.report->limit, *ceiling);
	EXPECT_EQ(out.report->asked_less, 3u);
}

struct PostReport {
	int above = -1;
	int u32_max = -1;
	int at = -1;
};

// A write longer than the port's largest message is refused before its
// MR is looked up: the MR named here does not exist, which is what a
// write of an acceptable length is refused for.
TEST(Tenant, PostAboveThePortsLargestMessage)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const std::uint64_t max = max_msg_sz(n.dev);
	if (!max)
		GTEST_SKIP() << "ibv_devinfo does not tell " << n.dev << "'s max_msg_sz";
	if (max >= 0xffffffffULL)
		GTEST_SKIP() << n.dev << "'s max_msg_sz is 4 GiB or more: POST's u32 length cannot exceed it";

	const auto out = run_in_child<PostReport>([&] {
		become_nobody();
		PostReport r;
		rv::Device d = open_declared();
		(void)d.attach(params_for(n));
		rv::Connection c = rv::Connection::create(d, remote_of(n, n1));
		auto post = [&](std::uint64_t len) {
			rv_post_write_params_in in{};
			in.handle = c.handle();
			in.loc_mr_handle = 1;
			in.loc_mr_addr = 0x10000000;
			in.loc_mr_length = 0x100000000ULL;
			in.loc_mr_access = IBV_ACCESS_KERNEL;
			in.loc_addr = in.loc_mr_addr;
			in.length = len;
			return post_write_errno(d.fd(), in);
		};
		r.above = post(max + 1);
		r.u32_max = post(0xffffffffULL);
		r.at = post(max);
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->above, EMSGSIZE) << "max_msg_sz " << max;
	EXPECT_EQ(out.report->u32_max, EMSGSIZE);
	EXPECT_EQ(out.report->at, EINVAL) << "no such MR";
}
