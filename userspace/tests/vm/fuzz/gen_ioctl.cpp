// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The ioctl calls: each builds a valid argument (as PSM3 would) or one
// with boundary and garbage values in some fields, places it valid or
// not, and issues it. What the module answers is recorded as hints for
// later calls (handles, attach) and checked for consistency where the
// answer alone allows it.
#include "worker.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rv/connection.hpp>

namespace rvfuzz {

namespace {

constexpr std::uint32_t acc_lw = 1;
constexpr std::uint32_t acc_rw = 2;
constexpr std::uint32_t acc_rr = 4;
constexpr std::uint32_t acc_k = IBV_ACCESS_KERNEL;

// The main job every worker joins unless it mutates the attach.
constexpr std::uint8_t main_num_conn = 2;
constexpr std::uint8_t main_index_bits = 4;
constexpr std::uint32_t main_q_depth = 64;
constexpr std::uint32_t main_reconnect_timeout = 10;
constexpr std::uint32_t main_hb_interval = 1000;

constexpr std::size_t max_mrs = 48;
constexpr std::size_t max_conns = 16;

template <typename T>
std::span<const std::byte> bytes_of(const T &v, unsigned long cmd)
{
	return std::as_bytes(std::span(&v, 1)).first(
		std::min<std::size_t>(sizeof(T), _IOC_SIZE(static_cast<unsigned int>(cmd))));
}

template <typename T>
std::span<std::byte> out_of(T &v)
{
	return std::as_writable_bytes(std::span(&v, 1));
}

template <typename T>
void put_bounded(std::vector<T> &v, T x, Rng &rng, std::size_t max)
{
	if (v.size() >= max)
		v.erase(v.begin() + static_cast<std::ptrdiff_t>(rng.below(v.size())));
	v.push_back(x);
}

std::uint64_t text_addr()
{
	return reinterpret_cast<std::uintptr_t>(&text_addr);
}

rv::Gid random_gid(Rng &rng)
{
	rv::Gid g{};

	rng.fill(std::as_writable_bytes(std::span(g)));
	return g;
}

} // namespace

// Remote write access is given only to arena memory: whatever a peer
// writes, with a valid rkey or a guessed one, lands there.
std::uint32_t Worker::sanitize_access(std::uint64_t addr, std::uint64_t len,
				      std::uint32_t access)
{
	if ((access & acc_rw) && (access & acc_lw) && !arena_.contains(addr, len))
		access &= ~acc_rw;
	return access;
}

// --- CAPABILITY, QUERY_R2 ---------------------------------------------------

void Worker::op_capability(Ctx &c, FdSlot &s, bool valid)
{
	const int fd = valid ? s.fd.load() : pick_fd(c, s);
	rv_capability_params p{};

	p.major_rev = 1;
	p.minor_rev = c.rng.chance(70) ? RV_ABI_VER_MINOR :
		c.rng.fuzz<std::uint16_t>({0, 1, 2, 5, 6, 8});
	p.capability = c.rng.pick<std::uint64_t>({0, RV_CAP_EVICT, RV_CAP_USER_MR, ~0ULL});
	if (!valid && c.rng.chance(20)) {
		switch (c.rng.below(4)) {
		case 0: p.resv1 = c.rng.fuzz<std::uint32_t>({1}); break;
		case 1: p.resv2[c.rng.below(6)] = c.rng.fuzz<std::uint64_t>({1}); break;
		case 2: p.major_rev = c.rng.fuzz<std::uint16_t>({0, 2, 0xffff}); break;
		default: p.minor_rev = c.rng.fuzz<std::uint16_t>({0xffff}); break;
		}
	}
	const PtrKind k = valid ? PtrKind::valid : ArgBuf::pick(c.rng, 10);
	rv_capability_params out{};
	Result res = do_ioctl(c, Op::capability, fd, RV_IOCTL_CAPABILITY,
			      bytes_of(p, RV_IOCTL_CAPABILITY), k, out_of(out));
	if (!res.done || res.err)
		return;
	if (out.major_rev != RV_ABI_VER_MAJOR || out.minor_rev != RV_ABI_VER_MINOR ||
	    !(out.capability & RV_CAP_EVICT) || (out.capability & RV_CAP_USER_MR))
		fail(c, "CAPABILITY answered ABI " + std::to_string(out.major_rev) +
			"." + std::to_string(out.minor_rev) + " caps " +
			std::to_string(out.capability));
	std::lock_guard lock(s.m);
	if (s.fd.load() == fd)
		s.abi = p.major_rev > RV_ABI_VER_MAJOR ? RV_ABI_VERSION_CURRENT :
			RV_ABI_VERSION(static_cast<std::uint32_t>(p.major_rev), p.minor_rev);
}

void Worker::op_query_r2(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	rv_capability_params p{};

	if (c.rng.chance(30))
		c.rng.fill(out_of(p));
	Result res = do_ioctl(c, Op::query_r2, fd, RV_IOCTL_QUERY_R2,
			      bytes_of(p, RV_IOCTL_QUERY_R2), ArgBuf::pick(c.rng, 10));
	if (!res.done || res.err)
		return;
	std::lock_guard lock(s.m);
	if (s.fd.load() == fd)
		s.abi = RV_ABI_VERSION(1, 2);
}

// --- ATTACH -----------------------------------------------------------------

void Worker::fill_attach(Ctx &c, rv_attach_params_in &in, int n, bool alt)
{
	const Node *nd = node(n);

	if (nd) {
		std::strncpy(in.dev_name, nd->dev.c_str(), sizeof(in.dev_name) - 1);
		in.loc_addr = nd->ip;
		in.loc_gid_index = nd->gid_index;
		std::memcpy(in.loc_gid, nd->gid.data(), sizeof(in.loc_gid));
	} else {
		std::strncpy(in.dev_name, c.rng.pick({"rxe0", "mlx5_0", "rv_fuzz"}),
			     sizeof(in.dev_name) - 1);
		in.loc_addr = static_cast<std::uint32_t>(c.rng.next());
		in.loc_gid_index = static_cast<std::uint16_t>(c.rng.below(4));
		const rv::Gid g = random_gid(c.rng);
		std::memcpy(in.loc_gid, g.data(), sizeof(in.loc_gid));
	}
	in.rdma_mode = RV_RDMA_MODE_KERNEL |
		(c.rng.chance(10) ? RV_RDMA_MODE_UPSIZE_CPU : 0);
	in.port_num = 1;
	in.mr_cache_size = c.rng.pick<std::uint32_t>({1, 2, 4, 8, 16});
	std::memcpy(in.job_key, main_key_.data(), sizeof(in.job_key));
	in.job_key_len = RV_MAX_JOB_KEY_LEN;
	in.service_id = 0;
	in.context = c.rng.next();
	in.cq_entries = c.rng.pick<std::uint32_t>({0, 2, 16, 64, 64, 256});
	in.num_conn = main_num_conn;
	in.index_bits = main_index_bits;
	in.q_depth = main_q_depth;
	in.reconnect_timeout = main_reconnect_timeout;
	in.hb_interval = main_hb_interval;
	// Any page list length but 1 (EINVAL): the device's cuts it.
	in.fr_page_list_len = static_cast<std::uint32_t>(c.rng.next());
	if (in.fr_page_list_len == 1)
		in.fr_page_list_len = 0;
	if (!alt)
		return;
	// Another job of the same uid: a variant of the key, parameters of
	// its own (an attach to the main key with these gets EBUSY).
	in.job_key[RV_MAX_JOB_KEY_LEN - 1] ^= static_cast<std::uint8_t>(1 + c.rng.below(3));
	in.job_key_len = static_cast<std::uint8_t>(c.rng.range(0, RV_MAX_JOB_KEY_LEN));
	in.num_conn = static_cast<std::uint8_t>(c.rng.range(0, 4));
	in.index_bits = static_cast<std::uint8_t>(c.rng.range(0, RV_MAX_INDEX_BITS));
	in.q_depth = c.rng.pick<std::uint32_t>({0, 16, 17, 128, 1024});
	in.reconnect_timeout = static_cast<std::uint32_t>(c.rng.range(0, 4));
	in.hb_interval = in.reconnect_timeout ?
		static_cast<std::uint32_t>(c.rng.below(in.reconnect_timeout * 1000)) :
		static_cast<std::uint32_t>(c.rng.below(2000));
	in.cq_entries = static_cast<std::uint32_t>(c.rng.range(2, RV_MAX_CQ_ENTRIES));
	if (c.rng.chance(30))
		in.service_id = c.rng.pick<std::uint64_t>({0x1000125500000002ULL,
							    c.rng.next() & 0x00ffffffffffffffULL});
}

void Worker::mutate_attach(Ctx &c, rv_attach_params_in &in)
{
	const auto n = c.rng.range(1, 3);

	for (std::uint64_t i = 0; i < n; i++) {
		switch (c.rng.below(21)) {
		case 0:
			switch (c.rng.below(4)) {
			case 0:
				std::memset(in.dev_name, 0, sizeof(in.dev_name));
				break;
			case 1:
				std::memset(in.dev_name, 'x', sizeof(in.dev_name));
				break;
			case 2:
				std::strcpy(in.dev_name, "rxe9");
				break;
			default:
				// garbage after the NUL is allowed
				in.dev_name[sizeof(in.dev_name) - 1] = 'y';
				break;
			}
			break;
		case 1: in.mr_cache_size = c.rng.fuzz<std::uint32_t>({0, 1, 1048576, 1048577}); break;
		case 2: in.rdma_mode = c.rng.fuzz<std::uint8_t>({0, 1, 2, 0x1f, 0x20, 0x21, 0x40}); break;
		case 3: in.port_num = c.rng.fuzz<std::uint8_t>({0, 1, 2}); break;
		case 4: in.num_conn = c.rng.fuzz<std::uint8_t>({0, 1, 16, 17}); break;
		case 5: in.resv1 = c.rng.fuzz<std::uint8_t>({1}); break;
		case 6: in.resv2 = c.rng.fuzz<std::uint8_t>({1}); break;
		case 7: in.resv3[c.rng.below(sizeof(in.resv3))] = c.rng.fuzz<std::uint8_t>({1}); break;
		case 8: in.resv4 = c.rng.fuzz<std::uint32_t>({1}); break;
		case 9: in.loc_addr = static_cast<std::uint32_t>(c.rng.next()); break;
		case 10: in.index_bits = c.rng.fuzz<std::uint8_t>({0, 1, 12, 13}); break;
		case 11: in.loc_gid_index = c.rng.fuzz<std::uint16_t>({0, 1, 2, 3, 255}); break;
		case 12: {
			rv::Gid g{};
			if (c.rng.chance(50))
				g = random_gid(c.rng);
			else if (const Node *o = node(other_node(0)))
				g = o->gid;
			std::memcpy(in.loc_gid, g.data(), sizeof(in.loc_gid));
			break;
		}
		case 13: in.job_key_len = c.rng.fuzz<std::uint8_t>({0, 1, 16, 17}); break;
		case 14:
			in.service_id = c.rng.fuzz<std::uint64_t>(
				{1, 0x0200000000000000ULL, 0x0200000000000001ULL,
				 0x1000125500000001ULL,
				 0x0000000001064853ULL});	// RDMA CM's
			break;
		case 15: in.cq_entries = c.rng.fuzz<std::uint32_t>({0, 1, 2, 10000, 10001}); break;
		case 16: in.q_depth = c.rng.fuzz<std::uint32_t>({0, 1, 15, 16, 65536, 65537}); break;
		case 17: in.reconnect_timeout = c.rng.fuzz<std::uint32_t>({0, 1, 3600, 3601}); break;
		case 18: in.hb_interval = c.rng.fuzz<std::uint32_t>({0, 1, 999, 1000, 100000}); break;
		case 19: in.context = c.rng.next(); break;
		default: in.fr_page_list_len = c.rng.fuzz<std::uint32_t>({0}); break;
		}
	}
	// Job queues of 64k WRs on one QP cost megabytes each under TCG.
	if (in.q_depth > 4096 && in.q_depth <= 65536 && c.rng.chance(90))
		in.q_depth = 4096;
}

void Worker::op_attach(Ctx &c, FdSlot &s, Op op, bool valid)
{
	const int fd = valid ? s.fd.load() : pick_fd(c, s);
	const unsigned long cmd = op == Op::attach_r5 ? RV_IOCTL_ATTACH_R5 :
							  RV_IOCTL_ATTACH;
	const int nnodes = static_cast<int>(env_.nodes.size());
	const int n = !nnodes ? -1 : c.rng.chance(85) ?
		static_cast<int>(index_ % static_cast<unsigned>(nnodes)) :
		static_cast<int>(c.rng.below(static_cast<std::uint64_t>(nnodes)));
	rv_attach_params p{};
	bool main = n >= 0;

	fill_attach(c, p.in, n, !valid && c.rng.chance(15));
	if (std::memcmp(p.in.job_key, main_key_.data(), sizeof(p.in.job_key)))
		main = false;
	if (!valid && c.rng.chance(25)) {
		mutate_attach(c, p.in);
		main = false;
	}
	const rv_attach_params_in in = p.in;
	const PtrKind k = valid ? PtrKind::valid : ArgBuf::pick(c.rng, 6);
	rv_attach_params_out out{};
	Result res = do_ioctl(c, op, fd, cmd, bytes_of(p, cmd), k, out_of(out));
	if (!res.done || res.err)
		return;
	if (in.index_bits < 32 && out.rv_index >= (1u << in.index_bits))
		fail(c, "ATTACH: rv_index " + std::to_string(out.rv_index) +
			" does not fit index_bits " + std::to_string(in.index_bits));
	if (out.reconnect_timeout > in.reconnect_timeout)
		fail(c, "ATTACH: reconnect_timeout raised to " +
			std::to_string(out.reconnect_timeout));
	{
		std::lock_guard lock(s.m);
		if (s.fd.load() != fd)
			return;
		s.attached = true;
		s.main_job = main;
		s.node = main ? n : -1;
		s.rv_index = out.rv_index;
		s.cq_entries = in.cq_entries;
		s.num_conn = in.num_conn ? in.num_conn : 4;
		s.attach_abi = s.abi;
		s.max_fmr = out.max_fmr_size;
	}
	if (!main)
		return;
	// What a PSM3 process does next: map the event ring, connect to
	// the other node and register a receive buffer.
	if (in.cq_entries && enabled(Op::mmap) && c.rng.chance(70))
		op_mmap(c, s, true);
	if (other_node(n) >= 0 && enabled(Op::conn_create) && c.rng.chance(70) &&
	    op_conn_create(c, s, true) && enabled(Op::conn_connect))
		op_conn_connect(c, s, true);
	if (enabled(Op::reg_mem) && c.rng.chance(70))
		op_reg_mem(c, s, Op::reg_mem, true);
}

// --- REG_MEM, DEREG_MEM, EVICT, GET_CACHE_STATS -------------------------------

Range Worker::reg_mem_range(Ctx &c, FdSlot &s, bool target, std::uint64_t max,
			    rv::Mapping &eph)
{
	const auto r = c.rng.below(100);
	Range range;

	if (target || r < 55) {
		range = arena_.pick_range(c.rng, target ? 64 * 1024 : max);
	} else if (r < 63) {
		// A buffer outside the arena, unmapped right after.
		const std::size_t len = (4 + c.rng.below(13)) * 4096;
		{
			std::lock_guard mm(mm_);
			eph = rv::Mapping::map(len, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS |
					       (c.rng.chance(50) ? MAP_POPULATE : 0));
		}
		range.addr = eph.addr() + (c.rng.chance(50) ? 0 : c.rng.below(len));
		range.len = eph.addr() + len - range.addr;
	} else if (r < 67) {
		std::lock_guard lock(s.m);
		if (!s.rings.empty()) {
			const RingMap &rm = s.rings[c.rng.below(s.rings.size())];
			range.addr = rm.map.addr();
			range.len = rm.map.size();
		}
	} else {
		const std::uint64_t in_arena = arena_.base() + c.rng.below(arena_.size());
		range.addr = c.rng.pick<std::uint64_t>(
			{0, 1, 4095, 0x10000, 0xffff888000000000ULL,
			 0xffffffffff600000ULL, 1ULL << 47, ~0ULL, ~0ULL - 4095,
			 arena_.base() + arena_.size() - 4096, text_addr(),
			 c.arg.readonly_addr(), in_arena, c.rng.next()});
		range.len = c.rng.pick<std::uint64_t>(
			{0, 1, 4096, max, max + 1, 1ULL << 30, ~0ULL, ~0ULL - 4095,
			 1ULL << 40, (1ULL << 40) + 1, 1 + c.rng.below(1 << 21)});
	}
	return range;
}

void Worker::fill_reg_mem(Ctx &c, rv_mem_params_in &in, bool target)
{
	const auto a = c.rng.below(100);
	in.access = target || a < 50 ? acc_k | acc_lw | acc_rw :
		a < 80 ? acc_k | acc_lw : a < 88 ? acc_k | acc_rr : a < 92 ? acc_k :
		c.rng.fuzz<std::uint32_t>({0, 1, 2, 3, 7, acc_k | acc_rw,
					   acc_k | 8, acc_k | 0x100});
	in.access = sanitize_access(in.addr, in.length, in.access);
	if (c.rng.chance(30)) {
		// ignored for kernel MRs
		in.ibv_pd_handle = static_cast<std::uint32_t>(c.rng.next());
		in.cmd_fd_int = static_cast<std::uint32_t>(c.rng.next());
		in.ulen = c.rng.next();
		in.udata_u64 = c.rng.next();
	}
	if (!target && c.rng.chance(3)) {
		switch (c.rng.below(3)) {
		case 0: in.resv1 = c.rng.fuzz<std::uint32_t>({1}); break;
		case 1: in.resv2[0] = c.rng.fuzz<std::uint64_t>({1}); break;
		default: in.resv2[1] = c.rng.fuzz<std::uint64_t>({1}); break;
		}
	}
}

void Worker::keep_mr(Ctx &c, FdSlot &s, int fd, const rv_mem_params_in &in,
		     const rv_mem_params_out &out)
{
	if (out.iova != in.addr || !out.mr_handle || out.mr_handle > UINT32_MAX)
		fail(c, "REG_MEM answered handle " + std::to_string(out.mr_handle) +
			" iova " + std::to_string(out.iova) + " for addr " +
			std::to_string(in.addr));
	MrRef mr{out.mr_handle, in.addr, in.length, in.access, out.rkey};
	// Before the slot's lock: the arena's comes first (see op_fork()).
	const bool in_arena = arena_.contains(in.addr, in.length);
	std::lock_guard lock(s.m);
	if (s.fd.load() != fd)
		return;
	put_bounded(s.mrs, mr, c.rng, max_mrs);
	if ((in.access & acc_rw) && s.main_job && s.node >= 0 && in_arena) {
		TargetCopy t;
		t.node = static_cast<std::uint32_t>(s.node);
		t.rv_index = s.rv_index;
		t.rkey = out.rkey;
		t.addr = in.addr;
		t.len = in.length;
		sh_.publish(t);
	}
}

void Worker::op_reg_mem(Ctx &c, FdSlot &s, Op op, bool target)
{
	const int fd = target ? s.fd.load() : pick_fd(c, s);
	const Hint h = hint(s);
	const std::uint64_t max = h.max_fmr ? h.max_fmr : 16 << 20;
	const unsigned long cmd = op == Op::reg_mem_r4 ? RV_IOCTL_REG_MEM_R4 :
		op == Op::reg_mem_r1 ? RV_IOCTL_REG_MEM_R1 : RV_IOCTL_REG_MEM;
	rv::Mapping eph;
	rv_mem_params p{};
	const Range range = reg_mem_range(c, s, target, max, eph);
	p.in.addr = range.addr;
	p.in.length = range.len;
	fill_reg_mem(c, p.in, target);
	const rv_mem_params_in in = p.in;
	const PtrKind k = target ? PtrKind::valid : ArgBuf::pick(c.rng, 6);
	rv_mem_params_out out{};
	Result res = do_ioctl(c, op, fd, cmd, bytes_of(p, cmd), k, out_of(out));
	eph.reset();	// behind the module's back
	if (res.done && !res.err)
		keep_mr(c, s, fd, in, out);
}

void Worker::op_dereg_mem(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	rv_dereg_params_in p{};
	bool have = false;

	{
		std::lock_guard lock(s.m);
		if (!s.mrs.empty() && c.rng.chance(80)) {
			const auto i = c.rng.below(s.mrs.size());
			const MrRef mr = s.mrs[i];
			s.mrs.erase(s.mrs.begin() + static_cast<std::ptrdiff_t>(i));
			p.mr_handle = mr.handle;
			p.addr = mr.addr;
			p.length = mr.len;
			p.access = mr.access;
			have = true;
		}
	}
	if (!have) {
		const Range r = arena_.pick_range(c.rng, 0);
		p.mr_handle = c.rng.fuzz<std::uint64_t>({0, 1, 2, 3, UINT32_MAX,
							 UINT32_MAX + 1ULL});
		p.addr = r.addr;
		p.length = r.len;
		p.access = acc_k | acc_lw | acc_rw;
	} else if (c.rng.chance(15)) {
		switch (c.rng.below(5)) {
		case 0:
			p.mr_handle = c.rng.fuzz<std::uint64_t>(
				{0, p.mr_handle + 1, p.mr_handle - 1, UINT32_MAX + 1ULL});
			break;
		case 1: p.addr += c.rng.pick<std::uint64_t>({1, ~0ULL, p.length}); break;
		case 2: p.length = c.rng.fuzz<std::uint64_t>({0, p.length + 1, ~0ULL}); break;
		case 3: p.access ^= c.rng.pick<std::uint32_t>({acc_rw, acc_lw, acc_k, acc_rr}); break;
		default:
			// a sub-range of the MR is fine
			if (p.length > 1) {
				p.addr += 1;
				p.length -= 1;
			}
			break;
		}
	}
	p.resv1 = static_cast<std::uint32_t>(c.rng.next());	// ignored
	do_ioctl(c, Op::dereg_mem, fd, RV_IOCTL_DEREG_MEM,
		 bytes_of(p, RV_IOCTL_DEREG_MEM), ArgBuf::pick(c.rng, 5));
}

void Worker::op_evict(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	const auto t = c.rng.below(100);
	rv_evict_params p{};

	if (t < 40) {
		p.in.type = RV_EVICT_TYPE_SEARCH_EXACT;
		std::lock_guard lock(s.m);
		if (!s.mrs.empty() && c.rng.chance(70)) {
			const MrRef &mr = s.mrs[c.rng.below(s.mrs.size())];
			p.in.search.addr = mr.addr;
			p.in.search.length = mr.len;
			p.in.search.access = mr.access;
		}
	} else if (t < 75) {
		p.in.type = RV_EVICT_TYPE_SEARCH_RANGE;
	} else {
		p.in.type = RV_EVICT_TYPE_AMOUNT;
		p.in.amount.bytes = c.rng.fuzz<std::uint64_t>({0, 1, 4096, 1 << 20, 64 << 20});
		p.in.amount.count = c.rng.fuzz<std::uint32_t>({0, 1, 2, 8});
	}
	if (p.in.type != RV_EVICT_TYPE_AMOUNT && !p.in.search.length) {
		const auto r = c.rng.below(10);
		if (r < 8) {
			const Range a = arena_.pick_range(c.rng, 0);
			p.in.search.addr = a.addr;
			p.in.search.length = a.len;
		} else if (r < 9) {
			p.in.search.addr = 0;
			p.in.search.length = ~0ULL;
		} else {
			p.in.search.addr = c.rng.fuzz<std::uint64_t>({0, ~0ULL});
			p.in.search.length = c.rng.fuzz<std::uint64_t>({0, 1, ~0ULL});
		}
		p.in.search.access = acc_k | acc_lw | (c.rng.chance(50) ? acc_rw : 0);
	}
	if (c.rng.chance(10)) {
		switch (c.rng.below(3)) {
		case 0: p.in.pad[c.rng.below(sizeof(p.in.pad))] = c.rng.fuzz<std::uint8_t>({1}); break;
		case 1:
			if (p.in.type == RV_EVICT_TYPE_AMOUNT)
				p.in.amount.resv1 = c.rng.fuzz<std::uint32_t>({1});
			else
				p.in.search.resv1 = c.rng.fuzz<std::uint32_t>({1});
			break;
		default: p.in.type = c.rng.fuzz<std::uint8_t>({0, 4, 255}); break;
		}
	}
	rv_evict_params_out out{};
	Result res = do_ioctl(c, Op::evict, fd, RV_IOCTL_EVICT,
			      bytes_of(p, RV_IOCTL_EVICT), ArgBuf::pick(c.rng, 6),
			      out_of(out));
	if (res.done && !res.err && (!out.count || !out.bytes))
		fail(c, "EVICT succeeded with count " + std::to_string(out.count) +
			" bytes " + std::to_string(out.bytes));
}

void Worker::op_cache_stats(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	rv_cache_stats_params_out st{};
	Result res = do_ioctl(c, Op::cache_stats, fd, RV_IOCTL_GET_CACHE_STATS,
			      bytes_of(st, RV_IOCTL_GET_CACHE_STATS),
			      ArgBuf::pick(c.rng, 10), out_of(st));

	if (!res.done || res.err)
		return;
	// rv_mr_cache.c: count == miss - evict - remove at all times; a
	// snapshot is taken under the cache lock.
	const char *bad = nullptr;
	if (st.count != st.miss - st.evict - st.remove)
		bad = "count != miss - evict - remove";
	else if (st.max_count < st.count || st.max_cache_size < st.cache_size ||
		 st.max_inuse < st.inuse || st.max_inuse_bytes < st.inuse_bytes)
		bad = "a maximum below its current value";
	else if (st.inuse > st.count || st.inuse_bytes > st.cache_size)
		bad = "more in use than cached";
	else if (st.cache_size > (static_cast<std::uint64_t>(st.limit_cache_size) << 20))
		bad = "more cached than the limit";
	if (bad)
		fail(c, std::string("GET_CACHE_STATS: ") + bad + ": cache_size " +
			std::to_string(st.cache_size) + " limit " +
			std::to_string(st.limit_cache_size) + " count " +
			std::to_string(st.count) + " inuse " + std::to_string(st.inuse) +
			" inuse_bytes " + std::to_string(st.inuse_bytes) + " hit " +
			std::to_string(st.hit) + " miss " + std::to_string(st.miss) +
			" evict " + std::to_string(st.evict) + " remove " +
			std::to_string(st.remove));
}

void Worker::op_event_stats(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	rv_event_stats_params_out st{};

	do_ioctl(c, Op::event_stats, fd, RV_IOCTL_GET_EVENT_STATS,
		 bytes_of(st, RV_IOCTL_GET_EVENT_STATS), ArgBuf::pick(c.rng, 10));
}

// --- connections ------------------------------------------------------------

bool Worker::op_conn_create(Ctx &c, FdSlot &s, bool valid)
{
	const int fd = valid ? s.fd.load() : pick_fd(c, s);
	const Hint h = hint(s);
	const int local = h.node >= 0 ? h.node :
		env_.nodes.empty() ? -1 : static_cast<int>(index_ % env_.nodes.size());
	int remote = other_node(local);
	rv_conn_create_params p{};

	if (const Node *ln = node(local); ln && node(remote)) {
		const Node *rn = node(remote);
		p.in = rv::Remote::roce(rn->gid, rn->ip, ln->gid_index, 1).to_uapi();
	} else {
		const rv::Gid g = random_gid(c.rng);
		std::memcpy(p.in.ah.grh.dgid, g.data(), sizeof(p.in.ah.grh.dgid));
		p.in.ah.is_global = 1;
		p.in.ah.port_num = 1;
		remote = -1;
	}
	p.in.context = c.rng.next();
	if (!valid && c.rng.chance(30)) {
		switch (c.rng.below(9)) {
		case 0: p.in.ah.port_num = c.rng.fuzz<std::uint8_t>({0, 2}); break;
		case 1: p.in.ah.is_global = c.rng.fuzz<std::uint8_t>({0, 2}); break;
		case 2: {
			rv::Gid g{};
			if (c.rng.chance(40) && node(local))
				g = node(local)->gid;
			else if (c.rng.chance(10) || !h.main_job)
				g = random_gid(c.rng);	// a node that does not exist
			std::memcpy(p.in.ah.grh.dgid, g.data(), sizeof(g));
			remote = -1;
			break;
		}
		case 3: p.in.ah.grh.sgid_index = c.rng.fuzz<std::uint8_t>({0, 1, 2}); break;
		case 4: p.in.resv1 = c.rng.fuzz<std::uint32_t>({1}); break;
		case 5: p.in.rem_addr = static_cast<std::uint32_t>(c.rng.next()); break;
		case 6: p.in.ah.dlid = c.rng.fuzz<std::uint16_t>({0, 1}); break;
		case 7:
			// padding PSM3 copies from struct ibv_ah_attr: ignored
			p.in.ah.reserved = c.rng.fuzz<std::uint8_t>({1});
			p.in.ah.grh.reserved = c.rng.fuzz<std::uint8_t>({1});
			break;
		default:
			p.in.ah.sl = c.rng.fuzz<std::uint8_t>({});
			p.in.ah.static_rate = c.rng.fuzz<std::uint8_t>({});
			p.in.ah.grh.flow_label = c.rng.fuzz<std::uint32_t>({});
			p.in.ah.grh.traffic_class = c.rng.fuzz<std::uint8_t>({});
			break;
		}
	}
	ConnRef ref;
	ref.remote = remote;
	std::memcpy(ref.dgid.data(), p.in.ah.grh.dgid, ref.dgid.size());
	const PtrKind k = valid ? PtrKind::valid : ArgBuf::pick(c.rng, 6);
	rv_conn_create_params_out out{};
	Result res = do_ioctl(c, Op::conn_create, fd, RV_IOCTL_CONN_CREATE,
			      bytes_of(p, RV_IOCTL_CONN_CREATE), k, out_of(out));
	if (!res.done || res.err)
		return false;
	if (!out.handle || out.handle > UINT32_MAX || !out.conn_handle)
		fail(c, "CONN_CREATE answered handle " + std::to_string(out.handle) +
			" conn_handle " + std::to_string(out.conn_handle));
	ref.handle = out.handle;
	ref.conn_handle = out.conn_handle;
	std::lock_guard lock(s.m);
	if (s.fd.load() != fd)
		return false;
	put_bounded(s.conns, ref, c.rng, max_conns);
	return true;
}

void Worker::op_conn_connect(Ctx &c, FdSlot &s, bool valid)
{
	const int fd = valid ? s.fd.load() : pick_fd(c, s);
	const Hint h = hint(s);
	rv_conn_connect_params_in p{};
	ConnRef ref;
	bool have = false;

	{
		std::lock_guard lock(s.m);
		if (!s.conns.empty() && (valid || c.rng.chance(85))) {
			ref = valid ? s.conns.back() : s.conns[c.rng.below(s.conns.size())];
			have = true;
		}
	}
	const Node *ln = node(h.node >= 0 ? h.node :
		env_.nodes.empty() ? -1 : static_cast<int>(index_ % env_.nodes.size()));
	const rv::Gid sgid = ln ? ln->gid : random_gid(c.rng);
	p.handle = have ? ref.handle :
		c.rng.fuzz<std::uint64_t>({0, 1, 2, UINT32_MAX, UINT32_MAX + 1ULL});
	p.path = rv::PathRecord::roce(sgid, have ? ref.dgid : random_gid(c.rng), 3).to_uapi();
	if (!valid && c.rng.chance(20)) {
		switch (c.rng.below(5)) {
		case 0: p.path.mtu = c.rng.fuzz<std::uint8_t>({0, 6}); break;
		case 1: {
			const rv::Gid g = random_gid(c.rng);
			std::memcpy(p.path.sgid, g.data(), sizeof(p.path.sgid));
			break;
		}
		case 2: {
			const rv::Gid g = random_gid(c.rng);
			std::memcpy(p.path.dgid, g.data(), sizeof(p.path.dgid));
			break;
		}
		case 3: p.handle = c.rng.fuzz<std::uint64_t>({0, UINT32_MAX + 1ULL}); break;
		default:
			// Accepted as given: a path that may never connect,
			// only for files outside the main job.
			if (h.main_job)
				break;
			p.path.mtu = static_cast<std::uint8_t>(c.rng.range(1, 5));
			p.path.sl = c.rng.fuzz<std::uint8_t>({});
			p.path.pkey = c.rng.fuzz<std::uint16_t>({});
			p.path.rate = c.rng.fuzz<std::uint8_t>({});
			p.path.packet_life_time = static_cast<std::uint8_t>(c.rng.below(20));
			p.path.hop_limit = c.rng.fuzz<std::uint8_t>({});
			p.path.traffic_class = c.rng.fuzz<std::uint8_t>({});
			p.path.flow_label = c.rng.fuzz<std::uint32_t>({});
			p.path.numb_path = c.rng.fuzz<std::uint8_t>({});
			p.path.raw_traffic = c.rng.fuzz<std::uint8_t>({});
			p.path.preference = c.rng.fuzz<std::uint8_t>({});
			p.path.dlid = c.rng.fuzz<std::uint16_t>({});
			p.path.slid = c.rng.fuzz<std::uint16_t>({});
			break;
		}
	}
	do_ioctl(c, Op::conn_connect, fd, RV_IOCTL_CONN_CONNECT,
		 bytes_of(p, RV_IOCTL_CONN_CONNECT),
		 valid ? PtrKind::valid : ArgBuf::pick(c.rng, 6));
}

namespace {

std::uint64_t pick_handle(Rng &rng, FdSlot &s, std::uint32_t *num_conn)
{
	std::lock_guard lock(s.m);

	*num_conn = s.num_conn ? s.num_conn : 4;
	if (!s.conns.empty() && rng.chance(80))
		return s.conns[rng.below(s.conns.size())].handle;
	return rng.fuzz<std::uint64_t>({0, 1, 2, UINT32_MAX, UINT32_MAX + 1ULL});
}

} // namespace

void Worker::op_conn_connected(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	std::uint32_t n = 0;
	rv_conn_connected_params_in p{pick_handle(c.rng, s, &n)};

	do_ioctl(c, Op::conn_connected, fd, RV_IOCTL_CONN_CONNECTED,
		 bytes_of(p, RV_IOCTL_CONN_CONNECTED), ArgBuf::pick(c.rng, 6));
}

void Worker::op_conn_count(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	std::uint32_t n = 0;
	rv_conn_get_conn_count_params p{};

	p.in.handle = pick_handle(c.rng, s, &n);
	p.in.index = c.rng.chance(85) ? static_cast<std::uint8_t>(c.rng.below(n)) :
		c.rng.fuzz<std::uint8_t>({15, 16, 255});
	if (c.rng.chance(5))
		p.in.resv1[c.rng.below(sizeof(p.in.resv1))] = c.rng.fuzz<std::uint8_t>({1});
	do_ioctl(c, Op::conn_count, fd, RV_IOCTL_CONN_GET_CONN_COUNT,
		 bytes_of(p, RV_IOCTL_CONN_GET_CONN_COUNT), ArgBuf::pick(c.rng, 6));
}

void Worker::op_conn_stats(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	std::uint32_t n = 0;
	rv_conn_get_stats_params p{};

	p.in.handle = c.rng.chance(15) ? 0 : pick_handle(c.rng, s, &n);
	p.in.index = c.rng.chance(50) ? RV_CONN_STATS_AGGREGATE :
		c.rng.chance(70) ? static_cast<std::uint8_t>(c.rng.below(n ? n : 4)) :
		c.rng.fuzz<std::uint8_t>({16, 254});
	if (c.rng.chance(5))
		p.in.resv1[c.rng.below(sizeof(p.in.resv1))] = c.rng.fuzz<std::uint8_t>({1});
	const rv_conn_get_stats_params_in in = p.in;
	rv_conn_get_stats_params_out out{};
	Result res = do_ioctl(c, Op::conn_stats, fd, RV_IOCTL_CONN_GET_STATS,
			      bytes_of(p, RV_IOCTL_CONN_GET_STATS),
			      ArgBuf::pick(c.rng, 6), out_of(out));
	if (!res.done || res.err)
		return;
	const bool one = in.handle && in.index != RV_CONN_STATS_AGGREGATE;
	if (out.index != in.index || (one && out.num_conn != 1) ||
	    (in.handle && !one && (!out.num_conn || out.num_conn > RV_MAX_NUM_CONN)))
		fail(c, "CONN_GET_STATS answered index " + std::to_string(out.index) +
			" num_conn " + std::to_string(out.num_conn));
}

bool Worker::post_target(Ctx &c, const ConnRef *conn, TargetCopy &t)
{
	const std::size_t start = c.rng.below(board_size);
	for (std::size_t i = 0; i < board_size && conn; i++)
		if (sh_.read_target(start + i, t) && t.len &&
		    (conn->remote < 0 || t.node == static_cast<std::uint32_t>(conn->remote)))
			return true;
	return false;
}

void Worker::post_local(Ctx &c, rv_post_write_params_in &in, const MrRef *mr)
{
	if (mr) {
		const std::uint64_t off = c.rng.chance(50) ? 0 : c.rng.below(mr->len);
		in.loc_mr_handle = mr->handle;
		in.loc_mr_addr = mr->addr;
		in.loc_mr_length = mr->len;
		in.loc_mr_access = mr->access;
		in.loc_addr = mr->addr + off;
		in.length = 1 + c.rng.below(std::min<std::uint64_t>(mr->len - off, 65536));
	} else {
		const Range r = arena_.pick_range(c.rng, 65536);
		in.loc_mr_handle = c.rng.fuzz<std::uint64_t>({1, 2, 3});
		in.loc_mr_addr = in.loc_addr = r.addr;
		in.loc_mr_length = in.length = r.len;
		in.loc_mr_access = acc_k | acc_lw;
	}
}

namespace {

// One field of a post made wrong, or a write the peer refuses.
void mutate_post(Rng &rng, rv_post_write_params_in &in)
{
	switch (rng.below(9)) {
	case 0: in.handle = rng.fuzz<std::uint64_t>({0, UINT32_MAX + 1ULL}); break;
	case 1: in.loc_mr_handle = rng.fuzz<std::uint64_t>({0, 1, UINT32_MAX + 1ULL}); break;
	case 2: in.loc_addr = rng.pick<std::uint64_t>({in.loc_mr_addr - 1,
						       in.loc_mr_addr + in.loc_mr_length}); break;
	case 3: in.length = rng.fuzz<std::uint64_t>({0, UINT32_MAX + 1ULL, ~0ULL,
						     in.loc_mr_length + 1}); break;
	case 4: in.loc_mr_length += rng.pick<std::uint64_t>({1, ~0ULL}); break;
	case 5: in.loc_mr_access ^= rng.pick<std::uint32_t>({acc_k, acc_rw, acc_lw}); break;
	case 6: in.resv1 = rng.fuzz<std::uint32_t>({1}); break;
	case 7: in.loc_mr_addr = rng.fuzz<std::uint64_t>({~0ULL}); break;
	default:
		// A write the peer refuses: the QP is lost and
		// recovers (only now and then).
		if (rng.chance(10)) {
			in.rkey = rng.fuzz<std::uint32_t>({0, 1, 0x100});
			in.rem_addr = rng.fuzz<std::uint64_t>({0});
		}
		in.immed = static_cast<std::uint32_t>(rng.next());
		break;
	}
}

} // namespace

void Worker::op_post_write(Ctx &c, FdSlot &s)
{
	const int fd = pick_fd(c, s);
	rv_post_write_params p{};
	std::optional<ConnRef> conn;
	std::optional<MrRef> mr;

	{
		std::lock_guard lock(s.m);
		if (!s.conns.empty() && c.rng.chance(90))
			conn = s.conns[c.rng.below(s.conns.size())];
		if (!s.mrs.empty() && c.rng.chance(90))
			mr = s.mrs[c.rng.below(s.mrs.size())];
	}
	TargetCopy t;
	const bool have_target = post_target(c, conn ? &*conn : nullptr, t);
	auto &in = p.in;
	in.handle = conn ? conn->handle :
		c.rng.fuzz<std::uint64_t>({0, 1, 2, UINT32_MAX, UINT32_MAX + 1ULL});
	post_local(c, in, mr ? &*mr : nullptr);
	if (have_target) {
		in.length = std::min<std::uint64_t>(in.length, t.len);
		in.rem_addr = t.addr + c.rng.below(t.len - in.length + 1);
		in.rkey = t.rkey;
		in.immed = static_cast<std::uint32_t>(
			(t.rv_index << (32 - main_index_bits)) |
			(c.rng.next() & ((1u << (32 - main_index_bits)) - 1)));
	} else {
		// Nowhere to write to: the local part is made invalid so
		// that the connection is not broken by a bad rkey.
		in.rem_addr = c.rng.next();
		in.rkey = static_cast<std::uint32_t>(c.rng.next());
		in.loc_mr_handle = UINT32_MAX + 1ULL;
	}
	in.wr_id = c.rng.next();
	if (c.rng.chance(25))
		mutate_post(c.rng, in);
	rv_post_write_params_out out{};
	Result res = do_ioctl(c, Op::post_write, fd, RV_IOCTL_POST_RDMA_WR_IMMED,
			      bytes_of(p, RV_IOCTL_POST_RDMA_WR_IMMED),
			      ArgBuf::pick(c.rng, 4), out_of(out));
	if (res.done && !res.err && out.sconn_index >= RV_MAX_NUM_CONN)
		fail(c, "POST_RDMA_WR_IMMED answered sconn_index " +
			std::to_string(out.sconn_index));
}

// --- random command numbers -------------------------------------------------

void Worker::op_ioctl_raw(Ctx &c, FdSlot &s)
{
	static constexpr std::array<Op, 17> ops{
		Op::capability, Op::query_r2, Op::attach, Op::attach_r5,
		Op::reg_mem, Op::reg_mem_r4, Op::reg_mem_r1, Op::dereg_mem,
		Op::evict, Op::cache_stats, Op::event_stats, Op::conn_create,
		Op::conn_connect, Op::conn_connected, Op::conn_count,
		Op::conn_stats, Op::post_write};
	const int fd = pick_fd(c, s);
	const auto r = c.rng.below(100);
	unsigned int cmd;

	auto pick_size = [&c](unsigned int exact) -> unsigned int {
		switch (c.rng.below(6)) {
		case 0: return exact;
		case 1: return exact + 1;
		case 2: return exact ? exact - 1 : 0;
		case 3: return static_cast<unsigned int>(c.rng.pick<std::uint64_t>({0, 1, 4, 8, 16, 0x3fff}));
		case 4: return exact + 8;
		default: return static_cast<unsigned int>(c.rng.below(1 << 14));
		}
	};
	if (r < 30) {
		cmd = cmd_of_op(ops[c.rng.below(ops.size())]);
	} else if (r < 60) {
		const unsigned int nr = c.rng.chance(85) ?
			static_cast<unsigned int>(c.rng.range(0xf0, 0xff)) :
			static_cast<unsigned int>(c.rng.below(256));
		const unsigned int dir = static_cast<unsigned int>(c.rng.below(4));
		cmd = (dir << _IOC_DIRSHIFT) | (RV_MAGIC << _IOC_TYPESHIFT) |
		      (nr << _IOC_NRSHIFT) | (pick_size(64) << _IOC_SIZESHIFT);
	} else if (r < 78) {
		// a defined number in another direction or size
		const unsigned int known = cmd_of_op(ops[c.rng.below(ops.size())]);
		const unsigned int dir = c.rng.chance(50) ? _IOC_DIR(known) :
			static_cast<unsigned int>(c.rng.below(4));
		cmd = (dir << _IOC_DIRSHIFT) | (known & ((_IOC_TYPEMASK << _IOC_TYPESHIFT) |
							 (_IOC_NRMASK << _IOC_NRSHIFT))) |
		      (pick_size(_IOC_SIZE(known)) << _IOC_SIZESHIFT);
	} else {
		// Another driver's type; not the ones the VFS handles itself
		// (FIOCLEX and friends: 'T', 'f', 'X', 0x94, and 0 for
		// FIGETBSZ/FIBMAP).
		unsigned int type;
		do {
			type = static_cast<unsigned int>(c.rng.below(256));
		} while (type == 0 || type == RV_MAGIC || type == 'T' || type == 'f' ||
			 type == 'X' || type == 0x94);
		cmd = (static_cast<unsigned int>(c.rng.below(4)) << _IOC_DIRSHIFT) |
		      (type << _IOC_TYPESHIFT) |
		      (static_cast<unsigned int>(c.rng.below(256)) << _IOC_NRSHIFT) |
		      (static_cast<unsigned int>(c.rng.below(1 << 14)) << _IOC_SIZESHIFT);
	}
	std::vector<std::byte> buf(_IOC_SIZE(cmd));
	switch (c.rng.below(3)) {
	case 0:
		break;
	case 1:
		c.rng.fill(buf);
		break;
	default:
		for (std::uint64_t i = 0, n = c.rng.below(6); i < n && !buf.empty(); i++)
			buf[c.rng.below(buf.size())] = static_cast<std::byte>(c.rng.next());
		break;
	}
	// The same rule as for REG_MEM: remote write only on arena memory.
	if (auto op = op_of_cmd(cmd); op && (*op == Op::reg_mem || *op == Op::reg_mem_r4 ||
					     *op == Op::reg_mem_r1)) {
		rv_mem_params_in in{};
		std::memcpy(&in, buf.data(), std::min(buf.size(), sizeof(in)));
		in.access = sanitize_access(in.addr, in.length, in.access);
		std::memcpy(buf.data(), &in, std::min(buf.size(), sizeof(in)));
	}
	// The kernel sees only the low 32 bits of the command.
	const unsigned long full = cmd | (c.rng.chance(10) ? c.rng.next() << 32 : 0);
	do_ioctl(c, Op::ioctl_raw, fd, full, buf, ArgBuf::pick(c.rng, 20));
}

} // namespace rvfuzz
