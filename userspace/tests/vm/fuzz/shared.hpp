// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// State shared by the fuzzer's processes, in one MAP_SHARED anonymous
// mapping made before the first fork: the call budget, the counters of
// the summary (so that a worker killed by SIGKILL loses nothing), the
// board on which workers publish buffers their peers on the other node
// may RDMA-write into, and per thread the call in flight (for the hang
// report). Everything in it is lock-free atomics: a process can die at
// any point without leaving a lock behind.
#ifndef RV_FUZZ_SHARED_HPP
#define RV_FUZZ_SHARED_HPP

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include <rv/mapping.hpp>

#include "ops.hpp"
#include "options.hpp"
#include "oracle.hpp"

namespace rvfuzz {

// CLOCK_MONOTONIC in nanoseconds (the same clock in every process).
[[nodiscard]] std::int64_t now_ns() noexcept;

// One call as issued, kept for the failure and hang reports.
struct CallRecord {
	std::uint32_t op = 0;
	std::int32_t fd = -1;
	std::uint64_t cmd = 0;		// ioctl command
	std::uint64_t ptr = 0;		// ioctl argument
	std::uint32_t ptr_kind = 0;	// PtrKind
	std::uint32_t len = 0;		// argument size
	std::uint32_t nbytes = 0;	// bytes saved below
	std::uint32_t pad = 0;
	std::array<std::uint64_t, 6> extra{};	// mmap, munmap, ... arguments
	std::array<std::uint8_t, 192> bytes{};	// the argument as passed
};

// "reg_mem fd=5 cmd=0xc0401bf3 (RV_IOCTL_REG_MEM) arg=valid 0x7f.. size=64"
// and the argument bytes in hex.
[[nodiscard]] std::string describe_call(const CallRecord &r);

struct ThreadStatus {
	std::atomic<std::int64_t> start_ns{0};	// of the call in flight, or 0
	std::atomic<std::int32_t> pid{0};
	std::atomic<std::int32_t> tid{0};
	std::atomic<std::uint64_t> seq{0};	// calls made
	CallRecord rec;				// written by its thread only
};

// An RDMA write target: a buffer registered with remote write by a
// process of the main job on node.
struct Target {
	std::atomic<std::uint32_t> seq{0};	// odd while being written
	std::atomic<std::uint32_t> node{0};
	std::atomic<std::uint32_t> rv_index{0};
	std::atomic<std::uint32_t> rkey{0};
	std::atomic<std::uint64_t> addr{0};
	std::atomic<std::uint64_t> len{0};
};

struct TargetCopy {
	std::uint32_t node = 0;
	std::uint32_t rv_index = 0;
	std::uint32_t rkey = 0;
	std::uint64_t addr = 0;
	std::uint64_t len = 0;
};

using Counter = std::atomic<std::uint64_t>;

struct Stats {
	std::array<Counter, op_count> calls{};
	std::array<Counter, op_count> ok{};
	std::array<std::array<Counter, max_errno>, op_count> err{};
	Counter failures{0};
	Counter workers_spawned{0};
	Counter workers_killed{0};	// SIGKILLed by the orchestrator
	Counter workers_died{0};	// SIGKILLed or _exit()ed themselves
	Counter workers_crashed{0};	// any other signal or exit status
	Counter hangs{0};
	Counter ring_events{0};		// events read from event rings
	Counter post_ok_events{0};	// RV_WC_RDMA_WRITE with status 0
	Counter recv_events{0};		// RV_WC_RECV_RDMA_WITH_IMM
};

inline constexpr std::size_t board_size = 64;

struct Shared {
	std::atomic<std::uint64_t> done{0};	// calls completed
	std::uint64_t limit = 0;
	std::int64_t deadline_ns = 0;		// 0: no time bound
	std::atomic<bool> stop{false};
	Stats st;
	std::array<Target, board_size> board{};
	std::atomic<std::uint64_t> board_next{0};
	std::array<std::array<ThreadStatus, max_threads>, max_procs> threads{};

	// May another call start? False once the budget (calls completed;
	// those in flight may take the total a little past it) or the time
	// is used up.
	bool reserve() noexcept;
	// The time is up (or stop was set).
	[[nodiscard]] bool expired() const noexcept;

	void publish(const TargetCopy &t) noexcept;
	// A consistent copy of entry i, if it holds one.
	[[nodiscard]] bool read_target(std::size_t i, TargetCopy &out) const noexcept;

	// A call (or side action) ended with err (0: success).
	void count(Op op, int err) noexcept;
};

// Owns the shared mapping.
class SharedMap {
public:
	SharedMap();
	~SharedMap();
	SharedMap(const SharedMap &) = delete;
	SharedMap &operator=(const SharedMap &) = delete;

	[[nodiscard]] Shared &get() const noexcept { return *sh_; }

private:
	rv::Mapping map_;
	Shared *sh_ = nullptr;		// placed in map_
};

// The summary: text (a table) or JSON.
[[nodiscard]] std::string summary_text(const Shared &sh, const Options &o,
				       double elapsed_s);
[[nodiscard]] std::string summary_json(const Shared &sh, const Options &o,
				       double elapsed_s);
// Calls made (the sum of the per-op counters of the calls).
[[nodiscard]] std::uint64_t total_calls(const Shared &sh) noexcept;

} // namespace rvfuzz

#endif // RV_FUZZ_SHARED_HPP
