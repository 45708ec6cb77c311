// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The per-process MR cache: REG_MEM hits and misses, DEREG_MEM, EVICT,
// the size limit and GET_CACHE_STATS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <rv/device.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include "child.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
namespace acc = rv::access;

namespace {

constexpr std::uint32_t recv = acc::psm3_recv;	// KERNEL|LOCAL|REMOTE_WRITE
constexpr std::uint32_t send = acc::psm3_send;	// KERNEL|LOCAL_WRITE

std::string str(const rv::CacheStats &s)
{
	return rv::test::to_string(s);
}

// The invariant of the stats: valid REG_MEM calls.
std::uint64_t reg_calls(const rv::CacheStats &s)
{
	return s.hit + s.miss + s.full + s.failed;
}

} // namespace

TEST(MrCache, MissThenHit)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.data(), 64 * KiB, recv);
	rv::CacheStats s1 = dev.cache_stats();
	EXPECT_EQ(s1.miss, 1u) << str(s1);
	EXPECT_EQ(s1.hit, 0u);
	EXPECT_EQ(s1.count, 1u);
	EXPECT_EQ(s1.cache_size, 64 * KiB);
	EXPECT_EQ(s1.inuse, 1u);
	EXPECT_EQ(s1.inuse_bytes, 64 * KiB);
	EXPECT_NE(a.handle(), 0u);
	EXPECT_EQ(a.iova(), buf.addr());
	EXPECT_EQ(a.access(), recv);

	rv::MemoryRegion b = dev.reg_mem(buf.data(), 64 * KiB, recv);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.hit, 1u) << str(s2);
	EXPECT_EQ(s2.miss, 1u);
	EXPECT_EQ(s2.count, 1u);
	EXPECT_EQ(s2.inuse, 1u);
	EXPECT_GE(s2.max_refcount, 2u);
	EXPECT_EQ(b.handle(), a.handle());
	EXPECT_EQ(b.lkey(), a.lkey());
	EXPECT_EQ(b.rkey(), a.rkey());
	EXPECT_EQ(b.iova(), a.iova());

	b.release();
	a.release();
	EXPECT_EQ(dev.cache_stats().inuse, 0u);
}

TEST(MrCache, HandlesAreSmallDistinctIds)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	std::set<std::uint64_t> seen;
	std::vector<rv::MemoryRegion> mrs;

	for (std::uint64_t i = 0; i < 16; i++) {
		mrs.push_back(dev.reg_mem(buf.addr() + i * 64 * KiB, 64 * KiB, recv));
		std::uint64_t h = mrs.back().handle();
		EXPECT_NE(h, 0u);
		EXPECT_LT(h, std::uint64_t{1} << 32) << "not a small id: 0x"
						     << std::hex << h;
		EXPECT_TRUE(seen.insert(h).second) << "handle " << h << " twice";
		EXPECT_EQ(mrs.back().iova(), buf.addr() + i * 64 * KiB);
	}
	EXPECT_EQ(dev.cache_stats().count, 16u);
}

TEST(MrCache, SubRangeHits)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const std::uint64_t base = buf.addr();

	rv::MemoryRegion a = dev.reg_mem(base, 256 * KiB, recv);
	for (auto [off, len] : {std::pair{4 * KiB, 8 * KiB},
				std::pair{0 * KiB, 4 * KiB},
				std::pair{252 * KiB, 4 * KiB},
				std::pair{std::uint64_t{100}, std::uint64_t{1000}}}) {
		SCOPED_TRACE(testing::Message() << "+" << off << " len " << len);
		rv_mem_params_out out{};
		ASSERT_EQ(reg_errno(dev.fd(), base + off, len, recv, &out), 0);
		EXPECT_EQ(out.mr_handle, a.handle());
		EXPECT_EQ(out.lkey, a.lkey());
		EXPECT_EQ(out.rkey, a.rkey());
		// PSM3 sends the peer iova + (buffer - requested addr): the
		// iova must be that of the requested start, not the entry's.
		EXPECT_EQ(out.iova, base + off) << "the requested start's iova";
	}
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.hit, 4u) << str(s);
	EXPECT_EQ(s.miss, 1u);
	EXPECT_EQ(s.count, 1u);

	// Reaching past the entry is a miss.
	rv::MemoryRegion past = dev.reg_mem(base + 252 * KiB, 8 * KiB, recv);
	EXPECT_NE(past.handle(), a.handle());
	rv::MemoryRegion bigger = dev.reg_mem(base, 512 * KiB, recv);
	EXPECT_NE(bigger.handle(), a.handle());
	s = dev.cache_stats();
	EXPECT_EQ(s.miss, 3u) << str(s);
	EXPECT_EQ(s.count, 3u);
	// The four raw sub-range references are dropped when the file
	// closes.
}

// The uAPI says DEREG_MEM takes addr and length "as given to
// RV_IOCTL_REG_MEM"; PSM3 passes what it registered, which for a
// sub-range hit is not the entry's range.
TEST(MrCache, SubRangeDeregWithRequestedRange)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.addr(), 256 * KiB, recv);
	rv::MemoryRegion b = dev.reg_mem(buf.addr() + 8 * KiB, 8 * KiB, recv);
	ASSERT_EQ(b.handle(), a.handle());
	EXPECT_EQ(dereg_errno(dev.fd(), b.info()), 0)
		<< "DEREG_MEM with the sub-range given to REG_MEM";
	b.abandon();
	EXPECT_EQ(dev.cache_stats().inuse, 1u);
	a.release();
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.inuse, 0u) << str(s);
	EXPECT_EQ(s.count, 1u);
}

TEST(MrCache, DifferentAccessIsMiss)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.data(), 64 * KiB, send);
	rv::MemoryRegion b = dev.reg_mem(buf.data(), 64 * KiB, recv);
	rv::MemoryRegion c = dev.reg_mem(buf.data(), 64 * KiB,
					 acc::local_write | acc::remote_read);
	rv::MemoryRegion d = dev.reg_mem(buf.data(), 64 * KiB,
					 acc::local_write | acc::remote_write |
						 acc::remote_read);
	EXPECT_NE(a.handle(), b.handle());
	EXPECT_NE(a.handle(), c.handle());
	EXPECT_NE(b.handle(), c.handle());
	EXPECT_NE(d.handle(), b.handle());
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.miss, 4u) << str(s);
	EXPECT_EQ(s.hit, 0u);
	EXPECT_EQ(s.count, 4u);

	// Each access finds its own entry again.
	rv::MemoryRegion a2 = dev.reg_mem(buf.data(), 64 * KiB, send);
	rv::MemoryRegion b2 = dev.reg_mem(buf.data(), 64 * KiB, recv);
	EXPECT_EQ(a2.handle(), a.handle());
	EXPECT_EQ(b2.handle(), b.handle());
	EXPECT_EQ(dev.cache_stats().hit, 2u);
}

TEST(MrCache, MinimalAccessWorks)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.data(), 64 * KiB, 0);
	EXPECT_EQ(a.access(), IBV_ACCESS_KERNEL);
	rv::MemoryRegion b = dev.reg_mem(buf.data(), 64 * KiB, acc::remote_read);
	EXPECT_NE(a.handle(), b.handle());
}

// Pinning for write breaks copy-on-write sharing, which invalidates the
// range being registered: memory only read so far (the zero page), and
// memory a parent populated before fork. REG_MEM still succeeds at once.
TEST(MrCache, CopyOnWritePagesRegister)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Mapping read_only = rv::Mapping::anonymous(MiB, false);
	unsigned sum = 0;
	for (std::size_t i = 0; i < read_only.size(); i += 4096)
		sum += static_cast<unsigned>(
			*static_cast<volatile std::byte *>(read_only.bytes() + i));
	EXPECT_EQ(sum, 0u);
	rv::Device dev = cache_device(n);
	EXPECT_EQ(reg_errno(dev.fd(), read_only.addr(), MiB, recv), 0)
		<< "REG_MEM of zero-page memory";
	EXPECT_EQ(dev.cache_stats().failed, 0u);

	rv::Mapping shared = rv::Mapping::anonymous(MiB);	// populated
	struct Report {
		int recv = -1;
		int send = -1;
		std::uint64_t failed = ~0ULL;
	};
	auto out = run_in_child<Report>([&] {
		Report r;
		rv::Device child = cache_device(n);
		r.recv = reg_errno(child.fd(), shared.addr(), MiB / 2, recv);
		r.send = reg_errno(child.fd(), shared.addr() + MiB / 2, MiB / 2,
				   send);
		r.failed = child.cache_stats().failed;
		return r;
	});
	ASSERT_TRUE(out.ok()) << "exit " << out.exit_code << " signal " << out.signal;
	EXPECT_EQ(out.report->recv, 0) << "REG_MEM of pages shared since fork";
	EXPECT_EQ(out.report->send, 0) << "REG_MEM of pages shared since fork";
	EXPECT_EQ(out.report->failed, 0u);
}

TEST(MrCache, DeregKeepsItCached)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.data(), 128 * KiB, recv);
	const rv::MrInfo info = a.info();
	rv::CacheStats s1 = dev.cache_stats();
	a.release();
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.count, s1.count) << str(s2);
	EXPECT_EQ(s2.cache_size, s1.cache_size);
	EXPECT_EQ(s2.inuse, 0u);
	EXPECT_EQ(s2.inuse_bytes, 0u);
	EXPECT_EQ(s2.max_inuse, 1u);
	EXPECT_EQ(s2.max_inuse_bytes, 128 * KiB);
	EXPECT_EQ(s2.remove, 0u);
	EXPECT_EQ(s2.evict, 0u);

	rv::MemoryRegion b = dev.reg_mem(buf.data(), 128 * KiB, recv);
	EXPECT_EQ(b.handle(), info.handle);
	EXPECT_EQ(b.lkey(), info.lkey);
	EXPECT_EQ(b.rkey(), info.rkey);
	rv::CacheStats s3 = dev.cache_stats();
	EXPECT_EQ(s3.hit, 1u) << str(s3);
	EXPECT_EQ(s3.miss, 1u);
	EXPECT_EQ(s3.inuse, 1u);
}

TEST(MrCache, DeregErrors)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const int fd = dev.fd();

	rv::MemoryRegion mr = dev.reg_mem(buf.data(), 64 * KiB, recv);
	const rv::MrInfo m = mr.info();
	mr.abandon();	// the reference is handled raw below

	EXPECT_EQ(dereg_errno(fd, m.handle + 1000, m.addr, m.length, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, 0, m.addr, m.length, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, ~0ULL, m.addr, m.length, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr + 4096, m.length, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr - 4096, m.length, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, m.length + 4096, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, 0, m.access), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, m.length, send), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, m.length,
			      m.access & ~IBV_ACCESS_KERNEL), EINVAL);
	EXPECT_EQ(dev.cache_stats().inuse, 1u) << "a failed DEREG dropped a reference";

	EXPECT_EQ(dereg_errno(fd, m), 0);
	EXPECT_EQ(dereg_errno(fd, m), EINVAL) << "no user reference left";
	EXPECT_EQ(dev.cache_stats().count, 1u);

	// resv1 is ignored (deployed clients leave garbage there); the
	// upstream form checks it.
	rv_mem_params_out out{};
	ASSERT_EQ(reg_errno(fd, m.addr, m.length, m.access, &out), 0);
	EXPECT_EQ(out.mr_handle, m.handle);
	if (rv::test::upstream_form()) {
		EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, m.length, m.access,
				      0xdeadbeef), EINVAL);
		EXPECT_EQ(dev.cache_stats().inuse, 1u);
		EXPECT_EQ(dereg_errno(fd, m), 0);
	} else {
		EXPECT_EQ(dereg_errno(fd, m.handle, m.addr, m.length, m.access,
				      0xdeadbeef), 0);
	}
	EXPECT_EQ(dev.cache_stats().inuse, 0u);

	// Handles belong to their file.
	rv::Device other = cache_device(n);
	ASSERT_EQ(reg_errno(fd, m.addr, m.length, m.access, &out), 0);
	EXPECT_EQ(dereg_errno(other.fd(), m), EINVAL);
	EXPECT_EQ(dereg_errno(fd, m), 0);

	// Through the library: release() reports the errno.
	rv::MemoryRegion again = dev.reg_mem(buf.data(), 64 * KiB, recv);
	EXPECT_EQ(dereg_errno(fd, again.info()), 0);	// behind its back
	try {
		again.release();
		ADD_FAILURE() << "release() of a dropped reference succeeded";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL) << e.what();
	}
}

TEST(MrCache, RegErrors)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Attach att;
	rv::Device dev = cache_device(n, 0, &att);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const int fd = dev.fd();
	const std::uint64_t a = buf.addr();
	const rv::CacheStats s0 = dev.cache_stats();

	EXPECT_EQ(reg_errno(fd, a, 64 * KiB, acc::local_write | acc::remote_write),
		  EOPNOTSUPP);
	EXPECT_EQ(reg_errno(fd, a, 64 * KiB, 0), EOPNOTSUPP);

	for (std::uint32_t bit : {0x8u, 0x10u, 0x20u, 0x40u, 0x80u, 0x100u,
				  0x1000u, 1u << 20, 0x40000000u}) {
		SCOPED_TRACE(testing::Message() << "access bit 0x" << std::hex << bit);
		EXPECT_EQ(reg_errno(fd, a, 64 * KiB, recv | bit), EINVAL);
	}
	EXPECT_EQ(reg_errno(fd, a, 64 * KiB, IBV_ACCESS_KERNEL | acc::remote_write),
		  EINVAL) << "REMOTE_WRITE without LOCAL_WRITE";

	EXPECT_EQ(reg_errno(fd, a, 0, recv), EINVAL) << "length 0";
	EXPECT_EQ(reg_errno(fd, ~0ULL - 4095, 8192, recv), EINVAL) << "overflow";
	EXPECT_EQ(reg_errno(fd, ~0ULL - 4095, 4096, recv), EINVAL)
		<< "addr + length == 2^64";
	EXPECT_EQ(reg_errno(fd, a, ~0ULL, recv), EINVAL) << "wraps";
	EXPECT_EQ(reg_errno(fd, a, att.max_fmr_size + 1, recv), E2BIG)
		<< "max_fmr_size " << att.max_fmr_size;

	rv::CacheStats s1 = dev.cache_stats();
	EXPECT_EQ(reg_calls(s1), reg_calls(s0)) << "invalid calls counted: " << str(s1);
	EXPECT_EQ(s1.count, 0u);

	// Unmapped memory: a hole in the middle, or nothing at all.
	const std::size_t pg = rv::page_size();
	rv::Mapping holey = rv::Mapping::anonymous(3 * pg);
	ASSERT_EQ(::munmap(holey.bytes() + pg, pg), 0);
	EXPECT_EQ(reg_errno(fd, holey.addr(), 3 * pg, recv), EFAULT);
	EXPECT_EQ(reg_errno(fd, holey.addr() + pg, pg, recv), EFAULT);
	EXPECT_EQ(reg_errno(fd, holey.addr() + pg, 1, recv), EFAULT);

	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.hit, s0.hit) << str(s2);
	EXPECT_EQ(s2.miss, s0.miss);
	EXPECT_EQ(s2.full, s0.full);
	// Whether a fault counts as a failed registration is the
	// module's choice; at most once per call.
	EXPECT_LE(s2.failed, s0.failed + 3);
	EXPECT_EQ(s2.count, 0u);
	EXPECT_EQ(s2.cache_size, 0u);

	// Nothing stuck: a valid call works.
	rv::MemoryRegion ok = dev.reg_mem(a, 64 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().miss, s0.miss + 1);
	// The pages around the hole are fine too.
	rv::MemoryRegion first_page = dev.reg_mem(holey.addr(), pg, recv);
	EXPECT_NE(first_page.handle(), 0u);
}

TEST(MrCache, ExactlyMaxFmrSize)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Attach att;
	rv::Device dev = cache_device(n, 4, &att);
	ASSERT_EQ(att.mr_cache_size, 4u);
	ASSERT_GT(att.max_fmr_size, 0u);
	ASSERT_LE(att.max_fmr_size, 4 * MiB);

	rv::Mapping buf = rv::Mapping::anonymous(att.max_fmr_size + rv::page_size());
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), att.max_fmr_size + 1, recv), E2BIG);
	rv::MemoryRegion mr = dev.reg_mem(buf.data(), att.max_fmr_size, recv);
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.cache_size, att.max_fmr_size) << str(s);
	EXPECT_EQ(s.limit_cache_size, 4u);
}

TEST(MrCache, RegMemFormsR4R1)
{
	RV_NODE_OR_SKIP(n, 0);
	RV_OOT_FORM_OR_SKIP();	// FastReg.MaxFmrSize...: EINVAL there
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	rv::MemoryRegion a = dev.reg_mem(buf.data(), 64 * KiB, recv, rv::RegMemForm::r4);
	rv::MemoryRegion b = dev.reg_mem(buf.data(), 64 * KiB, recv, rv::RegMemForm::r1);
	rv::MemoryRegion c = dev.reg_mem(buf.data(), 64 * KiB, recv);
	EXPECT_EQ(b.handle(), a.handle());
	EXPECT_EQ(c.handle(), a.handle());
	EXPECT_EQ(b.rkey(), a.rkey());

	rv::MemoryRegion d = dev.reg_mem(buf.addr() + 64 * KiB, 64 * KiB, send,
					 rv::RegMemForm::r1);
	EXPECT_NE(d.handle(), a.handle());
	EXPECT_EQ(d.iova(), buf.addr() + 64 * KiB);
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.miss, 2u) << str(s);
	EXPECT_EQ(s.hit, 2u);

	// Raw R4 and R1 bytes, with ulen/udata set (ignored for kernel MRs).
	rv_mem_params_r4 r4{};
	r4.in.addr = buf.addr();
	r4.in.length = 64 * KiB;
	r4.in.access = recv;
	r4.in.ulen = 123;
	r4.in.udata_u64 = 0xdeadbeef000ULL;
	ASSERT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_REG_MEM_R4, &r4), 0);
	EXPECT_EQ(r4.out.mr_handle, a.handle());
	rv_mem_params_r1 r1{};
	r1.in.addr = buf.addr();
	r1.in.length = 64 * KiB;
	r1.in.access = recv;
	r1.in.ulen = 7;
	ASSERT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_REG_MEM_R1, &r1), 0);
	EXPECT_EQ(r1.out.mr_handle, a.handle());
	EXPECT_EQ(r1.out.lkey, a.lkey());
	EXPECT_EQ(dereg_errno(dev.fd(), a.info()), 0);
	EXPECT_EQ(dereg_errno(dev.fd(), a.info()), 0);
}

TEST(MrCache, NotAttachedIsEinval)
{
	for (bool declared : {true, false}) {
		SCOPED_TRACE(declared ? "after CAPABILITY" : "fresh file");
		rv::Device dev(device_path());
		if (declared)
			(void)dev.capability();
		rv::Mapping buf = rv::Mapping::anonymous(64 * KiB);
		const int fd = dev.fd();

		EXPECT_EQ(reg_errno(fd, buf.addr(), buf.size(), recv), EINVAL);
		EXPECT_EQ(dereg_errno(fd, 1, buf.addr(), buf.size(), recv), EINVAL);
		rv_evict_params ev{};
		ev.in.type = RV_EVICT_TYPE_AMOUNT;
		ev.in.amount.bytes = 1;
		ev.in.amount.count = 1;
		EXPECT_EQ(evict_errno(fd, ev), EINVAL);
		rv::CacheStats cs{};
		EXPECT_EQ(ioctl_errno(fd, RV_IOCTL_GET_CACHE_STATS, &cs), EINVAL);
		rv::EventStats es{};
		EXPECT_EQ(ioctl_errno(fd, RV_IOCTL_GET_EVENT_STATS, &es), EINVAL);
	}
}

TEST(MrCache, EvictExact)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const std::uint64_t a = buf.addr();

	// Nothing cached yet.
	rv_evict_params raw{};
	raw.in.type = RV_EVICT_TYPE_SEARCH_EXACT;
	raw.in.search.addr = a;
	raw.in.search.length = 64 * KiB;
	raw.in.search.access = recv;
	EXPECT_EQ(evict_errno(dev.fd(), raw), ENOENT);

	rv::MemoryRegion mr = dev.reg_mem(a, 64 * KiB, recv);
	EXPECT_EQ(dev.evict_exact(a, 64 * KiB, recv), std::nullopt)
		<< "a referenced entry was evicted";
	mr.release();

	EXPECT_EQ(dev.evict_exact(a, 64 * KiB, send), std::nullopt) << "other access";
	EXPECT_EQ(dev.evict_exact(a + 4 * KiB, 60 * KiB, recv), std::nullopt)
		<< "sub-range";
	EXPECT_EQ(dev.evict_exact(a, 128 * KiB, recv), std::nullopt) << "larger";
	EXPECT_EQ(dev.evict_exact(a, 60 * KiB, recv), std::nullopt) << "shorter";

	rv::CacheStats s1 = dev.cache_stats();
	ASSERT_EQ(s1.count, 1u) << str(s1);
	auto ev = dev.evict_exact(a, 64 * KiB, recv);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->bytes, 64 * KiB);
	EXPECT_EQ(ev->count, 1u);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.count, 0u) << str(s2);
	EXPECT_EQ(s2.cache_size, 0u);
	EXPECT_EQ(s2.evict, s1.evict + 1);
	EXPECT_EQ(s2.remove, s1.remove);
	EXPECT_EQ(dev.evict_exact(a, 64 * KiB, recv), std::nullopt) << "twice";

	// Gone: the next REG_MEM misses.
	rv::MemoryRegion again = dev.reg_mem(a, 64 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().miss, s2.miss + 1);
}

TEST(MrCache, EvictRange)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const std::uint64_t a = buf.addr();

	rv::MemoryRegion r0 = dev.reg_mem(a, 64 * KiB, recv);
	rv::MemoryRegion r1 = dev.reg_mem(a + 128 * KiB, 64 * KiB, send);
	rv::MemoryRegion r2 = dev.reg_mem(a + 512 * KiB, 64 * KiB, recv);
	rv::MemoryRegion held = dev.reg_mem(a + 256 * KiB, 64 * KiB, recv);
	r0.release();
	r1.release();
	r2.release();

	// [a + 32K, a + 160K) overlaps r0 and r1 (any access).
	auto ev = dev.evict_range(a + 32 * KiB, 128 * KiB);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 2u);
	EXPECT_EQ(ev->bytes, 128 * KiB);

	// Only a referenced entry there.
	EXPECT_EQ(dev.evict_range(a + 256 * KiB, 64 * KiB), std::nullopt);
	EXPECT_EQ(dev.evict_range(a + 200 * KiB, 100 * KiB), std::nullopt);
	// Nothing there.
	EXPECT_EQ(dev.evict_range(a + 768 * KiB, 64 * KiB), std::nullopt);
	EXPECT_EQ(dev.evict_range(a, 64 * KiB), std::nullopt) << "already evicted";

	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.count, 2u) << str(s);
	EXPECT_EQ(s.evict, 2u);
	EXPECT_EQ(s.inuse, 1u);

	// One byte of overlap is enough.
	ev = dev.evict_range(a + 576 * KiB - 1, 1);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 1u);
	EXPECT_EQ(ev->bytes, 64 * KiB);
	EXPECT_EQ(dev.cache_stats().count, 1u);
}

TEST(MrCache, EvictAmountIsLruFirst)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const std::uint64_t a = buf.addr();

	// Unreferenced in the order r0, r1, r2; `held` keeps a reference.
	rv::MemoryRegion held = dev.reg_mem(a + 768 * KiB, 64 * KiB, recv);
	for (std::uint64_t i = 0; i < 3; i++)
		dev.reg_mem(a + i * 64 * KiB, 64 * KiB, recv).release();

	auto ev = dev.evict_amount(1, 1);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 1u);
	EXPECT_EQ(ev->bytes, 64 * KiB);
	EXPECT_EQ(dev.evict_exact(a, 64 * KiB, recv), std::nullopt)
		<< "the least recently used entry was not the one evicted";

	// At least 64K + 1 bytes: both of the others.
	ev = dev.evict_amount(64 * KiB + 1, 1);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 2u);
	EXPECT_EQ(ev->bytes, 128 * KiB);

	EXPECT_EQ(dev.evict_amount(1, 1), std::nullopt) << "only a referenced entry left";
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.count, 1u) << str(s);
	EXPECT_EQ(s.inuse, 1u);
	EXPECT_EQ(s.evict, 3u);

	// By count: 0 bytes but 2 entries.
	for (std::uint64_t i = 0; i < 3; i++)
		dev.reg_mem(a + i * 64 * KiB, 64 * KiB, recv).release();
	ev = dev.evict_amount(0, 2);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 2u);
	EXPECT_EQ(ev->bytes, 128 * KiB);

	// More than there is: everything evictable, and success.
	dev.reg_mem(a, 64 * KiB, send).release();
	ev = dev.evict_amount(~0ULL, ~0u);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->count, 2u);
	EXPECT_EQ(ev->bytes, 128 * KiB);
	s = dev.cache_stats();
	EXPECT_EQ(s.count, 1u) << str(s);
	EXPECT_EQ(s.inuse, 1u);
	EXPECT_EQ(held.iova(), a + 768 * KiB);
}

// EVICT with an argument that can be read but not written: EFAULT, and
// nothing is evicted (the MRs would be gone without the caller knowing).
TEST(MrCache, EvictUnwritableArgumentEvictsNothing)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	dev.reg_mem(buf.data(), 64 * KiB, recv).release();
	ASSERT_EQ(dev.cache_stats().count, 1u);

	rv::Mapping arg = rv::Mapping::anonymous(4096);
	rv_evict_params p{};
	p.in.type = RV_EVICT_TYPE_SEARCH_RANGE;
	p.in.search.addr = buf.addr();
	p.in.search.length = MiB;
	std::memcpy(arg.data(), &p, sizeof(p));
	ASSERT_EQ(mprotect(arg.data(), 4096, PROT_READ), 0);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_EVICT, arg.data()), EFAULT);
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.count, 1u) << str(s);
	EXPECT_EQ(s.evict, 0u) << str(s);

	ASSERT_EQ(mprotect(arg.data(), 4096, PROT_READ | PROT_WRITE), 0);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_EVICT, arg.data()), 0);
	EXPECT_EQ(dev.cache_stats().count, 0u);
}

TEST(MrCache, EvictBadTypeIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	dev.reg_mem(buf.data(), 64 * KiB, recv).release();

	for (std::uint8_t type : {std::uint8_t{0}, std::uint8_t{4},
				  std::uint8_t{255}}) {
		SCOPED_TRACE(int{type});
		rv_evict_params p{};
		p.in.type = type;
		p.in.amount.bytes = 1;
		p.in.amount.count = 1;
		EXPECT_EQ(evict_errno(dev.fd(), p), EINVAL);
	}
	EXPECT_EQ(dev.cache_stats().count, 1u);
}

TEST(MrCache, FullCacheIsEnomem)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Attach att;
	rv::Device dev = cache_device(n, 1, &att);	// 1 MB
	ASSERT_EQ(att.mr_cache_size, 1u);
	ASSERT_LE(att.max_fmr_size, MiB);
	rv::Mapping buf = rv::Mapping::anonymous(2 * MiB);
	const std::uint64_t a = buf.addr();

	rv::MemoryRegion big = dev.reg_mem(a, 768 * KiB, recv);
	const rv::CacheStats s1 = dev.cache_stats();
	EXPECT_EQ(s1.limit_cache_size, 1u);

	EXPECT_EQ(reg_errno(dev.fd(), a + MiB, 512 * KiB, recv), ENOMEM);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.full, s1.full + 1) << str(s2);
	EXPECT_EQ(s2.miss, s1.miss);
	EXPECT_EQ(s2.failed, s1.failed);
	EXPECT_EQ(s2.count, s1.count);
	EXPECT_EQ(s2.cache_size, s1.cache_size);
	EXPECT_EQ(s2.evict, s1.evict);

	// Through the library: a system_error with ENOMEM.
	try {
		(void)dev.reg_mem(a + MiB, 512 * KiB, recv);
		ADD_FAILURE() << "REG_MEM beyond the limit succeeded";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ENOMEM);
	}

	// Unreferenced, the big entry makes room.
	big.release();
	rv::MemoryRegion next = dev.reg_mem(a + MiB, 512 * KiB, recv);
	rv::CacheStats s3 = dev.cache_stats();
	EXPECT_EQ(s3.miss, s2.miss + 1) << str(s3);
	EXPECT_EQ(s3.evict, s2.evict + 1);
	EXPECT_EQ(s3.count, 1u);
	EXPECT_EQ(s3.cache_size, 512 * KiB);
	EXPECT_EQ(s3.full, s2.full + 1);
	EXPECT_EQ(dev.evict_exact(a, 768 * KiB, recv), std::nullopt);
}

TEST(MrCache, LruEvictionWhenUnreferenced)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n, 1);	// 1 MB = 1048576 bytes
	rv::Mapping buf = rv::Mapping::anonymous(2 * MiB);
	const std::uint64_t a = buf.addr();
	const std::uint64_t sz = 300 * KiB;	// three fit, four do not

	for (std::uint64_t i = 0; i < 3; i++)
		dev.reg_mem(a + i * sz, sz, recv).release();
	// Use entry 0 again: entry 1 is now the least recently used.
	dev.reg_mem(a, sz, recv).release();
	const rv::CacheStats s1 = dev.cache_stats();
	ASSERT_EQ(s1.count, 3u) << str(s1);
	ASSERT_EQ(s1.hit, 1u);

	// 900K + 400K > 1M: one eviction is enough (1000K <= 1024K).
	rv::MemoryRegion d = dev.reg_mem(a + 3 * sz, 400 * KiB, recv);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.evict, s1.evict + 1) << str(s2);
	EXPECT_EQ(s2.count, 3u);
	EXPECT_EQ(s2.cache_size, 2 * sz + 400 * KiB);
	EXPECT_EQ(s2.full, 0u);

	EXPECT_EQ(dev.evict_exact(a + sz, sz, recv), std::nullopt)
		<< "entry 1 (least recently used) should have gone";
	EXPECT_TRUE(dev.evict_exact(a, sz, recv)) << "entry 0 was evicted";
	EXPECT_TRUE(dev.evict_exact(a + 2 * sz, sz, recv)) << "entry 2 was evicted";
}

namespace {

// What the test expects the cache to hold.
class CacheModel {
public:
	struct Entry {
		std::uint64_t addr, len;
		std::uint32_t access;
		unsigned refs;
		std::uint64_t handle;
	};

	// REG_MEM through dev and the model: checks hit/miss.
	rv::MrInfo reg(rv::Device &dev, std::uint64_t addr, std::uint64_t len,
		       std::uint32_t access)
	{
		access |= IBV_ACCESS_KERNEL;
		Entry *hit = nullptr;
		for (auto &e : entries_)
			if (e.access == access && e.addr <= addr &&
			    addr + len <= e.addr + e.len)
				hit = &e;
		rv::MemoryRegion mr = dev.reg_mem(addr, len, access);
		rv::MrInfo info = mr.info();
		mr.abandon();
		calls_++;
		if (hit) {
			EXPECT_EQ(info.handle, hit->handle) << "expected a hit";
			hit->refs++;
			max_refs_ = std::max(max_refs_, hit->refs);
			hits_++;
		} else {
			for (const auto &e : entries_)
				EXPECT_NE(info.handle, e.handle) << "expected a miss";
			entries_.push_back({addr, len, access, 1, info.handle});
			max_refs_ = std::max(max_refs_, 1u);
			misses_++;
		}
		return info;
	}

	void dereg(rv::Device &dev, const rv::MrInfo &info)
	{
		dev.dereg_mem(info.handle, info.addr, info.length, info.access);
		for (auto &e : entries_)
			if (e.handle == info.handle)
				e.refs--;
	}

	void evict_exact(rv::Device &dev, std::uint64_t addr, std::uint64_t len,
			 std::uint32_t access)
	{
		auto ev = dev.evict_exact(addr, len, access);
		access |= IBV_ACCESS_KERNEL;
		for (auto it = entries_.begin(); it != entries_.end(); ++it) {
			if (it->addr == addr && it->len == len &&
			    it->access == access && !it->refs) {
				EXPECT_TRUE(ev);
				entries_.erase(it);
				evicts_++;
				return;
			}
		}
		EXPECT_FALSE(ev);
	}

	void check(rv::Device &dev) const
	{
		rv::CacheStats s = dev.cache_stats();
		std::uint64_t bytes = 0, inuse_bytes = 0;
		std::uint32_t inuse = 0;
		for (const auto &e : entries_) {
			bytes += e.len;
			if (e.refs) {
				inuse++;
				inuse_bytes += e.len;
			}
		}
		SCOPED_TRACE(str(s));
		EXPECT_EQ(reg_calls(s), calls_) << "hit + miss + full + failed";
		EXPECT_EQ(s.hit, hits_);
		EXPECT_EQ(s.miss, misses_);
		EXPECT_EQ(s.evict, evicts_);
		EXPECT_EQ(s.remove, 0u);
		EXPECT_EQ(s.count, entries_.size());
		EXPECT_EQ(s.cache_size, bytes);
		EXPECT_EQ(s.inuse, inuse);
		EXPECT_EQ(s.inuse_bytes, inuse_bytes);
		EXPECT_GE(s.max_count, s.count);
		EXPECT_GE(s.max_cache_size, s.cache_size);
		EXPECT_GE(s.max_inuse, s.inuse);
		EXPECT_GE(s.max_inuse_bytes, s.inuse_bytes);
		EXPECT_EQ(s.max_refcount, max_refs_);
		EXPECT_EQ(s.limit_cache_size, 256u);
	}

private:
	std::vector<Entry> entries_;
	std::uint64_t calls_ = 0, hits_ = 0, misses_ = 0, evicts_ = 0;
	unsigned max_refs_ = 0;
};

} // namespace

TEST(MrCache, StatsStayConsistent)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(2 * MiB);
	const std::uint64_t a = buf.addr();
	CacheModel m;

	m.check(dev);
	auto r0 = m.reg(dev, a, 256 * KiB, recv);
	m.check(dev);
	auto r0c = m.reg(dev, a, 256 * KiB, recv);	// hit
	m.check(dev);
	auto r1 = m.reg(dev, a, 256 * KiB, send);	// miss: other access
	auto r2 = m.reg(dev, a + MiB, 512 * KiB, recv);
	auto r3 = m.reg(dev, a + 256 * KiB, 4 * KiB, recv);
	// Sub-range hits on r2, whose references stay until the file
	// closes (only SubRangeDeregWithRequestedRange drops such).
	(void)m.reg(dev, a + MiB + 4 * KiB, 4 * KiB, recv);
	(void)m.reg(dev, a + MiB + 64 * KiB, 128 * KiB, recv);
	m.check(dev);
	m.dereg(dev, r0c);
	m.dereg(dev, r1);
	m.check(dev);
	m.evict_exact(dev, a, 256 * KiB, send);
	m.evict_exact(dev, a, 256 * KiB, recv);	// still referenced
	m.check(dev);
	m.dereg(dev, r0);
	m.check(dev);
	auto r4 = m.reg(dev, a, 256 * KiB, recv);	// hit, unreferenced entry
	m.dereg(dev, r4);
	m.evict_exact(dev, a, 256 * KiB, recv);
	m.evict_exact(dev, a + MiB, 512 * KiB, recv);	// referenced
	m.check(dev);
	auto r5 = m.reg(dev, a, 256 * KiB, recv);	// a new miss
	m.check(dev);
	m.dereg(dev, r5);
	m.dereg(dev, r2);
	m.dereg(dev, r3);
	m.check(dev);
}
