// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// One fuzzing process: --threads threads that share a few /dev/rv files
// (slots) and race on them, the buffers of an Arena, and what they learnt
// from the module (attach, MR and connection handles, ring mappings).
// What a slot records is a hint, not the truth: another thread may have
// closed the file, its number may belong to a newer file, and the
// oracle never relies on it. Every call goes through issue(), which
// counts it, remembers it for the reports and checks it against the
// oracle.
//
// The process ends after a random number of calls (unless --skip kill):
// cleanly (threads joined, files closed), by _exit() with calls in
// flight, or by SIGKILL to itself; the orchestrator starts another.
#ifndef RV_FUZZ_WORKER_HPP
#define RV_FUZZ_WORKER_HPP

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <rv/mapping.hpp>
#include <rv/uapi.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "env.hpp"
#include "memory.hpp"
#include "oracle.hpp"
#include "options.hpp"
#include "rng.hpp"
#include "shared.hpp"

namespace rvfuzz {

// An MR as REG_MEM returned it.
struct MrRef {
	std::uint64_t handle = 0;
	std::uint64_t addr = 0;
	std::uint64_t len = 0;
	std::uint32_t access = 0;
	std::uint32_t rkey = 0;
};

// A connection handle as CONN_CREATE returned it.
struct ConnRef {
	std::uint64_t handle = 0;
	std::uint64_t conn_handle = 0;
	int remote = -1;		// node index, -1: not a bench node
	rv::Gid dgid{};
};

// An event ring mapping: owned, unmapped when dropped.
struct RingMap {
	rv::Mapping map;
	int prot = 0;
	bool whole = true;	// all of the ring, header included
	std::uint32_t next = 0;	// the next event to count
};

struct FdSlot {
	FdSlot() = default;
	FdSlot(const FdSlot &) = delete;
	FdSlot &operator=(const FdSlot &) = delete;
	~FdSlot();

	std::mutex m;
	std::atomic<int> fd{-1};	// owned
	// Hints about the file, under m.
	bool attached = false;
	bool main_job = false;		// attached to the main job, unmutated
	int node = -1;
	std::uint32_t rv_index = 0;
	std::uint32_t cq_entries = 0;
	std::uint32_t num_conn = 0;
	std::uint32_t abi = 0;		// ABI the file declared
	std::uint32_t attach_abi = 0;	// ... when it attached
	std::uint64_t max_fmr = 0;
	std::vector<MrRef> mrs;
	std::vector<ConnRef> conns;
	std::vector<RingMap> rings;

	// Back to the hints of a fresh file; the rings move to out.
	void forget(std::vector<RingMap> &out);
};

// A copy of a slot's hints.
struct Hint {
	int fd = -1;
	bool attached = false;
	bool main_job = false;
	int node = -1;
	std::uint32_t rv_index = 0;
	std::uint32_t cq_entries = 0;
	std::uint32_t num_conn = 0;
	std::uint32_t abi = 0;
	std::uint32_t attach_abi = 0;
	std::uint64_t max_fmr = 0;
};

class Worker {
public:
	static constexpr std::size_t slot_count = 4;

	Worker(const Options &o, const Env &env, Shared &sh, unsigned index,
	       unsigned gen);
	~Worker() = default;
	Worker(const Worker &) = delete;
	Worker &operator=(const Worker &) = delete;

	// Runs until the budget, the time or this process's lifetime is
	// used up. Returns the exit status, or does not return at all
	// (_exit, SIGKILL).
	int run();

private:
	struct Ctx {
		Ctx(unsigned t, std::uint64_t seed, ThreadStatus &status)
			: tid(t), rng(seed), ts(&status) {}

		unsigned tid;
		Rng rng;
		ArgBuf arg;
		ThreadStatus *ts;
		bool stop = false;
		bool child = false;	// in a fork child
	};

	struct Result {
		bool done = false;	// issued (false: the budget is gone)
		long ret = 0;
		int err = 0;
	};

	// worker.cpp: the process, its threads, issuing and checking calls
	void thread_main(unsigned tid);
	void step(Ctx &c);
	CallRecord &begin(Ctx &c, Op op, int fd);
	template <typename F>
	Result issue(Ctx &c, Op op, const Expect &e, F &&call);
	Result do_ioctl(Ctx &c, Op op, int fd, unsigned long cmd,
			std::span<const std::byte> in, PtrKind kind,
			std::span<std::byte> out = {});
	void check(Ctx &c, const Expect &e, long ret, int err);
	void fail(Ctx &c, const std::string &what);
	void trace(Ctx &c, const char *when, long ret = 0, int err = 0);
	FdSlot &pick_slot(Ctx &c);
	int pick_fd(Ctx &c, FdSlot &s);
	[[nodiscard]] Hint hint(FdSlot &s);
	[[nodiscard]] bool enabled(Op op) const noexcept { return !o_.skip.test(idx(op)); }
	[[nodiscard]] const Node *node(int i) const noexcept;
	[[nodiscard]] int other_node(int i) const noexcept;
	void op_fork(Ctx &c);
	[[noreturn]] void child_main(Ctx &c);

	// gen_ioctl.cpp: the ioctls
	void op_capability(Ctx &c, FdSlot &s, bool valid);
	void op_query_r2(Ctx &c, FdSlot &s);
	void op_attach(Ctx &c, FdSlot &s, Op op, bool valid);
	void op_reg_mem(Ctx &c, FdSlot &s, Op op, bool target);
	// REG_MEM's buffer: mostly in the arena; eph holds one made for it.
	[[nodiscard]] Range reg_mem_range(Ctx &c, FdSlot &s, bool target,
					  std::uint64_t max, rv::Mapping &eph);
	// REG_MEM's access flags and the fields it ignores or must refuse.
	void fill_reg_mem(Ctx &c, rv_mem_params_in &in, bool target);
	// A registered MR into s (and its target onto the board).
	void keep_mr(Ctx &c, FdSlot &s, int fd, const rv_mem_params_in &in,
		     const rv_mem_params_out &out);
	void op_dereg_mem(Ctx &c, FdSlot &s);
	void op_evict(Ctx &c, FdSlot &s);
	void op_cache_stats(Ctx &c, FdSlot &s);
	void op_event_stats(Ctx &c, FdSlot &s);
	bool op_conn_create(Ctx &c, FdSlot &s, bool valid);
	void op_conn_connect(Ctx &c, FdSlot &s, bool valid);
	void op_conn_connected(Ctx &c, FdSlot &s);
	void op_conn_count(Ctx &c, FdSlot &s);
	void op_conn_stats(Ctx &c, FdSlot &s);
	void op_post_write(Ctx &c, FdSlot &s);
	// A buffer of another process to write to over conn, into t
	// (false: none, or no conn).
	[[nodiscard]] bool post_target(Ctx &c, const ConnRef *conn, TargetCopy &t);
	// The local side of a post: in an MR of the slot, or made up.
	void post_local(Ctx &c, rv_post_write_params_in &in, const MrRef *mr);
	void op_ioctl_raw(Ctx &c, FdSlot &s);
	void fill_attach(Ctx &c, rv_attach_params_in &in, int node, bool alt);
	void mutate_attach(Ctx &c, rv_attach_params_in &in);
	std::uint32_t sanitize_access(std::uint64_t addr, std::uint64_t len,
				      std::uint32_t access);

	// gen_mm.cpp: files, mappings, the ring, the arena
	void op_open(Ctx &c, FdSlot &s);
	void op_close(Ctx &c, FdSlot &s);
	void op_dup(Ctx &c, FdSlot &s);
	void op_mmap(Ctx &c, FdSlot &s, bool valid);
	void op_munmap(Ctx &c, FdSlot &s);
	void op_mremap(Ctx &c, FdSlot &s);
	void op_ring_poll(Ctx &c, FdSlot &s);
	void op_arena(Ctx &c);
	void keep_orphan(RingMap r);

	const Options &o_;
	const Env &env_;
	Shared &sh_;
	const unsigned index_;
	const unsigned gen_;
	const std::uint64_t seed_;
	std::array<std::uint8_t, 16> main_key_{};
	std::array<std::uint32_t, op_count> weights_{};
	std::uint32_t weight_sum_ = 0;
	std::uint64_t lifetime_ = 0;	// calls, 0: unlimited

	// Held by arena operations that open a hole, and by mmaps that let
	// the kernel choose the address (they must not land in one). A plain
	// mutex: a fork child can unlock what its parent thread held (an
	// rwlock remembers the writer's tid).
	std::mutex mm_;
	Arena arena_;
	std::array<FdSlot, slot_count> slots_;
	std::mutex orphans_m_;
	std::vector<RingMap> orphans_;	// rings of closed slots

	std::atomic<bool> quit_{false};
	std::atomic<unsigned> running_{0};
	std::atomic<bool> error_{false};
	std::atomic<std::uint64_t> made_{0};
	std::atomic<unsigned> printed_{0};
};

// One call: takes it from the budget, records it as in flight, makes it
// (call returns < 0 with errno set on failure), counts and checks it.
template <typename F>
Worker::Result Worker::issue(Ctx &c, Op op, const Expect &e, F &&call)
{
	Result res;

	if (counts_as_call(op) && !sh_.reserve()) {
		c.stop = true;
		return res;
	}
	if (o_.trace)
		trace(c, "call");
	c.ts->start_ns.store(now_ns(), std::memory_order_relaxed);
	errno = 0;
	const long r = call();
	const int err = r < 0 ? (errno ? errno : max_errno - 1) : 0;
	c.ts->start_ns.store(0, std::memory_order_relaxed);
	c.ts->seq.fetch_add(1, std::memory_order_relaxed);
	made_.fetch_add(1, std::memory_order_relaxed);
	sh_.count(op, err);
	if (o_.trace)
		trace(c, "ret", r, err);
	res.done = true;
	res.ret = r;
	res.err = err;
	check(c, e, r, err);
	return res;
}

} // namespace rvfuzz

#endif // RV_FUZZ_WORKER_HPP
