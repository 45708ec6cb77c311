// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The event ring mapping: who may map it, with which length, offset and
// flags, its initial header, and that a corrupted header harms nobody.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>

#include <sys/mman.h>

#include <rv/device.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>

#include "child.hpp"
#include "vm_env.hpp"

using rv::test::ioctl_errno;
using rv::test::open_declared;
using rv::test::params_for;

namespace {

// 4000 entries: 256064 bytes (63 pages) in the 1.7 layout, 260064 bytes
// (64 pages) in the legacy one, so the two lengths are told apart.
constexpr std::uint32_t entries = 4000;
const std::size_t len_1_7 = rv::ring_alloc_len(rv::EventLayout::abi_1_7, entries);
const std::size_t len_legacy = rv::ring_alloc_len(rv::EventLayout::legacy, entries);

std::size_t pages(std::size_t len)
{
	return (len + rv::page_size() - 1) / rv::page_size();
}

// mmap of the ring: 0 with the mapping in m, or the errno.
int map_errno(int fd, std::size_t len, rv::Mapping &m,
	      int flags = MAP_SHARED | MAP_POPULATE, off_t offset = 0,
	      int prot = PROT_READ | PROT_WRITE)
{
	try {
		m = rv::Mapping::map(len, prot, flags, fd, offset);
		return 0;
	} catch (const std::system_error &e) {
		return e.code().value();
	}
}

int map_errno(int fd, std::size_t len, int flags = MAP_SHARED | MAP_POPULATE,
	      off_t offset = 0)
{
	rv::Mapping m;
	return map_errno(fd, len, m, flags, offset);
}

// A file that declared abi (nullopt: nothing; Version{1,2}: QUERY_R2) and
// attached with cq_entries.
rv::Device attached(const rv::test::Node &n, std::uint32_t cq_entries,
		    std::optional<rv::Version> abi = rv::Version::header())
{
	rv::Device dev(rv::test::device_path());
	if (abi == rv::Version{1, 2})
		(void)dev.query_r2();
	else if (abi)
		(void)dev.capability(*abi);
	rv::AttachParams p = params_for(n);
	p.cq_entries = cq_entries;
	(void)dev.attach(p);
	return dev;
}

struct Header {
	std::uint32_t head, tail;
	std::uint64_t overflow;
	std::uint64_t resv[6];
};
static_assert(sizeof(Header) == sizeof(rv_ring_header));

Header read_header(const rv::Mapping &m)
{
	Header h;
	std::memcpy(&h, m.data(), sizeof(h));
	return h;
}

} // namespace

TEST(Ring, LengthsDifferInPages)
{
	ASSERT_EQ(len_1_7, 256064u);
	ASSERT_EQ(len_legacy, 260064u);
	if (rv::page_size() == 4096) {
		EXPECT_EQ(pages(len_1_7), 63u);
		EXPECT_EQ(pages(len_legacy), 64u);
	}
	ASSERT_NE(pages(len_1_7), pages(len_legacy));
}

TEST(Ring, MapsWithTheClientLength)
{
	RV_NODE_OR_SKIP(n, 0);

	// Exactly RV_RING_ALLOC_LEN, or the same rounded to pages.
	for (std::size_t len : {len_1_7, pages(len_1_7) * rv::page_size(),
				len_1_7 - 1 - (len_1_7 - 1) % rv::page_size() + 1}) {
		SCOPED_TRACE(len);
		rv::Device dev = attached(n, entries);
		rv::Mapping m;
		ASSERT_EQ(map_errno(dev.fd(), len, m), 0);
		Header h = read_header(m);
		EXPECT_EQ(h.head, 0u);
		EXPECT_EQ(h.tail, 0u);
		EXPECT_EQ(h.overflow, 0u);
	}
}

TEST(Ring, HeaderStartsZeroed)
{
	RV_NODE_OR_SKIP(n, 0);

	rv::Device dev = attached(n, 192);
	rv::EventRing ring = rv::EventRing::map(dev);
	EXPECT_EQ(ring.view().layout(), rv::EventLayout::abi_1_7);
	EXPECT_EQ(ring.mapping().size(),
		  rv::ring_alloc_len(rv::EventLayout::abi_1_7, 192));
	EXPECT_EQ(ring.view().head(), 0u);
	EXPECT_EQ(ring.view().tail(), 0u);
	EXPECT_EQ(ring.overflow_count(), 0u);
	EXPECT_EQ(ring.pending(), 0u);
	EXPECT_EQ(ring.capacity(), 191u);
	EXPECT_FALSE(ring.poll());	// no events in issue 3
	Header h = read_header(ring.mapping());
	for (auto r : h.resv)
		EXPECT_EQ(r, 0u);
}

TEST(Ring, WrongLengthIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);
	const std::size_t pg = rv::page_size();

	EXPECT_EQ(map_errno(dev.fd(), len_legacy), EINVAL) << "legacy length";
	EXPECT_EQ(map_errno(dev.fd(), (pages(len_1_7) - 1) * pg), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), (pages(len_1_7) + 1) * pg), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), pg), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), 64), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), 1 << 24), EINVAL);

	// Failures do not use up the one mapping.
	rv::Mapping m;
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
}

TEST(Ring, NonZeroOffsetIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);
	const auto pg = static_cast<off_t>(rv::page_size());

	EXPECT_EQ(map_errno(dev.fd(), len_1_7, MAP_SHARED, pg), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, MAP_SHARED, 64 * pg), EINVAL);
	rv::Mapping m;
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
}

TEST(Ring, BeforeAttachIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = open_declared();

	EXPECT_EQ(map_errno(dev.fd(), rv::page_size()), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL);

	rv::AttachParams p = params_for(n);
	p.cq_entries = entries;
	(void)dev.attach(p);
	rv::Mapping m;
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
}

TEST(Ring, NoRingIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, 0);

	EXPECT_EQ(map_errno(dev.fd(), rv::ring_alloc_len(rv::EventLayout::abi_1_7, 0)),
		  EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), rv::page_size()), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL);
	try {
		(void)rv::EventRing::map(dev);
		ADD_FAILURE() << "EventRing::map succeeded without a ring";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL) << e.what();
	}
}

TEST(Ring, SecondMmapIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);

	rv::Mapping m;
	ASSERT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL);
	m.unmap();
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL) << "after munmap";
}

TEST(Ring, MapPrivateIsEinval)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);

	EXPECT_EQ(map_errno(dev.fd(), len_1_7, MAP_PRIVATE), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, MAP_PRIVATE | MAP_POPULATE),
		  EINVAL);
	rv::Mapping m;
	EXPECT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
}

TEST(Ring, MapLockedPopulateWorks)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);

	rv::Mapping m;
	ASSERT_EQ(map_errno(dev.fd(), len_1_7, m,
			    MAP_SHARED | MAP_LOCKED | MAP_POPULATE), 0);
	Header h = read_header(m);
	EXPECT_EQ(h.head, 0u);
	EXPECT_EQ(h.tail, 0u);
	EXPECT_EQ(h.overflow, 0u);
}

TEST(Ring, PlainSharedMappingWorks)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);

	rv::Mapping m;
	ASSERT_EQ(map_errno(dev.fd(), len_1_7, m, MAP_SHARED), 0);
	EXPECT_EQ(read_header(m).tail, 0u);
}

TEST(Ring, LegacyLayoutForAbi16)
{
	RV_NODE_OR_SKIP(n, 0);
	RV_OOT_FORM_OR_SKIP();	// Capability.OlderClientAbi...: EINVAL there
	{
		rv::Device dev = attached(n, entries, rv::Version{1, 6});
		EXPECT_EQ(dev.event_layout(), rv::EventLayout::legacy);
		EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL)
			<< "1.7 length on a 1.6 file";
		rv::Mapping m;
		EXPECT_EQ(map_errno(dev.fd(), len_legacy, m), 0);
		EXPECT_EQ(read_header(m).tail, 0u);
	}
	{
		// Through the library, which picks the legacy length itself.
		rv::Device dev = attached(n, entries, rv::Version{1, 6});
		rv::EventRing ring = rv::EventRing::map(dev);
		EXPECT_EQ(ring.view().layout(), rv::EventLayout::legacy);
		EXPECT_EQ(ring.mapping().size(), len_legacy);
		EXPECT_FALSE(ring.poll());
		EXPECT_EQ(ring.capacity(), entries - 1);
	}
}

TEST(Ring, LegacyLayoutWithoutCapability)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries, std::nullopt);

	rv::Mapping m;
	if (rv::test::upstream_form()) {
		// The upstream form has the 1.7 layout only.
		EXPECT_EQ(map_errno(dev.fd(), len_legacy), EINVAL);
		EXPECT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
		return;
	}
	EXPECT_EQ(dev.event_layout(), rv::EventLayout::legacy);
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL);
	EXPECT_EQ(map_errno(dev.fd(), len_legacy, m), 0);
}

TEST(Ring, LegacyLayoutForQueryR2)
{
	RV_NODE_OR_SKIP(n, 0);
	RV_OOT_FORM_OR_SKIP();	// Capability.QueryR2...: EINVAL there
	rv::Device dev = attached(n, entries, rv::Version{1, 2});

	EXPECT_EQ(dev.declared_abi(), (rv::Version{1, 2}));
	EXPECT_EQ(map_errno(dev.fd(), len_1_7), EINVAL);
	rv::Mapping m;
	EXPECT_EQ(map_errno(dev.fd(), len_legacy, m), 0);
}

TEST(Ring, CurrentLayoutRefusesLegacyLength)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries, rv::Version{1, 7});

	EXPECT_EQ(map_errno(dev.fd(), len_legacy), EINVAL);
	rv::EventRing ring = rv::EventRing::map(dev);
	EXPECT_EQ(ring.mapping().size(), len_1_7);
}

TEST(Ring, ScribbledHeaderHarmsNobody)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);
	rv::EventRing ring = rv::EventRing::map(dev);

	Header junk;
	junk.head = 0xffffffffu;
	junk.tail = 0x7fffffffu;
	junk.overflow = ~0ULL;
	for (auto &r : junk.resv)
		r = 0xa5a5a5a5a5a5a5a5ULL;
	std::memcpy(ring.mapping().data(), &junk, sizeof(junk));
	std::memset(ring.mapping().bytes() + sizeof(junk), 0x5a,
		    ring.mapping().size() - sizeof(junk));

	// The consumer refuses an out-of-range header instead of reading
	// outside the ring.
	try {
		(void)ring.poll();
		ADD_FAILURE() << "poll() accepted head/tail out of range";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EBADMSG);
	}

	// The module keeps working for this file.
	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.count, 0u);
	EXPECT_EQ(dev.event_stats().recv_write_cqe, 0u);
	rv::Mapping buf = rv::Mapping::anonymous(64 * 1024);
	{
		rv::MemoryRegion mr = dev.reg_mem(buf.data(), buf.size(),
						  rv::access::psm3_recv);
		EXPECT_NE(mr.handle(), 0u);
		mr.release();
	}

	// Plausible but wrong values too.
	junk.head = 5;
	junk.tail = 3;
	std::memcpy(ring.mapping().data(), &junk, sizeof(junk));
	EXPECT_EQ(dev.cache_stats().count, 1u);

	ring.unmap();
	dev.close();

	// And the module for everybody else.
	rv::Device other = attached(n, entries);
	rv::EventRing ring2 = rv::EventRing::map(other);
	EXPECT_EQ(ring2.view().tail(), 0u);
}

TEST(Ring, NotInheritedByFork)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);
	rv::EventRing ring = rv::EventRing::map(dev);
	const volatile std::uint32_t *tail = reinterpret_cast<std::uint32_t *>(
		ring.mapping().bytes() + offsetof(rv_ring_header, tail));

	auto out = rv::test::run_in_child<std::uint32_t>([&] {
		// VM_DONTCOPY: the range does not exist in the child.
		std::signal(SIGSEGV, SIG_DFL);
		return *tail;
	});
	EXPECT_FALSE(out.exited) << "the child read the ring";
	EXPECT_EQ(out.signal, SIGSEGV);
	EXPECT_EQ(*tail, 0u);
}

TEST(Ring, CannotGrow)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Device dev = attached(n, entries);
	rv::Mapping m;
	ASSERT_EQ(map_errno(dev.fd(), len_1_7, m), 0);
	const std::size_t bigger = (pages(len_1_7) + 16) * rv::page_size();

	for (int flags : {0, MREMAP_MAYMOVE}) {
		SCOPED_TRACE(flags ? "MREMAP_MAYMOVE" : "in place");
		void *p = ::mremap(m.data(), m.size(), bigger, flags);
		EXPECT_EQ(p, MAP_FAILED) << "the ring grew";
		if (p != MAP_FAILED) {
			// Own whatever it became, so it is unmapped once.
			(void)m.release();
			m = rv::Mapping::adopt(p, bigger);
			return;
		}
	}
	EXPECT_EQ(read_header(m).tail, 0u);
}

TEST(Ring, CloseWhileMappedThenUnmap)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.cq_entries = entries;
	rv::Device dev = open_declared();
	ASSERT_EQ(dev.attach(p).rv_index, 0u);
	rv::EventRing ring = rv::EventRing::map(dev);

	dev.close();
	// The mapping keeps the file: the ring is still readable.
	EXPECT_EQ(ring.view().tail(), 0u);
	EXPECT_FALSE(ring.poll());
	rv::Device other = open_declared();
	EXPECT_EQ(other.attach(p).rv_index, 1u) << "index 0 is still held";
	other.close();

	ring.unmap();
	// Now the file is released and index 0 is free again.
	rv::Device again = open_declared();
	EXPECT_EQ(again.attach(p).rv_index, 0u);
}
