// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Part of the LD_PRELOAD shim (rv_fake_ioctl.so): with RV_FAKE_MODULE set,
// an emulation of rv.ko's ATTACH (docs/attach.md), event ring and MR cache
// for dry runs of the VM tests on a host without the module:
//
//   RV_DEVICE=/dev/null RV_FAKE_MAJOR=1 RV_FAKE_MINOR=7 RV_FAKE_CAPS=2
//   RV_FAKE_MODULE=1 RV_NODES="fake0 fake1" RV_NODE_IPS="10.0.0.1 10.0.0.2"
//   RV_NODE_GID_INDEXES="3 3" LD_PRELOAD=.../rv_fake_ioctl.so rv_vm_tests
//
// (all in the environment of one command).
//
// It emulates ATTACH (validation order, job-devices keyed by device,
// port, GID index, euid, key and service id, rv_index allocation), the
// event ring mmap rules, max_fmr_size (the cache size, or with
// RV_FAKE_FR_PAGES=N a page list of N pages, cut by fr_page_list_len, as
// fast registration makes it; longer REG_MEMs: E2BIG), the MR cache
// (hits, misses, limit, LRU, EVICT, stats) and its coherence with munmap
// / mmap MAP_FIXED / madvise (MADV_DONTNEED: as the module, the entry goes
// at the next REG_MEM that finds it, which misses) / mremap, by also
// interposing close, mmap, munmap, madvise and mremap. State lives in
// the process: job-devices are not shared across fork, fork's
// copy-on-write is not seen, and RDMA devices
// exist only as the environment names them (port 1, always ACTIVE, a
// 16-entry GID table holding ::ffff:IP at the given index). It checks the
// tests, never the module.
//
// Connections (plausibly, for librv's and rvbench's host tests):
// CONN_CREATE checks the address (global, port 1, the attach's GID index,
// a dgid that is neither zero nor the attach's own, reserved fields zero)
// and answers EBUSY when the file already has that connection;
// CONN_CONNECT checks the path's sgid (the attach GID), dgid (the created
// one) and mtu, and answers EEXIST for a second, different path;
// CONN_CONNECTED answers 0 once after CONNECT, then 1, or EIO when no
// fake device has the dgid. POST_RDMA_WR_IMMED checks the length
// (1..2^32-1), the local MR exactly as DEREG_MEM does and that it holds
// the data; before the connection is up it answers EAGAIN, after a
// failure EIO, and every RV_FAKE_POST_BUSY_EVERY-th post EBUSY.
// A write is delivered only inside this process: to the file attached to
// the remote device in the same job whose rv_index the immediate's top
// index_bits name, into its MR of that rkey (which must allow remote
// write and hold the range; else the send completes with
// IB_WC_REM_ACCESS_ERR), with an RV_WC_RECV_RDMA_WITH_IMM event in its
// ring. The send completion (RV_WC_RDMA_WRITE) follows at once. Without
// such a file the data goes nowhere and the send succeeds. So two
// /dev/rv files of one process, attached to fake0 and fake1, talk.
// RV_FAKE_CORRUPT_EVERY=N flips a byte in the middle of every N-th
// delivered write (of the process), to test the receivers' checks;
// RV_FAKE_DUP_EVERY=N gives every N-th delivered write two receive
// events, to test that a duplicated completion is caught.
#include "fake_rv_module.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>

#include <arpa/inet.h>

#include <rv/event_ring.hpp>
#include <rv/uapi.hpp>

namespace {

// --- the real libc functions ------------------------------------------

template <typename Fn>
Fn real(const char *name)
{
	return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using mmap_fn = void *(*)(void *, size_t, int, int, int, off_t);
using munmap_fn = int (*)(void *, size_t);
using madvise_fn = int (*)(void *, size_t, int);
using mremap_fn = void *(*)(void *, size_t, size_t, int, ...);
using close_fn = int (*)(int);

mmap_fn real_mmap = real<mmap_fn>("mmap");
munmap_fn real_munmap = real<munmap_fn>("munmap");
madvise_fn real_madvise = real<madvise_fn>("madvise");
mremap_fn real_mremap = real<mremap_fn>("mremap");
close_fn real_close = real<close_fn>("close");

const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));

// Whether every page of [addr, addr + len) is mapped.
bool user_mapped(std::uint64_t addr, std::uint64_t len)
{
	std::uint64_t start = addr & ~(page - 1);
	std::uint64_t end = (addr + len + page - 1) & ~(page - 1);
	return real_madvise(reinterpret_cast<void *>(start), end - start,
			    MADV_NORMAL) == 0;
}

// --- module parameters (defaults) and fake devices -----------------------

constexpr std::uint32_t p_num_conn = 4;
constexpr std::uint32_t p_q_depth = 4000;
constexpr std::uint32_t p_mr_cache_size = 256;
constexpr std::uint32_t p_mr_cache_size_gpu = 1024;
constexpr std::uint64_t p_service_id = 0x1000125500000001ULL;
constexpr std::uint32_t p_min_hb = 100;
constexpr std::uint32_t p_max_reconnect = 300;
constexpr std::size_t gid_table_len = 16;

struct FakeDev {
	std::string name;
	std::uint32_t ip = 0;
	std::uint16_t gid_index = 0;
};

std::vector<std::string> words(const char *env)
{
	std::vector<std::string> out;
	if (const char *v = std::getenv(env)) {
		std::istringstream in(v);
		std::string w;
		while (in >> w)
			out.push_back(w);
	}
	return out;
}

std::uint32_t parse_ip(const std::string &s)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	if (std::sscanf(s.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
		return 0;
	return a << 24 | b << 16 | c << 8 | d;
}

const FakeDev *find_dev(const std::string &name)
{
	static const std::vector<FakeDev> devs = [] {
		std::vector<FakeDev> v;
		auto names = words("RV_NODES");
		auto ips = words("RV_NODE_IPS");
		auto idx = words("RV_NODE_GID_INDEXES");
		for (std::size_t i = 0; i < names.size(); i++) {
			FakeDev d;
			d.name = names[i];
			d.ip = i < ips.size() ? parse_ip(ips[i]) : 0;
			d.gid_index = static_cast<std::uint16_t>(
				i < idx.size() ? std::atoi(idx[i].c_str()) : 0);
			v.push_back(d);
		}
		return v;
	}();
	for (const auto &d : devs)
		if (d.name == name)
			return &d;
	return nullptr;
}

void fake_gid(const FakeDev &d, std::size_t index, std::uint8_t out[16])
{
	std::memset(out, 0, 16);
	if (index == d.gid_index) {
		out[10] = out[11] = 0xff;
		out[12] = static_cast<std::uint8_t>(d.ip >> 24);
		out[13] = static_cast<std::uint8_t>(d.ip >> 16);
		out[14] = static_cast<std::uint8_t>(d.ip >> 8);
		out[15] = static_cast<std::uint8_t>(d.ip);
	} else if (index == 0) {
		out[0] = 0xfe;
		out[1] = 0x80;
		out[15] = 1;
	}
}

// --- state -------------------------------------------------------------

struct JobDev {
	std::uint8_t num_conn, index_bits;
	std::uint32_t q_depth, reconnect, hb;
	std::set<std::uint32_t> used;
	// conn_handle of the shared connection to each remote GID
	std::map<std::string, std::uint64_t> conn_handles;
};

struct QpCounters {
	std::uint64_t post_write = 0, post_write_fail = 0, post_write_bytes = 0;
	std::uint64_t send_write_cqe = 0, send_write_cqe_fail = 0;
	std::uint64_t recv_write_cqe = 0, recv_write_bytes = 0;
};

// A file's reference on a shared connection (CONN_CREATE's handle).
struct Conn {
	enum class State { created, connecting, connected, failed };

	std::uint64_t conn_handle = 0;
	rv_conn_create_params_in in{};
	State state = State::created;
	unsigned polls = 0;		// CONN_CONNECTED calls while connecting
	const struct FakeDev *peer = nullptr;
	std::uint8_t next_qp = 0;
	std::vector<QpCounters> qp;	// num_conn
	bool have_path = false;
	ib_user_path_rec path{};
};

struct Entry {
	std::uint64_t addr, len;
	std::uint32_t access;
	std::uint32_t refs = 0;
	bool stale = false;
	bool recheck = false;	// MADV_DONTNEED: its pages changed
	std::uint64_t lru = 0;	// when it last became unreferenced
};

struct File {
	std::uint32_t abi = 0;	// 0: nothing declared
	bool attached = false;
	pid_t owner = 0;
	std::string job_key;
	std::shared_ptr<JobDev> job;
	std::uint32_t index = 0;
	std::uint32_t cq_entries = 0;
	bool ring_used = false;
	void *ring = nullptr;
	std::size_t ring_len = 0;
	std::uint32_t ring_tail = 0;	// the producer's own tail
	// The attach, for connections.
	const FakeDev *dev = nullptr;
	std::uint16_t gid_index = 0;
	std::uint8_t gid[16] = {};
	std::uint32_t loc_addr = 0;
	std::string job_id;	// euid, job key and service id
	std::map<std::uint64_t, Conn> conns;	// by handle
	std::uint64_t next_conn = 1;
	std::uint64_t posts = 0;
	rv_event_stats_params_out event_stats{};
	std::uint64_t limit = 0;
	std::uint64_t max_fmr = 0;	// max_fmr_size of the attach
	std::map<std::uint32_t, Entry> entries;	// by handle
	std::uint32_t next_handle = 1;
	std::uint64_t clock = 0;
	rv_cache_stats_params_out stats{};
};

std::mutex lock;
std::map<int, std::unique_ptr<File>> files;	// by descriptor
std::vector<std::unique_ptr<File>> closed_mapped;	// closed, ring mapped
std::map<std::string, std::weak_ptr<JobDev>> jobs;

bool active()
{
	static const bool on = std::getenv("RV_FAKE_MODULE") != nullptr;
	return on;
}

File &file(int fd)
{
	auto &f = files[fd];
	if (!f)
		f = std::make_unique<File>();
	return *f;
}

void release(File &f)
{
	f.conns.clear();
	if (f.job) {
		f.job->used.erase(f.index);
		f.job.reset();
	}
	f.entries.clear();
	f.attached = false;
}

// --- MR cache ------------------------------------------------------------

void update_max(File &f)
{
	auto &s = f.stats;
	s.cache_size = s.inuse_bytes = 0;
	s.count = s.inuse = 0;
	for (const auto &[h, e] : f.entries) {
		if (e.stale)
			continue;
		s.cache_size += e.len;
		s.count++;
		if (e.refs) {
			s.inuse++;
			s.inuse_bytes += e.len;
		}
		s.max_refcount = std::max(s.max_refcount, e.refs);
	}
	s.max_cache_size = std::max(s.max_cache_size, s.cache_size);
	s.max_count = std::max(s.max_count, s.count);
	s.max_inuse = std::max(s.max_inuse, s.inuse);
	s.max_inuse_bytes = std::max(s.max_inuse_bytes, s.inuse_bytes);
}

// Unreferenced live entries, least recently used first.
std::vector<std::uint32_t> lru_order(const File &f)
{
	std::vector<std::uint32_t> v;
	for (const auto &[h, e] : f.entries)
		if (!e.refs && !e.stale)
			v.push_back(h);
	std::sort(v.begin(), v.end(), [&](auto a, auto b) {
		return f.entries.at(a).lru < f.entries.at(b).lru;
	});
	return v;
}

void invalidate(std::uint64_t start, std::uint64_t end)
{
	for (auto &[fd, f] : files) {
		for (auto it = f->entries.begin(); it != f->entries.end();) {
			Entry &e = it->second;
			if (e.stale || e.addr >= end || e.addr + e.len <= start) {
				++it;
				continue;
			}
			if (e.refs) {
				e.stale = true;
				++it;
			} else {
				f->stats.remove++;
				it = f->entries.erase(it);
			}
		}
		update_max(*f);
	}
}

constexpr std::uint32_t access_ok = IBV_ACCESS_KERNEL | 1 | 2 | 4;

int reg_mem(File &f, rv_mem_params_out &out, std::uint64_t addr,
	    std::uint64_t len, std::uint32_t access)
{
	if (!(access & IBV_ACCESS_KERNEL))
		return EOPNOTSUPP;
	if ((access & ~access_ok) || ((access & 2) && !(access & 1)))
		return EINVAL;
	if (!len || addr + len < addr || addr + len == 0)
		return EINVAL;
	if (len > f.max_fmr)
		return E2BIG;

	for (auto it = f.entries.begin(); it != f.entries.end();) {
		auto &[h, e] = *it;
		if (e.stale || e.access != access || addr < e.addr ||
		    addr + len > e.addr + e.len) {
			++it;
			continue;
		}
		if (e.recheck) {
			// The module's recheck finds other pages: it goes.
			if (e.refs) {
				e.stale = true;
				++it;
			} else {
				f.stats.remove++;
				it = f.entries.erase(it);
			}
			continue;
		}
		e.refs++;
		f.stats.hit++;
		update_max(f);
		out = {h, e.addr, 0x1000 + h, 0x2000 + h};
		return 0;
	}
	if (!user_mapped(addr, len)) {
		f.stats.failed++;
		return EFAULT;
	}
	std::uint64_t freeable = 0;
	for (auto h : lru_order(f))
		freeable += f.entries[h].len;
	update_max(f);
	if (f.stats.cache_size - freeable + len > f.limit) {
		f.stats.full++;
		return ENOMEM;
	}
	for (auto h : lru_order(f)) {
		if (f.stats.cache_size + len <= f.limit)
			break;
		f.stats.cache_size -= f.entries[h].len;
		f.entries.erase(h);
		f.stats.evict++;
	}
	std::uint32_t h = f.next_handle++;
	f.entries[h] = Entry{addr, len, access, 1, false, 0};
	f.stats.miss++;
	update_max(f);
	out = {h, addr, 0x1000 + h, 0x2000 + h};
	return 0;
}

int dereg_mem(File &f, const rv_dereg_params_in &in)
{
	auto it = f.entries.find(static_cast<std::uint32_t>(in.mr_handle));
	if (in.mr_handle > 0xffffffffULL || it == f.entries.end())
		return EINVAL;
	Entry &e = it->second;
	// The range given to REG_MEM, inside the entry (a sub-range hit
	// cannot know the entry's length).
	if (!in.length || in.addr < e.addr || in.addr + in.length < in.addr ||
	    in.addr + in.length > e.addr + e.len || e.access != in.access ||
	    !e.refs)
		return EINVAL;
	if (--e.refs == 0) {
		if (e.stale)
			f.entries.erase(it);
		else
			e.lru = ++f.clock;
	}
	update_max(f);
	return 0;
}

int evict(File &f, rv_evict_params &p)
{
	std::uint64_t bytes = 0;
	std::uint32_t count = 0;
	auto drop = [&](std::uint32_t h) {
		bytes += f.entries[h].len;
		count++;
		f.entries.erase(h);
		f.stats.evict++;
	};
	const auto &in = p.in;
	switch (in.type) {
	case RV_EVICT_TYPE_SEARCH_EXACT:
		for (auto h : lru_order(f)) {
			const Entry &e = f.entries[h];
			if (e.addr == in.search.addr && e.len == in.search.length &&
			    e.access == in.search.access) {
				drop(h);
				break;
			}
		}
		break;
	case RV_EVICT_TYPE_SEARCH_RANGE:
		for (auto h : lru_order(f)) {
			const Entry &e = f.entries[h];
			if (e.addr < in.search.addr + in.search.length &&
			    in.search.addr < e.addr + e.len)
				drop(h);
		}
		break;
	case RV_EVICT_TYPE_AMOUNT: {
		std::uint64_t want_b = in.amount.bytes;
		std::uint32_t want_c = in.amount.count;
		for (auto h : lru_order(f)) {
			if (bytes >= want_b && count >= want_c)
				break;
			drop(h);
		}
		break;
	}
	default:
		return EINVAL;
	}
	update_max(f);
	if (!count)
		return ENOENT;
	p.out = {};
	p.out.bytes = bytes;
	p.out.count = count;
	return 0;
}

// --- connections ---------------------------------------------------------

std::uint64_t next_conn_handle = 0x100;

std::string gid_key(const std::uint8_t gid[16])
{
	return std::string(reinterpret_cast<const char *>(gid), 16);
}

// The fake device whose GID table holds gid.
const FakeDev *dev_by_gid(const std::uint8_t gid[16])
{
	for (const auto &name : words("RV_NODES")) {
		const FakeDev *d = find_dev(name);
		std::uint8_t g[16];
		fake_gid(*d, d->gid_index, g);
		if (d->ip && !std::memcmp(g, gid, 16))
			return d;
	}
	return nullptr;
}

// Producer side of a file's ring: entry first, then tail (release).
void push_event(File &f, const rv::Event &ev)
{
	if (!f.ring || f.cq_entries < 2)
		return;
	auto *base = static_cast<std::byte *>(f.ring);
	auto &hdr = *reinterpret_cast<rv_ring_header *>(base);
	const rv::EventLayout layout = f.abi >= RV_ABI_VERSION(1u, 7u)
		? rv::EventLayout::abi_1_7 : rv::EventLayout::legacy;
	const std::uint32_t head =
		std::atomic_ref<__u32>(hdr.head).load(std::memory_order_acquire);
	const std::uint32_t next = (f.ring_tail + 1) % f.cq_entries;
	if (head >= f.cq_entries || next == head) {
		std::atomic_ref<__u64>(hdr.overflow_cnt)
			.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	rv::encode_event(base + rv::ring_header_size +
				 std::size_t{f.ring_tail} * rv::event_stride(layout),
			 ev, layout);
	f.ring_tail = next;
	std::atomic_ref<__u32>(hdr.tail).store(next, std::memory_order_release);
}

int conn_create(File &f, rv_conn_create_params &p)
{
	const rv_conn_create_params_in in = p.in;
	static const std::uint8_t zero[16] = {};

	if (in.resv1 || in.ah.reserved || in.ah.grh.reserved ||
	    !in.ah.is_global || in.ah.port_num != 1 ||
	    in.ah.grh.sgid_index != f.gid_index ||
	    !std::memcmp(in.ah.grh.dgid, zero, 16) ||
	    !std::memcmp(in.ah.grh.dgid, f.gid, 16))
		return EINVAL;
	std::uint64_t &ch = f.job->conn_handles[gid_key(in.ah.grh.dgid)];
	if (!ch)
		ch = next_conn_handle++;
	for (const auto &[h, c] : f.conns)
		if (c.conn_handle == ch)
			return EBUSY;
	Conn c;
	c.conn_handle = ch;
	c.in = in;
	c.qp.resize(f.job->num_conn);
	const std::uint64_t handle = f.next_conn++;
	f.conns[handle] = std::move(c);
	p.out = {};
	p.out.handle = handle;
	p.out.conn_handle = ch;
	return 0;
}

Conn *find_conn(File &f, std::uint64_t handle)
{
	auto it = f.conns.find(handle);
	return it == f.conns.end() ? nullptr : &it->second;
}

int conn_connect(File &f, const rv_conn_connect_params_in &in)
{
	Conn *c = find_conn(f, in.handle);

	if (!c || std::memcmp(in.path.sgid, f.gid, 16) ||
	    std::memcmp(in.path.dgid, c->in.ah.grh.dgid, 16) ||
	    in.path.mtu < 1 || in.path.mtu > 5)
		return EINVAL;
	if (c->have_path)
		return std::memcmp(&c->path, &in.path, sizeof(in.path)) ? EEXIST : 0;
	c->have_path = true;
	c->path = in.path;
	c->peer = dev_by_gid(in.path.dgid);
	c->state = c->peer ? Conn::State::connecting : Conn::State::failed;
	c->polls = 0;
	return 0;
}

// ioctl(2)'s result: 1, 0, or -1 with errno.
int conn_connected(File &f, const rv_conn_connected_params_in &in)
{
	Conn *c = find_conn(f, in.handle);

	if (!c) {
		errno = EINVAL;
		return -1;
	}
	switch (c->state) {
	case Conn::State::created:
		return 0;
	case Conn::State::connecting:
		if (++c->polls < 2)
			return 0;
		c->state = Conn::State::connected;
		return 1;
	case Conn::State::connected:
		return 1;
	case Conn::State::failed:
	default:
		errno = EIO;
		return -1;
	}
}

int conn_count(File &f, rv_conn_get_conn_count_params &p)
{
	const rv_conn_get_conn_count_params_in in = p.in;
	Conn *c = find_conn(f, in.handle);
	bool resv = false;

	for (auto b : in.resv1)
		resv |= b != 0;
	if (!c || resv || in.index >= c->qp.size())
		return EINVAL;
	if (c->state == Conn::State::failed)
		return EIO;
	p.out = {};
	p.out.count = c->state == Conn::State::connected ? 1 : 0;
	return 0;
}

void add_stats(rv_conn_get_stats_params_out &o, const File &f, const Conn &c,
	       int index)
{
	const bool client = f.loc_addr < c.in.rem_addr;
	o.flags = static_cast<__u8>(
		o.flags | (client ? RV_CONN_STAT_FLAG_CLIENT : RV_CONN_STAT_FLAG_SERVER) |
		(c.state == Conn::State::connected ? RV_CONN_STAT_FLAG_WAS_CONNECTED : 0));
	for (std::size_t i = 0; i < c.qp.size(); i++) {
		if (index >= 0 && static_cast<std::size_t>(index) != i)
			continue;
		const QpCounters &q = c.qp[i];
		o.num_conn++;
		if (c.state == Conn::State::connected) {
			o.req_sent += client;
			o.rep_recv += client;
			o.rtu_sent += client;
			o.req_recv += !client;
			o.rep_sent += !client;
			o.rtu_recv += !client;
			o.established++;
		}
		o.post_write += q.post_write;
		o.post_write_fail += q.post_write_fail;
		o.post_write_bytes += q.post_write_bytes;
		o.send_write_cqe += q.send_write_cqe;
		o.send_write_cqe_fail += q.send_write_cqe_fail;
		o.recv_write_cqe += q.recv_write_cqe;
		o.recv_write_bytes += q.recv_write_bytes;
	}
}

int conn_stats(File &f, rv_conn_get_stats_params &p)
{
	const rv_conn_get_stats_params_in in = p.in;
	bool resv = false;

	for (auto b : in.resv1)
		resv |= b != 0;
	if (resv)
		return EINVAL;
	rv_conn_get_stats_params_out o{};
	o.index = in.index;
	if (!in.handle) {
		for (const auto &[h, c] : f.conns)
			add_stats(o, f, c, -1);
	} else {
		Conn *c = find_conn(f, in.handle);
		if (!c || (in.index != RV_CONN_STATS_AGGREGATE &&
			   in.index >= c->qp.size()))
			return EINVAL;
		add_stats(o, f, *c,
			  in.index == RV_CONN_STATS_AGGREGATE ? -1 : in.index);
	}
	p.out = o;
	return 0;
}

// The file of this process that a write from f on c with immed reaches.
File *receiver(const File &f, const Conn &c, std::uint32_t immed)
{
	for (auto &[fd, g] : files) {
		if (!g->attached || g->dev != c.peer || g->job_id != f.job_id ||
		    g->owner != ::getpid())
			continue;
		const unsigned bits = g->job->index_bits;
		const std::uint32_t idx = bits ? immed >> (32 - bits) : 0;
		if (idx == g->index)
			return g.get();
	}
	return nullptr;
}

constexpr std::uint8_t wc_rem_access_err = 10;	// IB_WC_REM_ACCESS_ERR

// POST_RDMA_WR_IMMED's checks: 0, or the errno it answers.
int post_errno(File &f, const rv_post_write_params_in &in, const Conn *c)
{
	if (!c || in.resv1 || !in.length || in.length > 0xffffffffULL ||
	    !(in.loc_mr_access & IBV_ACCESS_KERNEL))
		return EINVAL;
	auto it = f.entries.find(static_cast<std::uint32_t>(in.loc_mr_handle));
	if (in.loc_mr_handle > 0xffffffffULL || it == f.entries.end())
		return EINVAL;
	const Entry &e = it->second;
	if (!in.loc_mr_length || in.loc_mr_addr < e.addr ||
	    in.loc_mr_addr + in.loc_mr_length < in.loc_mr_addr ||
	    in.loc_mr_addr + in.loc_mr_length > e.addr + e.len ||
	    e.access != in.loc_mr_access || !e.refs ||
	    in.loc_addr < in.loc_mr_addr || in.loc_addr + in.length < in.loc_addr ||
	    in.loc_addr + in.length > in.loc_mr_addr + in.loc_mr_length)
		return EINVAL;
	if (c->state == Conn::State::failed)
		return EIO;
	if (c->state != Conn::State::connected)
		return EAGAIN;
	static const unsigned long long busy_every = [] {
		const char *v = std::getenv("RV_FAKE_POST_BUSY_EVERY");
		return v ? std::strtoull(v, nullptr, 0) : 0ULL;
	}();
	if (busy_every && ++f.posts % busy_every == 0)
		return EBUSY;
	return 0;
}

// The write of a post from f, sent on QP qp, into r's buffer (rkey
// 0x2000 + its MR handle): copied (one byte flipped now and then with
// RV_FAKE_CORRUPT_EVERY; its event twice now and then with
// RV_FAKE_DUP_EVERY), r's event and counters. The sender's
// completion status: 0, or wc_rem_access_err for a bad rkey or range.
std::uint8_t deliver(const File &f, File &r, const rv_post_write_params_in &in,
		     std::uint8_t qp)
{
	const std::uint32_t h = in.rkey - 0x2000;
	auto rit = r.entries.find(h);
	const bool ok = in.rkey > 0x2000 && rit != r.entries.end() &&
			!rit->second.stale && (rit->second.access & 2) &&
			in.rem_addr >= rit->second.addr &&
			in.rem_addr + in.length >= in.rem_addr &&
			in.rem_addr + in.length <= rit->second.addr + rit->second.len;
	if (!ok)
		return wc_rem_access_err;
	if (in.length)
		std::memmove(reinterpret_cast<void *>(in.rem_addr),
			     reinterpret_cast<const void *>(in.loc_addr), in.length);
	static const unsigned long long corrupt_every = [] {
		const char *v = std::getenv("RV_FAKE_CORRUPT_EVERY");
		return v ? std::strtoull(v, nullptr, 0) : 0ULL;
	}();
	static unsigned long long delivered = 0;
	if (corrupt_every && in.length && ++delivered % corrupt_every == 0)
		reinterpret_cast<unsigned char *>(in.rem_addr)[in.length / 2] ^= 0x40;
	auto ch = r.job->conn_handles.find(gid_key(f.gid));
	rv::Event ev;
	ev.event_type = RV_WC_RECV_RDMA_WITH_IMM;
	ev.imm_data = in.immed;
	ev.conn_handle = ch == r.job->conn_handles.end() ? 0 : ch->second;
	ev.byte_len = static_cast<std::uint32_t>(in.length);
	push_event(r, ev);
	static const unsigned long long dup_every = [] {
		const char *v = std::getenv("RV_FAKE_DUP_EVERY");
		return v ? std::strtoull(v, nullptr, 0) : 0ULL;
	}();
	static unsigned long long delivered_events = 0;
	if (dup_every && ++delivered_events % dup_every == 0)
		push_event(r, ev);
	r.event_stats.recv_write_cqe++;
	r.event_stats.recv_write_bytes += in.length;
	for (auto &[rh, rc] : r.conns)
		if (rc.conn_handle == ev.conn_handle && !rc.qp.empty()) {
			rc.qp[qp % rc.qp.size()].recv_write_cqe++;
			rc.qp[qp % rc.qp.size()].recv_write_bytes += in.length;
			break;
		}
	return 0;
}

int post_write(File &f, rv_post_write_params &p)
{
	const rv_post_write_params_in in = p.in;
	Conn *c = find_conn(f, in.handle);
	if (int err = post_errno(f, in, c))
		return err;

	const std::uint8_t qp = c->next_qp;
	c->next_qp = static_cast<std::uint8_t>((qp + 1) % c->qp.size());
	QpCounters &q = c->qp[qp];
	q.post_write++;
	q.post_write_bytes += in.length;

	File *r = receiver(f, *c, in.immed);
	const std::uint8_t status = r ? deliver(f, *r, in, qp) : 0;
	rv::Event ev;
	ev.event_type = RV_WC_RDMA_WRITE;
	ev.status = status;
	ev.wr_id = in.wr_id;
	ev.conn_handle = c->conn_handle;
	ev.byte_len = static_cast<std::uint32_t>(in.length);
	push_event(f, ev);
	if (status) {
		q.send_write_cqe_fail++;
		f.event_stats.send_write_cqe_fail++;
	} else {
		q.send_write_cqe++;
		f.event_stats.send_write_cqe++;
		f.event_stats.send_write_bytes += in.length;
	}
	p.out = {};
	p.out.sconn_index = qp;
	p.out.conn_count = 1;
	return 0;
}

// --- ATTACH --------------------------------------------------------------

// ATTACH's checks of its input, in the module's order: 0, or the errno
// it answers. The device and the GID it names into d and gid.
template <typename In>
int attach_errno(const In &in, bool has_resv4, std::uint32_t resv4,
		 const FakeDev *&d, std::uint8_t (&gid)[16])
{
	bool resv3 = false;
	for (auto b : in.resv3)
		resv3 |= b != 0;
	if (in.resv1 || in.resv2 || resv3 || (has_resv4 && resv4))
		return EINVAL;
	if (in.rdma_mode & ~(RV_RDMA_MODE_MASK | RV_RDMA_MODE_UPSIZE_CPU))
		return EINVAL;
	if ((in.rdma_mode & RV_RDMA_MODE_MASK) == RV_RDMA_MODE_USER)
		return EOPNOTSUPP;
	if ((in.rdma_mode & RV_RDMA_MODE_MASK) > RV_RDMA_MODE_MAX)
		return EINVAL;
	if (!in.dev_name[0] || !std::memchr(in.dev_name, 0, sizeof(in.dev_name)))
		return EINVAL;
	if (in.num_conn > RV_MAX_NUM_CONN || in.index_bits > RV_MAX_INDEX_BITS ||
	    in.job_key_len > RV_MAX_JOB_KEY_LEN ||
	    in.cq_entries > RV_MAX_CQ_ENTRIES || in.cq_entries == 1 ||
	    (in.q_depth && (in.q_depth < 16 || in.q_depth > 65536)) ||
	    in.mr_cache_size > 1048576)
		return EINVAL;
	if (in.reconnect_timeout && in.hb_interval &&
	    std::uint64_t{in.reconnect_timeout} * 1000 <= in.hb_interval)
		return EINVAL;
	d = find_dev(in.dev_name);
	if (!d)
		return ENODEV;
	if (in.port_num != 1)
		return EINVAL;
	if (in.loc_gid_index >= gid_table_len)
		return ENOENT;
	fake_gid(*d, in.loc_gid_index, gid);
	if (std::memcmp(gid, in.loc_gid, 16))
		return ENOENT;
	return 0;
}

// The job-device an ATTACH with in asks for: the module parameters for
// what it leaves 0.
template <typename In>
JobDev wanted_job(const In &in)
{
	JobDev want{};
	want.num_conn = static_cast<std::uint8_t>(in.num_conn ? in.num_conn : p_num_conn);
	want.index_bits = in.index_bits;
	want.q_depth = in.q_depth ? in.q_depth : p_q_depth;
	want.reconnect = std::min(in.reconnect_timeout, p_max_reconnect);
	want.hb = in.hb_interval ? std::max(in.hb_interval, p_min_hb) : 0;
	return want;
}

// The job-device of key (made as want if there is none) and a free
// process index in it, into job and idx: 0, or EBUSY (a job-device of
// other parameters) or ENOSPC (no index left).
int join_job(const std::string &key, const JobDev &want,
	     std::shared_ptr<JobDev> &job, std::uint32_t &idx)
{
	job = jobs[key].lock();
	if (job) {
		if (job->num_conn != want.num_conn ||
		    job->index_bits != want.index_bits ||
		    job->q_depth != want.q_depth ||
		    job->reconnect != want.reconnect || job->hb != want.hb)
			return EBUSY;
	} else {
		job = std::make_shared<JobDev>(want);
	}
	idx = 0;
	const std::uint64_t slots = std::uint64_t{1} << job->index_bits;
	while (idx < slots && job->used.count(idx))
		idx++;
	if (idx >= slots)
		return ENOSPC;
	job->used.insert(idx);
	jobs[key] = job;
	return 0;
}

// max_fmr_size for a cache of limit bytes and fr_page_list_len fr: with
// RV_FAKE_FR_PAGES=N the fake devices' page lists hold N pages (soft-RoCE:
// 512), and an MR at any offset N - 1 (or fr - 1, if fewer); without it
// they have no limit, and max_fmr_size is the cache size.
std::uint64_t fake_max_fmr(std::uint64_t limit, std::uint32_t fr)
{
	static const std::uint64_t dev_pages = [] {
		const char *v = std::getenv("RV_FAKE_FR_PAGES");
		return v ? std::strtoull(v, nullptr, 0) : 0;
	}();
	if (dev_pages < 2)
		return limit;
	const std::uint64_t pages = fr ? std::min<std::uint64_t>(fr, dev_pages) : dev_pages;
	return std::min(limit, (pages - 1) * page);
}

template <typename In>
int attach(File &f, In &in, rv_attach_params_out &out, bool has_resv4,
	   std::uint32_t resv4, std::uint32_t fr_page_list_len)
{
	if (f.attached)
		return EBUSY;
	const FakeDev *d = nullptr;
	std::uint8_t gid[16];
	if (int err = attach_errno(in, has_resv4, resv4, d, gid))
		return err;

	const JobDev want = wanted_job(in);
	std::uint64_t sid = in.service_id ? in.service_id : p_service_id;
	const std::string job_id = std::to_string(::geteuid()) + "/" +
				   std::string(reinterpret_cast<const char *>(in.job_key),
					       in.job_key_len) +
				   "/" + std::to_string(sid);
	std::shared_ptr<JobDev> job;
	std::uint32_t idx = 0;
	if (int err = join_job(std::string(in.dev_name) + "/1/" +
				       std::to_string(in.loc_gid_index) + "/" + job_id,
			       want, job, idx))
		return err;

	std::uint32_t mb = in.mr_cache_size;
	if (!mb)
		mb = (in.rdma_mode & RV_RDMA_MODE_UPSIZE_CPU) ? p_mr_cache_size_gpu
							      : p_mr_cache_size;
	f.attached = true;
	f.owner = ::getpid();
	f.job = job;
	f.index = idx;
	f.dev = d;
	f.gid_index = in.loc_gid_index;
	std::memcpy(f.gid, gid, sizeof(f.gid));
	f.loc_addr = in.loc_addr;
	f.job_id = job_id;
	f.conns.clear();
	f.event_stats = {};
	f.cq_entries = in.cq_entries;
	f.limit = std::uint64_t{mb} << 20;
	f.max_fmr = fake_max_fmr(f.limit, fr_page_list_len);
	f.stats = {};
	f.stats.limit_cache_size = mb;
	out = {};
	out.rv_index = idx;
	out.mr_cache_size = mb;
	out.q_depth = want.q_depth;
	out.reconnect_timeout = want.reconnect;
	out.max_fmr_size = f.max_fmr;
	return 0;
}

int needs_attach(const File &f)
{
	if (!f.attached)
		return EINVAL;
	if (f.owner != ::getpid())
		return EACCES;
	return 0;
}

int fail(int err)
{
	errno = err;
	return err ? -1 : 0;
}

} // namespace

namespace rv::test::fake {

bool module_active()
{
	return active();
}

void record_abi(int fd, std::uint32_t abi)
{
	std::lock_guard g(lock);
	file(fd).abi = abi;
}

int module_ioctl(int fd, unsigned long request, void *arg)
{
	std::lock_guard g(lock);
	File &f = file(fd);

	// Copying in: the whole struct must be readable.
	if (!user_mapped(reinterpret_cast<std::uintptr_t>(arg), _IOC_SIZE(request)))
		return fail(EFAULT);

	if (request == RV_IOCTL_ATTACH) {
		auto *p = static_cast<rv_attach_params *>(arg);
		rv_attach_params_in in = p->in;
		rv_attach_params_out out{};
		// fr_page_list_len 1 holds no range: EINVAL.
		int err = !f.attached && in.fr_page_list_len == 1
				  ? EINVAL
				  : attach(f, in, out, true, in.resv4, in.fr_page_list_len);
		if (!err)
			p->out = out;
		return fail(err);
	}
	if (request == RV_IOCTL_ATTACH_R5) {
		auto *p = static_cast<rv_attach_params_r5 *>(arg);
		rv_attach_params_r5_in in = p->in;
		rv_attach_params_out out{};
		int err = attach(f, in, out, false, 0, 0);
		if (!err)
			p->out = out;
		return fail(err);
	}

	if (int err = needs_attach(f))
		return fail(err);

	if (request == RV_IOCTL_REG_MEM || request == RV_IOCTL_REG_MEM_R4 ||
	    request == RV_IOCTL_REG_MEM_R1) {
		auto *p = static_cast<rv_mem_params_r1 *>(arg);	// common prefix
		rv_mem_params_out out{};
		int err = reg_mem(f, out, p->in.addr, p->in.length, p->in.access);
		if (!err)
			p->out = out;
		return fail(err);
	}
	if (request == RV_IOCTL_DEREG_MEM)
		return fail(dereg_mem(f, *static_cast<rv_dereg_params_in *>(arg)));
	if (request == RV_IOCTL_EVICT)
		return fail(evict(f, *static_cast<rv_evict_params *>(arg)));
	if (request == RV_IOCTL_GET_CACHE_STATS) {
		update_max(f);
		*static_cast<rv_cache_stats_params_out *>(arg) = f.stats;
		return 0;
	}
	if (request == RV_IOCTL_GET_EVENT_STATS) {
		*static_cast<rv_event_stats_params_out *>(arg) = f.event_stats;
		return 0;
	}
	if (request == RV_IOCTL_CONN_CREATE)
		return fail(conn_create(f, *static_cast<rv_conn_create_params *>(arg)));
	if (request == RV_IOCTL_CONN_CONNECT)
		return fail(conn_connect(
			f, *static_cast<rv_conn_connect_params_in *>(arg)));
	if (request == RV_IOCTL_CONN_CONNECTED)
		return conn_connected(
			f, *static_cast<rv_conn_connected_params_in *>(arg));
	if (request == RV_IOCTL_CONN_GET_CONN_COUNT)
		return fail(conn_count(
			f, *static_cast<rv_conn_get_conn_count_params *>(arg)));
	if (request == RV_IOCTL_CONN_GET_STATS)
		return fail(conn_stats(f, *static_cast<rv_conn_get_stats_params *>(arg)));
	if (request == RV_IOCTL_POST_RDMA_WR_IMMED)
		return fail(post_write(f, *static_cast<rv_post_write_params *>(arg)));
	return fail(EOPNOTSUPP);
}

} // namespace rv::test::fake

// --- interposed libc functions -------------------------------------------

extern "C" {

__attribute__((visibility("default"))) int close(int fd)
{
	if (active()) {
		std::lock_guard g(lock);
		auto it = files.find(fd);
		if (it != files.end()) {
			if (it->second->ring)
				closed_mapped.push_back(std::move(it->second));
			else
				release(*it->second);
			files.erase(it);
		}
	}
	return real_close(fd);
}

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!active())
		return real_mmap(addr, len, prot, flags, fd, off);

	std::unique_lock g(lock);
	auto it = fd >= 0 ? files.find(fd) : files.end();
	if (it == files.end()) {
		g.unlock();
		void *p = real_mmap(addr, len, prot, flags, fd, off);
		if (p != MAP_FAILED && (flags & MAP_FIXED)) {
			g.lock();
			invalidate(reinterpret_cast<std::uintptr_t>(p),
				   reinterpret_cast<std::uintptr_t>(p) + len);
		}
		return p;
	}

	File &f = *it->second;
	auto refuse = [](int err) {
		errno = err;
		return MAP_FAILED;
	};
	if (!f.attached)
		return refuse(EINVAL);
	if (f.owner != ::getpid())
		return refuse(EACCES);
	const std::size_t stride = f.abi >= RV_ABI_VERSION(1, 7)
		? sizeof(rv_event) : RV_EVENT_LEGACY_SIZE;
	const std::size_t want = f.cq_entries * stride + sizeof(rv_ring_header);
	auto pages = [](std::size_t n) { return (n + page - 1) / page; };
	if (!f.cq_entries || off || !(flags & MAP_SHARED) || !len ||
	    pages(len) != pages(want) || f.ring_used)
		return refuse(EINVAL);
	void *p = real_mmap(addr, pages(len) * page, prot,
			    (flags & ~MAP_PRIVATE) | MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	if (p == MAP_FAILED)
		return p;
	real_madvise(p, pages(len) * page, MADV_DONTFORK);
	f.ring_used = true;
	f.ring = p;
	f.ring_len = pages(len) * page;
	return p;
}

__attribute__((visibility("default"))) int munmap(void *addr, size_t len)
{
	int ret = real_munmap(addr, len);
	if (ret == 0 && active()) {
		std::lock_guard g(lock);
		auto start = reinterpret_cast<std::uintptr_t>(addr);
		invalidate(start, start + len);
		for (auto &[fd, f] : files)
			if (f->ring && f->ring >= addr &&
			    static_cast<char *>(f->ring) < static_cast<char *>(addr) + len)
				f->ring = nullptr;
		for (auto it = closed_mapped.begin(); it != closed_mapped.end();) {
			if ((*it)->ring >= addr &&
			    static_cast<char *>((*it)->ring) <
				    static_cast<char *>(addr) + len) {
				release(**it);
				it = closed_mapped.erase(it);
			} else {
				++it;
			}
		}
	}
	return ret;
}

__attribute__((visibility("default"))) int madvise(void *addr, size_t len, int advice)
{
	int ret = real_madvise(addr, len, advice);
	if (ret == 0 && active() && advice == MADV_DONTNEED) {
		std::lock_guard g(lock);
		auto start = reinterpret_cast<std::uintptr_t>(addr);
		for (auto &[fd, f] : files)
			for (auto &[h, e] : f->entries)
				if (!e.stale && e.addr < start + len &&
				    start < e.addr + e.len)
					e.recheck = true;
	}
	return ret;
}

__attribute__((visibility("default"))) void *
mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = nullptr;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (active() && new_len > old_len) {
		std::lock_guard g(lock);
		for (auto &[fd, f] : files)
			if (f->ring == old) {
				errno = EFAULT;
				return MAP_FAILED;
			}
	}
	void *p = real_mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED && active()) {
		std::lock_guard g(lock);
		auto o = reinterpret_cast<std::uintptr_t>(old);
		if (p != old)
			invalidate(o, o + old_len);
		else if (new_len < old_len)
			invalidate(o + new_len, o + old_len);
		if (new_addr) {
			auto n = reinterpret_cast<std::uintptr_t>(new_addr);
			invalidate(n, n + new_len);
		}
	}
	return p;
}

} // extern "C"
