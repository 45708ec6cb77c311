// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Job-devices: files of one uid that attach with the same device, port,
// GID index, job key and service id share one, must agree on its
// parameters, and get distinct rv_index values; another uid gets its own.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/device.hpp>
#include <rv/mapping.hpp>

#include "child.hpp"
#include "vm_env.hpp"

using rv::test::attach_new;
using rv::test::ioctl_errno;
using rv::test::open_declared;
using rv::test::params_for;

namespace {

int raw_attach(int fd, const rv::AttachParams &p)
{
	rv_attach_params a{};
	a.in = p.to_uapi();
	return ioctl_errno(fd, RV_IOCTL_ATTACH, &a);
}

// rv_index of a successful attach, or -errno.
long attach_index(rv::Device &dev, const rv::AttachParams &p)
{
	rv_attach_params a{};
	a.in = p.to_uapi();
	int err = ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, &a);
	return err ? -err : static_cast<long>(a.out.rv_index);
}

} // namespace

TEST(Job, SameKeySharesJobDevice)
{
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams p = params_for(n);

	std::vector<rv::Device> devs;
	for (std::uint32_t i = 0; i < 4; i++) {
		devs.push_back(open_declared());
		EXPECT_EQ(devs.back().attach(p).rv_index, i);
	}
	// The lowest free index is reused.
	devs[1].close();
	rv::Device again = open_declared();
	EXPECT_EQ(again.attach(p).rv_index, 1u);
	rv::Device next = open_declared();
	EXPECT_EQ(next.attach(p).rv_index, 4u);
}

TEST(Job, ServiceIdZeroMeansDefault)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);

	p.service_id = 0;
	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(p).rv_index, 0u);

	p.service_id = 0x1000125500000001ULL;	// the module default
	rv::Device b = open_declared();
	EXPECT_EQ(b.attach(p).rv_index, 1u);

	p.service_id = 0x1234;			// another job-device
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 0u);
}

TEST(Job, OnlyJobKeyLenBytesCount)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);

	p.job_key_len = 8;
	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(p).rv_index, 0u);

	for (std::size_t i = 8; i < p.job_key.size(); i++)
		p.job_key[i] ^= 0xff;
	rv::Device b = open_declared();
	EXPECT_EQ(b.attach(p).rv_index, 1u);

	p.job_key_len = 16;
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 0u);

	p.job_key_len = 9;
	rv::Device d = open_declared();
	EXPECT_EQ(d.attach(p).rv_index, 0u);
}

TEST(Job, OtherDeviceIsSeparate)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::JobKey key = rv::random_job_key();

	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(params_for(n0, key)).rv_index, 0u);
	rv::Device b = open_declared();
	EXPECT_EQ(b.attach(params_for(n1, key)).rv_index, 0u);
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(params_for(n0, key)).rv_index, 1u);
	rv::Device d = open_declared();
	EXPECT_EQ(d.attach(params_for(n1, key)).rv_index, 1u);
}

TEST(Job, OtherGidIndexIsSeparate)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::RdmaSysfs sysfs;
	std::optional<std::uint16_t> other;
	std::optional<rv::Gid> other_gid;

	// Any other entry of the table that holds a GID.
	std::size_t len = sysfs.gid_table_len(n.dev, 1);
	for (std::size_t i = 0; i < len && !other; i++) {
		if (i == n.gid_index || !sysfs.gid_type(n.dev, 1, i))
			continue;
		auto g = sysfs.gid(n.dev, 1, i);
		if (g && *g != rv::Gid{}) {
			other = static_cast<std::uint16_t>(i);
			other_gid = g;
		}
	}
	if (!other)
		GTEST_SKIP() << n.dev << " has no second GID";

	const rv::AttachParams p = params_for(n);
	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(p).rv_index, 0u);

	rv::AttachParams q = p;
	q.loc_gid_index = *other;
	q.loc_gid = *other_gid;
	rv::Device b = open_declared();
	EXPECT_EQ(b.attach(q).rv_index, 0u) << "GID index " << *other;
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 1u);
}

TEST(Job, DisagreementIsEbusy)
{
	RV_NODE_OR_SKIP(n, 0);

	struct Field {
		const char *name;
		std::function<void(rv::AttachParams &)> change;
	};
	const std::vector<Field> fields = {
		{"num_conn 0 vs 8", [](auto &p) { p.num_conn = 8; }},
		{"index_bits 9 vs 8", [](auto &p) { p.index_bits = 8; }},
		{"q_depth 0 vs 128", [](auto &p) { p.q_depth = 128; }},
		{"reconnect_timeout 30 vs 60",
		 [](auto &p) { p.reconnect_timeout = 60; }},
		{"hb_interval 1000 vs 2000", [](auto &p) { p.hb_interval = 2000; }},
		{"hb_interval 1000 vs 0", [](auto &p) { p.hb_interval = 0; }},
		{"reconnect_timeout 30 vs 0",
		 [](auto &p) { p.reconnect_timeout = 0; }},
	};

	for (const auto &f : fields) {
		SCOPED_TRACE(f.name);
		const rv::AttachParams p = params_for(n);
		rv::Device first = open_declared();
		ASSERT_EQ(first.attach(p).rv_index, 0u);

		rv::AttachParams q = p;
		f.change(q);
		rv::Device second = open_declared();
		EXPECT_EQ(raw_attach(second.fd(), q), EBUSY);
		// No trace: the same file joins with agreeing parameters.
		EXPECT_EQ(attach_index(second, p), 1);
	}
}

TEST(Job, AgreementIsAfterDefaultsAndPolicy)
{
	RV_NODE_OR_SKIP(n, 0);

	struct Pair {
		const char *name;
		std::function<void(rv::AttachParams &)> a, b;
	};
	const std::vector<Pair> pairs = {
		{"num_conn 0 = default 4", [](auto &p) { p.num_conn = 0; },
		 [](auto &p) { p.num_conn = 4; }},
		{"q_depth 0 = default 4000", [](auto &p) { p.q_depth = 0; },
		 [](auto &p) { p.q_depth = 4000; }},
		{"reconnect_timeout 1000 = 300 (max_reconnect_timeout)",
		 [](auto &p) { p.reconnect_timeout = 1000; },
		 [](auto &p) { p.reconnect_timeout = 300; }},
		{"hb_interval 50 = 100 (min_hb_interval)",
		 [](auto &p) { p.hb_interval = 50; },
		 [](auto &p) { p.hb_interval = 100; }},
		{"hb_interval 1 = 99", [](auto &p) { p.hb_interval = 1; },
		 [](auto &p) { p.hb_interval = 99; }},
	};

	for (const auto &c : pairs) {
		SCOPED_TRACE(c.name);
		rv::AttachParams p = params_for(n);
		c.a(p);
		rv::Device first = open_declared();
		ASSERT_EQ(first.attach(p).rv_index, 0u);
		rv::AttachParams q = p;
		c.b(q);
		rv::Device second = open_declared();
		EXPECT_EQ(attach_index(second, q), 1);
	}
}

TEST(Job, PerProcessFieldsMayDiffer)
{
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams p = params_for(n);
	rv::Device first = open_declared();
	ASSERT_EQ(first.attach(p).rv_index, 0u);

	std::vector<std::function<void(rv::AttachParams &)>> changes = {
		[](auto &q) { q.mr_cache_size = 16; },
		[](auto &q) { q.cq_entries = 0; },
		[](auto &q) { q.cq_entries = 1000; },
		[](auto &q) { q.context = 0x1234; },
		[](auto &q) { q.fr_page_list_len = 0; },
	};
	if (!rv::test::upstream_form()) {
		changes.emplace_back([](auto &q) {
			q.rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU;
		});
	}
	std::vector<rv::Device> devs;
	std::uint32_t want = 1;
	for (auto &change : changes) {
		SCOPED_TRACE(want);
		rv::AttachParams q = p;
		change(q);
		devs.push_back(open_declared());
		EXPECT_EQ(attach_index(devs.back(), q), want++);
	}
}

TEST(Job, LastCloseFreesJobDevice)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);

	p.num_conn = 2;
	{
		rv::Device a = open_declared();
		ASSERT_EQ(a.attach(p).rv_index, 0u);
		rv::Device b = open_declared();
		ASSERT_EQ(b.attach(p).rv_index, 1u);
	}
	// Both closed: the job-device is gone, other parameters are fine.
	p.num_conn = 3;
	p.index_bits = 4;
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 0u);
}

namespace {

constexpr uid_t nobody = 65534;
constexpr gid_t nogroup = 65534;

struct UidReport {
	int stage;	// 0 = all done, else the step that failed
	int err;
	uid_t euid;
	long index_a;	// rv_index or -errno
	long index_b;
	long index_other_params;
};

} // namespace

TEST(Job, OtherUidGetsOwnJobDevice)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams p = params_for(n);
	const std::string path = rv::test::device_path();

	rv::Device a = open_declared();
	ASSERT_EQ(a.attach(p).rv_index, 0u);
	rv::Device b = open_declared();
	ASSERT_EQ(b.attach(p).rv_index, 1u);

	auto out = rv::test::run_in_child<UidReport>([&] {
		UidReport r{};
		auto fail = [&r](int stage) {
			r.stage = stage;
			r.err = errno;
			return r;
		};
		if (::setgroups(0, nullptr) < 0)
			return fail(1);
		if (::setresgid(nogroup, nogroup, nogroup) < 0)
			return fail(2);
		if (::setresuid(nobody, nobody, nobody) < 0)
			return fail(3);
		r.euid = ::geteuid();

		{
			rv::Device x(path);
			(void)x.capability();
			r.index_a = attach_index(x, p);
			rv::Device y(path);
			(void)y.capability();
			r.index_b = attach_index(y, p);
		}
		// Its own job-device is gone with x and y; the parent's,
		// still open, does not bind this uid to its parameters.
		rv::AttachParams q = p;
		q.num_conn = 9;
		rv::Device z(path);
		(void)z.capability();
		r.index_other_params = attach_index(z, q);
		return r;
	});

	ASSERT_TRUE(out.exited) << "signal " << out.signal;
	ASSERT_TRUE(out.report) << "exit " << out.exit_code;
	const UidReport &r = *out.report;
	ASSERT_EQ(r.stage, 0) << "setup step " << r.stage << ": "
			      << std::strerror(r.err);
	EXPECT_EQ(r.euid, nobody);
	EXPECT_EQ(r.index_a, 0) << "uid 65534 must start its own rv_index space";
	EXPECT_EQ(r.index_b, 1);
	EXPECT_EQ(r.index_other_params, 0)
		<< "uid 65534 with other parameters than uid 0's job";

	// The parent's job-device was not touched.
	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 2u);
}

TEST(Index, IndexBits2GivesFourIndices)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.index_bits = 2;

	std::vector<rv::Device> devs;
	for (std::uint32_t i = 0; i < 4; i++) {
		devs.push_back(open_declared());
		ASSERT_EQ(devs.back().attach(p).rv_index, i);
	}
	rv::Device fifth = open_declared();
	EXPECT_EQ(raw_attach(fifth.fd(), p), ENOSPC);
	EXPECT_EQ(raw_attach(fifth.fd(), p), ENOSPC);

	// The failed file holds nothing: once an index is free it gets it.
	devs[2].close();
	EXPECT_EQ(attach_index(fifth, p), 2);
	rv::Device sixth = open_declared();
	EXPECT_EQ(raw_attach(sixth.fd(), p), ENOSPC);

	devs[3].close();
	devs[0].close();
	EXPECT_EQ(attach_index(sixth, p), 0);
	rv::Device seventh = open_declared();
	EXPECT_EQ(attach_index(seventh, p), 3);
}

TEST(Index, IndexBits0AllowsOneProcess)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.index_bits = 0;

	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(p).rv_index, 0u);
	rv::Device b = open_declared();
	EXPECT_EQ(raw_attach(b.fd(), p), ENOSPC);
	a.close();
	EXPECT_EQ(attach_index(b, p), 0);
}

namespace {

constexpr int concurrent_procs = 64;
constexpr int concurrent_rounds = 5;

// Shared between the processes of the concurrency test.
struct Shared {
	std::atomic<int> owner[1 << 6];	// pid holding each rv_index, or 0
	std::atomic<int> errors;
	std::atomic<int> attaches;
	std::atomic<int> first_error;	// -errno or a code below
	std::atomic<int> max_live;
	std::atomic<int> live;
};

enum : int {
	err_duplicate = 1000,	// an rv_index another process held
	err_range = 1001,	// rv_index >= 64
};

void note_error(Shared &s, int code)
{
	int zero = 0;
	s.errors.fetch_add(1);
	s.first_error.compare_exchange_strong(zero, code);
}

// One child: rounds of attach, check the index is its own, close.
int concurrent_child(Shared &s, const std::string &path,
		     const rv::AttachParams &p, int start_fd)
{
	// Wait for the start signal (EOF on the pipe).
	char c;
	while (::read(start_fd, &c, 1) < 0 && errno == EINTR)
		;
	const int me = static_cast<int>(::getpid());

	for (int round = 0; round < concurrent_rounds; round++) {
		try {
			rv::Device dev(path);
			(void)dev.capability();
			long idx = attach_index(dev, p);
			if (idx < 0) {
				note_error(s, static_cast<int>(idx));
				continue;
			}
			s.attaches.fetch_add(1);
			if (idx >= (1 << 6)) {
				note_error(s, err_range);
				continue;
			}
			int l = s.live.fetch_add(1) + 1;
			int m = s.max_live.load();
			while (l > m && !s.max_live.compare_exchange_weak(m, l))
				;
			int prev = s.owner[idx].exchange(me);
			if (prev)
				note_error(s, err_duplicate);
			// Hold it a little while the others run.
			for (int i = 0; i < (me + round) % 4; i++)
				::sched_yield();
			if (s.owner[idx].exchange(0) != me)
				note_error(s, err_duplicate);
			s.live.fetch_sub(1);
			// Cleared before the file (and the index) goes.
		} catch (const std::system_error &e) {
			note_error(s, -e.code().value());
		}
	}
	return 0;
}

} // namespace

TEST(Index, ConcurrentAttachDetach64Processes)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.index_bits = 6;	// exactly one index per process
	p.cq_entries = 0;
	const std::string path = rv::test::device_path();

	rv::Mapping mem = rv::Mapping::map(sizeof(Shared), PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS);
	auto *shared = new (mem.data()) Shared{};

	int fds[2];
	ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
	rv::UniqueFd start_rd(fds[0]);
	rv::UniqueFd start_wr(fds[1]);

	std::vector<pid_t> pids;
	std::fflush(nullptr);
	for (int i = 0; i < concurrent_procs; i++) {
		pid_t pid = ::fork();
		ASSERT_GE(pid, 0) << std::strerror(errno);
		if (pid == 0) {
			start_wr.reset();
			::_exit(concurrent_child(*shared, path, p,
						 start_rd.get()));
		}
		pids.push_back(pid);
	}
	start_wr.reset();	// go

	int bad_exits = 0;
	for (pid_t pid : pids) {
		int status = 0;
		while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad_exits++;
	}

	EXPECT_EQ(bad_exits, 0);
	EXPECT_EQ(shared->errors.load(), 0)
		<< "first error " << shared->first_error.load()
		<< " (negative: -errno; 1000: duplicate rv_index; 1001: "
		   "rv_index out of range)";
	EXPECT_EQ(shared->attaches.load(), concurrent_procs * concurrent_rounds);
	RecordProperty("max_live", shared->max_live.load());
	for (const auto &o : shared->owner)
		EXPECT_EQ(o.load(), 0);

	// Everything was released: all 64 indices are free again.
	std::vector<rv::Device> devs;
	for (std::uint32_t i = 0; i < 64; i++) {
		devs.push_back(open_declared());
		ASSERT_EQ(attach_index(devs.back(), p), static_cast<long>(i));
	}
	rv::Device extra = open_declared();
	EXPECT_EQ(raw_attach(extra.fd(), p), ENOSPC);
	shared->~Shared();
}
