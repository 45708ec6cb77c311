// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Helpers for the connection tests (test_conn*.cpp) and rv_conn_peer:
//
//   Side       one process's view of a node: its /dev/rv file attached
//              to the node's device, its event ring and its Connection to
//              the other node.
//   Channel    fixed-size messages over a stream socket (a socketpair
//              between forked processes, or TCP between two VMs).
//   Peer       a forked process running a function with a Channel back to
//              the parent; killed and reaped by its destructor.
//   send_transfer / recv_transfer
//              a verified data transfer of RDMA WRITEs with immediate
//              data: mixed sizes, unaligned offsets inside the MRs, a
//              window of slots whose reuse the receiver grants after it
//              has checked every byte; with tolerate_errors the sender
//              re-posts writes that completed in error (link down/up).
//              Each side registers its slots in MRs of at most
//              max_fmr_size, as PSM3 registers a large buffer.
//   LinkState  saves the routes and neighbours rxe-setup.sh put on a
//              netdev and puts them back after a link down/up (IPv4
//              flushes both when a link goes down).
#ifndef RV_TEST_VM_CONN_UTIL_HPP
#define RV_TEST_VM_CONN_UTIL_HPP

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <sys/types.h>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/event_ring.hpp>
#include <rv/unique_fd.hpp>
#include <rv/uapi.hpp>

#include "../support/subprocess.hpp"
#include "vm_env.hpp"

namespace rv::test {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ------------------------------------------------------------ environment

// A hw counter of port 1 of an RDMA device (rxe: rcvd_pkts, sent_pkts,
// ...); throws std::system_error if it cannot be read.
[[nodiscard]] std::uint64_t hw_counter(const std::string &dev,
				       const std::string &name);
[[nodiscard]] inline std::uint64_t rcvd_pkts(const std::string &dev)
{
	return hw_counter(dev, "rcvd_pkts");
}

// /sys/module/rv/parameters/NAME as a number; nullopt if unreadable.
[[nodiscard]] std::optional<std::uint64_t> module_param(const std::string &name);

// The num_conn a job attaching with num_conn gets (0: the module default).
[[nodiscard]] unsigned effective_num_conn(std::uint8_t num_conn);

// The CONN_CREATE input for local -> remote: RoCE v2, dgid = remote GID,
// sgid_index = local GID index, port 1, rem_addr = remote IPv4.
[[nodiscard]] rv::Remote remote_of(const Node &local, const Node &remote);
// The path record PSM3 would pass: sgid local, dgid remote, MTU 1024.
[[nodiscard]] rv::PathRecord path_of(const Node &local, const Node &remote);

// True if local is the passive (listening) side towards remote: the side
// with the smaller GID listens, the other sends the CM REQs.
[[nodiscard]] bool listens(const Node &local, const Node &remote);

// Objects of `rdma resource show TYPE` (pd, cq, qp, mr) on device dev
// that the kernel module rv owns; nullopt if the rdma tool is missing or
// fails.
[[nodiscard]] std::optional<unsigned> rv_rdma_res(const std::string &type,
						  const std::string &dev);
// rv's kernel RC QPs on dev: rv_rdma_res("qp", dev): those of the
// connections and each job-device's registration QP (connected to itself).
[[nodiscard]] std::optional<unsigned> rv_rc_qps(const std::string &dev);

// Polls pred every 10 ms until it is true (true) or timeout (false).
bool wait_until(const std::function<bool()> &pred, milliseconds timeout);

// Waits until the rcvd_pkts of every device in devs stayed the same for
// quiet (what earlier tests left, e.g. CM retransmissions, has died
// down); false after timeout.
bool wait_quiet(const std::vector<std::string> &devs, milliseconds quiet,
		milliseconds timeout);

// Closes every inherited descriptor of device_path() in this (forked)
// process, so that the parent's rv files are not kept open by it.
void close_inherited_rv_files();

// ------------------------------------------------------------ raw ioctls

// Errno (0 = success) of the raw ioctls, for checking exact errors.
int conn_create_errno(int fd, rv_conn_create_params &p);
int conn_connect_errno(int fd, std::uint64_t handle, const ib_user_path_rec &path);
// CONN_CONNECTED: the ioctl's return value (0 or 1) in *value when it
// succeeds.
int conn_connected_errno(int fd, std::uint64_t handle, int *value = nullptr);
int conn_count_errno(int fd, std::uint64_t handle, std::uint8_t index,
		     std::uint32_t *count = nullptr);
int conn_stats_errno(int fd, std::uint64_t handle, std::uint8_t index,
		     rv_conn_get_stats_params_out *out = nullptr);
int post_write_errno(int fd, const rv_post_write_params_in &in,
		     rv_post_write_params_out *out = nullptr);

// ------------------------------------------------------------ one side

struct SideConfig {
	std::uint8_t num_conn = 0;		// 0: module default
	std::uint8_t index_bits = 9;
	std::uint32_t reconnect_timeout = 30;	// s
	std::uint32_t hb_interval = 1000;	// ms
	std::uint32_t cq_entries = 1024;
	std::uint32_t q_depth = 0;
};

class Side {
public:
	// Opens device_path(), declares the ABI, attaches to local's device
	// with key and maps the event ring (if cq_entries > 0).
	Side(const Node &local, const Node &remote, const rv::JobKey &key,
	     const SideConfig &cfg = {});

	Side(Side &&) noexcept = default;
	Side &operator=(Side &&) noexcept = default;

	// CONN_CREATE to remote (once).
	rv::Connection &create();
	// CONN_CONNECT with path_of(local, remote).
	void connect();
	// create() if not done, connect(), wait_connected(timeout). Throws
	// std::system_error(ETIMEDOUT) if not connected in time.
	void create_and_connect(milliseconds timeout);
	// Throws std::system_error(ETIMEDOUT) if not connected in time.
	void wait_connected(milliseconds timeout);

	[[nodiscard]] const Node &local() const noexcept { return local_; }
	[[nodiscard]] const Node &remote() const noexcept { return remote_; }
	[[nodiscard]] rv::Device &dev() noexcept { return dev_; }
	[[nodiscard]] int fd() const noexcept { return dev_.fd(); }
	[[nodiscard]] rv::EventRing &ring() noexcept { return ring_; }
	[[nodiscard]] rv::Connection &conn() noexcept { return conn_; }
	[[nodiscard]] const rv::Attach &attach() const noexcept { return attach_; }
	[[nodiscard]] const SideConfig &config() const noexcept { return cfg_; }
	[[nodiscard]] unsigned num_conn() const noexcept { return num_conn_; }

	// Immediate data that reaches the process with rv_index on the peer.
	[[nodiscard]] std::uint32_t immed(std::uint32_t rv_index,
					  std::uint32_t low) const noexcept;

	// Sum of conn_count over the QPs (0 for a QP whose ioctl fails).
	[[nodiscard]] std::uint64_t conn_count_sum();

	// Every event in the ring now.
	std::vector<rv::Event> drain();
	// Events until n arrived or timeout, then those that come within
	// linger more (ones that should not: a duplicate, a stray
	// completion); returns what arrived.
	std::vector<rv::Event> wait_events(std::size_t n, milliseconds timeout,
					   milliseconds linger = milliseconds(0));

private:
	Node local_;
	Node remote_;
	SideConfig cfg_;
	rv::Device dev_;
	rv::Attach attach_;
	rv::EventRing ring_;
	rv::Connection conn_;
	bool created_ = false;
	unsigned num_conn_ = 0;
};

// One line describing connection stats, for failure messages.
[[nodiscard]] std::string to_string(const rv::ConnStats &s);
[[nodiscard]] std::string to_string(const rv::Event &e);

// ------------------------------------------------------------ messages

// One message of a Channel: a type and up to 496 bytes of payload.
struct Msg {
	std::uint32_t type = 0;
	std::uint32_t len = 0;
	std::array<std::byte, 496> body{};
};
static_assert(sizeof(Msg) == 504);

enum MsgType : std::uint32_t {
	msg_text = 1,		// char[]: an error or note
	msg_ready,		// empty, or a step number
	msg_go,
	msg_recv_info,		// RecvInfo
	msg_done,		// std::uint64_t seq verified by the receiver
	msg_fin,		// sender: every message finished
	msg_recv_report,	// RecvReport
	msg_send_report,	// SendReport
	msg_u64,		// a number
	msg_connecting,		// empty: CONN_CONNECT done (connect_and_tell())
	msg_user = 100,		// tests' own
};

class Channel {
public:
	Channel() noexcept = default;
	explicit Channel(rv::UniqueFd fd) noexcept : fd_(std::move(fd)) {}

	[[nodiscard]] int fd() const noexcept { return fd_.get(); }
	[[nodiscard]] bool valid() const noexcept { return fd_.valid(); }
	void close() noexcept { fd_.reset(); }

	// Throws std::system_error (EPIPE when the other side is gone).
	void send(const Msg &m);
	template <typename T>
	void send(std::uint32_t type, const T &body)
	{
		static_assert(std::is_trivially_copyable_v<T>);
		static_assert(sizeof(T) <= sizeof(Msg::body));
		Msg m;
		m.type = type;
		m.len = sizeof(T);
		std::memcpy(m.body.data(), &body, sizeof(T));
		send(m);
	}
	void send(std::uint32_t type) { send(Msg{type, 0, {}}); }
	void send_text(const std::string &text);

	// The next message, waiting at most timeout (negative: forever);
	// nullopt on timeout. Throws std::system_error(EPIPE) at EOF.
	std::optional<Msg> recv(milliseconds timeout);
	// The next message, which must be of type (a msg_text instead
	// throws with its text). Throws ETIMEDOUT/EPIPE/EBADMSG.
	Msg expect(std::uint32_t type, milliseconds timeout);
	template <typename T>
	T expect_body(std::uint32_t type, milliseconds timeout)
	{
		static_assert(std::is_trivially_copyable_v<T>);
		Msg m = expect(type, timeout);
		T t{};
		std::memcpy(&t, m.body.data(), sizeof(T));
		return t;
	}

	// Both ends of a socketpair.
	static std::pair<Channel, Channel> pair();

private:
	rv::UniqueFd fd_;
	std::vector<std::byte> partial_;
};

template <typename T>
T body_of(const Msg &m)
{
	static_assert(std::is_trivially_copyable_v<T>);
	T t{};
	std::memcpy(&t, m.body.data(), sizeof(T) < m.len ? sizeof(T) : m.len);
	return t;
}

// ------------------------------------------------------------ processes

// A forked process running f(Channel &) -> int (its exit code; an
// exception is sent as msg_text and exits 2). The child closes the
// parent's rv files first (close_inherited_rv_files()).
class Peer {
public:
	Peer() noexcept = default;
	explicit Peer(const std::function<int(Channel &)> &f);
	~Peer();
	Peer(Peer &&other) noexcept;
	Peer &operator=(Peer &&other) noexcept;
	Peer(const Peer &) = delete;
	Peer &operator=(const Peer &) = delete;

	[[nodiscard]] pid_t pid() const noexcept { return pid_; }
	[[nodiscard]] Channel &chan() noexcept { return chan_; }

	void kill(int sig) const;
	// Waits for the exit; SIGKILLs it after timeout (timed_out).
	struct Status : ExitStatus {
		bool timed_out = false;
		[[nodiscard]] std::string str() const;
	};
	Status wait(milliseconds timeout);

private:
	pid_t pid_ = -1;
	Channel chan_;
};

// Connecting to forked peers without racing their start. The peers' side
// of the connection exists and is connecting before this side connects,
// so the connect deadline (reconnect_timeout), which starts at the first
// CONN_CONNECT, never counts the time a fork and an ATTACH take on a
// loaded machine.
// In the peer: CONN_CREATE and CONN_CONNECT, msg_connecting to the
// parent, then wait until connected (throws ETIMEDOUT after timeout).
void connect_and_tell(Side &s, Channel &ch, milliseconds timeout);
// In the parent: each peer's msg_connecting, then create_and_connect.
void connect_after(Side &s, std::initializer_list<Peer *> peers, milliseconds timeout);

// ------------------------------------------------------------ data

// The test pattern: byte j of a message with key k is byte j % 8 of the
// 64-bit word mix(k, j / 8).
void fill_pattern(std::byte *dst, std::uint64_t len, std::uint64_t key);
// Offset of the first byte that differs from the pattern, or nullopt.
[[nodiscard]] std::optional<std::uint64_t> check_pattern(const std::byte *p,
							 std::uint64_t len,
							 std::uint64_t key);

//
// Soft RoCE of Linux 6.1 reads one pointer past the page map of an MR that
// is a whole number of MiB long when a copy ends exactly at its end
// (KASAN: slab-out-of-bounds in rxe_mr_copy), so no MR of a transfer may
// be: slot_bytes(n) is n MiB less a page, and the transfer functions
// refuse a spec whose slots, alone or together, are whole MiB.
constexpr std::uint64_t slot_bytes(std::uint64_t mib)
{
	return (mib << 20) - 4096;
}

// A transfer's slots: slot_size may be at most max_fmr_size of both
// sides. The receiver registers its slots in MRs of as many whole slots
// as max_fmr_size holds, at most max_transfer_mrs of them; the sender
// each slot, and (so that half of the writes post from a part of a
// larger MR) as many slots together as its max_fmr_size holds. Soft-RoCE
// holds 511 pages, slot_bytes(2): two slots of slot_bytes(1).
inline constexpr std::uint32_t max_transfer_mrs = 64;

struct TransferSpec {
	std::uint64_t seed = 1;
	std::uint64_t bytes = 64ULL << 20;	// at least this much
	std::uint32_t slots = 8;		// writes in flight
	std::uint64_t slot_size = slot_bytes(1);
	std::uint64_t max_len = slot_bytes(1);	// <= slot_size
	std::uint8_t tolerate_errors = 0;	// re-post failed writes
	std::uint32_t timeout_s = 300;		// whole transfer
	std::uint32_t stall_s = 90;		// no progress
};

// Message seq of a transfer: its length and offsets in the sender's and
// the receiver's slot. A quarter 1 B..4 KiB, a quarter 4 KiB..256 KiB,
// half 256 KiB..max_len; offsets anywhere (unaligned) that fit.
struct MsgPlan {
	std::uint64_t len = 0;
	std::uint64_t src_off = 0;
	std::uint64_t dst_off = 0;
	std::uint64_t key = 0;
};
[[nodiscard]] MsgPlan plan_message(const TransferSpec &s, std::uint64_t seq);
// Messages the transfer has: the fewest whose lengths add up to bytes.
[[nodiscard]] std::uint64_t message_count(const TransferSpec &s);

// What the receiver tells the sender.
struct RecvInfo {
	std::uint32_t rv_index = 0;
	std::uint32_t index_bits = 0;
	std::uint64_t addr = 0;		// buffer (slots * slot_size)
	std::uint64_t length = 0;
	std::uint32_t rkey = 0;		// of the MR at addr: rkeys[0]
	std::uint32_t slots_per_mr = 0;	// slot k is in the MR of rkeys[k / this]
	std::uint64_t conn_handle = 0;
	TransferSpec spec;
	std::uint32_t rkeys[max_transfer_mrs] = {};
};

struct SendReport {
	std::uint64_t messages = 0;	// finished
	std::uint64_t bytes = 0;	// of finished messages
	std::uint64_t posts = 0;	// successful ioctls
	std::uint64_t post_eagain = 0;
	std::uint64_t post_nocredit = 0;	// ENOMEM, EBUSY
	std::uint64_t post_eio = 0;
	std::uint64_t post_other = 0;	// any other errno
	std::int32_t last_other_errno = 0;
	std::uint32_t sconn_mask = 0;	// sconn_index values seen
	std::uint64_t cqe_ok = 0;
	std::uint64_t cqe_err = 0;
	std::uint32_t first_err_status = 0;	// of the first cqe_err
	std::uint32_t last_err_status = 0;	// of the last
	std::uint64_t cqe_unknown = 0;	// wr_id not outstanding
	std::uint64_t cqe_bad = 0;	// wrong type, conn_handle or byte_len
	std::uint64_t reposts = 0;
	std::uint64_t outstanding_end = 0;
	std::uint64_t conn_count_first = 0;	// sum over QPs after connect
	std::uint64_t conn_count_last = 0;	// at the end
	std::uint64_t max_post_conn_count = 0;	// conn_count POST returned
	std::uint64_t elapsed_ms = 0;
	std::uint64_t overflow = 0;	// ring overflow_cnt
	std::int32_t result = 0;	// 0 or an errno
	char error[200] = {};
};

struct RecvReport {
	std::uint64_t events = 0;
	std::uint64_t verified = 0;
	std::uint64_t bytes = 0;
	std::uint64_t duplicates = 0;
	std::uint64_t bad_type = 0;
	std::uint64_t bad_status = 0;
	std::uint64_t bad_index = 0;
	std::uint64_t bad_seq = 0;
	std::uint64_t bad_len = 0;
	std::uint64_t bad_conn_handle = 0;
	std::uint64_t mismatches = 0;
	std::uint64_t first_bad_seq = 0;
	std::uint64_t first_bad_offset = 0;
	std::uint64_t overflow = 0;
	std::uint64_t elapsed_ms = 0;
	std::int32_t result = 0;
	char error[200] = {};
};
static_assert(sizeof(SendReport) <= sizeof(Msg::body));
static_assert(sizeof(RecvReport) <= sizeof(Msg::body));
static_assert(sizeof(RecvInfo) <= sizeof(Msg::body));

[[nodiscard]] std::string to_string(const SendReport &r);
[[nodiscard]] std::string to_string(const RecvReport &r);

// The receiving end: registers slots * slot_size bytes (in MRs of at
// most max_fmr_size), sends RecvInfo (with spec) over chan, then
// verifies each arriving write and answers msg_done for it until the
// sender's msg_fin; sends and returns its RecvReport. side must be
// connected (or connecting).
RecvReport recv_transfer(Side &side, Channel &chan, const TransferSpec &spec);

// The sending end: waits for the receiver's RecvInfo (its spec is used),
// posts the writes, sends msg_fin and returns its report with the
// receiver's (nullopt if it did not come). progress(bytes finished) is
// called as messages finish.
struct TransferResult {
	SendReport send;
	std::optional<RecvReport> recv;
	RecvInfo info;		// the receiver's
};
TransferResult send_transfer(Side &side, Channel &chan,
			     const std::function<void(std::uint64_t)> &progress = {});

// ------------------------------------------------------------ peer loss

// Where a side writes to: a registered buffer of a process on the peer.
struct WriteTarget {
	std::uint64_t addr = 0;
	std::uint32_t rkey = 0;
	std::uint32_t rv_index = 0;
};

// What watch_loss() saw.
struct LossLog {
	std::uint64_t posts = 0;
	std::uint64_t post_eagain = 0;
	std::uint64_t post_nocredit = 0;
	std::uint64_t post_eio = 0;
	std::uint64_t post_other = 0;
	int last_other = 0;
	int last_post_err = 0;
	std::uint64_t cqe_ok = 0;
	std::uint64_t cqe_err = 0;
	std::uint64_t cqe_unknown = 0;
	std::uint64_t connected_other_err = 0;
	std::optional<double> failed_for_good_s;	// CONNECTED: EIO, after lose()
	int final_connected = -2;	// 1, 0, -1 (EIO), -3 (other error)
	int final_count_err = 0;	// GET_CONN_COUNT(0) errno at the end
	std::size_t outstanding_end = 0;

	[[nodiscard]] std::string str() const;
};

// Writes 4 KiB to peer every 20 ms; after lose_after calls lose() (which
// makes the peer go away) and goes on until CONN_CONNECTED says EIO and
// a post failed with EIO, or until deadline (from the start); then waits
// (at most 60 s) for the outstanding completions.
LossLog watch_loss(Side &me, const WriteTarget &peer,
		   const std::function<void()> &lose, milliseconds lose_after,
		   milliseconds deadline);

// ------------------------------------------------------------ link

// Routes (other than the kernel's own) and permanent neighbours of a
// netdev, put back by restore() after the link was down.
class LinkState {
public:
	explicit LinkState(std::string netdev);
	void restore() const;
	[[nodiscard]] const std::string &netdev() const noexcept { return netdev_; }

private:
	std::string netdev_;
	std::vector<std::string> routes_;
	std::vector<std::string> neighs_;
};

// ip link set netdev down; sleep; up; restore the routes of every node's
// netdev; wait for the node's rxe port to be ACTIVE. Throws on failure.
void link_flap(const Node &n, milliseconds down_for);

// Runs a command (argv[0] looked up in PATH); throws std::runtime_error
// with its output unless it exits 0. Returns stdout.
std::string run_checked(const std::vector<std::string> &argv);

// The whitespace-separated words of text.
[[nodiscard]] std::vector<std::string> split_words(const std::string &text);

} // namespace rv::test

#endif // RV_TEST_VM_CONN_UTIL_HPP
