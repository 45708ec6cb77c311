// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Files and mappings: open, close and dup of /dev/rv, mmap, munmap and
// mremap of its event ring, reading (and scribbling on) the ring, and
// the arena's changes behind the module's back.
#include "worker.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace rvfuzz {

namespace {

constexpr std::size_t max_orphans = 16;

std::uint64_t page() noexcept
{
	return rv::page_size();
}

std::uint64_t page_align(std::uint64_t n) noexcept
{
	return (n + page() - 1) & ~(page() - 1);
}

// The mapping length of a ring of n entries for a file that attached
// with ABI abi (0 if there is no ring).
std::uint64_t ring_len(std::uint32_t n, std::uint32_t abi) noexcept
{
	const std::uint64_t stride = abi >= RV_ABI_VERSION(1, 7) ?
		sizeof(rv_event) : RV_EVENT_LEGACY_SIZE;

	return n ? page_align(sizeof(rv_ring_header) + n * stride) : 0;
}

} // namespace

void Worker::keep_orphan(RingMap r)
{
	std::lock_guard lock(orphans_m_);

	if (orphans_.size() >= max_orphans)
		orphans_.erase(orphans_.begin());
	orphans_.push_back(std::move(r));
}

// --- open, close, dup -------------------------------------------------------

void Worker::op_open(Ctx &c, FdSlot &s)
{
	const auto a = c.rng.below(100);
	const int acc = a < 90 ? O_RDWR : a < 95 ? O_RDONLY : O_WRONLY;
	const int flags = acc | (c.rng.chance(50) ? O_CLOEXEC : 0) |
		(c.rng.chance(20) ? O_NONBLOCK : 0);
	bool opened = false;

	{
		// Held over open(): no other thread fills the slot meanwhile.
		std::lock_guard lock(s.m);
		if (s.fd.load() >= 0)
			return;
		CallRecord &r = begin(c, Op::open, -1);
		r.extra[0] = static_cast<std::uint64_t>(flags);
		int fd = -1;
		const char *path = o_.device.c_str();
		Result res = issue(c, Op::open, expect_open(), [&fd, path, flags] {
			fd = ::open(path, flags);
			return fd < 0 ? -1L : 0L;
		});
		if (!res.done || res.err)
			return;
		std::vector<RingMap> none;
		s.forget(none);
		s.fd.store(fd);
		opened = true;
	}
	// What a client does next: declare its ABI, attach.
	if (opened && c.rng.chance(60)) {
		if (enabled(Op::capability))
			op_capability(c, s, true);
		if (enabled(Op::attach) && c.rng.chance(60))
			op_attach(c, s, Op::attach, true);
	}
}

void Worker::op_close(Ctx &c, FdSlot &s)
{
	std::vector<RingMap> rings;
	int fd;

	{
		std::lock_guard lock(s.m);
		fd = s.fd.exchange(-1);
		s.forget(rings);
	}
	// The rings keep their files open until they are unmapped.
	for (auto &r : rings)
		keep_orphan(std::move(r));
	begin(c, Op::close, fd);
	issue(c, Op::close, expect_close(fd >= 0), [fd] {
		return static_cast<long>(::close(fd));
	});
}

void Worker::op_dup(Ctx &c, FdSlot &s)
{
	FdSlot &to = pick_slot(c);

	if (&to == &s)
		return;
	std::scoped_lock lock(s.m, to.m);
	const int fd = s.fd.load();
	if (to.fd.load() >= 0 || fd < 0)
		return;
	begin(c, Op::dup, fd);
	int nfd = -1;
	Result res = issue(c, Op::dup, expect_dup(), [fd, &nfd] {
		nfd = ::dup(fd);
		return nfd < 0 ? -1L : 0L;
	});
	if (!res.done || res.err)
		return;
	// The same file: its attach, MRs and connections.
	std::vector<RingMap> none;
	to.forget(none);
	to.attached = s.attached;
	to.main_job = s.main_job;
	to.node = s.node;
	to.rv_index = s.rv_index;
	to.cq_entries = s.cq_entries;
	to.num_conn = s.num_conn;
	to.abi = s.abi;
	to.attach_abi = s.attach_abi;
	to.max_fmr = s.max_fmr;
	to.mrs = s.mrs;
	to.conns = s.conns;
	to.fd.store(nfd);
}

// --- the event ring ---------------------------------------------------------

void Worker::op_mmap(Ctx &c, FdSlot &s, bool valid)
{
	const Hint h = hint(s);
	const int fd = valid ? h.fd : pick_fd(c, s);
	const std::uint64_t exact = ring_len(h.cq_entries, h.attach_abi);
	constexpr std::uint64_t random_flags = 0x1fff0 &
		~static_cast<std::uint64_t>(MAP_ANONYMOUS | MAP_FIXED);
	MmapArgs a;

	a.len = exact && c.rng.chance(70) ? exact :
		c.rng.pick<std::uint64_t>({0, 1, page(), 2 * page(),
					   exact ? exact - page() : 3 * page(),
					   exact + page(), exact + 1, 1ULL << 40, ~0ULL,
					   ~0ULL - page() + 1, max_ring_len() + page()});
	a.prot = c.rng.chance(80) ? PROT_READ | PROT_WRITE :
		c.rng.pick<int>({PROT_READ, PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
				 PROT_READ | PROT_WRITE | PROT_EXEC,
				 static_cast<int>(c.rng.next() & 0xff)});
	a.flags = MAP_SHARED;
	if (c.rng.chance(25)) {
		a.flags = c.rng.pick<int>(
			{MAP_PRIVATE, MAP_SHARED_VALIDATE, MAP_SHARED_VALIDATE | MAP_SYNC,
			 0, 0xf, MAP_SHARED | MAP_POPULATE, MAP_SHARED | MAP_LOCKED,
			 MAP_SHARED | MAP_NORESERVE, MAP_SHARED | MAP_HUGETLB,
			 MAP_SHARED | MAP_GROWSDOWN, MAP_SHARED | MAP_32BIT,
			 MAP_SHARED_VALIDATE | MAP_POPULATE, MAP_SHARED | MAP_FIXED_NOREPLACE,
			 MAP_SHARED | MAP_FIXED, MAP_SHARED_VALIDATE | MAP_FIXED_NOREPLACE,
			 MAP_SHARED | static_cast<int>(c.rng.next() & random_flags)});
	}
	if (a.flags & MAP_FIXED_NOREPLACE) {
		a.addr = c.arg.mapped_addr();		// never replaced
		a.addr_mapped = true;
	} else if (a.flags & MAP_FIXED) {
		a.addr = c.arg.mapped_addr() + 1;	// unaligned: refused
	} else if (c.rng.chance(10)) {
		a.addr = c.rng.next() & ~(page() - 1);	// a hint only
	}
	a.off = c.rng.chance(85) ? 0 :
		c.rng.pick<std::uint64_t>({page(), 1, 2 * page(), ~0ULL & ~(page() - 1),
					   1ULL << 62, c.rng.next() & ~(page() - 1)});
	if (valid) {
		// What a client does after ATTACH.
		a = MmapArgs{};
		a.len = exact;
		a.prot = PROT_READ | PROT_WRITE;
		a.flags = MAP_SHARED;
	}

	CallRecord &r = begin(c, Op::mmap, fd);
	r.extra = {a.addr, a.len, static_cast<std::uint64_t>(a.prot),
		   static_cast<std::uint64_t>(static_cast<unsigned>(a.flags)), a.off, 0};
	Expect e = expect_mmap(a);
	if (fd < 0 || fd >= (1 << 24)) {
		e = expect_bad_fd();
		e.allowed |= errnos({EINVAL});	// the offset is checked first
	}
	void *p = MAP_FAILED;
	Result res;
	{
		std::lock_guard mm(mm_);
		res = issue(c, Op::mmap, e, [&p, a, fd] {
			p = ::mmap(reinterpret_cast<void *>(static_cast<std::uintptr_t>(a.addr)),
				   a.len, a.prot, a.flags, fd, static_cast<off_t>(a.off));
			return p == MAP_FAILED ? -1L : 0L;
		});
	}
	if (!res.done || res.err)
		return;
	const auto addr = reinterpret_cast<std::uintptr_t>(p);
	if (addr % page() || ((a.flags & MAP_FIXED) && addr != a.addr))
		fail(c, "mmap returned " + std::to_string(addr));
	RingMap ring{rv::Mapping::adopt(p, a.len), a.prot, true};
	std::lock_guard lock(s.m);
	if (s.fd.load() == fd)
		s.rings.push_back(std::move(ring));
	else
		keep_orphan(std::move(ring));
}

void Worker::op_munmap(Ctx &c, FdSlot &s)
{
	const bool orphan = c.rng.chance(30);
	std::unique_lock lock(orphan ? orphans_m_ : s.m);
	std::vector<RingMap> &rings = orphan ? orphans_ : s.rings;
	const auto v = c.rng.below(100);

	if (rings.empty() || v >= 90) {
		// Refused before anything is unmapped.
		const std::uint64_t addr = c.arg.mapped_addr() + 1 + c.rng.below(page() - 1);
		const std::uint64_t len = c.rng.pick<std::uint64_t>({0, page()});
		CallRecord &r = begin(c, Op::munmap, -1);
		r.extra[0] = addr;
		r.extra[1] = len;
		issue(c, Op::munmap, expect_munmap(addr, len), [addr, len] {
			return static_cast<long>(::munmap(
				reinterpret_cast<void *>(static_cast<std::uintptr_t>(addr)), len));
		});
		return;
	}
	const std::size_t i = c.rng.below(rings.size());
	RingMap &ring = rings[i];
	const std::uint64_t pages = page_align(ring.map.size()) / page();
	std::uint64_t addr = ring.map.addr();
	std::uint64_t len = page_align(ring.map.size());
	std::uint64_t keep_addr = 0, keep_len = 0;

	if (pages > 1 && v < 20) {
		// the tail
		const std::uint64_t k = 1 + c.rng.below(pages - 1);
		keep_addr = addr;
		keep_len = k * page();
		addr += keep_len;
		len -= keep_len;
	} else if (pages > 1 && v < 35) {
		// the head
		const std::uint64_t k = 1 + c.rng.below(pages - 1);
		keep_addr = addr + k * page();
		keep_len = len - k * page();
		len = k * page();
	}
	CallRecord &r = begin(c, Op::munmap, -1);
	r.extra[0] = addr;
	r.extra[1] = len;
	Result res = issue(c, Op::munmap, expect_munmap(addr, len), [addr, len] {
		return static_cast<long>(::munmap(
			reinterpret_cast<void *>(static_cast<std::uintptr_t>(addr)), len));
	});
	if (!res.done || res.err)
		return;
	(void)ring.map.release();
	if (keep_len) {
		ring.map = rv::Mapping::adopt(
			reinterpret_cast<void *>(static_cast<std::uintptr_t>(keep_addr)),
			keep_len);
		ring.whole = false;
	} else {
		rings.erase(rings.begin() + static_cast<std::ptrdiff_t>(i));
	}
}

void Worker::op_mremap(Ctx &c, FdSlot &s)
{
	// A ring that moves lands where the kernel chooses: mm_ first.
	std::lock_guard mm(mm_);
	std::lock_guard lock(s.m);

	if (s.rings.empty())
		return;
	const std::size_t i = c.rng.below(s.rings.size());
	RingMap &ring = s.rings[i];
	const std::uint64_t old_len = page_align(ring.map.size());
	const std::uint64_t addr = ring.map.addr();
	std::uint64_t new_len = old_len;
	int flags = 0;

	switch (c.rng.below(6)) {
	case 0:
		if (old_len > page())
			new_len = old_len - page();	// shrink in place
		break;
	case 1:
		new_len = old_len + page();		// a ring cannot grow
		flags = c.rng.chance(50) ? MREMAP_MAYMOVE : 0;
		break;
	case 2:
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;	// refused for rings
		break;
	case 3:
		flags = c.rng.fuzz<int>({MREMAP_FIXED, 8, 0x10});
		break;
	case 4:
		new_len = 0;
		break;
	default:
		flags = MREMAP_MAYMOVE;
		break;
	}
	// Always passed: with MREMAP_FIXED the kernel would move the ring
	// over whatever it names. Unaligned, it is refused.
	const std::uint64_t to = c.arg.mapped_addr() + 1;
	CallRecord &r = begin(c, Op::mremap, -1);
	r.extra = {addr, old_len, new_len, static_cast<std::uint64_t>(static_cast<unsigned>(flags)),
		   to, 0};
	void *p = MAP_FAILED;
	Result res = issue(c, Op::mremap, expect_mremap(addr, old_len, new_len, flags, to),
			   [&p, addr, old_len, new_len, flags, to] {
		p = ::mremap(reinterpret_cast<void *>(static_cast<std::uintptr_t>(addr)),
			     old_len, new_len, flags,
			     reinterpret_cast<void *>(static_cast<std::uintptr_t>(to)));
		return p == MAP_FAILED ? -1L : 0L;
	});
	if (!res.done || res.err)
		return;
	if (reinterpret_cast<std::uintptr_t>(p) % page())
		fail(c, "mremap returned an unaligned address");
	(void)ring.map.release();
	ring.map = rv::Mapping::adopt(p, new_len);
	if (new_len < old_len)
		ring.whole = false;
}

void Worker::op_ring_poll(Ctx &c, FdSlot &s)
{
	std::lock_guard lock(s.m);

	if (s.rings.empty())
		return;
	RingMap &ring = s.rings[c.rng.below(s.rings.size())];
	if (!ring.whole ||
	    (ring.prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE))
		return;
	sh_.count(Op::ring_poll, 0);
	auto *hdr = static_cast<rv_ring_header *>(ring.map.data());
	const std::uint32_t tail = std::atomic_ref<__u32>(hdr->tail).load(
		std::memory_order_acquire);
	// The mapping is exactly the ring's pages: no ring that needs them
	// has more entries than fit at the smaller (64-byte) stride, and
	// the kernel keeps its tail below the entry count.
	const std::uint64_t room = (page_align(ring.map.size()) -
				    sizeof(rv_ring_header)) / sizeof(rv_event);

	if (tail >= room) {
		begin(c, Op::ring_poll, s.fd.load());
		fail(c, "event ring tail " + std::to_string(tail) +
			" beyond the ring (" + std::to_string(room) + " entries fit)");
		return;
	}
	// Count the events, by the slot's hints of the layout (statistics
	// only: the hints may be wrong, the reads stay inside the mapping).
	const std::uint32_t num = s.cq_entries;
	const std::uint64_t stride = s.attach_abi >= RV_ABI_VERSION(1, 7) ?
		sizeof(rv_event) : RV_EVENT_LEGACY_SIZE;
	if (num && ring.next < num && tail < num) {
		const auto *base = static_cast<const std::uint8_t *>(ring.map.data()) +
			sizeof(rv_ring_header);
		for (std::uint32_t i = ring.next; i != tail; i = i + 1 == num ? 0 : i + 1) {
			const std::uint64_t off = i * stride;
			if (sizeof(rv_ring_header) + off + 2 > ring.map.size())
				break;
			sh_.st.ring_events.fetch_add(1, std::memory_order_relaxed);
			if (base[off] == RV_WC_RDMA_WRITE && !base[off + 1])
				sh_.st.post_ok_events.fetch_add(1, std::memory_order_relaxed);
			else if (base[off] == RV_WC_RECV_RDMA_WITH_IMM)
				sh_.st.recv_events.fetch_add(1, std::memory_order_relaxed);
		}
	}
	ring.next = tail;
	// Consume everything, or scribble on the header (the kernel must
	// not care).
	std::uint32_t new_head = tail;
	if (c.rng.chance(5))
		new_head = c.rng.fuzz<std::uint32_t>({0, tail + 1, s.cq_entries,
						      s.cq_entries + 1});
	std::atomic_ref<__u32>(hdr->head).store(new_head, std::memory_order_release);
	if (c.rng.chance(2))
		std::atomic_ref<__u64>(hdr->overflow_cnt).store(
			c.rng.next(), std::memory_order_relaxed);
}

void Worker::op_arena(Ctx &c)
{
	std::unique_lock mm(mm_);

	arena_.random_op(c.rng);
	sh_.count(Op::arena, 0);
}

} // namespace rvfuzz
