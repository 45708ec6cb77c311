// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "worker.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/ioctl.hpp>

namespace rvfuzz {

namespace {

using namespace std::chrono_literals;

struct Weight {
	Op op;
	std::uint32_t w;
};

// How often each call class is picked. The expensive ones (a new
// attach, a REG_MEM miss, a connection, a close that tears down) come
// mostly as the valid follow-ups of open and attach; a fork (about one
// call in 1500) costs the most.
constexpr std::array<Weight, op_count> default_weights{{
	{Op::open, 32},
	{Op::close, 16},
	{Op::dup, 6},
	{Op::capability, 50},
	{Op::query_r2, 12},
	{Op::attach, 60},
	{Op::attach_r5, 16},
	{Op::reg_mem, 110},
	{Op::reg_mem_r4, 16},
	{Op::reg_mem_r1, 16},
	{Op::dereg_mem, 80},
	{Op::evict, 50},
	{Op::cache_stats, 40},
	{Op::event_stats, 24},
	{Op::conn_create, 32},
	{Op::conn_connect, 32},
	{Op::conn_connected, 44},
	{Op::conn_count, 28},
	{Op::conn_stats, 28},
	{Op::post_write, 120},
	{Op::ioctl_raw, 260},
	{Op::mmap, 50},
	{Op::munmap, 20},
	{Op::mremap, 12},
	{Op::ring_poll, 60},
	{Op::arena, 40},
	{Op::fork, 1},
}};

// Writes all of s to stderr with one write(2) where it fits (no stdio:
// its locks are not safe in a fork child).
void say(const std::string &s)
{
	std::size_t off = 0;

	while (off < s.size()) {
		ssize_t n = ::write(STDERR_FILENO, s.data() + off, s.size() - off);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return;
		}
		off += static_cast<std::size_t>(n);
	}
}

std::string hex(std::uint64_t v)
{
	char buf[24];

	std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
	return buf;
}

} // namespace

FdSlot::~FdSlot()
{
	rings.clear();
	if (int f = fd.exchange(-1); f >= 0)
		::close(f);
}

void FdSlot::forget(std::vector<RingMap> &out)
{
	for (auto &r : rings)
		out.push_back(std::move(r));
	rings.clear();
	attached = false;
	main_job = false;
	node = -1;
	rv_index = 0;
	cq_entries = 0;
	num_conn = 0;
	abi = RV_ABI_VERSION(1, 6);
	attach_abi = 0;
	max_fmr = 0;
	mrs.clear();
	conns.clear();
}

Worker::Worker(const Options &o, const Env &env, Shared &sh, unsigned index,
	       unsigned gen)
	: o_(o), env_(env), sh_(sh), index_(index), gen_(gen),
	  seed_(mix_seed(o.seed, index, gen)), arena_(48, 64 * 1024)
{
	Rng r(seed_);
	std::uint64_t k = mix_seed(o.seed, 0x6a6f62);	// "job": every worker

	for (std::size_t i = 0; i < main_key_.size(); i++)
		main_key_[i] = static_cast<std::uint8_t>(splitmix64(k));
	for (const auto &w : default_weights) {
		const std::uint32_t v = o.skip.test(idx(w.op)) ? 0 : w.w;
		weights_[idx(w.op)] = v;
		weight_sum_ += v;
	}
	if (!o.no_kill)
		lifetime_ = r.range(1000, 15000);
	for (auto &s : slots_)
		s.abi = RV_ABI_VERSION(1, 6);
}

const Node *Worker::node(int i) const noexcept
{
	if (i < 0 || static_cast<std::size_t>(i) >= env_.nodes.size())
		return nullptr;
	return &env_.nodes[static_cast<std::size_t>(i)];
}

int Worker::other_node(int i) const noexcept
{
	const int n = static_cast<int>(env_.nodes.size());

	if (n < 2)
		return -1;
	return i < 0 ? 1 : (i + 1) % n;
}

FdSlot &Worker::pick_slot(Ctx &c)
{
	return slots_[c.rng.below(slots_.size())];
}

int Worker::pick_fd(Ctx &c, FdSlot &s)
{
	const auto r = c.rng.below(100);

	if (r < 2)
		return -1;
	if (r < 3)
		return 1 << 24;		// above any RLIMIT_NOFILE
	return s.fd.load(std::memory_order_relaxed);
}

Hint Worker::hint(FdSlot &s)
{
	std::lock_guard lock(s.m);
	Hint h;

	h.fd = s.fd.load();
	h.attached = s.attached;
	h.main_job = s.main_job;
	h.node = s.node;
	h.rv_index = s.rv_index;
	h.cq_entries = s.cq_entries;
	h.num_conn = s.num_conn;
	h.abi = s.abi;
	h.attach_abi = s.attach_abi;
	h.max_fmr = s.max_fmr;
	return h;
}

CallRecord &Worker::begin(Ctx &c, Op op, int fd)
{
	CallRecord &r = c.ts->rec;

	r = CallRecord{};
	r.op = static_cast<std::uint32_t>(op);
	r.fd = fd;
	return r;
}

void Worker::fail(Ctx &c, const std::string &what)
{
	sh_.st.failures.fetch_add(1);
	if (printed_.fetch_add(1) >= 30)
		return;
	char head[160];
	std::snprintf(head, sizeof(head),
		      "rv_fuzz: FAIL seed %llu worker %u gen %u thread %u%s pid %d call %llu: ",
		      static_cast<unsigned long long>(o_.seed), index_, gen_, c.tid,
		      c.child ? " (fork child)" : "", static_cast<int>(::getpid()),
		      static_cast<unsigned long long>(c.ts->seq.load()));
	say(head + what + "\n  " + describe_call(c.ts->rec) + "\n");
}

void Worker::trace(Ctx &c, const char *when, long ret, int err)
{
	char head[128];

	std::snprintf(head, sizeof(head), "rv_fuzz: w%u.%u t%u%s #%llu %s ", index_,
		      gen_, c.tid, c.child ? "c" : "",
		      static_cast<unsigned long long>(c.ts->seq.load()), when);
	if (!std::strcmp(when, "call"))
		say(head + describe_call(c.ts->rec) + "\n");
	else
		say(head + (err ? errno_name(err) : "= " + std::to_string(ret)) + "\n");
}

void Worker::check(Ctx &c, const Expect &e, long ret, int err)
{
	if (err) {
		if (err > 0 && err < max_errno && e.allowed.test(static_cast<std::size_t>(err)))
			return;
		fail(c, "errno " + errno_name(err) + " is not one of " +
			to_string(e.allowed));
		return;
	}
	if (!e.success_ok) {
		fail(c, std::string("succeeded, which it cannot: ") + e.why);
		return;
	}
	if (ret < 0 || ret > e.max_ret)
		fail(c, "returned " + std::to_string(ret) + ", not 0.." +
			std::to_string(e.max_ret));
}

Worker::Result Worker::do_ioctl(Ctx &c, Op op, int fd, unsigned long cmd,
				std::span<const std::byte> in, PtrKind kind,
				std::span<std::byte> out)
{
	const auto cmd32 = static_cast<unsigned int>(cmd);
	const Placed p = c.arg.place(in, kind, c.rng);
	CallRecord &r = begin(c, op, fd);

	r.cmd = cmd;
	r.ptr = reinterpret_cast<std::uintptr_t>(p.ptr);
	r.ptr_kind = static_cast<std::uint32_t>(p.kind);
	r.len = static_cast<std::uint32_t>(in.size());
	r.nbytes = static_cast<std::uint32_t>(std::min(in.size(), r.bytes.size()));
	std::memcpy(r.bytes.data(), in.data(), r.nbytes);

	const Expect e = fd >= 0 && fd < (1 << 24) ?
		expect_ioctl(env_.oracle, cmd32, in, p.acc) : expect_bad_fd();
	void *arg = p.ptr;
	Result res = issue(c, op, e, [fd, cmd, arg] {
		return static_cast<long>(::ioctl(fd, cmd, arg));
	});
	if (res.done && !res.err && !out.empty() && p.acc.writable && p.ptr)
		std::memcpy(out.data(), p.ptr, std::min(out.size(), in.size()));
	return res;
}

void Worker::step(Ctx &c)
{
	std::uint32_t pick = static_cast<std::uint32_t>(c.rng.below(weight_sum_));
	Op op = Op::ioctl_raw;

	for (std::size_t i = 0; i < op_count; i++) {
		if (pick < weights_[i]) {
			op = static_cast<Op>(i);
			break;
		}
		pick -= weights_[i];
	}
	FdSlot &s = pick_slot(c);
	switch (op) {
	case Op::open: op_open(c, s); break;
	case Op::close: op_close(c, s); break;
	case Op::dup: op_dup(c, s); break;
	case Op::capability: op_capability(c, s, false); break;
	case Op::query_r2: op_query_r2(c, s); break;
	case Op::attach:
	case Op::attach_r5: op_attach(c, s, op, false); break;
	case Op::reg_mem:
	case Op::reg_mem_r4:
	case Op::reg_mem_r1: op_reg_mem(c, s, op, false); break;
	case Op::dereg_mem: op_dereg_mem(c, s); break;
	case Op::evict: op_evict(c, s); break;
	case Op::cache_stats: op_cache_stats(c, s); break;
	case Op::event_stats: op_event_stats(c, s); break;
	case Op::conn_create: op_conn_create(c, s, false); break;
	case Op::conn_connect: op_conn_connect(c, s, false); break;
	case Op::conn_connected: op_conn_connected(c, s); break;
	case Op::conn_count: op_conn_count(c, s); break;
	case Op::conn_stats: op_conn_stats(c, s); break;
	case Op::post_write: op_post_write(c, s); break;
	case Op::ioctl_raw: op_ioctl_raw(c, s); break;
	case Op::mmap: op_mmap(c, s, false); break;
	case Op::munmap: op_munmap(c, s); break;
	case Op::mremap: op_mremap(c, s); break;
	case Op::ring_poll: op_ring_poll(c, s); break;
	case Op::arena: op_arena(c); break;
	case Op::fork: op_fork(c); break;
	case Op::count: break;
	}
}

void Worker::thread_main(unsigned tid)
{
	ThreadStatus &ts = sh_.threads[index_][tid];

	ts.pid.store(static_cast<std::int32_t>(::getpid()));
	ts.tid.store(static_cast<std::int32_t>(::syscall(SYS_gettid)));
	try {
		std::unique_lock mm(mm_);	// ArgBuf maps at an address of the kernel's choice
		Ctx c(tid, mix_seed(seed_, tid, 0x74), ts);
		mm.unlock();

		while (weight_sum_ && !c.stop && !quit_.load(std::memory_order_relaxed) &&
		       !sh_.expired())
			step(c);
	} catch (const std::exception &e) {
		say(std::string("rv_fuzz: worker ") + std::to_string(index_) +
		    " thread " + std::to_string(tid) + ": " + e.what() + "\n");
		error_ = true;
	}
	running_.fetch_sub(1);
}

int Worker::run()
{
	std::vector<std::jthread> threads;
	Rng r(mix_seed(seed_, 0x656e64));	// "end"

	running_ = o_.threads;
	for (unsigned t = 0; t < o_.threads; t++)
		threads.emplace_back([this, t] { thread_main(t); });

	while (running_.load()) {
		std::this_thread::sleep_for(5ms);
		if (!lifetime_ || made_.load() < lifetime_ || quit_.load())
			continue;
		// The end of this process's life, in one of three ways.
		switch (r.below(3)) {
		case 0:
			// With calls in flight: the kernel closes the files.
			::_exit(0);
		case 1:
			::raise(SIGKILL);
			break;
		default:
			quit_ = true;
			break;
		}
	}
	threads.clear();
	return error_ ? 3 : 0;
}

void Worker::op_fork(Ctx &c)
{
	if (c.child)
		return;
	sh_.count(Op::fork, 0);
	const pid_t parent = ::getpid();
	pid_t pid;
	{
		// No lock of this process may be held by another thread
		// when it forks: the child would inherit it held forever.
		// This is the order of the locks everywhere: mm_, the
		// arena's, the slots' (by index), orphans_m_.
		std::unique_lock mm(mm_);
		std::lock_guard arena(arena_.mutex());
		std::array<std::unique_lock<std::mutex>, slot_count> slots;
		for (std::size_t i = 0; i < slot_count; i++)
			slots[i] = std::unique_lock(slots_[i].m);
		std::lock_guard orphans(orphans_m_);

		pid = ::fork();
	}
	if (pid == 0) {
		// Dies with this thread (and so with the process) at the latest.
		::prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (::getppid() != parent)
			::_exit(0);
		child_main(c);
	}
	if (pid < 0)
		return;

	int st = 0;
	const std::int64_t until = now_ns() + 60'000'000'000LL;
	pid_t got = 0;
	while ((got = ::waitpid(pid, &st, WNOHANG)) == 0 && now_ns() < until)
		std::this_thread::sleep_for(2ms);
	if (got == 0) {
		std::ifstream f("/proc/" + std::to_string(pid) + "/stack");
		std::stringstream stack;
		stack << f.rdbuf();
		::kill(pid, SIGKILL);
		::waitpid(pid, &st, 0);
		fail(c, "fork child still running after 60 s; its kernel stack:\n" +
			stack.str() + "its last call:");
		return;
	}
	if ((WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) ||
	    (WIFEXITED(st) && WEXITSTATUS(st) != 0))
		fail(c, "fork child ended with status " + hex(static_cast<unsigned>(st)));
}

// A few calls from a child that inherited the parent's files (attached
// by the parent: EACCES), then it exits or kills itself.
void Worker::child_main(Ctx &c)
{
	c.child = true;
	// Ring mappings are VM_DONTCOPY: not in this process.
	for (auto &s : slots_)
		for (auto &ring : s.rings)
			(void)ring.map.release();
	for (auto &ring : orphans_)
		(void)ring.map.release();
	for (auto &s : slots_)
		s.rings.clear();
	orphans_.clear();

	try {
		const auto n = c.rng.range(3, 40);
		for (std::uint64_t i = 0; i < n && !c.stop && !sh_.expired(); i++)
			step(c);
	} catch (const std::exception &e) {
		say(std::string("rv_fuzz: fork child: ") + e.what() + "\n");
		::_exit(3);
	}
	if (c.rng.chance(20))
		::raise(SIGKILL);
	::_exit(0);
}

} // namespace rvfuzz
