// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The operations rv_fault_sweep sweeps. Each point sets up what its call
// needs without faults, injects (Ctx::inject), and checks that a failed
// call left nothing behind and that the process can go on: the same call
// again works and its result works.
//
// What runs in kernel workqueues afterwards (teardown of users, jobs and
// connections; QP state changes; completions) is not in the calling
// task's fail-nth scope and so not swept here.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rv/error.hpp>

#include "sweep.hpp"

namespace rv::test::fault {

namespace {

constexpr std::size_t KiB = 1024;

int ioctl_err(int fd, unsigned long req, void *arg)
{
	return ::ioctl(fd, req, arg) < 0 ? errno : 0;
}

std::string stats_str(const rv::CacheStats &s)
{
	return "{" + to_string(s) + "}";
}

// Equal except for the failed counter.
bool same_but_failed(const rv::CacheStats &a, rv::CacheStats b)
{
	b.failed = a.failed;
	return std::memcmp(&a, &b, sizeof(a)) == 0;
}

// Maps dev's event ring and checks its header is that of an empty ring.
void check_ring(Point &pt, const rv::Device &dev, const std::string &when)
{
	const std::size_t len = rv::ring_alloc_len(dev.event_layout(), job_cq_entries);
	rv::Mapping m;
	try {
		m = rv::Mapping::map(len, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd(), 0);
	} catch (const std::system_error &e) {
		expect(pt, false, "mmap of the event ring " + when + ": " + e.what());
		return;
	}
	rv::RingView v(m.span(), job_cq_entries, dev.event_layout());
	expect(pt, v.head() == 0 && v.tail() == 0 && v.pending() == 0,
	       "the event ring " + when + " is not empty: head " +
		       std::to_string(v.head()) + " tail " + std::to_string(v.tail()));
}

// A VMA of this process starts at addr.
bool mapped_at(std::uintptr_t addr)
{
	std::ifstream maps("/proc/self/maps");
	std::string line;
	while (std::getline(maps, line)) {
		if (std::strtoull(line.c_str(), nullptr, 16) == addr)
			return true;
	}
	return false;
}

// Number of connections on the file, from the aggregate statistics
// (handle 0 sums every connection of the file: num_conn QPs each).
std::optional<std::uint32_t> conn_qps(int fd)
{
	rv_conn_get_stats_params_out out{};
	if (conn_stats_errno(fd, 0, RV_CONN_STATS_AGGREGATE, &out))
		return std::nullopt;
	return out.num_conn;
}

// A connected Local with a registered buffer, and the peer's buffer.
struct Connected {
	rv::JobKey key{};
	std::unique_ptr<Local> local;
	PeerInfo target;
	rv::Mapping buf;
	rv::MemoryRegion mr;

	void start(Ctx &ctx)
	{
		key = rv::random_job_key();
		local = std::make_unique<Local>(ctx.n0, ctx.n1, key);
		local->map_ring();
		local->create();
		local->connect();
		target = ctx.peer().join(key);
		if (!local->wait_connected(ctx.opts.connect_timeout))
			throw std::runtime_error("not connected to the peer in time");
		buf = shared_buffer(64 * KiB);
		mr = local->dev.reg_mem(buf.data(), buf.size(), rv::access::psm3_send);
		std::string w = local->write_and_wait(mr.info(), target,
						      ctx.next_wr_id++, seconds(60));
		if (!w.empty())
			throw std::runtime_error("a write before the sweep: " + w);
	}

	void stop(Ctx &ctx)
	{
		mr.reset();
		local.reset();
		buf.reset();
		ctx.peer().leave();
	}
};

// ------------------------------------------------------------ ATTACH

// Did the point's fault hit rdma_restrack_add()? The RDMA core tolerates
// that failure: the object works, but `rdma resource show` misses it.
bool untracked(const Point &pt)
{
	return pt.site && std::any_of(pt.site->frames.begin(), pt.site->frames.end(),
				      [](const std::string &f) {
					      return f.starts_with("rdma_restrack_add ");
				      });
}

// Is @now @want with exactly one of its PD, CQ and QP missing?
bool one_short(const ResCounts &now, const ResCounts &want)
{
	const auto le = [](std::uint32_t a, std::uint32_t b) { return a <= b; };
	return le(now.pd, want.pd) && le(now.cq, want.cq) && le(now.qp, want.qp) &&
	       now.mr == want.mr &&
	       std::uint64_t{now.pd} + now.cq + now.qp + 1 ==
		       std::uint64_t{want.pd} + want.cq + want.qp;
}

// rdma_rxe's object pools (PD, CQ, QP, ...) answer -EINVAL when the
// xa_alloc_cyclic() of the object's index fails, and the verbs core passes
// that on (drivers/infiniband/sw/rxe/rxe_pool.c, __rxe_add_to_pool()).
constexpr Allowed rxe_pool_einval{
	EINVAL, "rdma_rxe: __rxe_add_to_pool() turns a failed xa_alloc_cyclic() "
		"of the object index into -EINVAL (rxe_pool.c); not rv's"};

// rdma_rxe's rxe_create_qp() -> rxe_qp_init_req() makes a kernel UDP
// socket per QP; __sock_create() answers -ENFILE when sock_alloc() cannot
// allocate its inode.
constexpr Allowed rxe_qp_socket_enfile{
	ENFILE, "rdma_rxe: each QP gets a kernel UDP socket "
		"(rxe_qp_init_req() -> sock_create_kern()); "
		"net/socket.c __sock_create() returns -ENFILE when "
		"sock_alloc() fails; not rv's"};

// A process (not under fault injection) attached to a job on node 0
// until stopped.
class Holder {
public:
	Holder(const Node &n, const rv::JobKey &key)
		: p_([n, key](Channel &ch) {
			  rv::Device d = open_declared();
			  (void)d.attach(job_params(n, key));
			  ch.send(msg_ready);
			  (void)ch.recv(milliseconds(-1));
			  return 0;
		  })
	{
		(void)p_.chan().expect(msg_ready, seconds(60));
	}

	void stop()
	{
		p_.chan().send(msg_go);
		(void)p_.wait(seconds(30));
	}

private:
	Peer p_;
};

class AttachFirst : public Op {
public:
	// other_job: another job of the same service id is on the device
	// (the CM listener is shared, only referenced).
	explicit AttachFirst(bool other_job) : other_job_(other_job) {}

	const char *name() const override
	{
		return other_job_ ? "ATTACH_2ND_JOB" : "ATTACH";
	}
	const char *what() const override
	{
		return other_job_ ? "ATTACH of the first process of a job while another "
				    "job is on the device: job-device, kernel PD, "
				    "registration QP (in a pool CQ), the shared CM listener, "
				    "rv_index, event ring, MR cache"
				  : "ATTACH of the first process of a job: job-device, "
				    "kernel PD, registration QP (in a pool CQ), CM listener, "
				    "rv_index, event ring, MR cache";
	}
	std::vector<Allowed> allowed() const override
	{
		// ib_alloc_pd() -> rxe_alloc_pd(), ib_cq_pool_get() ->
		// rxe_create_cq() (when the pool has no room), ib_create_qp()
		// -> rxe_create_qp(): each rxe_add_to_pool(); the registration
		// QP's UDP socket.
		return {rxe_pool_einval, rxe_qp_socket_enfile};
	}

	ResCounts begin(Ctx &ctx) override
	{
		if (other_job_)
			holder_ = std::make_unique<Holder>(ctx.n0, rv::random_job_key());
		return ctx.res0();
	}

	void end(Ctx &, std::vector<std::string> &) override
	{
		if (holder_)
			holder_->stop();
		holder_.reset();
	}

	void point(Ctx &ctx, Point &pt) override
	{
		const rv::JobKey key = rv::random_job_key();
		rv::Device dev = open_declared();
		rv::AttachParams p = job_params(ctx.n0, key);
		rv_attach_params a{};
		a.in = p.to_uapi();
		const ResCounts before = ctx.res0();

		ctx.inject(pt, [&] { return ioctl_err(dev.fd(), RV_IOCTL_ATTACH, &a); });

		std::uint32_t index = a.out.rv_index;
		if (pt.err) {
			const ResCounts after = ctx.res0();
			expect(pt, after == before,
			       "verbs objects left by the failed ATTACH: " + after.str() +
				       ", before " + before.str());
			// Other parameters than the failed attempt: a job-device
			// it left listed would answer EBUSY.
			p.num_conn = job_num_conn + 1;
			rv_attach_params r{};
			r.in = p.to_uapi();
			int e = ioctl_err(dev.fd(), RV_IOCTL_ATTACH, &r);
			require(pt, !e, "ATTACH again on the same file: " + errname(e) +
						(e == EBUSY ? " (a job-device or the file's attach "
							      "was left behind)"
							    : ""));
			index = r.out.rv_index;
		}
		expect(pt, index == 0, "rv_index " + std::to_string(index) +
					       " for the first process of a new job, want 0");
		const ResCounts now = ctx.res0();
		// The registration QP's CQ is one of ib_core's pool.
		const ResCounts want{before.pd + 1, before.cq, before.qp + 1, before.mr};
		if (untracked(pt) && now != want && one_short(now, want))
			pt.notes.push_back("after the attach: " + now.str() +
					   ", one object short: the fault hit the RDMA core's "
					   "rdma_restrack_add(), which leaves the object working "
					   "but out of `rdma resource show`");
		else
			expect(pt, now == want,
			       "after the attach: " + now.str() + ", before " + before.str() +
				       " (want one PD and the registration QP more)");
		check_ring(pt, dev, "after the attach");
	}

private:
	bool other_job_;
	std::unique_ptr<Holder> holder_;
};

class AttachJoin : public Op {
public:
	const char *name() const override { return "ATTACH_JOIN"; }
	const char *what() const override
	{
		return "ATTACH of a second process to an existing job: rv_index, "
		       "event ring, MR cache";
	}

	ResCounts begin(Ctx &ctx) override
	{
		key_ = rv::random_job_key();
		holder_ = std::make_unique<Holder>(ctx.n0, key_);
		return ctx.res0();
	}

	void point(Ctx &ctx, Point &pt) override
	{
		rv::Device dev = open_declared();
		const rv_attach_params_in in = job_params(ctx.n0, key_).to_uapi();
		rv_attach_params a{};
		a.in = in;
		const ResCounts before = ctx.res0();

		ctx.inject(pt, [&] { return ioctl_err(dev.fd(), RV_IOCTL_ATTACH, &a); });

		std::uint32_t index = a.out.rv_index;
		if (pt.err) {
			const ResCounts after = ctx.res0();
			expect(pt, after == before,
			       "verbs objects changed by the failed ATTACH: " + after.str() +
				       ", before " + before.str());
			rv_attach_params r{};
			r.in = in;
			int e = ioctl_err(dev.fd(), RV_IOCTL_ATTACH, &r);
			require(pt, !e, "ATTACH again on the same file: " + errname(e));
			index = r.out.rv_index;
		}
		// The holder has 0; the index of a failed attach is free again.
		expect(pt, index == 1, "rv_index " + std::to_string(index) +
					       " for the second process, want 1 (an index "
					       "was left reserved)");
		expect(pt, ctx.res0() == before, "joining a job created verbs objects: " +
							 ctx.res0().str());
		check_ring(pt, dev, "after the attach");
	}

	void end(Ctx &ctx, std::vector<std::string> &problems) override
	{
		if (!holder_)
			return;
		holder_->stop();
		holder_.reset();
		ctx.settle(problems, ResCounts{}, "after the job's last process left");
		// A failed join that kept its member count would keep the job
		// listed: an attach with other parameters would get EBUSY.
		rv::Device dev = open_declared();
		rv::AttachParams p = job_params(ctx.n0, key_);
		p.num_conn = job_num_conn + 1;
		try {
			rv::Attach a = dev.attach(p);
			if (a.rv_index != 0)
				problems.push_back("a new job with the same key got rv_index " +
						   std::to_string(a.rv_index));
		} catch (const std::system_error &e) {
			problems.push_back(std::string("the job is still listed after its "
						       "last process left: ") + e.what());
		}
	}

private:
	rv::JobKey key_{};
	std::unique_ptr<Holder> holder_;
};

// ------------------------------------------------------------ mmap

class MmapRing : public Op {
public:
	const char *name() const override { return "MMAP"; }
	const char *what() const override
	{
		return "mmap of the event ring, at an address whose page tables do "
		       "not exist yet";
	}

	void point(Ctx &ctx, Point &pt) override
	{
		rv::Device dev = open_declared();
		(void)dev.attach(job_params(ctx.n0, rv::random_job_key()));
		const std::size_t len = rv::ring_alloc_len(dev.event_layout(),
							   job_cq_entries);
		// A fresh 512 GiB region per point: the mapping needs new
		// page-table pages at every level below the PGD.
		const std::uintptr_t hint = 0x600000000000ULL +
					    (pt.n % 64) * (1ULL << 39);
		void *ptr = MAP_FAILED;

		ctx.inject(pt, [&] {
			ptr = ::mmap(reinterpret_cast<void *>(hint), len,
				     PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_FIXED_NOREPLACE, dev.fd(), 0);
			return ptr == MAP_FAILED ? errno : 0;
		});

		rv::Mapping m;
		if (!pt.err) {
			m = rv::Mapping::adopt(ptr, len);
			expect(pt, m.addr() == hint, "mapped elsewhere than the hint");
			rv::RingView v(m.span(), job_cq_entries, dev.event_layout());
			expect(pt, v.head() == 0 && v.tail() == 0,
			       "the ring's header is not that of an empty ring");
			return;
		}
		expect(pt, !mapped_at(hint), "the failed mmap left a mapping behind");
		// The ring can be mapped once: a failed attempt must not use
		// that up.
		check_ring(pt, dev, "after the failed mmap");
	}
};

// ------------------------------------------------------------ REG_MEM

// ib_alloc_mr() -> rxe_alloc_mr() -> rxe_add_to_pool(): EINVAL when the
// xa_alloc_cyclic() of the MR's index fails (6.12; 6.1's rxe_alloc()
// answers ENOMEM).
// rv's own fault points in the registration (rv_reg.c: fail_reg_post,
// fail_reg_wc) are fault_attrs, which /proc/thread-self/fail-nth reaches
// as it reaches failslab: REG_MEM then answers its documented EIO.
constexpr Allowed rv_reg_fault_eio{
	EIO, "rv's fault points fail_reg_post and fail_reg_wc (rv_reg.c), which "
	     "fail-nth reaches too: the device did not register the pages"};

constexpr Allowed rxe_mr_pool_einval{
	EINVAL, "rdma_rxe: rxe_alloc_mr() -> __rxe_add_to_pool() turns a failed "
		"xa_alloc_cyclic() of the MR index into -EINVAL (rxe_pool.c); not rv's"};

// One REG_MEM miss on a fresh buffer, with fault injection, in local's
// process; checks the cache and a write from the MR.
void reg_mem_point(Ctx &ctx, Point &pt, Local &l, const PeerInfo &target)
{
	rv::Mapping buf = shared_buffer(64 * KiB);
	const rv::CacheStats st0 = l.dev.cache_stats();
	const ResCounts r0 = ctx.res0();
	rv_mem_params mp{};
	mp.in.addr = buf.addr();
	mp.in.length = buf.size();
	mp.in.access = rv::access::psm3_send;

	ctx.inject(pt, [&] { return ioctl_err(l.dev.fd(), RV_IOCTL_REG_MEM, &mp); });

	const rv::CacheStats st1 = l.dev.cache_stats();
	rv::MrInfo info;
	rv::MemoryRegion mr;
	bool raw = false;
	if (pt.err) {
		expect(pt, st1.failed == st0.failed + 1 && same_but_failed(st0, st1),
		       "cache statistics after the failed REG_MEM " + stats_str(st1) +
			       ", before " + stats_str(st0) + " (want only failed + 1)");
		const ResCounts r1 = ctx.res0();
		expect(pt, r1 == r0, "verbs objects left by the failed REG_MEM: " +
					     r1.str() + ", before " + r0.str());
		try {
			mr = l.dev.reg_mem(buf.data(), buf.size(), rv::access::psm3_send);
		} catch (const std::system_error &e) {
			require(pt, false, std::string("REG_MEM again: ") + e.what());
		}
		info = mr.info();
		const rv::CacheStats st2 = l.dev.cache_stats();
		expect(pt, st2.miss == st1.miss + 1 && st2.count == st1.count + 1,
		       "REG_MEM again was no miss: " + stats_str(st2));
	} else {
		info.handle = mp.out.mr_handle;
		info.iova = mp.out.iova;
		info.lkey = mp.out.lkey;
		info.rkey = mp.out.rkey;
		info.addr = buf.addr();
		info.length = buf.size();
		info.access = rv::access::psm3_send;
		raw = true;
		expect(pt, st1.miss == st0.miss + 1 && st1.count == st0.count + 1 &&
				   st1.failed == st0.failed,
		       "cache statistics after the REG_MEM " + stats_str(st1) +
			       ", before " + stats_str(st0) + " (want one miss more)");
	}
	const ResCounts r2 = ctx.res0();
	expect(pt, r2.mr == r0.mr + 1, "MRs after the registration: " + r2.str() +
					       ", before " + r0.str());
	std::string w = l.write_and_wait(info, target, ctx.next_wr_id++, seconds(60));
	expect(pt, w.empty(), "a write from the new MR: " + w);
	if (raw)
		l.dev.dereg_mem(info.handle, info.addr, info.length, info.access);
	mr.reset();
	// The munmap drops the MR from the cache; rv deregisters it.
	buf.reset();
}

class RegMem : public Op {
public:
	const char *name() const override { return "REG_MEM"; }
	const char *what() const override
	{
		return "REG_MEM cache miss of a process that has MRs: fast-registration "
		       "MR and its REG_MR, handle, MMU interval notifier";
	}
	bool needs_peer() const override { return true; }
	std::vector<Allowed> allowed() const override
	{
		return {rxe_mr_pool_einval, rv_reg_fault_eio};
	}

	ResCounts begin(Ctx &ctx) override
	{
		c_.start(ctx);
		return ctx.res0();
	}
	void point(Ctx &ctx, Point &pt) override
	{
		reg_mem_point(ctx, pt, *c_.local, c_.target);
	}
	void end(Ctx &ctx, std::vector<std::string> &) override { c_.stop(ctx); }

private:
	Connected c_;
};

class RegMemFirst : public Op {
public:
	const char *name() const override { return "REG_MEM_FIRST"; }
	const char *what() const override
	{
		return "the first REG_MEM of a process (each point in a new process "
		       "that joined the job and its connection): also the mm's MMU "
		       "notifier subscriptions";
	}
	bool needs_peer() const override { return true; }
	std::vector<Allowed> allowed() const override
	{
		return {rxe_mr_pool_einval, rv_reg_fault_eio};
	}
	bool fork_per_point() const override { return true; }

	ResCounts begin(Ctx &ctx) override
	{
		c_.start(ctx);
		return ctx.res0();
	}
	void point(Ctx &ctx, Point &pt) override
	{
		Local l(ctx.n0, ctx.n1, c_.key);
		l.map_ring();
		l.create();
		require(pt, l.wait_connected(seconds(10)),
			"the joined connection is not connected");
		reg_mem_point(ctx, pt, l, c_.target);
	}
	void end(Ctx &ctx, std::vector<std::string> &) override { c_.stop(ctx); }

private:
	Connected c_;
};

// ------------------------------------------------------------ CONN_CREATE

// After CONN_CREATE (handle): exactly one connection on the file, and
// it is usable (not failed).
void check_one_conn(Point &pt, int fd, const rv_conn_create_params_in &in,
		    std::uint64_t handle)
{
	rv_conn_create_params again{};
	again.in = in;
	int e = ioctl_err(fd, RV_IOCTL_CONN_CREATE, &again);
	expect(pt, e == EBUSY, "a second CONN_CREATE for the same remote: " +
				       errname(e) + ", want EBUSY");
	std::optional<std::uint32_t> qps = conn_qps(fd);
	expect(pt, qps && *qps == job_num_conn,
	       "QPs of the file's connections (aggregate num_conn): " +
		       (qps ? std::to_string(*qps) : std::string("ioctl failed")) +
		       ", want " + std::to_string(job_num_conn));
	int v = -1;
	e = conn_connected_errno(fd, handle, &v);
	expect(pt, !e && v == 0, "CONN_CONNECTED of the new connection: " +
					 errname(e) + " value " + std::to_string(v) +
					 ", want 0");
}

class ConnCreate : public Op {
public:
	const char *name() const override { return "CONN_CREATE"; }
	const char *what() const override
	{
		return "CONN_CREATE of a job's first connection to a node: the "
		       "connection, its QPs' send and receive contexts, ids";
	}

	void point(Ctx &ctx, Point &pt) override
	{
		Local l(ctx.n0, ctx.n1, rv::random_job_key());
		// in and out share the struct (a union).
		const rv_conn_create_params_in in = remote_of(ctx.n0, ctx.n1).to_uapi();
		rv_conn_create_params cp{};
		cp.in = in;

		ctx.inject(pt, [&] { return ioctl_err(l.dev.fd(), RV_IOCTL_CONN_CREATE, &cp); });

		std::uint64_t handle = cp.out.handle;
		if (pt.err) {
			rv_conn_create_params r{};
			r.in = in;
			int e = ioctl_err(l.dev.fd(), RV_IOCTL_CONN_CREATE, &r);
			require(pt, !e, "CONN_CREATE again: " + errname(e));
			handle = r.out.handle;
		}
		check_one_conn(pt, l.dev.fd(), in, handle);
	}
};

class ConnCreateJoin : public Op {
public:
	const char *name() const override { return "CONN_CREATE_JOIN"; }
	const char *what() const override
	{
		return "CONN_CREATE of a second process for an existing connection "
		       "of its job: the process's handle";
	}

	ResCounts begin(Ctx &ctx) override
	{
		key_ = rv::random_job_key();
		holder_ = std::make_unique<Local>(ctx.n0, ctx.n1, key_);
		holder_->create();
		return ctx.res0();
	}

	void point(Ctx &ctx, Point &pt) override
	{
		Local l(ctx.n0, ctx.n1, key_);
		const rv_conn_create_params_in in = remote_of(ctx.n0, ctx.n1).to_uapi();
		rv_conn_create_params cp{};
		cp.in = in;

		ctx.inject(pt, [&] { return ioctl_err(l.dev.fd(), RV_IOCTL_CONN_CREATE, &cp); });

		rv_conn_create_params_out out = cp.out;
		if (pt.err) {
			rv_conn_create_params r{};
			r.in = in;
			int e = ioctl_err(l.dev.fd(), RV_IOCTL_CONN_CREATE, &r);
			require(pt, !e, "CONN_CREATE again: " + errname(e));
			out = r.out;
		}
		expect(pt, out.conn_handle == holder_->conn.conn_handle(),
		       "conn_handle " + std::to_string(out.conn_handle) +
			       ", the job's connection has " +
			       std::to_string(holder_->conn.conn_handle()));
		check_one_conn(pt, l.dev.fd(), in, out.handle);
	}

	void end(Ctx &, std::vector<std::string> &) override { holder_.reset(); }

private:
	rv::JobKey key_{};
	std::unique_ptr<Local> holder_;
};

// ------------------------------------------------------------ CONN_CONNECT

class ConnConnect : public Op {
public:
	const char *name() const override { return "CONN_CONNECT"; }
	const char *what() const override
	{
		return "the first CONN_CONNECT of a connection: path, and its num_conn "
		       "QPs with their room in pool CQs";
	}
	bool needs_peer() const override { return true; }
	std::vector<Allowed> allowed() const override
	{
		// ib_cq_pool_get() -> rxe_create_cq() (when the pool has no
		// room), ib_create_qp() -> rxe_create_qp(): both
		// rxe_add_to_pool().
		return {rxe_pool_einval, rxe_qp_socket_enfile};
	}

	void point(Ctx &ctx, Point &pt) override
	{
		const rv::JobKey key = rv::random_job_key();
		std::optional<Local> l;
		l.emplace(ctx.n0, ctx.n1, key);
		l->map_ring();
		l->create();
		rv_conn_connect_params_in ci{};
		ci.handle = l->conn.handle();
		ci.path = path_of(ctx.n0, ctx.n1).to_uapi();
		const int fd = l->dev.fd();

		ctx.inject(pt, [&] { return ioctl_err(fd, RV_IOCTL_CONN_CONNECT, &ci); });

		if (pt.err) {
			int v = -1;
			int e = conn_connected_errno(fd, ci.handle, &v);
			rv_conn_connect_params_in again = ci;
			int e2 = ioctl_err(fd, RV_IOCTL_CONN_CONNECT, &again);
			int v2 = -1;
			int e3 = conn_connected_errno(fd, ci.handle, &v2);
			std::string state = "CONN_CONNECTED answers " +
					    (e ? errname(e) : std::to_string(v)) +
					    ", CONN_CONNECT again " + errname(e2) +
					    ", then CONN_CONNECTED " +
					    (e3 ? errname(e3) : std::to_string(v2));
			// Clean: nothing of the failed call stays, a second
			// CONNECT starts the connection. rv instead keeps the
			// path and fails the connection for good
			// (rv_ioctl_conn_connect()): the job's connection to
			// that node is dead for every process of the job until
			// they all close, while CONN_CONNECT answers 0.
			const bool clean = !e2 && e3 != EIO;
			expect(pt, clean, "partial state after the failed CONN_CONNECT: " + state);
			pt.notes.push_back(state);
			if (!clean)
				return;
		}
		// Started by the call or by the second CONN_CONNECT: it must
		// connect to the peer and carry a write.
		PeerInfo target = ctx.peer().join(key);
		bool up = false;
		try {
			up = l->wait_connected(ctx.opts.connect_timeout);
		} catch (const std::system_error &e) {
			expect(pt, false, std::string("CONN_CONNECTED: ") + e.what());
		}
		expect(pt, up, "not connected to the peer in time");
		if (up) {
			rv::Mapping buf = shared_buffer(4 * KiB);
			rv::MemoryRegion mr = l->dev.reg_mem(buf.data(), buf.size(),
							     rv::access::psm3_send);
			std::string w = l->write_and_wait(mr.info(), target,
							  ctx.next_wr_id++, seconds(60));
			expect(pt, w.empty(), "a write on the connection: " + w);
		}
		l.reset();
		ctx.peer().leave();
	}
};

// ------------------------------------------------------------ POST

class PostWrite : public Op {
public:
	const char *name() const override { return "POST"; }
	const char *what() const override
	{
		return "POST_RDMA_WR_IMMED on an established connection: must "
		       "allocate nothing (preallocated send contexts)";
	}
	bool needs_peer() const override { return true; }
	bool must_not_allocate() const override { return true; }

	ResCounts begin(Ctx &ctx) override
	{
		c_.start(ctx);
		return ctx.res0();
	}

	void point(Ctx &ctx, Point &pt) override
	{
		Local &l = *c_.local;
		const std::uint64_t wr_id = ctx.next_wr_id++;
		rv::WriteRequest w;
		w.loc_addr = c_.mr.addr();
		w.mr = &c_.mr.info();
		w.rem_addr = c_.target.addr;
		w.rkey = c_.target.rkey;
		w.length = 4096;
		w.wr_id = wr_id;
		w.immed = rv::make_immed(c_.target.rv_index, job_index_bits, 1);
		rv_post_write_params pp{};
		pp.in = w.to_uapi(l.conn.handle());

		ctx.inject(pt, [&] {
			return ioctl_err(l.dev.fd(), RV_IOCTL_POST_RDMA_WR_IMMED, &pp);
		});

		std::optional<rv::Event> e = l.wait_event(wr_id, pt.err ? seconds(1)
								      : seconds(60));
		if (pt.err)
			expect(pt, !e, "a completion event for a failed post");
		else
			expect(pt, e && !e->status,
			       e ? "the write completed with status " +
					   std::to_string(e->status)
				 : std::string("no completion event for the write"));
	}

	void end(Ctx &ctx, std::vector<std::string> &) override { c_.stop(ctx); }

private:
	Connected c_;
};

// ------------------------------------------------------------ release

// A file with everything: attached, connected, an MR, a write posted
// (maybe still in flight); its ring unmapped unless keep_ring.
struct LiveFile {
	std::optional<Local> l;
	rv::Mapping buf;
	rv::MemoryRegion mr;

	LiveFile(Ctx &ctx, Point &pt)
	{
		const rv::JobKey key = rv::random_job_key();
		l.emplace(ctx.n0, ctx.n1, key);
		l->map_ring();
		l->create();
		l->connect();
		PeerInfo target = ctx.peer().join(key);
		require(pt, l->wait_connected(ctx.opts.connect_timeout),
			"not connected to the peer in time");
		buf = shared_buffer(64 * KiB);
		mr = l->dev.reg_mem(buf.data(), buf.size(), rv::access::psm3_send);
		rv::WriteRequest w;
		w.loc_addr = mr.addr();
		w.mr = &mr.info();
		w.rem_addr = target.addr;
		w.rkey = target.rkey;
		w.length = 64 * KiB;
		w.wr_id = ctx.next_wr_id++;
		w.immed = rv::make_immed(target.rv_index, job_index_bits, 2);
		rv::PostResult out;
		int e = l->conn.try_post_write(w, out);
		require(pt, !e, "a write before the close: " + errname(e));
	}
};

class CloseFile : public Op {
public:
	const char *name() const override { return "CLOSE"; }
	const char *what() const override
	{
		return "close of a file with live state (attached, connected, an MR, "
		       "a write posted): the release runs in the closing task";
	}
	bool needs_peer() const override { return true; }

	void point(Ctx &ctx, Point &pt) override
	{
		LiveFile f(ctx, pt);
		f.l->view = rv::RingView();
		f.l->ring.reset();

		// close() cannot fail; the release (rv_release()) runs from
		// task work before close() returns to user space.
		ctx.inject(pt, [&] {
			f.l->dev.close();
			return 0;
		});
		if (pt.consumed)
			pt.notes.push_back("the release passed a fault-injection check: "
					   "its failure must leave nothing behind");
		f.mr.abandon();
		f.l.reset();
		ctx.settle(pt, ResCounts{}, "after the close");
		ctx.peer().leave();
	}
};

class ReleaseMunmap : public Op {
public:
	const char *name() const override { return "RELEASE_MUNMAP"; }
	const char *what() const override
	{
		return "munmap of the event ring of a closed file with live state: "
		       "the ring held the file's last reference";
	}
	bool needs_peer() const override { return true; }

	void point(Ctx &ctx, Point &pt) override
	{
		LiveFile f(ctx, pt);
		f.l->view = rv::RingView();
		const std::size_t len = f.l->ring.size();
		void *addr = f.l->ring.release();
		f.mr.abandon();
		f.l->dev.close();	// the mapping keeps the file

		// ENOMEM here is the mm's (the maple tree of munmap's detached
		// VMAs, mm/mmap.c do_mas_align_munmap()).
		ctx.inject(pt, [&] { return ::munmap(addr, len) < 0 ? errno : 0; });

		if (pt.err) {
			int e = ::munmap(addr, len) < 0 ? errno : 0;
			require(pt, !e, "munmap again: " + errname(e));
		}
		f.l.reset();
		ctx.settle(pt, ResCounts{}, "after the ring's munmap");
		ctx.peer().leave();
	}
};

} // namespace

std::vector<std::unique_ptr<Op>> all_ops()
{
	std::vector<std::unique_ptr<Op>> v;
	v.push_back(std::make_unique<AttachFirst>(false));
	v.push_back(std::make_unique<AttachFirst>(true));
	v.push_back(std::make_unique<AttachJoin>());
	v.push_back(std::make_unique<MmapRing>());
	v.push_back(std::make_unique<ConnCreate>());
	v.push_back(std::make_unique<ConnCreateJoin>());
	v.push_back(std::make_unique<RegMem>());
	v.push_back(std::make_unique<RegMemFirst>());
	v.push_back(std::make_unique<ConnConnect>());
	v.push_back(std::make_unique<PostWrite>());
	v.push_back(std::make_unique<CloseFile>());
	v.push_back(std::make_unique<ReleaseMunmap>());
	return v;
}

} // namespace rv::test::fault
