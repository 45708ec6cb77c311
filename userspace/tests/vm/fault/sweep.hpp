// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The fault-injection sweep of rv_fault_sweep: for an operation (one
// system call on /dev/rv), n = 1, 2, 3, ...: set up what the call needs
// without faults, arm fail-nth = n on the calling thread, make the call,
// disarm, and check what happened. The sweep of an operation ends with
// the first n whose call ran without consuming the fault: the call has
// n - 1 fault-injection sites on this path.
//
//   Point   what one n did: the injection (consumed, errno, where) and
//           the problems the checks found.
//   Op      one operation: its setup for the whole sweep, one point, the
//           checks after the sweep, and the errnos besides ENOMEM that an
//           injected fault may make it return (each with the reason).
//   Ctx     what the points share: the nodes, fail-nth, the kernel log
//           reader, the resource counter, the peer process.
//   Local   this process's side on node 0: an attached file, its event
//           ring and its connection to node 1.
//   PeerNode  a child process on node 1 (never under fault injection)
//           that joins a job on request and connects back, with a
//           registered buffer the local side writes into.
#ifndef RV_TEST_VM_FAULT_SWEEP_HPP
#define RV_TEST_VM_FAULT_SWEEP_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include "../conn_util.hpp"
#include "../vm_env.hpp"
#include "fault_inject.hpp"
#include "rdma_res.hpp"

namespace rv::test::fault {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The job parameters of every attach of the sweep: two QPs per
// connection (so that CONN_CONNECT fails on the first and on a later
// one), small queues (order-0 allocations where possible).
inline constexpr std::uint8_t job_num_conn = 2;
inline constexpr std::uint32_t job_q_depth = 16;
inline constexpr std::uint32_t job_cq_entries = 64;
inline constexpr std::uint8_t job_index_bits = 9;

// errno -> "ENOMEM" (strerrorname_np), "0" for success.
[[nodiscard]] std::string errname(int err);

// An errno an injected fault may make an operation return, and why.
struct Allowed {
	int err;
	const char *why;
};

struct Point {
	unsigned n = 0;
	bool skipped = false;		// --skip
	bool injected = false;		// the armed call was made
	bool consumed = false;		// a fault was injected
	int err = 0;			// errno of the call, 0: it succeeded
	std::optional<Site> site;	// where, if logged
	std::vector<std::string> problems;
	std::vector<std::string> notes;
};

// Thrown by require(): the point cannot go on.
struct Abort : std::runtime_error {
	using std::runtime_error::runtime_error;
};

class PeerNode;

struct Options {
	bool json = false;
	std::string json_file;
	std::set<std::string> only;
	std::set<std::pair<std::string, unsigned>> skip;
	unsigned max_n = 400;
	unsigned burst = 1;		// FailNth burst
	milliseconds settle{30000};	// async teardown after a point
	milliseconds connect_timeout{120000};
	bool quiet = false;
};

class Ctx {
public:
	explicit Ctx(const Options &opts);
	~Ctx();
	Ctx(const Ctx &) = delete;
	Ctx &operator=(const Ctx &) = delete;

	// After fork: fail-nth, the kernel log and netlink of this process.
	void reopen();

	// Arms fail-nth = pt.n, runs call (which returns 0 or an errno and
	// must not allocate in the kernel outside the call under test),
	// disarms; fills pt.injected, consumed, err and site. Kernel bug
	// reports logged before or during the call become problems.
	template <typename F>
	void inject(Point &pt, F &&call)
	{
		check_log(pt.problems, "before the call");
		fail_->arm(pt.n);
		int err;
		try {
			err = call();
		} catch (...) {
			(void)fail_->disarm();
			throw;
		}
		pt.consumed = fail_->disarm();
		pt.err = err;
		pt.injected = true;
		const std::vector<std::string> recs = log_->read_new();
		if (pt.consumed)
			pt.site = KernelLog::find_site(recs);
		add_bad_lines(pt.problems, recs, "during the call");
	}

	// Kernel bug reports logged since the last look become problems
	// (those already in problems are not added again).
	void check_log(std::vector<std::string> &problems, const std::string &when);

	// The rv objects of node 0's device now.
	ResCounts res0() { return res_->count(n0.dev); }
	// Waits (at most opts.settle) until res0() == want; a problem in pt
	// (what: after which step) if it does not get there.
	bool settle(Point &pt, const ResCounts &want, const std::string &what);
	bool settle(std::vector<std::string> &problems, const ResCounts &want,
		    const std::string &what);

	// The peer on node 1, started on first use; throws if there is no
	// node 1.
	PeerNode &peer();
	[[nodiscard]] bool have_peer_node() const noexcept { return have_n1; }
	void stop_peer();

	const Options &opts;
	Node n0;
	Node n1;
	bool have_n1 = false;
	std::uint64_t next_wr_id = 1;

private:
	std::unique_ptr<FailNth> fail_;
	static void add_bad_lines(std::vector<std::string> &problems,
				  const std::vector<std::string> &records,
				  const std::string &when);

	std::unique_ptr<KernelLog> log_;
	std::unique_ptr<RdmaRes> res_;
	std::unique_ptr<PeerNode> peer_;
};

// expect(): a problem if !ok. require(): also ends the point.
void expect(Point &pt, bool ok, const std::string &what);
void require(Point &pt, bool ok, const std::string &what);

// Attach parameters of the sweep's jobs on node n.
[[nodiscard]] rv::AttachParams job_params(const Node &n, const rv::JobKey &key);

// Where the peer's buffer is.
struct PeerInfo {
	std::uint64_t addr = 0;
	std::uint64_t length = 0;
	std::uint32_t rkey = 0;
	std::uint32_t rv_index = 0;
	std::int32_t err = 0;		// the join failed: errno
	char what[200] = {};
};

class PeerNode {
public:
	PeerNode(const Node &self, const Node &remote);
	~PeerNode();
	PeerNode(const PeerNode &) = delete;
	PeerNode &operator=(const PeerNode &) = delete;

	// Attaches to a job with key on its node (job_params), creates and
	// connects its connection to this node, registers a buffer for
	// our writes. Leaves the previous job first. Throws on failure.
	PeerInfo join(const rv::JobKey &key);
	// Closes its file.
	void leave();

private:
	Peer p_;
};

class Local {
public:
	// Opens the device, declares the header's ABI and attaches with
	// job_params(local, key). Throws std::system_error.
	Local(const Node &local, const Node &remote, const rv::JobKey &key);

	// Maps the event ring.
	void map_ring();
	// CONN_CREATE / CONN_CONNECT with remote_of() / path_of().
	void create();
	void connect();
	bool wait_connected(milliseconds timeout);

	// Posts one write of min(len, 4096) bytes from mr to the peer's
	// buffer and waits for its completion in the ring: "" when it
	// completed successfully, else what went wrong.
	std::string write_and_wait(const rv::MrInfo &mr, const PeerInfo &to,
				   std::uint64_t wr_id, milliseconds timeout);
	// Waits for the completion of wr_id: its status, or nullopt.
	std::optional<rv::Event> wait_event(std::uint64_t wr_id, milliseconds timeout);

	Node local;
	Node remote;
	rv::Device dev;
	rv::Attach att;
	rv::Mapping ring;
	rv::RingView view;
	rv::Connection conn;
};

// A MAP_SHARED, populated buffer (not copied on write across fork, so
// that forking never invalidates its MRs).
[[nodiscard]] rv::Mapping shared_buffer(std::size_t len);

class Op {
public:
	virtual ~Op() = default;
	[[nodiscard]] virtual const char *name() const = 0;
	[[nodiscard]] virtual const char *what() const = 0;
	[[nodiscard]] virtual bool needs_peer() const { return false; }
	// Errnos besides ENOMEM an injected fault may return, with the why.
	[[nodiscard]] virtual std::vector<Allowed> allowed() const { return {}; }
	// Each point runs in a forked child (the operation is the first of
	// its kind in a process).
	[[nodiscard]] virtual bool fork_per_point() const { return false; }
	// The POST path must not allocate: any consumed fault is a problem.
	[[nodiscard]] virtual bool must_not_allocate() const { return false; }

	// State for the whole sweep; the rv objects point() must leave
	// behind (its baseline).
	virtual ResCounts begin(Ctx &ctx) { return ctx.res0(); }
	virtual void point(Ctx &ctx, Point &pt) = 0;
	virtual void end(Ctx &, std::vector<std::string> &) {}
};

struct OpResult {
	std::string name;
	std::string what;
	bool skipped = false;		// not run (e.g. no node 1)
	std::string skip_reason;
	std::vector<Point> points;
	std::vector<std::string> problems;	// of the whole sweep
	std::vector<Allowed> allowed;
	double seconds = 0;

	[[nodiscard]] bool ok() const;
	[[nodiscard]] unsigned sites() const;		// consumed points
	[[nodiscard]] unsigned failed_calls() const;	// consumed, call failed
	[[nodiscard]] unsigned tolerated() const;	// consumed, call succeeded
	[[nodiscard]] std::string summary() const;
};

// Runs the sweep of op; prints one line per point unless quiet.
OpResult run_op(Ctx &ctx, Op &op);

// Every operation, in the order they run.
std::vector<std::unique_ptr<Op>> all_ops();

} // namespace rv::test::fault

#endif // RV_TEST_VM_FAULT_SWEEP_HPP
