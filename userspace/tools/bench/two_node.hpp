// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's transfer benchmarks between two processes ("nodes"), each
// attached to its own RDMA device with the same job key and joined by an
// rv connection: `bw` (bandwidth and message rate of RDMA WRITE with
// immediate, every message checked by the receiver unless --no-verify) and
// `lat` (half round trip by ping-pong).
//
// The client drives: it sends the plan, writes (bw) or pings (lat) and
// reports. The server follows the plan it is sent, receives and checks,
// and answers each phase with what it saw. Out of band, over TCP:
//
//	server				client
//	HELLO proto job_key	->
//				<-	INFO  (proto, its node, its MRs, the plan)
//	INFO  (its node, MRs)	->
//	(both: CONN_CREATE)
//	SYNC created		<->	SYNC created
//	(both: CONN_CONNECT, wait for CONN_CONNECTED)
//	SYNC connected		<->	SYNC connected
//				<-	PHASE (test, size, count, ...)
//	READY			->
//	(RDMA writes with immediate in both directions)
//	DONE (its counts)	->
//	... one PHASE per size ...
//				<-	BYE
//	BYE			->
//
// The protocol's version (proto_version in two_node.cpp) is in HELLO and
// the client's INFO; either side refuses another one. Each side's buffers
// are MRs of at most max_fmr_size (bench/mr_chunks.hpp): INFO gives the
// receive buffer's chunk size (mr_chunk) and the iova and rkey of each of
// its chunks (mr_iovas, mr_rkeys). The sizes above the smaller chunk size
// of the two nodes do not run: the client sends no PHASE for them and
// reports them skipped; the server, which knows both chunk sizes too,
// expects none.
//
// Immediate data: the top index_bits are the receiver's rv_index, the
// rest the low bits of the message's sequence number. bw: message seq
// goes to receive slot seq % slots of the server's buffer; the server
// checks it (bench/pattern.hpp) and returns credits (the number of
// messages checked in order) by 8-byte writes with immediate into the
// client's buffer; the client never has more than slots unchecked or
// window unacknowledged writes. A plan without verify (--no-verify)
// leaves the payloads alone: the client writes whatever its send slots
// hold and the server does not read them; the server still checks each
// write's completion status, byte_len and sequence number, and credits
// flow as before. lat: ping i lands in the server's slot i % 2, the
// server answers with pong i into the client's slot i % 2, and both
// check what they got.
#ifndef RV_BENCH_TWO_NODE_HPP
#define RV_BENCH_TWO_NODE_HPP

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/version.hpp>

#include "bench_util.hpp"
#include "oob.hpp"

namespace rv::bench {

// What one process needs to set up its node.
struct NodeConfig {
	std::string rv_path = RV_FILE_NAME;
	std::string device;		// RDMA device
	unsigned port = 1;
	std::string sysfs = "/sys/class/infiniband";
	std::uint8_t num_conn = 0;	// ATTACH; 0: the module's default
	std::uint8_t index_bits = 9;	// ATTACH
	std::uint32_t mr_cache_mb = 0;	// ATTACH mr_cache_size; 0: the module's
	std::optional<std::uint8_t> mtu;	// enum ib_mtu; default: the port's
	std::uint8_t packet_life_time = 16;	// path record (ACK timeout ~0.5 s)
	double timeout_s = 60;		// setup steps, and a phase without progress
	bool yield = false;		// sched_yield() after an empty poll
	std::optional<JobKey> job_key;	// server: the key to hand out
	// Step lines (--verbose), nullptr: none.
	std::function<void(const std::string &)> log;
	// The lines of a Progress over the whole run (--progress): the
	// client counts bytes written (bw) or round trips (lat), a server
	// bytes checked or pongs; nullptr: none.
	Progress::Sink progress;
	std::uint64_t progress_interval_ns = Progress::default_interval_ns;
};

enum class Test : std::uint8_t { bw, lat };

[[nodiscard]] const char *test_name(Test t) noexcept;

// What the client asks for.
struct Plan {
	Test test = Test::bw;
	std::vector<std::uint64_t> sizes;
	std::vector<std::uint64_t> counts;	// per size: messages (bw),
						// timed round trips (lat)
	std::uint64_t warmup = 0;		// lat: untimed round trips
	std::uint32_t window = 32;		// bw: writes in flight
	std::uint64_t buffer = 64ULL << 20;	// bw: bytes per side for messages
	bool verify = true;			// bw: payloads patterned, checked
};

inline constexpr std::uint32_t max_bw_slots = 1024;
inline constexpr std::uint32_t max_window = 4096;

// bw: receive slots of a size (those of the buffer, 1..max_bw_slots), send
// slots (those of the buffer, 1..window), and the event ring either side
// needs. The slots of the buffer: as many as fit in it in chunks of
// chunk bytes (bench/mr_chunks.hpp; size <= chunk), buffer / size for a
// power of two size; for chunk 0 buffer / size (never fewer: the bound
// the event ring is sized for).
[[nodiscard]] std::uint32_t bw_rx_slots(const Plan &p, std::uint64_t size,
					std::uint64_t chunk = 0) noexcept;
[[nodiscard]] std::uint32_t bw_tx_slots(const Plan &p, std::uint64_t size,
					std::uint64_t chunk = 0) noexcept;
[[nodiscard]] std::uint32_t plan_cq_entries(const Plan &p) noexcept;

// The plan as INFO fields, and back (std::runtime_error if malformed).
void plan_to(oob::Message &m, const Plan &p);
[[nodiscard]] Plan plan_from(const oob::Message &m);

// One node as the other sees it.
struct NodeInfo {
	std::string device;
	unsigned port = 1;
	Gid gid{};
	std::uint16_t gid_index = 0;
	std::uint32_t ip = 0;		// host order
	std::uint32_t rv_index = 0;
	std::uint8_t index_bits = 9;
	std::uint8_t mtu = 3;		// the port's active MTU (enum ib_mtu)
	std::uint64_t max_fmr_size = 0;	// ATTACH's answer
	// Its receive buffer, as registered: mr_len bytes at mr_addr in
	// chunks of mr_chunk bytes, one MR each (the last may be shorter).
	std::uint64_t mr_addr = 0;
	std::uint64_t mr_len = 0;
	std::uint64_t mr_chunk = 0;
	std::vector<std::uint64_t> mr_iovas;	// per chunk
	std::vector<std::uint32_t> mr_rkeys;	// per chunk
	std::uint32_t q_depth = 0;	// ATTACH's answer
};

// Why a size does not run: "" (it does), "larger than max_fmr_size" or
// "larger than the MR chunk", for the smaller max_fmr_size and chunk size
// of the two nodes.
[[nodiscard]] const char *skip_reason(std::uint64_t size, std::uint64_t max_fmr_size,
				      std::uint64_t chunk) noexcept;

struct BwResult {
	std::uint64_t size = 0;
	std::string skipped;		// why it did not run; "": it ran
	std::uint64_t messages = 0;
	std::uint64_t bytes = 0;
	std::uint64_t ns = 0;		// first post to last send completion
	std::uint32_t window = 0;	// the limit in effect
	std::uint32_t slots = 0;	// receive slots
	std::uint64_t post_retries = 0;	// EAGAIN/ENOMEM/EBUSY
	std::uint64_t polls = 0;	// event ring polls of the sender
	std::uint64_t empty_polls = 0;	// ... that found nothing
	std::uint64_t credits = 0;	// credit writes received
	std::uint64_t peer_polls = 0, peer_empty_polls = 0;
	std::uint64_t peer_ns = 0;	// first to last receive
	bool verify = true;		// the plan's: payloads checked
	std::uint64_t received = 0;	// messages the receiver got (seq, length)
	std::uint64_t verified = 0;	// ... whose payload it checked
	std::uint64_t mismatches = 0;	// ... that were wrong
	std::string first_mismatch;	// what the first one was
	std::optional<std::uint64_t> rcvd_pkts, peer_rcvd_pkts;	// hw counters

	[[nodiscard]] double seconds() const noexcept { return static_cast<double>(ns) / 1e9; }
	[[nodiscard]] double mb_per_s() const noexcept;	// 10^6 bytes/s
	[[nodiscard]] double mmsg_per_s() const noexcept;
	[[nodiscard]] double peer_mb_per_s() const noexcept;
};

struct LatResult {
	std::uint64_t size = 0;
	std::string skipped;		// why it did not run; "": it ran
	std::uint64_t iters = 0;
	std::uint64_t warmup = 0;
	Summary half_rtt;		// ns
	std::uint64_t post_retries = 0;
	std::uint64_t polls = 0, empty_polls = 0;
	std::uint64_t peer_polls = 0, peer_empty_polls = 0;
	std::uint64_t verified = 0, mismatches = 0;	// pongs, here
	std::uint64_t peer_verified = 0, peer_mismatches = 0;	// pings
	std::string first_mismatch;
};

struct ClientReport {
	Plan plan;
	NodeInfo self, peer;
	Version abi;
	std::uint8_t path_mtu = 0;
	// The largest size that runs: the smaller chunk size of the two
	// nodes (their max_fmr_size rounded down to a power of two).
	std::uint64_t mr_chunk = 0;
	std::vector<BwResult> bw;	// per size of the plan, skipped ones too
	std::vector<LatResult> lat;
	ConnStats conn{};			// the aggregate at the end
	std::vector<std::uint64_t> qp_post_write;	// per QP of the connection
	std::uint64_t connect_ns = 0;		// CONN_CONNECT to connected

	// Wrong messages seen by either side.
	[[nodiscard]] std::uint64_t mismatches() const noexcept;
};

struct ServerReport {
	Plan plan;
	NodeInfo self, peer;
	std::uint64_t mr_chunk = 0;	// as ClientReport's
	std::uint64_t phases = 0;
	std::uint64_t skipped = 0;	// sizes of the plan above mr_chunk
	std::uint64_t verified = 0, mismatches = 0;
};

// The client side over a connected socket. Throws on any failure
// (std::system_error with the errno of the failing call, or
// std::runtime_error); mismatches are not failures here, the report has
// them.
[[nodiscard]] ClientReport run_client(const NodeConfig &cfg, const Plan &plan,
				      oob::Socket sock);

// The server side over a connected socket; same error rules. Tells the
// client when it fails.
[[nodiscard]] ServerReport run_server(const NodeConfig &cfg, oob::Socket sock);

} // namespace rv::bench

#endif // RV_BENCH_TWO_NODE_HPP
