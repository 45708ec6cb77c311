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
//   - The rdma cgroup: a handle per attached process, an object per PD,
//     QP and MR, charged to the cgroup of the process that made rv create
//     them, refused past rdma.max, returned when they go.
//   - The memory cgroup: what rv allocates for a connection is charged
//     to the process that created it.
//   - Per-user limits on jobs, connections and QPs (module parameters).
//   - mprotect: no remote write into memory made read-only.
// (A REQ from another uid's job: Security.OtherUidCannotConnectToTheJob.)
#include <gtest/gtest.h>

#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/error.hpp>
#include <rv/mapping.hpp>

#include "../support/subprocess.hpp"
#include "child.hpp"
#include "conn_util.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

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

struct ExclusiveReport {
	int uverbs_open = -1;
	int attach = -1;
};

// Exclusive namespace mode: a device of another namespace is refused
// with EPERM, as uverbs refuses the open of its character device.
//
// This test comes before any other that makes a network namespace: the
// RDMA core (6.12 at least) removes the compat devices of a namespace
// that is being torn down while `rdma system set netns exclusive` removes
// them all, and KASAN reports a use-after-free in kobject_uevent_env()
// (rdma_dev_exit_net() hides the namespace from rdma_compatdev_set()'s
// check before it removes its compat devices). No namespace is going away
// here: none was made in this boot before. The switch back to shared
// mode adds compat devices only for namespaces that are still listed.
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

namespace {

namespace fs = std::filesystem;

// A cgroup v2 of the test's own with one controller (rdma, memory),
// removed after the test (its processes must have exited). Mounts the
// unified hierarchy if the bed has none. missing() names the controller
// if the kernel has none of that name.
class TestCgroup {
public:
	explicit TestCgroup(const std::string &controller)
	{
		const fs::path root = "/sys/fs/cgroup";
		if (!fs::exists(root / "cgroup.controllers") &&
		    ::mount("none", root.c_str(), "cgroup2", 0, nullptr) < 0)
			rv::throw_errno("mount cgroup2");
		std::istringstream have(read_file(root / "cgroup.controllers"));
		std::string c;
		while (have >> c && c != controller) {
		}
		if (c != controller) {
			missing_ = controller;
			return;
		}
		write_file(root / "cgroup.subtree_control", "+" + controller);
		dir_ = root / ("rv-test-" + std::to_string(::getpid()));
		fs::create_directory(dir_);
	}
	// Limits back to max before the cgroup goes: the rdma controller
	// frees a device's pool of a cgroup only when its usage is 0 and its
	// limits are max. One that stays (usage 0, a limit set) when the
	// cgroup is removed is left on the device's list; the device's
	// unregistration (rmmod rdma_rxe) then writes into the freed cgroup
	// (KASAN: use-after-free in free_cg_rpool_locked, 6.12).
	~TestCgroup()
	{
		for (const std::string &dev : limited_) {
			try {
				set("rdma.max", dev + " hca_handle=max hca_object=max");
			} catch (const std::exception &e) {
				ADD_FAILURE() << e.what();
			}
		}
		std::error_code ec;
		if (!dir_.empty())
			fs::remove(dir_, ec);
	}
	[[nodiscard]] const std::string &missing() const { return missing_; }
	TestCgroup(const TestCgroup &) = delete;
	TestCgroup &operator=(const TestCgroup &) = delete;

	void set(const std::string &file, const std::string &v)
	{
		write_file(dir_ / file, v);
		if (file == "rdma.max")
			limited_.insert(v.substr(0, v.find(' ')));
	}
	[[nodiscard]] std::string get(const std::string &file) const
	{
		return read_file(dir_ / file);
	}
	// Moves the calling process in.
	void enter() const { write_file(dir_ / "cgroup.procs", std::to_string(::getpid())); }

	// hca_handle and hca_object of dev in rdma.current.
	[[nodiscard]] std::pair<unsigned, unsigned> rdma_current(const std::string &dev) const
	{
		std::istringstream in(get("rdma.current"));
		std::string line;
		while (std::getline(in, line)) {
			if (line.rfind(dev + " ", 0) != 0)
				continue;
			unsigned h = 0, o = 0;
			if (std::sscanf(line.c_str() + dev.size(),
					" hca_handle=%u hca_object=%u", &h, &o) == 2)
				return {h, o};
		}
		return {0, 0};
	}

private:
	fs::path dir_;
	std::string missing_;
	std::set<std::string> limited_;	// devices with an rdma.max set
};

#define RV_CGROUP_OR_SKIP(var, controller)                                   \
	TestCgroup var(controller);                                          \
	if (!var.missing().empty())                                          \
		GTEST_SKIP() << "the kernel has no " << var.missing()         \
			     << " cgroup controller"

// A module parameter set for one test, restored after it.
class ParamGuard {
public:
	ParamGuard(const std::string &name, std::uint64_t v)
		: path_(fs::path("/sys/module/rv/parameters") / name),
		  old_(read_file(path_))
	{
		write_file(path_, std::to_string(v));
	}
	~ParamGuard()
	{
		try {
			write_file(path_, old_);
		} catch (const std::exception &e) {
			ADD_FAILURE() << e.what();
		}
	}
	ParamGuard(const ParamGuard &) = delete;
	ParamGuard &operator=(const ParamGuard &) = delete;

private:
	fs::path path_;
	std::string old_;
};

// CONN_CREATE on d to a RoCE v2 node at 10.99.0.ip, which does not exist:
// a connection is created without any traffic.
int conn_create_to(rv::Device &d, const Node &n, std::uint8_t ip)
{
	rv::Gid g{};
	g[10] = 0xff;
	g[11] = 0xff;
	g[12] = 10;
	g[13] = 99;
	g[15] = ip;
	rv_conn_create_params p{};
	p.in = rv::Remote::roce(g, 0x0a630000u | ip, n.gid_index, 1).to_uapi();
	return conn_create_errno(d.fd(), p);
}

// REG_MEM of m on d: 0 or the errno.
int reg_errno(rv::Device &d, const rv::Mapping &m)
{
	try {
		rv::MemoryRegion r = d.reg_mem(m.data(), m.size(), rv::access::psm3_recv);
		r.release();
		return 0;
	} catch (const std::system_error &e) {
		return e.code().value();
	}
}

struct CgroupReport {
	int attach = -1;
	int second_attach = -1;
	int conn = -1;
	int reg = -1;
	unsigned handles = 0;
	unsigned objects = 0;
};

// In the cgroup, as nobody: attach, create a connection, register 64 KiB,
// note what rdma.current says, attach again.
CgroupReport in_cgroup(const TestCgroup &cg, const Node &n)
{
	cg.enter();
	become_nobody();
	CgroupReport r;
	rv::Device d = open_declared();
	const rv::AttachParams p = params_for(n);
	try {
		(void)d.attach(p);
		r.attach = 0;
	} catch (const std::system_error &e) {
		r.attach = e.code().value();
		return r;
	}
	r.conn = conn_create_to(d, n, 1);
	const rv::Mapping m = rv::Mapping::anonymous(64 * KiB);
	r.reg = reg_errno(d, m);
	std::tie(r.handles, r.objects) = cg.rdma_current(n.dev);
	r.second_attach = attach_errno(p);
	return r;
}

} // namespace

// As uverbs charges its contexts and objects: ATTACH a handle (and, for
// a new job, its PD and registration QP), CONN_CREATE an object per QP of
// the connection, REG_MEM one per MR; past rdma.max the ioctl fails with
// EAGAIN, and the charges go back when the objects go. The QPs' CQs are
// ib_core's pool's, made by no process and charged to none.
TEST(Tenant, RdmaCgroupChargesAndLimits)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	RV_CGROUP_OR_SKIP(cg, "rdma");
	const unsigned qps = effective_num_conn(0);
	const unsigned job = 2, conn = qps, mr = 1;
	auto limit = [&](unsigned h, unsigned o) {
		cg.set("rdma.max", n.dev + " hca_handle=" + std::to_string(h) +
					   " hca_object=" + std::to_string(o));
	};
	// Objects of a process that exited go from a kworker soon after.
	auto settle = [&] {
		const auto deadline = std::chrono::steady_clock::now() + seconds(30);
		auto now = cg.rdma_current(n.dev);
		while (now != std::pair<unsigned, unsigned>{0, 0} &&
		       std::chrono::steady_clock::now() < deadline) {
			std::this_thread::sleep_for(milliseconds(100));
			now = cg.rdma_current(n.dev);
		}
		return now;
	};
	auto run = [&] {
		const auto left = settle();
		EXPECT_EQ(left.first + left.second, 0u) << "charges left";
		return run_in_child<CgroupReport>([&] { return in_cgroup(cg, n); });
	};

	limit(0, 0);
	auto out = run();
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->attach, EAGAIN) << "no handle";

	limit(1, job - 1);
	out = run();
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->attach, EAGAIN) << "no room for the job's objects";

	limit(1, job);
	out = run();
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->attach, 0);
	EXPECT_EQ(out.report->second_attach, EAGAIN) << "a second handle";
	EXPECT_EQ(out.report->conn, EAGAIN) << "the connection's QPs";
	EXPECT_EQ(out.report->reg, EAGAIN) << "an MR";
	EXPECT_EQ(out.report->handles, 1u);
	EXPECT_EQ(out.report->objects, job);

	limit(2, job + conn + mr);
	out = run();
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->attach, 0);
	EXPECT_EQ(out.report->second_attach, 0);
	EXPECT_EQ(out.report->conn, 0);
	EXPECT_EQ(out.report->reg, 0);
	EXPECT_EQ(out.report->handles, 1u);
	EXPECT_EQ(out.report->objects, job + conn + mr);

	// The processes are gone: so are the objects, and the charges.
	const auto now = settle();
	EXPECT_EQ(now.first, 0u);
	EXPECT_EQ(now.second, 0u);
}

struct MemcgReport {
	std::uint64_t before = 0;
	std::uint64_t after = 0;
	int errors = 0;
};

// The memory rv allocates for connections (their QPs' work request
// contexts: q_depth of them per connection) is charged to the memory
// cgroup of the process that creates them.
TEST(Tenant, ConnectionMemoryChargedToTheCreatorsMemcg)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	RV_CGROUP_OR_SKIP(cg, "memory");
	constexpr unsigned conns = 50;
	const auto q_depth = module_param("q_depth");
	ASSERT_TRUE(q_depth);
	auto current = [&] { return std::stoull(cg.get("memory.current")); };

	const auto out = run_in_child<MemcgReport>([&] {
		cg.enter();
		become_nobody();
		MemcgReport r;
		rv::Device d = open_declared();
		(void)d.attach(params_for(n));
		r.before = current();
		for (unsigned i = 0; i < conns; i++)
			r.errors += conn_create_to(d, n, static_cast<std::uint8_t>(i + 1)) != 0;
		r.after = current();
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->errors, 0);
	// At least 8 bytes per work request of each connection's send queue:
	// a context per send slot.
	const std::uint64_t at_least = std::uint64_t{conns} * *q_depth * 8;
	EXPECT_GE(out.report->after - out.report->before, at_least)
		<< conns << " connections: memory.current " << out.report->before
		<< " -> " << out.report->after;
	note(std::to_string(conns) + " connections charged " +
	     std::to_string(out.report->after - out.report->before) +
	     " bytes to the creator's memory cgroup");
}

// Until uid's jobs, connections and QPs (/sys/kernel/debug/rv/users) are
// gone: those of processes that exited go from a kworker soon after.
void settle_uid(uid_t uid)
{
	const std::string mine = "uid=" + std::to_string(uid) + " ";
	const auto deadline = std::chrono::steady_clock::now() + seconds(30);
	std::string users;
	do {
		users = read_file("/sys/kernel/debug/rv/users");
		if (users.find(mine) == std::string::npos)
			return;
		std::this_thread::sleep_for(milliseconds(100));
	} while (std::chrono::steady_clock::now() < deadline);
	ADD_FAILURE() << "uid " << uid << " still holds, after 30 s: " << users;
}

struct LimitReport {
	int first = -1;
	int second = -1;
};

TEST(Tenant, PerUserLimitsOnJobsConnectionsAndQps)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	const unsigned qps = effective_num_conn(0);

	{
		ParamGuard g("max_jobs_per_user", 1);
		auto as_nobody = [&] {
			become_nobody();
			LimitReport r;
			rv::Device a = open_declared();
			(void)a.attach(params_for(n));
			r.first = 0;
			r.second = attach_errno(params_for(n));	// another key
			return r;
		};
		settle_uid(nobody_id);
		const auto out = run_in_child<LimitReport>(as_nobody);
		ASSERT_TRUE(out.ok()) << how(out);
		EXPECT_EQ(out.report->second, EDQUOT) << "a second job";
		// Root has CAP_SYS_RESOURCE; the job of the first child is gone.
		rv::Device a = open_declared();
		(void)a.attach(params_for(n));
		EXPECT_EQ(attach_errno(params_for(n)), 0) << "root's second job";
	}
	auto conns = [&] {
		settle_uid(nobody_id);
		return run_in_child<LimitReport>([&] {
			become_nobody();
			LimitReport r;
			rv::Device d = open_declared();
			(void)d.attach(params_for(n));
			r.first = conn_create_to(d, n, 1);
			r.second = conn_create_to(d, n, 2);
			return r;
		});
	};
	{
		ParamGuard g("max_conns_per_user", 1);
		const auto out = conns();
		ASSERT_TRUE(out.ok()) << how(out);
		EXPECT_EQ(out.report->first, 0);
		EXPECT_EQ(out.report->second, EDQUOT) << "a second connection";
	}
	{
		ParamGuard g("max_qps_per_user", qps + 1);
		const auto out = conns();
		ASSERT_TRUE(out.ok()) << how(out);
		EXPECT_EQ(out.report->first, 0);
		EXPECT_EQ(out.report->second, EDQUOT) << "QPs of a second connection";
	}
	{
		ParamGuard g("max_conns_per_user", 0);	// no limit
		const auto out = conns();
		ASSERT_TRUE(out.ok()) << how(out);
		EXPECT_EQ(out.report->first, 0);
		EXPECT_EQ(out.report->second, 0);
	}
}

namespace {

constexpr std::size_t first_attach_threads = 8;

struct FirstAttachReport {
	int error[first_attach_threads];	// errno of each ATTACH, or 0
	std::uint32_t index[first_attach_threads];	// its rv_index
};

} // namespace

// The first ATTACHes of a new job, made at once, make one job: the first
// to come lists it while it makes its verbs objects, and the others wait
// for it and join. So none is refused for the per-user job limit, even
// at 1, and their rv_index values are all different.
TEST(Tenant, ConcurrentFirstAttachesOfOneJobCountOnce)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	ParamGuard g("max_jobs_per_user", 1);

	for (int round = 0; round < 10; round++) {
		settle_uid(nobody_id);
		const auto out = run_in_child<FirstAttachReport>([&] {
			become_nobody();
			const rv::AttachParams p = params_for(n);
			FirstAttachReport r{};
			std::vector<rv::Device> devs;
			for (std::size_t i = 0; i < first_attach_threads; i++)
				devs.push_back(open_declared());
			std::barrier go(static_cast<std::ptrdiff_t>(first_attach_threads));
			std::vector<std::jthread> threads;
			for (std::size_t i = 0; i < first_attach_threads; i++) {
				threads.emplace_back([&, i] {
					go.arrive_and_wait();
					try {
						r.index[i] = devs[i].attach(p).rv_index;
					} catch (const std::system_error &e) {
						r.error[i] = e.code().value();
					}
				});
			}
			threads.clear();	// joins them
			return r;
		});
		ASSERT_TRUE(out.ok()) << how(out);
		std::set<std::uint32_t> indices;
		for (std::size_t i = 0; i < first_attach_threads; i++) {
			EXPECT_EQ(out.report->error[i], 0)
				<< "round " << round << ", thread " << i << ": "
				<< std::strerror(out.report->error[i]);
			if (!out.report->error[i])
				indices.insert(out.report->index[i]);
		}
		EXPECT_EQ(indices.size(), first_attach_threads)
			<< "round " << round << ": not all in one job";
	}
}

namespace {

struct MprotectReport {
	int cached_before = -1;	// the cached MR's REG_MEM again: a hit
	int after = -1;		// the same after mprotect(PROT_READ)
	std::uint32_t removed = 0;
};

} // namespace

// Issue 22's fix, as an unprivileged user: once the memory is read-only,
// a cached MR that allows remote writes is dropped, and REG_MEM asking
// for remote writes fails as a first registration would.
TEST(Tenant, NoRemoteWriteIntoMemoryMadeReadOnly)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);

	const auto out = run_in_child<MprotectReport>([&] {
		become_nobody();
		MprotectReport r;
		rv::Device d = open_declared();
		(void)d.attach(params_for(n));
		const rv::Mapping m = rv::Mapping::anonymous(256 * KiB);
		{
			rv::MemoryRegion mr = d.reg_mem(m.data(), m.size(),
							rv::access::psm3_recv);
		}
		r.cached_before = reg_errno(d, m);
		const auto before = d.cache_stats();
		if (::mprotect(m.data(), m.size(), PROT_READ) < 0)
			rv::throw_errno("mprotect");
		r.after = reg_errno(d, m);
		r.removed = static_cast<std::uint32_t>(d.cache_stats().remove - before.remove);
		return r;
	});
	ASSERT_TRUE(out.ok()) << how(out);
	EXPECT_EQ(out.report->cached_before, 0);
	EXPECT_EQ(out.report->after, EFAULT);
	EXPECT_EQ(out.report->removed, 1u) << "the cached MR";
}
