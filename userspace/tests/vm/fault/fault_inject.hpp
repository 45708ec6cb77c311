// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Per-task fault injection (Documentation/fault-injection): the kernel's
// failslab and fail_page_alloc, driven through /proc/thread-self/fail-nth.
//
//   FailNth    writing N arms the calling thread: the Nth fault-injection
//              check it passes (any slab or page allocation the knobs do
//              not exclude) fails. Reading it back tells whether that
//              happened: 0 means a fault was injected, anything else is
//              what was left of N (the call had fewer checks than N).
//   KernelLog  reads the kernel log (/dev/kmsg) as it grows: names the
//              allocation that failed in an injection, from the stack the
//              fault-injection code dumps with verbose >= 2, and finds
//              kernel bug reports (BUG:, WARNING:, KASAN:, ...).
//   FaultKnobs the debugfs knobs that decide which allocations are
//              candidates (/sys/kernel/debug/failslab, fail_page_alloc).
#ifndef RV_TEST_VM_FAULT_INJECT_HPP
#define RV_TEST_VM_FAULT_INJECT_HPP

#include <optional>
#include <string>
#include <vector>

#include <rv/unique_fd.hpp>

namespace rv::test::fault {

class FailNth {
public:
	// Opens /proc/thread-self/fail-nth of the calling thread (which must
	// be the thread that arms it). With burst > 1 also its make-it-fail
	// and the debugfs "times" of failslab and fail_page_alloc, which
	// BurstMode must have prepared. Throws std::system_error.
	explicit FailNth(unsigned burst = 1);

	// Arms: the nth check of this thread fails (n > 0); with burst B,
	// so do the checks after it until B more have failed per injector
	// (the one that failed the nth: B - 1 more). Never allocates or
	// touches new memory in the task: safe right before the system call
	// under test. Throws std::system_error.
	void arm(unsigned n);

	// Reads back and disarms. True if a fault was injected since arm().
	// Throws std::system_error.
	bool disarm();

	// What the kernel holds now (0 when disarmed or consumed).
	[[nodiscard]] unsigned value();

	[[nodiscard]] unsigned burst() const noexcept { return burst_; }

private:
	unsigned burst_;
	rv::UniqueFd fd_;
	rv::UniqueFd make_it_fail_;
	rv::UniqueFd times_slab_;
	rv::UniqueFd times_page_;
};

// For FailNth with burst > 1: failslab and fail_page_alloc fail every
// check of a task with make-it-fail set while their "times" lasts
// (probability 100, task-filter Y, times 0 between injections). Restores
// the knobs when destroyed. Throws std::system_error.
class BurstMode {
public:
	BurstMode();
	~BurstMode();
	BurstMode(const BurstMode &) = delete;
	BurstMode &operator=(const BurstMode &) = delete;

private:
	std::vector<std::pair<std::string, std::string>> saved_;
};

// Where one injected fault hit, from the kernel log.
struct Site {
	std::string injector;		// "failslab", "fail_page_alloc", or ""
	std::vector<std::string> frames;	// "func [module]", innermost first
	// What the allocation was for, in a word: "kmemleak" (its own
	// object metadata; kmemleak carries on without), "kasan"
	// (KASAN's stack depot), or "" (the caller's own allocation).
	std::string kind;

	// First frame that is not the allocator itself (the allocating
	// function), and the first rv frame below it, e.g.
	// "rxe_alloc_pd [rdma_rxe] < rv_job_get [rv]". "silent" when nothing
	// was logged (a __GFP_NOWARN allocation, or verbose < 2).
	[[nodiscard]] std::string summary() const;
	// The module of the allocating frame ("rv", "ib_core", "rdma_rxe",
	// "kernel" for built-in code), or "" if unknown.
	[[nodiscard]] std::string owner() const;
};

// The kernel log, read as it grows (/dev/kmsg; without it, as when not
// root, nothing is ever read).
class KernelLog {
public:
	// Opens /dev/kmsg at its end: what was logged before is skipped.
	KernelLog();

	[[nodiscard]] bool available() const noexcept { return fd_.valid(); }

	// The messages logged since the last call (records overwritten
	// meanwhile are lost).
	std::vector<std::string> read_new();

	// The first injected fault among records, if any.
	static std::optional<Site> find_site(const std::vector<std::string> &records);

	// The records that tools/testing/vm/dmesg-check fails a run for
	// (BUG:, WARNING:, KASAN:, ...), each with up to 16 records after
	// it (its stack), joined with " | ".
	static std::vector<std::string> bad_lines(const std::vector<std::string> &records);

private:
	rv::UniqueFd fd_;
};

// The debugfs knobs of one fault-injection attribute directory.
struct FaultKnobs {
	std::string dir;		// /sys/kernel/debug/failslab
	bool present = false;
	std::optional<long> probability;
	std::optional<long> verbose;
	std::optional<long> ignore_gfp_wait;
	std::optional<long> ignore_gfp_highmem;	// fail_page_alloc
	std::optional<long> min_order;		// fail_page_alloc

	static FaultKnobs read(const std::string &dir);
	[[nodiscard]] std::string str() const;
};

// The knobs of failslab and fail_page_alloc; problems[] says what keeps
// fail-nth from reaching GFP_KERNEL allocations (empty: ready).
struct FaultSetup {
	FaultKnobs failslab;
	FaultKnobs fail_page_alloc;
	bool fail_nth = false;		// /proc/thread-self/fail-nth exists
	std::vector<std::string> problems;

	static FaultSetup probe();
	[[nodiscard]] int verbose() const;	// the smaller of the two
};

} // namespace rv::test::fault

#endif // RV_TEST_VM_FAULT_INJECT_HPP
