// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The MR cache follows the process's memory: munmap, mmap MAP_FIXED over
// it and mremap remove the entries whose pages go at once; after
// madvise(MADV_DONTNEED) and other events that may or may not replace the
// pages, the next REG_MEM that finds the entry compares its pages with
// the process's and misses if they differ. Either way a later REG_MEM of
// the same addresses registers the new pages (a miss, a new MR). Events
// that keep the pinned pages (fork, a permission change that keeps write
// access) keep the entry a hit; one that takes write access away drops
// an entry that needs it.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include <sys/mman.h>

#include <rv/device.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include "child.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;

namespace {

constexpr std::uint32_t recv = rv::access::psm3_recv;

std::string str(const rv::CacheStats &s)
{
	return rv::test::to_string(s);
}

// New private anonymous memory exactly at addr (replacing whatever is
// there), populated.
rv::Mapping map_fixed(std::uint64_t addr, std::size_t len)
{
	return rv::Mapping::map(len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
					MAP_POPULATE,
				-1, 0, reinterpret_cast<void *>(addr));
}

// A cached, unreferenced entry for [addr, addr + len).
rv::MrInfo cache_unreferenced(rv::Device &dev, std::uint64_t addr,
			      std::uint64_t len, std::uint32_t access = recv)
{
	rv::MemoryRegion mr = dev.reg_mem(addr, len, access);
	rv::MrInfo info = mr.info();
	mr.release();
	return info;
}

} // namespace

TEST(Coherence, MunmapRemoves)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	rv::Mapping other = rv::Mapping::anonymous(MiB);

	cache_unreferenced(dev, buf.addr(), 256 * KiB);
	cache_unreferenced(dev, other.addr(), 64 * KiB);
	const rv::CacheStats s1 = dev.cache_stats();
	ASSERT_EQ(s1.count, 2u) << str(s1);

	buf.unmap();
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove + 1) << str(s2);
	EXPECT_EQ(s2.count, s1.count - 1);
	EXPECT_EQ(s2.cache_size, s1.cache_size - 256 * KiB);
	EXPECT_EQ(s2.evict, s1.evict);

	// The other buffer's entry is untouched: still a hit.
	rv::MemoryRegion again = dev.reg_mem(other.addr(), 64 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().hit, s1.hit + 1);
}

TEST(Coherence, PartialMunmapRemoves)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const std::size_t pg = rv::page_size();

	cache_unreferenced(dev, buf.addr(), 256 * KiB);		// hit by the hole
	cache_unreferenced(dev, buf.addr() + 512 * KiB, 256 * KiB);	// not
	const rv::CacheStats s1 = dev.cache_stats();

	ASSERT_EQ(::munmap(buf.bytes() + 128 * KiB, pg), 0);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove + 1) << str(s2);
	EXPECT_EQ(s2.count, 1u);
	EXPECT_EQ(s2.cache_size, 256 * KiB);

	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), 256 * KiB, recv), EFAULT);
	rv::MemoryRegion still = dev.reg_mem(buf.addr() + 512 * KiB, 256 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().hit, s1.hit + 1);
}

TEST(Coherence, MunmapThenMapFixedIsMissWithNewMr)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);
	const std::uint64_t addr = buf.addr();
	const std::size_t len = buf.size();

	const rv::MrInfo old = cache_unreferenced(dev, addr, len);
	const rv::CacheStats s1 = dev.cache_stats();

	buf.unmap();
	buf = map_fixed(addr, len);
	ASSERT_EQ(buf.addr(), addr);
	std::memset(buf.data(), 0x3c, len);

	rv::MemoryRegion mr = dev.reg_mem(addr, len, recv);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.miss, s1.miss + 1) << str(s2);
	EXPECT_EQ(s2.hit, s1.hit);
	EXPECT_EQ(s2.remove, s1.remove + 1);
	EXPECT_EQ(s2.count, 1u);
	EXPECT_NE(mr.handle(), old.handle) << "the old MR was reused";
	EXPECT_EQ(mr.iova(), addr);
}

TEST(Coherence, MapFixedOverTheRangeIsMissWithNewMr)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);
	const std::uint64_t addr = buf.addr();
	const std::size_t len = buf.size();

	const rv::MrInfo old = cache_unreferenced(dev, addr, len);
	const rv::CacheStats s1 = dev.cache_stats();

	// No munmap: MAP_FIXED replaces the pages in place.
	rv::Mapping replaced = map_fixed(addr, len);
	(void)buf.release();	// the same range, now owned by `replaced`

	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove + 1) << str(s2);
	EXPECT_EQ(s2.count, 0u);
	rv::MemoryRegion mr = dev.reg_mem(addr, len, recv);
	EXPECT_EQ(dev.cache_stats().miss, s1.miss + 1);
	EXPECT_NE(mr.handle(), old.handle);
}

// MADV_DONTNEED replaces the pages, but its event is the same as that of
// a huge page collapse attempt, which does not: the entry waits for the
// next REG_MEM, which finds other pages and misses.
TEST(Coherence, MadviseDontneedIsAMissAtTheNextRegMem)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	const rv::MrInfo old = cache_unreferenced(dev, buf.addr(), 256 * KiB);
	const rv::CacheStats s1 = dev.cache_stats();

	ASSERT_EQ(::madvise(buf.bytes() + 64 * KiB, 64 * KiB, MADV_DONTNEED), 0);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove) << str(s2);
	EXPECT_EQ(s2.count, 1u);

	rv::MemoryRegion mr = dev.reg_mem(buf.addr(), 256 * KiB, recv);
	rv::CacheStats s3 = dev.cache_stats();
	EXPECT_EQ(s3.miss, s1.miss + 1) << str(s3);
	EXPECT_EQ(s3.hit, s1.hit);
	EXPECT_EQ(s3.remove, s1.remove + 1);
	EXPECT_EQ(s3.count, 1u);
	EXPECT_NE(mr.handle(), old.handle);
}

// A permission change that keeps write access keeps the entry; one that
// takes it away drops an entry allowing writes at the next REG_MEM, which
// then fails as a first registration would (EFAULT), while an entry
// without write access stays a hit.
TEST(Coherence, MprotectDropsEntriesOnlyWhenWriteAccessGoes)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	constexpr std::uint32_t ro = rv::access::kernel;

	const rv::MrInfo w = cache_unreferenced(dev, buf.addr(), 256 * KiB);
	const rv::MrInfo r = cache_unreferenced(dev, buf.addr(), 256 * KiB, ro);
	const rv::CacheStats s1 = dev.cache_stats();
	ASSERT_EQ(s1.count, 2u) << str(s1);

	ASSERT_EQ(::mprotect(buf.data(), buf.size(), PROT_READ), 0);
	ASSERT_EQ(::mprotect(buf.data(), buf.size(), PROT_READ | PROT_WRITE), 0);
	{
		rv::MemoryRegion again = dev.reg_mem(buf.addr(), 256 * KiB, recv);
		EXPECT_EQ(again.handle(), w.handle) << "write access came back";
	}
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.hit, s1.hit + 1) << str(s2);
	EXPECT_EQ(s2.miss, s1.miss);

	ASSERT_EQ(::mprotect(buf.data(), buf.size(), PROT_READ), 0);
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), 256 * KiB, recv), EFAULT);
	{
		rv::MemoryRegion again = dev.reg_mem(buf.addr(), 256 * KiB, ro);
		EXPECT_EQ(again.handle(), r.handle) << "reading needs no write access";
	}
	rv::CacheStats s3 = dev.cache_stats();
	EXPECT_EQ(s3.remove, s1.remove + 1) << str(s3);
	EXPECT_EQ(s3.count, 1u);
	EXPECT_EQ(s3.hit, s2.hit + 1);
	ASSERT_EQ(::mprotect(buf.data(), buf.size(), PROT_READ | PROT_WRITE), 0);
}

TEST(Coherence, MremapMoveRemoves)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);
	rv::Mapping target = rv::Mapping::anonymous(256 * KiB);
	const std::uint64_t addr = buf.addr();

	cache_unreferenced(dev, addr, 256 * KiB);
	const rv::CacheStats s1 = dev.cache_stats();

	void *moved = ::mremap(buf.data(), buf.size(), buf.size(),
			       MREMAP_MAYMOVE | MREMAP_FIXED, target.data());
	ASSERT_NE(moved, MAP_FAILED) << std::strerror(errno);
	ASSERT_EQ(moved, target.data());
	(void)buf.release();	// the old range is gone; target owns the pages

	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove + 1) << str(s2);
	EXPECT_EQ(s2.count, 0u);
	EXPECT_EQ(reg_errno(dev.fd(), addr, 256 * KiB, recv), EFAULT)
		<< "the old range is unmapped";
	rv::MemoryRegion mr = dev.reg_mem(target.addr(), 256 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().miss, s1.miss + 1);
}

TEST(Coherence, MremapShrinkRemovesTheTail)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(512 * KiB);
	const std::uint64_t addr = buf.addr();

	cache_unreferenced(dev, addr, 128 * KiB);		// kept
	cache_unreferenced(dev, addr + 384 * KiB, 128 * KiB);	// in the tail
	const rv::CacheStats s1 = dev.cache_stats();

	void *p = ::mremap(buf.data(), 512 * KiB, 256 * KiB, 0);
	ASSERT_EQ(p, buf.data()) << std::strerror(errno);
	buf = rv::Mapping::adopt(buf.release(), 256 * KiB);

	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove + 1) << str(s2);
	EXPECT_EQ(s2.count, 1u);
	rv::MemoryRegion head = dev.reg_mem(addr, 128 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().hit, s1.hit + 1);
}

TEST(Coherence, ReferencedEntryInvalidated)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);
	const std::uint64_t addr = buf.addr();
	const std::size_t len = buf.size();

	// Registered and never deregistered.
	rv::MemoryRegion old = dev.reg_mem(addr, len, recv);
	const rv::CacheStats s1 = dev.cache_stats();

	buf.unmap();
	EXPECT_EQ(reg_errno(dev.fd(), addr, len, recv), EFAULT);
	buf = map_fixed(addr, len);

	rv::MemoryRegion fresh = dev.reg_mem(addr, len, recv);
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.miss, s1.miss + 1) << str(s2);
	EXPECT_EQ(s2.hit, s1.hit);
	EXPECT_NE(fresh.handle(), old.handle()) << "the stale MR was found";

	// The old reference can still be dropped, once.
	const rv::MrInfo info = old.info();
	EXPECT_NO_THROW(old.release());
	EXPECT_EQ(dereg_errno(dev.fd(), info), EINVAL);

	rv::CacheStats s3 = dev.cache_stats();
	EXPECT_EQ(s3.count, 1u) << str(s3);
	EXPECT_EQ(s3.cache_size, len);
	EXPECT_EQ(s3.inuse, 1u);
	EXPECT_EQ(s3.inuse_bytes, len);
	fresh.release();
	EXPECT_EQ(dev.cache_stats().inuse, 0u);
}

// fork copies pinned private pages for the child at once, so the parent
// keeps the pages its MR holds, whoever writes: the entry stays a hit.
// (HeldMr.SurvivesEventsThatKeepPinnedPages checks the bytes of a write.)
TEST(Coherence, ForkKeepsTheParentsPinnedPages)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);

	const rv::MrInfo old = cache_unreferenced(dev, buf.addr(), 256 * KiB);
	const rv::CacheStats s1 = dev.cache_stats();

	auto out = run_in_child<int>([&] {
		std::memset(buf.data(), 1, buf.size());
		return 0;
	});
	ASSERT_TRUE(out.ok()) << "child exit " << out.exit_code;
	std::memset(buf.data(), 2, buf.size());

	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove) << str(s2);
	EXPECT_EQ(s2.count, 1u);
	rv::MemoryRegion mr = dev.reg_mem(buf.addr(), 256 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().hit, s1.hit + 1);
	EXPECT_EQ(mr.handle(), old.handle);
}

TEST(Coherence, UnrelatedMemoryChangesKeepEntries)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = cache_device(n);
	rv::Mapping buf = rv::Mapping::anonymous(256 * KiB);

	cache_unreferenced(dev, buf.addr(), 256 * KiB);
	const rv::CacheStats s1 = dev.cache_stats();

	for (int i = 0; i < 8; i++) {
		rv::Mapping other = rv::Mapping::anonymous(MiB);
		ASSERT_EQ(::madvise(other.data(), other.size(), MADV_DONTNEED), 0);
	}
	rv::CacheStats s2 = dev.cache_stats();
	EXPECT_EQ(s2.remove, s1.remove) << str(s2);
	EXPECT_EQ(s2.count, 1u);
	rv::MemoryRegion mr = dev.reg_mem(buf.addr(), 256 * KiB, recv);
	EXPECT_EQ(dev.cache_stats().hit, s1.hit + 1);
}
