// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "two_node.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <sched.h>

#include <rv/device.hpp>
#include <rv/error.hpp>
#include <rv/event_ring.hpp>
#include <rv/ioctl.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include <toolkit/debugfs.hpp>
#include <toolkit/rdma_sysfs.hpp>

#include "mr_chunks.hpp"
#include "pattern.hpp"
#include "verbs.hpp"

namespace rv::bench {

namespace {

using std::chrono::milliseconds;

// 2: the receive buffer as MRs of mr_chunk bytes (mr_iovas, mr_rkeys),
// not one (mr_iova, mr_rkey); the client's INFO says its version too.
constexpr std::uint64_t proto_version = 2;
constexpr std::uint64_t credit_wr_id = 1ULL << 63;
constexpr std::uint64_t credit_len = 8;

milliseconds timeout_of(const NodeConfig &c)
{
	return milliseconds(static_cast<long long>(c.timeout_s * 1000));
}

void log(const NodeConfig &c, const std::string &m)
{
	if (c.log)
		c.log(m);
}

std::uint64_t page_round(std::uint64_t n)
{
	const std::uint64_t p = page_size();
	return (std::max<std::uint64_t>(n, 1) + p - 1) / p * p;
}

// An hw counter of the port (rxe: rcvd_pkts, sent_pkts), if there is one.
std::optional<std::uint64_t> hw_counter(const NodeConfig &c, const char *name)
{
	return rv::RdmaSysfs(c.sysfs).hw_counter(c.device, c.port, name);
}

std::optional<std::uint64_t> delta(std::optional<std::uint64_t> a,
				   std::optional<std::uint64_t> b)
{
	if (a && b && *b >= *a)
		return *b - *a;
	return std::nullopt;
}

// The port's active MTU from libibverbs; IB_MTU_1024 if it cannot tell.
std::uint8_t port_mtu(const NodeConfig &c)
{
	if (c.mtu)
		return *c.mtu;
	try {
		verbs::Context ctx = verbs::open_device(c.device);
		ibv_port_attr a{};
		if (ibv_query_port(ctx.get(), static_cast<std::uint8_t>(c.port), &a) == 0 &&
		    a.active_mtu >= IBV_MTU_256 && a.active_mtu <= IBV_MTU_4096)
			return static_cast<std::uint8_t>(a.active_mtu);
	} catch (const std::exception &) {
		// no libibverbs device of that name: the default
	}
	return 3;
}

template <typename T>
std::string join(const std::vector<T> &v)
{
	std::string s;
	for (std::size_t i = 0; i < v.size(); i++)
		s += (i ? "," : "") + std::to_string(v[i]);
	return s;
}

std::vector<std::uint64_t> split(const std::string &s, const char *what)
{
	std::vector<std::uint64_t> v;
	std::stringstream in(s);
	std::string item;
	while (std::getline(in, item, ',')) {
		auto n = rv::debugfs::parse_u64(item);
		if (!n)
			throw std::runtime_error(std::string("out-of-band: bad ") +
						 what + " '" + s + "'");
		v.push_back(*n);
	}
	return v;
}

void info_to(oob::Message &m, const NodeInfo &n)
{
	m.set("dev", n.device)
		.set("port", n.port)
		.set("gid", format_gid(n.gid))
		.set("gid_index", n.gid_index)
		.set("ip", format_ipv4(n.ip))
		.set("rv_index", n.rv_index)
		.set("index_bits", n.index_bits)
		.set("mtu", n.mtu)
		.set("max_fmr_size", n.max_fmr_size)
		.set("mr_addr", n.mr_addr)
		.set("mr_len", n.mr_len)
		.set("mr_chunk", n.mr_chunk)
		.set("mr_iovas", join(n.mr_iovas))
		.set("mr_rkeys", join(n.mr_rkeys))
		.set("q_depth", n.q_depth);
}

NodeInfo info_from(const oob::Message &m)
{
	NodeInfo n;
	auto bad = [&](const char *k) {
		return std::runtime_error(std::string("out-of-band INFO: bad ") + k +
					  " '" + m.get(k) + "'");
	};
	n.device = m.get("dev");
	n.port = static_cast<unsigned>(m.get_u64("port"));
	auto gid = parse_gid(m.get("gid"));
	if (!gid)
		throw bad("gid");
	n.gid = *gid;
	n.gid_index = static_cast<std::uint16_t>(m.get_u64("gid_index"));
	auto ip = parse_ipv4(m.get("ip"));
	if (!ip)
		throw bad("ip");
	n.ip = *ip;
	n.rv_index = static_cast<std::uint32_t>(m.get_u64("rv_index"));
	n.index_bits = static_cast<std::uint8_t>(m.get_u64("index_bits"));
	if (n.index_bits > 31)
		throw bad("index_bits");
	n.mtu = static_cast<std::uint8_t>(m.get_u64("mtu"));
	if (!ib_mtu_to_bytes(n.mtu))
		throw bad("mtu");
	n.max_fmr_size = m.get_u64("max_fmr_size");
	n.mr_addr = m.get_u64("mr_addr");
	n.mr_len = m.get_u64("mr_len");
	n.mr_chunk = m.get_u64("mr_chunk");
	if (!n.mr_chunk || !std::has_single_bit(n.mr_chunk) ||
	    n.mr_chunk > n.max_fmr_size)
		throw bad("mr_chunk");
	n.mr_iovas = split(m.get("mr_iovas"), "mr_iovas");
	for (std::uint64_t rkey : split(m.get("mr_rkeys"), "mr_rkeys")) {
		if (rkey > std::numeric_limits<std::uint32_t>::max())
			throw bad("mr_rkeys");
		n.mr_rkeys.push_back(static_cast<std::uint32_t>(rkey));
	}
	const std::uint64_t chunks = mr_chunks(n.mr_len, n.mr_chunk);
	if (!chunks || n.mr_rkeys.size() != chunks || n.mr_iovas.size() != chunks)
		throw std::runtime_error(
			"out-of-band INFO: " + std::to_string(n.mr_rkeys.size()) +
			" rkeys and " + std::to_string(n.mr_iovas.size()) +
			" iovas for " + std::to_string(n.mr_len) + " bytes in chunks of " +
			std::to_string(n.mr_chunk));
	n.q_depth = static_cast<std::uint32_t>(m.get_u64("q_depth"));
	return n;
}

// --- one node: attach, ring, buffers, the connection to the peer ----------

struct Counters {
	std::uint64_t polls = 0, empty_polls = 0, post_retries = 0;
};

class Node {
public:
	Node(const NodeConfig &cfg, const JobKey &key, std::uint32_t cq_entries)
		: cfg_(cfg), dev_(cfg.rv_path)
	{
		params_ = AttachParams::for_roce(cfg.device, cfg.port, {}, cfg.sysfs);
		params_.job_key = key;
		params_.num_conn = cfg.num_conn;
		params_.index_bits = cfg.index_bits;
		params_.mr_cache_size = cfg.mr_cache_mb;
		params_.cq_entries = cq_entries;
		abi_ = dev_.capability().abi;
		attach_ = dev_.attach(params_);
		chunk_ = mr_chunk(attach_.max_fmr_size);
		if (!chunk_)
			throw std::runtime_error("ATTACH answered max_fmr_size 0");
		ring_ = EventRing::map(dev_);
		mtu_ = port_mtu(cfg);
		log(cfg, "attached to " + cfg.device + " port " +
				 std::to_string(cfg.port) + " as rv_index " +
				 std::to_string(attach_.rv_index) + " (" +
				 format_ipv4(params_.loc_addr) + ", GID index " +
				 std::to_string(params_.loc_gid_index) + "), max_fmr_size " +
				 std::to_string(attach_.max_fmr_size) + ": MRs of " +
				 format_size(chunk_));
	}

	// Maps and registers the receive buffer (remote write) and the send
	// buffer, each as MRs of chunk() bytes.
	void buffers(std::uint64_t rx_len, std::uint64_t tx_len)
	{
		rx_len_ = rx_len;
		tx_len_ = tx_len;
		rx_ = Mapping::anonymous(page_round(rx_len));
		tx_ = Mapping::anonymous(page_round(tx_len));
		rx_mrs_ = register_chunks(rx_, rx_len, access::psm3_recv);
		tx_mrs_ = register_chunks(tx_, tx_len, access::psm3_send);
		log(cfg_, "registered " + format_size(rx_len) + " to receive in " +
				  std::to_string(rx_mrs_.size()) + " MRs, " +
				  format_size(tx_len) + " to send in " +
				  std::to_string(tx_mrs_.size()));
	}

	[[nodiscard]] NodeInfo info() const
	{
		NodeInfo n;
		n.device = cfg_.device;
		n.port = cfg_.port;
		n.gid = params_.loc_gid;
		n.gid_index = params_.loc_gid_index;
		n.ip = params_.loc_addr;
		n.rv_index = attach_.rv_index;
		n.index_bits = params_.index_bits;
		n.mtu = mtu_;
		n.max_fmr_size = attach_.max_fmr_size;
		n.mr_addr = rx_.addr();
		n.mr_len = rx_len_;
		n.mr_chunk = chunk_;
		for (const MemoryRegion &mr : rx_mrs_) {
			n.mr_iovas.push_back(mr.iova());
			n.mr_rkeys.push_back(mr.rkey());
		}
		n.q_depth = attach_.q_depth;
		return n;
	}

	// CONN_CREATE, then (after the peer did too) CONN_CONNECT and the
	// wait for CONN_CONNECTED.
	void connect(const NodeInfo &peer, oob::Socket &s)
	{
		const milliseconds to = timeout_of(cfg_);
		peer_ = peer;
		path_mtu_ = std::min(mtu_, peer.mtu);
		conn_ = Connection::create(
			dev_, Remote::roce(peer.gid, peer.ip, params_.loc_gid_index,
					   static_cast<std::uint8_t>(cfg_.port)));
		s.send(oob::Message{"SYNC", {}}.set("step", "created"));
		(void)s.expect("SYNC", to);

		PathRecord path = PathRecord::roce(params_.loc_gid, peer.gid, path_mtu_);
		path.packet_life_time = cfg_.packet_life_time;
		const std::uint64_t t0 = now_ns();
		conn_.connect(path);
		log(cfg_, "connecting to " + peer.device + " (" + format_ipv4(peer.ip) +
				  "), path MTU " +
				  std::to_string(ib_mtu_to_bytes(path_mtu_)));
		if (!conn_.wait_connected(to))
			throw_errno(ETIMEDOUT, "RV_IOCTL_CONN_CONNECTED: not connected to " +
						       format_ipv4(peer.ip) + " after " +
						       std::to_string(to.count() / 1000) + " s");
		connect_ns_ = now_ns() - t0;
		s.send(oob::Message{"SYNC", {}}.set("step", "connected"));
		(void)s.expect("SYNC", to);
		log(cfg_, "connected in " + std::to_string(connect_ns_ / 1000) + " us");
	}

	// One write of len bytes from tx_off of the send buffer to rem_off of
	// the peer's receive buffer; the errno of the post. Both ranges must
	// lie in one chunk each (std::logic_error if not).
	int post(std::uint64_t tx_off, std::uint64_t rem_off, std::uint64_t len,
		 std::uint64_t wr_id, std::uint32_t payload)
	{
		const std::uint64_t k = tx_off / chunk_;
		const std::uint64_t rk = rem_off / peer_.mr_chunk;
		const std::uint64_t rem_in = rem_off % peer_.mr_chunk;
		if (k >= tx_mrs_.size() || tx_off % chunk_ + len > tx_mrs_[k].length() ||
		    rk >= peer_.mr_rkeys.size() ||
		    rem_in + len > std::min(peer_.mr_chunk, peer_.mr_len - rk * peer_.mr_chunk))
			throw std::logic_error(
				"a write of " + std::to_string(len) + " bytes from offset " +
				std::to_string(tx_off) + " to the peer's offset " +
				std::to_string(rem_off) + " is not inside one MR each side");
		WriteRequest w;
		w.loc_addr = tx_.addr() + tx_off;
		w.mr = &tx_mrs_[k].info();
		// The peer's iova of its chunk's address + the offset in it.
		w.rem_addr = peer_.mr_iovas[rk] + rem_in;
		w.rkey = peer_.mr_rkeys[rk];
		w.length = len;
		w.wr_id = wr_id;
		w.immed = make_immed(peer_.rv_index, peer_.index_bits, payload);
		PostResult r;
		return conn_.try_post_write(w, r);
	}

	// Drains the ring into f; counts the poll. Throws if the ring
	// overflowed (events were lost).
	template <typename F>
	std::size_t poll(Counters &c, F &&f)
	{
		const std::size_t n = ring_.drain(std::forward<F>(f));
		c.polls++;
		if (!n) {
			c.empty_polls++;
			if (ring_.overflow_count() != overflow_)
				throw std::runtime_error(
					"event ring overflow: " +
					std::to_string(ring_.overflow_count() - overflow_) +
					" completions lost");
		}
		return n;
	}

	// Bits of sequence number in the immediates this node receives.
	[[nodiscard]] unsigned in_bits() const noexcept { return 32u - params_.index_bits; }

	[[nodiscard]] std::byte *rx() const noexcept { return rx_.bytes(); }
	[[nodiscard]] std::byte *tx() const noexcept { return tx_.bytes(); }
	[[nodiscard]] std::uint64_t rx_len() const noexcept { return rx_len_; }
	[[nodiscard]] std::uint64_t tx_len() const noexcept { return tx_len_; }
	// The bytes per MR of this node's buffers, and of the peer's.
	[[nodiscard]] std::uint64_t chunk() const noexcept { return chunk_; }
	[[nodiscard]] const NodeInfo &peer() const noexcept { return peer_; }
	// The largest message size between the two (once connected).
	[[nodiscard]] std::uint64_t run_chunk() const noexcept
	{
		return std::min(chunk_, peer_.mr_chunk);
	}
	// Where the slots of a size are in this node's buffers, and in the
	// peer's receive buffer.
	[[nodiscard]] SlotLayout layout(std::uint64_t size) const noexcept
	{
		return {size, chunk_};
	}
	[[nodiscard]] SlotLayout peer_layout(std::uint64_t size) const noexcept
	{
		return {size, peer_.mr_chunk};
	}
	[[nodiscard]] const NodeConfig &cfg() const noexcept { return cfg_; }
	[[nodiscard]] Connection &conn() noexcept { return conn_; }
	[[nodiscard]] Version abi() const noexcept { return abi_; }
	[[nodiscard]] std::uint8_t path_mtu() const noexcept { return path_mtu_; }
	[[nodiscard]] std::uint64_t connect_ns() const noexcept { return connect_ns_; }

private:
	// The first len bytes of m as MRs of chunk_ bytes (the last may be
	// shorter).
	std::vector<MemoryRegion> register_chunks(const Mapping &m, std::uint64_t len,
						  std::uint32_t access)
	{
		std::vector<MemoryRegion> mrs;
		mrs.reserve(mr_chunks(len, chunk_));
		for (std::uint64_t off = 0; off < len; off += chunk_)
			mrs.push_back(dev_.reg_mem(m.bytes() + off,
						   std::min(chunk_, len - off), access));
		return mrs;
	}

	const NodeConfig &cfg_;
	Device dev_;
	AttachParams params_;
	Attach attach_;
	Version abi_;
	EventRing ring_;
	std::uint64_t overflow_ = 0;
	std::uint8_t mtu_ = 3, path_mtu_ = 3;
	std::uint64_t chunk_ = 0;
	Mapping rx_, tx_;
	std::uint64_t rx_len_ = 0, tx_len_ = 0;
	std::vector<MemoryRegion> rx_mrs_, tx_mrs_;	// per chunk
	NodeInfo peer_;
	Connection conn_;
	std::uint64_t connect_ns_ = 0;
};

// Fails a loop that makes no progress for the timeout, and notices a peer
// that reports an error meanwhile.
class Watchdog {
public:
	Watchdog(const NodeConfig &cfg, oob::Socket &s, std::function<std::string()> state)
		: timeout_ns_(static_cast<std::uint64_t>(cfg.timeout_s * 1e9)),
		  yield_(cfg.yield), sock_(s), state_(std::move(state)),
		  last_(now_ns()) {}

	void progress() noexcept { progress_++; }

	// Called on every idle turn; looks at the clock now and then.
	void idle()
	{
		if (yield_)
			::sched_yield();
		if (++idle_ % 256)
			return;
		const std::uint64_t t = now_ns();
		if (progress_ != seen_) {
			seen_ = progress_;
			last_ = t;
		} else if (t - last_ > timeout_ns_) {
			throw_errno(ETIMEDOUT, "no progress for " +
					       std::to_string(timeout_ns_ / 1000000000) +
					       " s: " + state_());
		}
		// Only an ERROR ends the phase here. Any other message stays
		// for the phase's own recv(): the peer's DONE can come before
		// this side has seen the peer's last write (its completion
		// reaches the event ring after the TCP message may).
		if (t - last_sock_ > 50000000) {
			last_sock_ = t;
			const std::optional<oob::Message> m = sock_.peek();
			if (m && m->verb == "ERROR")
				throw std::runtime_error(
					"the peer failed: " +
					(m->has("msg") ? m->get("msg") : std::string("?")));
		}
	}

private:
	std::uint64_t timeout_ns_;
	bool yield_;
	oob::Socket &sock_;
	std::function<std::string()> state_;
	std::uint64_t last_ = 0, last_sock_ = 0;
	std::uint64_t progress_ = 0, seen_ = 0, idle_ = 0;
};

[[noreturn]] void bad_status(const Event &ev, std::string_view what)
{
	throw std::runtime_error(std::string(what) + " completed with status " +
				 std::to_string(ev.status) + " (enum ib_wc_status)");
}

std::string describe_mismatch(std::uint64_t size, std::uint64_t seq,
			      std::uint64_t offset, const char *why = nullptr)
{
	std::string s = "size " + std::to_string(size) + " seq " + std::to_string(seq);
	if (why)
		return s + ": " + why;
	return s + ": first wrong byte at offset " + std::to_string(offset);
}

// Posts until it is accepted: retries EAGAIN/ENOMEM/EBUSY while polling.
template <typename F>
void post_retrying(Node &n, Counters &c, Watchdog &wd, F &&on_event,
		   std::uint64_t tx_off, std::uint64_t rem_off, std::uint64_t len,
		   std::uint64_t wr_id, std::uint32_t payload)
{
	for (;;) {
		const int err = n.post(tx_off, rem_off, len, wr_id, payload);
		if (!err)
			return;
		if (!Connection::retryable(err))
			throw_errno(err, ioctl_describe(RV_IOCTL_POST_RDMA_WR_IMMED));
		c.post_retries++;
		if (!n.poll(c, on_event))
			wd.idle();
	}
}

// --- bw -----------------------------------------------------------------

// A bw phase's result before it runs: its messages, slots (in the
// peer's chunks) and window (ntx send slots in the sender's).
BwResult bw_phase(const Plan &plan, const Node &n, std::uint64_t size,
		  std::uint64_t count)
{
	BwResult r;
	r.size = size;
	r.messages = count;
	r.bytes = size * count;
	r.slots = bw_rx_slots(plan, size, n.peer().mr_chunk);
	r.window = std::min({plan.window, bw_tx_slots(plan, size, n.chunk()), r.slots});
	r.verify = plan.verify;
	return r;
}

// The sender's side of a bw phase's start: the slots checked against
// both buffers, the messages' patterns in the ntx send slots (if
// r.verify), then PHASE to the receiver and its READY.
void start_bw_phase(Node &n, oob::Socket &s, const BwResult &r, std::uint32_t ntx)
{
	const std::uint64_t size = r.size;
	const SlotLayout tx = n.layout(size);
	if (n.peer_layout(size).end(r.slots) > n.peer().mr_len || tx.end(ntx) > n.tx_len())
		throw std::runtime_error("bw size " + std::to_string(size) + ": " +
					 std::to_string(r.slots) + " receive slots or " +
					 std::to_string(ntx) +
					 " send slots do not fit the buffers");
	for (std::uint32_t i = 0; r.verify && i < ntx; i++)
		pattern_fill(n.tx() + tx.offset(i), size, i);

	oob::Message phase{"PHASE", {}};
	phase.set("test", "bw")
		.set("size", size)
		.set("count", r.messages)
		.set("slots", r.slots);
	s.send(phase);
	(void)s.expect("READY", timeout_of(n.cfg()));
}

// What the receiver's DONE says, into r (r.messages sent). A message it
// did not get counts as wrong.
void add_receiver_report(BwResult &r, const oob::Message &d)
{
	r.verified = d.get_u64("verified");
	r.received = d.has("received") ? d.get_u64("received") : r.verified;
	r.mismatches = d.get_u64("mismatches");
	if (d.has("first_mismatch"))
		r.first_mismatch = d.get("first_mismatch");
	r.peer_polls = d.get_u64("polls");
	r.peer_empty_polls = d.get_u64("empty_polls");
	r.peer_ns = d.get_u64("ns");
	if (d.has("rcvd_pkts"))
		r.peer_rcvd_pkts = d.get_u64("rcvd_pkts");
	if (r.received != r.messages && !r.mismatches)
		r.mismatches = r.messages > r.received ? r.messages - r.received : 1;
}

BwResult bw_send(Node &n, oob::Socket &s, const Plan &plan, std::uint64_t size,
		 std::uint64_t count, Progress &prog)
{
	BwResult r = bw_phase(plan, n, size, count);
	const std::uint32_t ntx = bw_tx_slots(plan, size, n.chunk());
	const std::uint32_t slots = r.slots;
	const SlotLayout tx = n.layout(size), rx = n.peer_layout(size);

	start_bw_phase(n, s, r, ntx);

	std::vector<std::uint8_t> busy(ntx);
	std::uint64_t next = 0, done = 0, credit = 0, outstanding = 0;
	std::uint64_t t_end = 0;
	Counters c;
	Watchdog wd(n.cfg(), s, [&] {
		return "bw size " + std::to_string(size) + ": posted " +
		       std::to_string(next) + ", completed " + std::to_string(done) +
		       (r.verify ? ", checked" : ", received in order") +
		       " by the receiver " + std::to_string(credit) + " of " +
		       std::to_string(count);
	});
	auto on_event = [&](const Event &ev) {
		wd.progress();
		if (ev.event_type == RV_WC_RDMA_WRITE) {
			if (ev.status)
				bad_status(ev, "an RDMA write");
			busy[ev.wr_id % ntx] = 0;
			outstanding--;
			if (++done == count)
				t_end = now_ns();
			prog.advance(size);
		} else if (ev.event_type == RV_WC_RECV_RDMA_WITH_IMM) {
			if (ev.status)
				bad_status(ev, "a credit write");
			r.credits++;
			credit = std::max(credit, seq_nearest(credit,
							      immed_payload(ev.imm_data, 32 - n.in_bits()),
							      n.in_bits()));
		}
	};

	const std::optional<std::uint64_t> pkts0 = hw_counter(n.cfg(), "rcvd_pkts");
	const std::uint64_t t0 = now_ns();
	while (done < count || credit < count) {
		bool posted = false;
		while (next < count && outstanding < r.window &&
		       next < credit + slots && !busy[next % ntx]) {
			const std::uint64_t tx_slot = next % ntx;
			if (r.verify)
				pattern_stamp(n.tx() + tx.offset(tx_slot), size, next);
			const int err = n.post(tx.offset(tx_slot), rx.offset(next % slots),
					       size, next,
					       static_cast<std::uint32_t>(next));
			if (err) {
				if (!Connection::retryable(err))
					throw_errno(err, ioctl_describe(
							RV_IOCTL_POST_RDMA_WR_IMMED));
				c.post_retries++;
				break;
			}
			busy[tx_slot] = 1;
			next++;
			outstanding++;
			posted = true;
			wd.progress();
		}
		if (!n.poll(c, on_event) && !posted)
			wd.idle();
	}
	r.ns = t_end - t0;
	r.rcvd_pkts = delta(pkts0, hw_counter(n.cfg(), "rcvd_pkts"));
	r.post_retries = c.post_retries;
	r.polls = c.polls;
	r.empty_polls = c.empty_polls;

	add_receiver_report(r, s.expect("DONE", timeout_of(n.cfg())));
	return r;
}

// What the receiver of a bw phase has seen: the writes of sequence
// numbers below prefix, and those of the next slots that came early.
struct BwReceived {
	BwReceived(SlotLayout rx_layout, std::uint64_t messages, std::uint64_t rx_slots)
		: layout(rx_layout), size(rx_layout.size), count(messages),
		  slots(rx_slots), got(rx_slots)
	{
	}

	SlotLayout layout;
	std::uint64_t size, count, slots;
	std::vector<std::uint8_t> got;
	std::uint64_t prefix = 0, received = 0, verified = 0, mismatches = 0;
	std::uint64_t t_first = 0, t_last = 0;
	std::string first;		// the first mismatch

	void mismatch(std::string what)
	{
		if (!mismatches++)
			first = std::move(what);
	}

	// The write of sequence number seq, in slot seq % slots of rx; its
	// payload checked by chk, unless nullptr (--no-verify).
	void arrived(std::uint64_t seq, std::uint32_t byte_len, const std::byte *rx,
		     const PatternChecker *chk, Progress &prog)
	{
		t_last = now_ns();
		if (!t_first)
			t_first = t_last;
		if (seq < prefix || seq >= prefix + slots || seq >= count ||
		    got[seq % slots]) {
			mismatch(describe_mismatch(size, seq, 0,
						   "unexpected sequence number"));
			return;
		}
		got[seq % slots] = 1;
		received++;
		prog.advance(size);
		verified += chk ? 1 : 0;
		if (byte_len != size)
			mismatch(describe_mismatch(size, seq, 0, "wrong byte_len"));
		else if (auto off = chk ? chk->check(rx + layout.offset(seq % slots), seq)
					: std::nullopt)
			mismatch(describe_mismatch(size, seq, *off));
		while (prefix < count && got[prefix % slots]) {
			got[prefix % slots] = 0;
			prefix++;
		}
	}

	// The receiver's DONE.
	[[nodiscard]] oob::Message done(const Counters &c,
					std::optional<std::uint64_t> rcvd_pkts) const
	{
		oob::Message d{"DONE", {}};
		d.set("received", received)
			.set("verified", verified)
			.set("mismatches", mismatches)
			.set("polls", c.polls)
			.set("empty_polls", c.empty_polls)
			.set("ns", t_last - t_first);
		if (!first.empty())
			d.set("first_mismatch", first);
		if (rcvd_pkts)
			d.set("rcvd_pkts", *rcvd_pkts);
		return d;
	}
};

// The receiving side of one bw phase, the payloads checked if verify;
// returns (verified, mismatches).
std::pair<std::uint64_t, std::uint64_t> bw_receive(Node &n, oob::Socket &s,
						   const oob::Message &phase, bool verify,
						   Progress &prog)
{
	const std::uint64_t size = phase.get_u64("size");
	const std::uint64_t slots = phase.get_u64("slots");
	if (!size || size > n.run_chunk() || !slots ||
	    slots > max_bw_slots || n.layout(size).end(slots) > n.rx_len())
		throw std::runtime_error("out-of-band PHASE: bad size or slots");
	BwReceived rx(n.layout(size), phase.get_u64("count"), slots);
	std::optional<PatternChecker> chk;
	if (verify)
		chk.emplace(rx.size);
	const std::uint64_t credit_every = std::max<std::uint64_t>(1, rx.slots / 4);
	const std::uint32_t bits = n.in_bits();

	std::uint64_t credited = 0, credits_out = 0, credit_seq = 0;
	Counters c;
	Watchdog wd(n.cfg(), s, [&] {
		return "bw size " + std::to_string(rx.size) + ": received " +
		       std::to_string(rx.received) + " of " + std::to_string(rx.count) +
		       ", in order " + std::to_string(rx.prefix);
	});
	auto on_event = [&](const Event &ev) {
		wd.progress();
		if (ev.event_type == RV_WC_RDMA_WRITE) {
			if (ev.status)
				bad_status(ev, "a credit write");
			credits_out--;
			return;
		}
		if (ev.event_type != RV_WC_RECV_RDMA_WITH_IMM)
			return;
		if (ev.status)
			bad_status(ev, "a received write");
		rx.arrived(seq_nearest(rx.prefix, immed_payload(ev.imm_data, 32 - bits), bits),
			   ev.byte_len, n.rx(), chk ? &*chk : nullptr, prog);
	};

	const std::optional<std::uint64_t> pkts0 = hw_counter(n.cfg(), "rcvd_pkts");
	s.send(oob::Message{"READY", {}});
	while (credited < rx.count || credits_out) {
		bool posted = false;
		if (rx.prefix > credited &&
		    (rx.prefix - credited >= credit_every || rx.prefix == rx.count)) {
			const int err = n.post(0, 0, credit_len,
					       credit_wr_id | credit_seq,
					       static_cast<std::uint32_t>(rx.prefix));
			if (!err) {
				credited = rx.prefix;
				credits_out++;
				credit_seq++;
				posted = true;
				wd.progress();
			} else if (!Connection::retryable(err)) {
				throw_errno(err, ioctl_describe(RV_IOCTL_POST_RDMA_WR_IMMED));
			} else {
				c.post_retries++;
			}
		}
		if (!n.poll(c, on_event) && !posted)
			wd.idle();
	}
	s.send(rx.done(c, delta(pkts0, hw_counter(n.cfg(), "rcvd_pkts"))));
	return {rx.verified, rx.mismatches};
}

// --- lat ----------------------------------------------------------------

// One end of a lat phase. Message i goes from slot i % 2 of the send
// buffer to slot i % 2 of the peer's receive buffer: two slots, so that
// message i can be stamped while the write of message i - 1 may still
// be completing. The ping end sends message i and then waits for the
// peer's, the pong end the other way round. The slots are in the chunks
// of each buffer (bench/mr_chunks.hpp), so size must be at most
// n.run_chunk().
class LatEnd {
public:
	LatEnd(Node &n, oob::Socket &s, std::uint64_t size, std::uint64_t total,
	       bool ping)
		: n_(n), size_(size), total_(total), own_(n.layout(size)),
		  peer_(n.peer_layout(size)), chk_(size), bits_(n.in_bits()),
		  out_(ping ? "ping" : "pong"), in_(ping ? "pong" : "ping"),
		  wd_(n.cfg(), s, [this] {
			  return "lat size " + std::to_string(size_) + ": waiting for " +
				 in_ + " " + std::to_string(i_) + " of " +
				 std::to_string(total_);
		  })
	{
		if (size > n.run_chunk() || own_.end(2) > n.rx_len() ||
		    own_.end(2) > n.tx_len() || peer_.end(2) > n.peer().mr_len)
			throw std::runtime_error("lat size " + std::to_string(size) +
						 ": two slots do not fit the buffers");
		for (std::uint64_t k = 0; k < 2; k++)
			pattern_fill(n.tx() + own_.offset(k), size, k);
	}
	LatEnd(const LatEnd &) = delete;
	LatEnd &operator=(const LatEnd &) = delete;

	// The message this end is at; done() past the last one.
	[[nodiscard]] std::uint64_t seq() const noexcept { return i_; }
	[[nodiscard]] bool done() const noexcept { return i_ >= total_; }

	// Stamps message seq() into its slot once the slot's last write
	// completed and posts it; the time of the post.
	std::uint64_t send()
	{
		const std::uint64_t slot = i_ % 2;
		while (busy_[slot])
			poll();
		pattern_stamp(n_.tx() + own_.offset(slot), size_, i_);
		const std::uint64_t t = now_ns();
		post_retrying(n_, c_, wd_, [this](const Event &ev) { on_event(ev); },
			      own_.offset(slot), peer_.offset(slot), size_, i_,
			      static_cast<std::uint32_t>(i_));
		busy_[slot] = 1;
		return t;
	}

	// Waits for message seq() of the peer; the time it came.
	std::uint64_t receive()
	{
		while (!got_)
			poll();
		got_ = false;
		return t_got_;
	}

	// Checks the data of message seq() of the peer; on to the next.
	void next()
	{
		verified_++;
		if (auto off = chk_.check(n_.rx() + own_.offset(i_ % 2), i_))
			mismatch(describe_mismatch(size_, i_, *off));
		i_++;
	}

	// Waits for the writes still in flight.
	void drain()
	{
		while (busy_[0] || busy_[1])
			poll();
	}

	[[nodiscard]] std::uint64_t verified() const noexcept { return verified_; }
	[[nodiscard]] std::uint64_t mismatches() const noexcept { return mismatches_; }
	[[nodiscard]] const std::string &first_mismatch() const noexcept { return first_; }
	[[nodiscard]] const Counters &counters() const noexcept { return c_; }

private:
	void poll()
	{
		if (!n_.poll(c_, [this](const Event &ev) { on_event(ev); }))
			wd_.idle();
	}

	void mismatch(std::string what)
	{
		if (!mismatches_++)
			first_ = std::move(what);
	}

	void on_event(const Event &ev)
	{
		wd_.progress();
		if (ev.event_type == RV_WC_RDMA_WRITE) {
			if (ev.status)
				bad_status(ev, std::string("a ") + out_);
			busy_[ev.wr_id % 2] = 0;
			return;
		}
		if (ev.event_type != RV_WC_RECV_RDMA_WITH_IMM)
			return;
		t_got_ = now_ns();
		if (ev.status)
			bad_status(ev, std::string("a ") + in_);
		const std::uint64_t seq = seq_nearest(
			i_, immed_payload(ev.imm_data, 32 - bits_), bits_);
		if (seq != i_ || got_) {
			mismatch(describe_mismatch(size_, seq, 0,
						   "unexpected sequence number"));
			return;
		}
		if (ev.byte_len != size_)
			mismatch(describe_mismatch(size_, seq, 0, "wrong byte_len"));
		got_ = true;
	}

	Node &n_;
	const std::uint64_t size_, total_;
	const SlotLayout own_, peer_;	// this node's buffers, the peer's
	const PatternChecker chk_;
	const std::uint32_t bits_;
	const char *const out_, *const in_;	// "ping", "pong"
	std::uint8_t busy_[2] = {0, 0};
	std::uint64_t i_ = 0, t_got_ = 0;
	bool got_ = false;
	std::uint64_t verified_ = 0, mismatches_ = 0;
	std::string first_;
	Counters c_;
	Watchdog wd_;
};

LatResult lat_ping(Node &n, oob::Socket &s, std::uint64_t size, std::uint64_t count,
		   std::uint64_t warmup, Progress &prog)
{
	const milliseconds to = timeout_of(n.cfg());
	LatResult r;
	r.size = size;
	r.iters = count;
	r.warmup = warmup;

	oob::Message phase{"PHASE", {}};
	phase.set("test", "lat").set("size", size).set("count", count).set("warmup", warmup);
	s.send(phase);
	(void)s.expect("READY", to);

	LatEnd e(n, s, size, warmup + count, true);
	std::vector<std::uint64_t> samples;
	samples.reserve(count);
	while (!e.done()) {
		const std::uint64_t t0 = e.send();
		const std::uint64_t t1 = e.receive();
		if (e.seq() >= warmup)
			samples.push_back((t1 - t0) / 2);
		e.next();
		prog.advance();
	}
	e.drain();

	r.half_rtt = summarize(std::move(samples));
	r.verified = e.verified();
	r.mismatches = e.mismatches();
	r.first_mismatch = e.first_mismatch();
	r.post_retries = e.counters().post_retries;
	r.polls = e.counters().polls;
	r.empty_polls = e.counters().empty_polls;
	oob::Message d = s.expect("DONE", to);
	r.peer_verified = d.get_u64("verified");
	r.peer_mismatches = d.get_u64("mismatches");
	if (r.first_mismatch.empty() && d.has("first_mismatch"))
		r.first_mismatch = d.get("first_mismatch");
	r.peer_polls = d.get_u64("polls");
	r.peer_empty_polls = d.get_u64("empty_polls");
	return r;
}

std::pair<std::uint64_t, std::uint64_t> lat_pong(Node &n, oob::Socket &s,
						 const oob::Message &phase, Progress &prog)
{
	const std::uint64_t size = phase.get_u64("size");
	const std::uint64_t total = phase.get_u64("count") + phase.get_u64("warmup");
	if (!size)
		throw std::runtime_error("out-of-band PHASE: bad size");

	LatEnd e(n, s, size, total, false);
	s.send(oob::Message{"READY", {}});
	while (!e.done()) {
		e.receive();
		e.send();
		e.next();
		prog.advance();
	}
	e.drain();

	oob::Message d{"DONE", {}};
	d.set("verified", e.verified())
		.set("mismatches", e.mismatches())
		.set("polls", e.counters().polls)
		.set("empty_polls", e.counters().empty_polls);
	if (!e.first_mismatch().empty())
		d.set("first_mismatch", e.first_mismatch());
	s.send(d);
	return {e.verified(), e.mismatches()};
}

// The Progress of a whole run of plan, in bytes (bw) or round trips
// (lat, warm-up included), sizes above chunk left out; off without
// cfg.progress.
Progress plan_progress(const NodeConfig &cfg, const Plan &p, std::uint64_t chunk)
{
	if (!cfg.progress)
		return {};
	std::uint64_t total = 0;
	for (std::size_t k = 0; k < p.sizes.size() && k < p.counts.size(); k++)
		if (p.sizes[k] <= chunk)
			total += p.test == Test::bw ? p.sizes[k] * p.counts[k]
						    : p.counts[k] + p.warmup;
	return Progress(cfg.progress, total, "round trips", p.test == Test::bw,
			cfg.progress_interval_ns);
}

// "bw 64 KiB (3/11)": the label of phase k of p.
std::string phase_label(const Plan &p, std::size_t k, const char *who)
{
	return std::string(who) + test_name(p.test) + " " + format_size(p.sizes[k]) +
	       " (" + std::to_string(k + 1) + "/" + std::to_string(p.sizes.size()) + ")";
}

// Runs f; on an exception tells the peer (best effort) and rethrows.
template <typename F>
auto telling_peer(oob::Socket &s, F &&f)
{
	try {
		return f();
	} catch (const std::exception &e) {
		try {
			if (s.valid())
				s.send(oob::Message{"ERROR", {}}.set("msg", e.what()));
		} catch (...) {
			// the peer may be gone already
		}
		throw;
	}
}

} // namespace

const char *test_name(Test t) noexcept
{
	return t == Test::bw ? "bw" : "lat";
}

namespace {

// The slots of size in the plan's buffer, in chunks of chunk bytes (0:
// one MR).
std::uint64_t buffer_slots(const Plan &p, std::uint64_t size, std::uint64_t chunk) noexcept
{
	if (!size)
		return 1;
	if (!chunk || size > chunk)
		return p.buffer / size;
	return SlotLayout{size, chunk}.fit(p.buffer);
}

} // namespace

std::uint32_t bw_rx_slots(const Plan &p, std::uint64_t size, std::uint64_t chunk) noexcept
{
	const std::uint64_t n = buffer_slots(p, size, chunk);
	return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(n, 1, max_bw_slots));
}

std::uint32_t bw_tx_slots(const Plan &p, std::uint64_t size, std::uint64_t chunk) noexcept
{
	const std::uint64_t n = buffer_slots(p, size, chunk);
	return static_cast<std::uint32_t>(
		std::clamp<std::uint64_t>(n, 1, std::max<std::uint32_t>(p.window, 1)));
}

const char *skip_reason(std::uint64_t size, std::uint64_t max_fmr_size,
			std::uint64_t chunk) noexcept
{
	if (size > max_fmr_size)
		return "larger than max_fmr_size";
	if (size > chunk)
		return "larger than the MR chunk";
	return "";
}

std::uint32_t plan_cq_entries(const Plan &p) noexcept
{
	if (p.test == Test::lat)
		return 64;
	std::uint64_t n = 0;
	for (std::uint64_t size : p.sizes)
		n = std::max<std::uint64_t>(n, bw_rx_slots(p, size));
	n += std::max<std::uint32_t>(p.window, 1) + 64;
	return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, RV_MAX_CQ_ENTRIES));
}

void plan_to(oob::Message &m, const Plan &p)
{
	m.set("test", test_name(p.test))
		.set("sizes", join(p.sizes))
		.set("counts", join(p.counts))
		.set("warmup", p.warmup)
		.set("window", p.window)
		.set("buffer", p.buffer)
		.set("verify", std::uint64_t{p.verify});
}

Plan plan_from(const oob::Message &m)
{
	Plan p;
	const std::string &t = m.get("test");
	if (t == "bw")
		p.test = Test::bw;
	else if (t == "lat")
		p.test = Test::lat;
	else
		throw std::runtime_error("out-of-band: unknown test '" + t + "'");
	p.sizes = split(m.get("sizes"), "sizes");
	p.counts = split(m.get("counts"), "counts");
	p.warmup = m.get_u64("warmup");
	p.window = static_cast<std::uint32_t>(m.get_u64("window"));
	p.buffer = m.get_u64("buffer");
	p.verify = !m.has("verify") || m.get_u64("verify") != 0;
	if (p.sizes.empty() || p.sizes.size() != p.counts.size() || !p.window ||
	    p.window > max_window || !p.buffer ||
	    std::find(p.sizes.begin(), p.sizes.end(), 0) != p.sizes.end())
		throw std::runtime_error("out-of-band: inconsistent plan");
	return p;
}

double BwResult::mb_per_s() const noexcept
{
	return ns ? static_cast<double>(bytes) * 1e3 / static_cast<double>(ns) : 0;
}

double BwResult::mmsg_per_s() const noexcept
{
	return ns ? static_cast<double>(messages) * 1e3 / static_cast<double>(ns) : 0;
}

double BwResult::peer_mb_per_s() const noexcept
{
	return peer_ns ? static_cast<double>(bytes) * 1e3 / static_cast<double>(peer_ns)
		       : 0;
}

std::uint64_t ClientReport::mismatches() const noexcept
{
	std::uint64_t n = 0;
	for (const auto &r : bw)
		n += r.mismatches;
	for (const auto &r : lat)
		n += r.mismatches + r.peer_mismatches;
	return n;
}

// Buffers per side, (receive, send), for the sizes up to limit in chunks
// of chunk bytes. bw: the client sends from tx slots and gets credits
// into a page; the server receives into its slots and sends credits
// from a page. lat: two slots of the largest size each way.
static std::pair<std::uint64_t, std::uint64_t> buffer_lens(const Plan &p, bool client,
							   std::uint64_t chunk,
							   std::uint64_t limit)
{
	std::uint64_t big = 0;
	for (std::uint64_t size : p.sizes) {
		if (size > limit)
			continue;
		const SlotLayout l{size, chunk};
		if (p.test == Test::lat)
			big = std::max(big, l.end(2));
		else
			big = std::max(big, l.end(client ? bw_tx_slots(p, size, chunk)
							 : bw_rx_slots(p, size, chunk)));
	}
	big = std::max(big, page_size());	// every size skipped: a page
	if (p.test == Test::lat)
		return {big, big};
	return client ? std::pair{page_size(), big} : std::pair{big, page_size()};
}

ClientReport run_client(const NodeConfig &cfg, const Plan &plan, oob::Socket sock)
{
	return telling_peer(sock, [&] {
		const milliseconds to = timeout_of(cfg);
		ClientReport rep;
		rep.plan = plan;

		oob::Message hello = sock.expect("HELLO", to);
		if (hello.get_u64("proto") != proto_version)
			throw std::runtime_error("out-of-band: the server speaks protocol " +
						 hello.get("proto") + ", this client " +
						 std::to_string(proto_version) +
						 " (run the same rvbench on both nodes)");
		auto key_bytes = oob::from_hex(hello.get("job_key"));
		JobKey key{};
		if (!key_bytes || key_bytes->size() != key.size())
			throw std::runtime_error("out-of-band: bad job key");
		std::copy(key_bytes->begin(), key_bytes->end(), key.begin());
		if (cfg.job_key && *cfg.job_key != key)
			throw std::runtime_error("the server uses another job key than --job-key");

		Node n(cfg, key, plan_cq_entries(plan));
		// The server's chunks are not known yet: buffers for the
		// sizes this node's allow.
		auto [rx, tx] = buffer_lens(plan, true, n.chunk(), n.chunk());
		n.buffers(rx, tx);
		rep.self = n.info();
		rep.abi = n.abi();
		oob::Message info{"INFO", {}};
		info.set("proto", proto_version);
		info_to(info, rep.self);
		plan_to(info, plan);
		sock.send(info);
		rep.peer = info_from(sock.expect("INFO", to));
		n.connect(rep.peer, sock);
		rep.path_mtu = n.path_mtu();
		rep.connect_ns = n.connect_ns();
		rep.mr_chunk = n.run_chunk();
		const std::uint64_t max_fmr =
			std::min(rep.self.max_fmr_size, rep.peer.max_fmr_size);

		Progress prog = plan_progress(cfg, plan, rep.mr_chunk);
		for (std::size_t k = 0; k < plan.sizes.size(); k++) {
			const std::uint64_t size = plan.sizes[k];
			if (size > rep.mr_chunk) {
				const char *why = skip_reason(size, max_fmr, rep.mr_chunk);
				if (plan.test == Test::bw) {
					rep.bw.emplace_back();
					rep.bw.back().size = size;
					rep.bw.back().skipped = why;
				} else {
					rep.lat.emplace_back();
					rep.lat.back().size = size;
					rep.lat.back().skipped = why;
				}
				log(cfg, std::string(test_name(plan.test)) + " " +
						 format_size(size) + " skipped: " + why);
				continue;
			}
			prog.set_label(phase_label(plan, k, ""));
			if (plan.test == Test::bw)
				rep.bw.push_back(bw_send(n, sock, plan, size, plan.counts[k],
							 prog));
			else
				rep.lat.push_back(lat_ping(n, sock, size, plan.counts[k],
							   plan.warmup, prog));
			log(cfg, std::string(test_name(plan.test)) + " " +
					 format_size(size) + " done");
		}
		prog.finish(std::string(test_name(plan.test)) + " done");

		rep.conn = n.conn().stats();
		for (std::uint32_t q = 0; q < rep.conn.num_conn && q < RV_MAX_NUM_CONN; q++) {
			try {
				rep.qp_post_write.push_back(
					n.conn().stats(static_cast<std::uint8_t>(q)).post_write);
			} catch (const std::system_error &) {
				rep.qp_post_write.clear();
				break;
			}
		}
		sock.send(oob::Message{"BYE", {}});
		(void)sock.expect("BYE", to);
		return rep;
	});
}

ServerReport run_server(const NodeConfig &cfg, oob::Socket sock)
{
	return telling_peer(sock, [&] {
		const milliseconds to = timeout_of(cfg);
		ServerReport rep;
		const JobKey key = cfg.job_key ? *cfg.job_key : random_job_key();

		oob::Message hello{"HELLO", {}};
		hello.set("proto", proto_version)
			.set("job_key", oob::to_hex(key.data(), key.size()));
		sock.send(hello);
		oob::Message ci = sock.expect("INFO", to);
		if (!ci.has("proto") || ci.get_u64("proto") != proto_version)
			throw std::runtime_error(
				"out-of-band: the client speaks protocol " +
				(ci.has("proto") ? ci.get("proto") : std::string("1")) +
				", this server " + std::to_string(proto_version) +
				" (run the same rvbench on both nodes)");
		rep.plan = plan_from(ci);
		rep.peer = info_from(ci);

		Node n(cfg, key, plan_cq_entries(rep.plan));
		rep.mr_chunk = std::min(n.chunk(), rep.peer.mr_chunk);
		auto [rx, tx] = buffer_lens(rep.plan, false, n.chunk(), rep.mr_chunk);
		n.buffers(rx, tx);
		rep.self = n.info();
		oob::Message info{"INFO", {}};
		info_to(info, rep.self);
		sock.send(info);
		n.connect(rep.peer, sock);

		// The client sends a PHASE for each size up to mr_chunk.
		std::vector<std::size_t> runs;
		for (std::size_t k = 0; k < rep.plan.sizes.size(); k++) {
			if (rep.plan.sizes[k] <= rep.mr_chunk)
				runs.push_back(k);
			else
				rep.skipped++;
		}
		Progress prog = plan_progress(cfg, rep.plan, rep.mr_chunk);
		for (;;) {
			oob::Message m = sock.recv(to);
			if (m.verb == "BYE") {
				sock.send(oob::Message{"BYE", {}});
				prog.finish(std::string("server: ") +
					    test_name(rep.plan.test) + " done");
				break;
			}
			if (m.verb == "ERROR")
				throw std::runtime_error("the client failed: " +
							 (m.has("msg") ? m.get("msg")
								       : std::string("?")));
			if (m.verb != "PHASE")
				throw std::runtime_error("out-of-band: unexpected " + m.verb);
			if (rep.phases < runs.size())
				prog.set_label(
					phase_label(rep.plan, runs[rep.phases], "server: "));
			auto [v, bad] = m.get("test") == "lat" ? lat_pong(n, sock, m, prog)
							       : bw_receive(n, sock, m, rep.plan.verify,
									    prog);
			rep.phases++;
			rep.verified += v;
			rep.mismatches += bad;
		}
		return rep;
	});
}

} // namespace rv::bench
