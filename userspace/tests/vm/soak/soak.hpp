// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: what the controller and the worker processes share.
//
// Every worker is both a receiver and a sender. As a receiver it owns
// `slots` buffers, each registered with REG_MEM, and grants them one at a
// time to random senders on the other node (Grant: addr, rkey, length and
// a tag that the sender puts in the immediate data). A sender writes one
// message into a granted buffer, re-posting it after an error completion
// until one completes successfully, and then hands the buffer back
// (Release: which message, where, after how many attempts). Only then may
// the receiver verify it, reuse it or withdraw it (munmap/mmap and
// re-register: MR churn), so no write can be aimed at a buffer that was
// withdrawn. Unused grants are handed back (Release with used = 0) when
// the run stops.
//
// The controller is the parent of the workers: it routes Grant and
// Release between them (each worker has one socketpair to it), flaps a
// link, and sums up the reports. With two VMs (--two-vm) each VM runs a
// controller with its own node's workers; the two are joined by a TCP
// connection (ControlLink) that carries the Grants and Releases whose
// destination is on the other node, the phases of the run and, at the
// end, each node's sums (Ctl* below), so that both check every invariant.
#ifndef RV_SOAK_SOAK_HPP
#define RV_SOAK_SOAK_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

namespace rv::soak {

using rv::test::Channel;
using rv::test::Msg;
using rv::test::Node;

// ------------------------------------------------------------ data

// A 64-bit mix (splitmix64 finalizer), for seeds and the pattern.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

// Word w (bytes 8w..8w+7, little endian) of message seq of sender: byte
// 0 a hash of the rest (so that no byte of a short message is a
// constant), then the sender (8 bits), seq (24 bits) and w (24 bits). A
// word that is wrong tells whose data it is instead (pattern_decode()).
[[nodiscard]] constexpr std::uint64_t pattern_word(std::uint32_t sender,
						   std::uint64_t seq,
						   std::uint64_t w) noexcept
{
	const std::uint64_t id = (std::uint64_t{sender & 0xffu} << 8) |
				 ((seq & 0xffffffu) << 16) | ((w & 0xffffffu) << 40);
	return id | (mix64(id) & 0xff);
}

// Largest message: word indexes must fit in 24 bits.
inline constexpr std::uint64_t max_message = 16ULL << 20;

void pattern_fill(std::byte *dst, std::uint64_t len, std::uint32_t sender,
		  std::uint64_t seq) noexcept;

struct PatternCheck {
	std::uint64_t bad_bytes = 0;	// bytes that differ
	std::uint64_t first_bad = 0;	// offset of the first one
	std::uint64_t want = 0;		// the word there, expected
	std::uint64_t found = 0;	// and found (partial at the end)
};
[[nodiscard]] PatternCheck pattern_check(const std::byte *p, std::uint64_t len,
					 std::uint32_t sender,
					 std::uint64_t seq) noexcept;

// "sender S seq Q word W" of a word, or "not a pattern word".
[[nodiscard]] std::string pattern_decode(std::uint64_t word);

// ------------------------------------------------------------ messages

// Lets a channel queue many messages before a send blocks: the controller
// routes every grant and release, and a worker and the controller must
// never both wait for the other to read.
void grow_socket_buffers(int fd) noexcept;

enum SoakMsg : std::uint32_t {
	sm_ready = rv::test::msg_user + 20,	// Ready: worker connected
	sm_go,			// start sending and granting
	sm_grant,		// Grant, receiver -> sender (routed)
	sm_release,		// Release, sender -> receiver (routed)
	sm_progress,		// Progress, every two seconds
	sm_stop,		// no new messages; finish what is in flight
	sm_drained,		// the worker has nothing in flight
	sm_finish,		// report now
	sm_report_send,		// SendReport
	sm_report_recv,		// RecvReport
	sm_report_misc,		// MiscReport
	sm_conn_stats,		// rv::ConnStats of the node's connection
	sm_exit,		// close everything and exit
	sm_note,		// text: a failure the run cannot go on with
	sm_abort,		// as sm_stop, and write nothing again
};

// Between the two controllers of --two-vm (besides sm_grant and
// sm_release, forwarded as they are).
enum CtlMsg : std::uint32_t {
	ctl_hello = rv::test::msg_user + 60,	// CtlHello, both ways
	ctl_ping,		// every second: the peer is alive
	ctl_ready,		// CtlReady: the node's workers connected (or not)
	ctl_go,			// a -> b: start
	ctl_stop,		// CtlStop: no new messages (either way)
	ctl_drained,		// CtlStop: the node has nothing in flight
	ctl_flap,		// CtlFlap: a link flap done (by the flapping node)
	ctl_node_send,		// SendReport: the node's sums
	ctl_node_recv,		// RecvReport
	ctl_node_conn,		// rv::ConnStats: the node's connection
	ctl_node_misc,		// CtlNode
	ctl_failure,		// text: an invariant broken that only it saw
	ctl_results_end,	// the node's results are complete
	ctl_bye,		// about to close
};

// What both controllers must agree on; a sends the job key.
struct CtlHello {
	std::uint32_t version = 1;
	std::uint32_t node = 0;		// the sender's
	std::uint32_t procs = 0;
	std::uint32_t slots = 0;
	std::uint32_t window = 0;
	std::uint32_t churn = 0;
	std::uint64_t max_size = 0;
	std::uint64_t seed = 0;
	double seconds = 0;
	double flap_interval = 0;
	std::uint32_t flap_node = 0;
	std::uint32_t flap_drop = 0;
	std::uint32_t reconnect_timeout = 0;
	std::uint32_t resv = 0;
	rv::JobKey key{};
};

struct CtlReady {
	std::uint32_t ok = 0;		// every worker connected
	std::uint32_t resv = 0;
};

struct CtlStop {
	std::uint32_t abort = 0;	// stop: called off; drained: timed out
	std::uint32_t resv = 0;
};

struct CtlFlap {
	double start_s = 0;		// since the flapping node's start
	double up_s = 0;
	double active_s = 0;
	std::uint32_t down_ms = 0;
	std::uint32_t resv = 0;
	char error[256] = {};
};

// A node's numbers that are not in its SendReport/RecvReport sums.
struct CtlNode {
	std::uint64_t overflow = 0;
	std::uint64_t stats_disagree = 0;
	std::uint64_t min_sent = 0;
	std::uint64_t min_verified = 0;
	std::uint64_t rx_before = 0;
	std::uint64_t rx_after = 0;
	std::uint64_t conn_count_delta = 0;
	std::uint64_t dropped = 0;	// grants/releases it could not route
	std::uint32_t recoveries = 0;
	std::uint32_t have_cs = 0;
	std::uint32_t reported = 0;	// every worker reported
	std::uint32_t after_last_flap = 0;	// a success after the last flap
	char dev[64] = {};
};

// Workers are numbered node * procs_per_node + i.
struct Route {
	std::uint16_t src = 0;
	std::uint16_t dst = 0;
	std::uint32_t resv = 0;
};

struct Ready {
	std::uint32_t rv_index = 0;
	std::uint32_t num_conn = 0;
	std::uint64_t conn_handle = 0;
	std::uint64_t max_fmr_size = 0;
};

struct Grant {
	Route route;
	std::uint32_t tag = 0;		// immediate payload
	std::uint32_t rv_index = 0;	// the receiver's
	std::uint64_t addr = 0;
	std::uint64_t length = 0;
	std::uint32_t rkey = 0;
	std::uint32_t resv = 0;
};

struct Release {
	Route route;
	std::uint32_t tag = 0;
	std::uint32_t attempts = 0;	// posts of the message
	std::uint64_t seq = 0;
	std::uint64_t len = 0;
	std::uint64_t dst_off = 0;
	std::uint32_t used = 0;		// 1; 0: handed back unused; 2: abandoned
	std::uint32_t resv = 0;
};

struct Progress {
	std::uint64_t sent = 0;		// messages completed successfully
	std::uint64_t verified = 0;
	std::uint64_t bytes_verified = 0;
	std::uint64_t cqe_err = 0;
	std::uint64_t post_eagain = 0;
};

struct SendReport {
	std::uint64_t grants = 0;	// received
	std::uint64_t returned = 0;	// handed back unused
	std::uint64_t started = 0;	// messages
	std::uint64_t messages = 0;	// completed successfully
	std::uint64_t bytes = 0;	// of those
	std::uint64_t posts = 0;	// successful POST_RDMA_WR_IMMED
	std::uint64_t post_eagain = 0;
	std::uint64_t post_nocredit = 0;	// EBUSY, ENOMEM
	std::uint64_t post_eio = 0;
	std::uint64_t post_other = 0;
	std::uint64_t cqe_ok = 0;
	std::uint64_t cqe_err = 0;
	std::uint64_t cqe_err_flush = 0;	// of which IB_WC_WR_FLUSH_ERR
	std::uint64_t cqe_unknown = 0;	// no such post outstanding
	std::uint64_t cqe_bad = 0;	// wrong conn_handle or byte_len
	std::uint64_t reposts = 0;	// after an error completion
	std::uint64_t outstanding_end = 0;	// posts without completion
	std::uint64_t active_end = 0;	// messages never finished
	std::uint64_t buf_churn = 0;	// source buffers replaced
	std::uint64_t sub_mr = 0;	// messages sent through an MR of their own
	std::uint64_t last_ok_ns = 0;	// CLOCK_MONOTONIC of the last success
	std::uint64_t conn_count_first = 0;
	std::uint64_t conn_count_last = 0;
	std::int32_t last_other_errno = 0;
	std::uint32_t first_err_status = 0;
};

struct RecvReport {
	std::uint64_t grants = 0;	// issued
	std::uint64_t releases = 0;	// of used grants
	std::uint64_t returns = 0;	// of unused grants
	std::uint64_t events = 0;	// receive events
	std::uint64_t verified = 0;	// messages, first delivery
	std::uint64_t bytes_verified = 0;
	std::uint64_t reverified = 0;	// duplicates checked again
	std::uint64_t duplicates = 0;	// deliveries after the first
	std::uint64_t late_duplicates = 0;	// of which after the release
	std::uint64_t excess_events = 0;	// more deliveries than posts
	std::uint64_t stray_events = 0;	// for no grant of this process
	std::uint64_t stray_releases = 0;
	std::uint64_t bad_status = 0;
	std::uint64_t bad_index = 0;
	std::uint64_t bad_len = 0;
	std::uint64_t bad_conn_handle = 0;
	std::uint64_t lost = 0;		// released, never delivered
	std::uint64_t corrupt_msgs = 0;
	std::uint64_t corrupt_bytes = 0;
	std::uint64_t open_end = 0;	// grants neither released nor returned
	std::uint64_t abandoned = 0;	// by a sender that could not go on
	std::uint64_t churn_remap = 0;	// DEREG, munmap, mmap, REG_MEM
	std::uint64_t churn_fixed = 0;	// mmap MAP_FIXED over the MR's pages
	std::uint64_t churn_dontneed = 0;	// MADV_DONTNEED under the MR
	std::uint64_t churn_evict = 0;	// DEREG, EVICT, REG_MEM
	std::uint64_t rereg = 0;	// DEREG, REG_MEM (a cache hit)
	std::uint64_t stale_mr = 0;	// REG_MEM gave the replaced pages' MR
	std::uint32_t first_bad_sender = 0;
	std::uint32_t resv = 0;
	std::uint64_t first_bad_seq = 0;
	std::uint64_t first_bad_offset = 0;
	std::uint64_t first_bad_want = 0;
	std::uint64_t first_bad_found = 0;
};

struct MiscReport {
	std::uint64_t overflow = 0;	// ring overflow_cnt
	std::uint64_t seen_send_ok = 0;	// events read from the ring
	std::uint64_t seen_send_err = 0;
	std::uint64_t seen_recv = 0;
	rv::EventStats kernel{};	// GET_EVENT_STATS
	std::uint32_t event_stats_agree = 0;
	std::int32_t result = 0;	// 0 or an errno
	char error[200] = {};
};

static_assert(sizeof(SendReport) <= sizeof(Msg::body));
static_assert(sizeof(RecvReport) <= sizeof(Msg::body));
static_assert(sizeof(MiscReport) <= sizeof(Msg::body));
static_assert(sizeof(rv::ConnStats) <= sizeof(Msg::body));
static_assert(sizeof(Grant) <= sizeof(Msg::body));
static_assert(sizeof(Release) <= sizeof(Msg::body));
static_assert(sizeof(CtlHello) <= sizeof(Msg::body));
static_assert(sizeof(CtlFlap) <= sizeof(Msg::body));
static_assert(sizeof(CtlNode) <= sizeof(Msg::body));

// ------------------------------------------------------------ a worker

struct WorkerConfig {
	unsigned id = 0;		// node * procs + i
	unsigned procs = 16;		// per node
	Node local;
	Node remote;
	rv::JobKey key{};
	rv::test::SideConfig side;
	std::uint64_t seed = 1;
	unsigned slots = 4;		// receive buffers
	unsigned window = 4;		// messages in flight
	std::uint64_t max_len = 1ULL << 20;
	std::uint64_t buf_len = (1ULL << 20) + (64ULL << 10);
	unsigned churn_pct = 25;	// of buffer reuses that replace it
	bool small_pages = false;	// buffers start in small pages
	unsigned sub_mr_pct = 25;	// messages sent through their own MR
	unsigned lost_after_s = 30;	// released but not delivered: lost
};

// The worker process: connects, reports Ready, waits for sm_go and runs
// until sm_finish; sends its reports and exits on sm_exit. Returns the
// exit code.
int run_worker(Channel &ch, const WorkerConfig &cfg);

} // namespace rv::soak

#endif // RV_SOAK_SOAK_HPP
