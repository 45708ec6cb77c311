// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// An attach belongs to the process that made it: a forked child using the
// inherited file gets EACCES. Closing or exiting with everything live
// releases it all.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <rv/device.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include "child.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;

namespace {

constexpr std::uint32_t recv = rv::access::psm3_recv;

struct ForkReport {
	int reg;
	int reg_r1;
	int dereg;
	int evict;
	int cache_stats;
	int event_stats;
	int mmap;
	int attach;
};

} // namespace

TEST(Process, ForkChildGetsEacces)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.cq_entries = 1000;
	rv::Device dev = open_declared();
	ASSERT_EQ(dev.attach(p).rv_index, 0u);
	// Shared memory: fork does not copy-on-write it, so it does not
	// invalidate the parent's MRs (Coherence.ForkKeepsTheParentsPinnedPages
	// covers private memory) and the parent's cache must stay as it was.
	rv::Mapping buf = rv::Mapping::map(MiB, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS |
						   MAP_POPULATE);
	rv::MemoryRegion mr = dev.reg_mem(buf.data(), 64 * KiB, recv);
	const rv::MrInfo info = mr.info();
	dev.reg_mem(buf.addr() + 128 * KiB, 64 * KiB, recv).release();
	const rv::CacheStats s1 = dev.cache_stats();
	const std::size_t ring_len =
		rv::ring_alloc_len(dev.event_layout(), p.cq_entries);
	const int fd = dev.fd();

	auto out = run_in_child<ForkReport>([&] {
		ForkReport r{};
		r.reg = reg_errno(fd, buf.addr(), 64 * KiB, recv);
		rv_mem_params_r1 r1{};
		r1.in.addr = buf.addr();
		r1.in.length = 64 * KiB;
		r1.in.access = recv;
		r.reg_r1 = ioctl_errno(fd, RV_IOCTL_REG_MEM_R1, &r1);
		r.dereg = dereg_errno(fd, info);
		rv_evict_params ev{};
		ev.in.type = RV_EVICT_TYPE_AMOUNT;
		ev.in.amount.bytes = ~0ULL;
		ev.in.amount.count = ~0u;
		r.evict = ioctl_errno(fd, RV_IOCTL_EVICT, &ev);
		rv::CacheStats cs{};
		r.cache_stats = ioctl_errno(fd, RV_IOCTL_GET_CACHE_STATS, &cs);
		rv::EventStats es{};
		r.event_stats = ioctl_errno(fd, RV_IOCTL_GET_EVENT_STATS, &es);
		void *m = ::mmap(nullptr, ring_len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
		r.mmap = m == MAP_FAILED ? errno : 0;
		rv_attach_params a{};
		a.in = p.to_uapi();
		r.attach = ioctl_errno(fd, RV_IOCTL_ATTACH, &a);
		return r;
	});
	ASSERT_TRUE(out.ok()) << "child exit " << out.exit_code << " signal "
			      << out.signal;
	const ForkReport &r = *out.report;
	EXPECT_EQ(r.reg, EACCES) << std::strerror(r.reg);
	EXPECT_EQ(r.reg_r1, rv::test::older_form_errno(EACCES))
		<< std::strerror(r.reg_r1);
	EXPECT_EQ(r.dereg, EACCES) << std::strerror(r.dereg);
	EXPECT_EQ(r.evict, EACCES) << std::strerror(r.evict);
	EXPECT_EQ(r.cache_stats, EACCES) << std::strerror(r.cache_stats);
	EXPECT_EQ(r.event_stats, EACCES) << std::strerror(r.event_stats);
	EXPECT_EQ(r.mmap, EACCES) << std::strerror(r.mmap);
	EXPECT_EQ(r.attach, EBUSY) << "the file is attached";

	// The parent is unaffected: same stats, its reference intact, and
	// the child's mmap attempt did not use up the ring.
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.count, s1.count) << to_string(s2);
	EXPECT_EQ(s2.inuse, s1.inuse);
	EXPECT_EQ(s2.hit, s1.hit);
	EXPECT_EQ(s2.miss, s1.miss);
	EXPECT_EQ(s2.evict, s1.evict);
	rv::EventRing ring = rv::EventRing::map(dev);
	EXPECT_EQ(ring.view().tail(), 0u);
	rv::MemoryRegion hit = dev.reg_mem(buf.data(), 64 * KiB, recv);
	EXPECT_EQ(hit.handle(), info.handle);
	EXPECT_NO_THROW(mr.release());
	EXPECT_EQ(dev.event_stats().send_write_cqe, 0u);
}

TEST(Process, ForkChildOfUnattachedFileGetsEinval)
{
	rv::Device dev = open_declared();
	rv::Mapping buf = rv::Mapping::anonymous(64 * KiB);
	const int fd = dev.fd();

	auto out = run_in_child<ForkReport>([&] {
		ForkReport r{};
		r.reg = reg_errno(fd, buf.addr(), 64 * KiB, recv);
		rv::CacheStats cs{};
		r.cache_stats = ioctl_errno(fd, RV_IOCTL_GET_CACHE_STATS, &cs);
		void *m = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
		r.mmap = m == MAP_FAILED ? errno : 0;
		return r;
	});
	ASSERT_TRUE(out.ok());
	EXPECT_EQ(out.report->reg, EINVAL);
	EXPECT_EQ(out.report->cache_stats, EINVAL);
	EXPECT_EQ(out.report->mmap, EINVAL);
}

TEST(Process, CloseWithEverythingLive)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.index_bits = 1;
	rv::Mapping buf = rv::Mapping::anonymous(4 * MiB);

	for (int round = 0; round < 3; round++) {
		SCOPED_TRACE(round);
		rv::Device dev = open_declared();
		ASSERT_EQ(dev.attach(p).rv_index, 0u);
		rv::EventRing ring = rv::EventRing::map(dev);
		std::vector<rv::MemoryRegion> mrs;
		for (std::uint64_t i = 0; i < 8; i++)
			mrs.push_back(dev.reg_mem(buf.addr() + i * 512 * KiB,
						  512 * KiB, recv));
		mrs.push_back(dev.reg_mem(buf.data(), 64 * KiB, recv));
		dev.reg_mem(buf.addr() + 64 * KiB, 4 * KiB,
			    rv::access::psm3_send).release();
		ASSERT_EQ(dev.cache_stats().inuse, 8u);

		// Close first, with the ring mapped and MRs referenced;
		// the MemoryRegions become inert.
		dev.close();
		for (auto &mr : mrs) {
			try {
				mr.release();
				ADD_FAILURE() << "release() after close succeeded";
			} catch (const std::system_error &e) {
				EXPECT_EQ(e.code().value(), EBADF);
			}
		}
		ring.unmap();
	}
	// Nothing held on: both indices (index_bits 1) are free.
	rv::Device a = open_declared();
	EXPECT_EQ(a.attach(p).rv_index, 0u);
	rv::Device b = open_declared();
	EXPECT_EQ(b.attach(p).rv_index, 1u);
}

TEST(Process, ExitWithEverythingLive)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.index_bits = 0;	// one process at a time
	const std::string path = device_path();

	for (int round = 0; round < 3; round++) {
		SCOPED_TRACE(round);
		auto out = run_in_child<std::uint32_t>([&] {
			// Static storage: _exit() runs no destructors, so the
			// process leaves with the file attached, the ring
			// mapped and four MRs referenced.
			static std::optional<rv::Device> dev;
			static std::optional<rv::EventRing> ring;
			static std::optional<rv::Mapping> buf;
			dev.emplace(path);
			(void)dev->capability();
			std::uint32_t idx = dev->attach(p).rv_index;
			ring.emplace(rv::EventRing::map(*dev));
			buf.emplace(rv::Mapping::anonymous(2 * MiB));
			for (std::uint64_t i = 0; i < 4; i++)
				dev->reg_mem(buf->addr() + i * 256 * KiB,
					     256 * KiB, recv).abandon();
			return idx;
		});
		ASSERT_TRUE(out.ok()) << "exit " << out.exit_code;
		EXPECT_EQ(*out.report, 0u);
	}
	rv::Device dev = open_declared();
	EXPECT_EQ(dev.attach(p).rv_index, 0u) << "the exited process's index";
}
