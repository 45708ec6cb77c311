// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/transfer_report.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string_view>

#include <toolkit/json.hpp>
#include <toolkit/rdma_sysfs.hpp>

namespace rvbench {

namespace {

void write_node(rv::json::Writer &w, const rv::bench::NodeInfo &n)
{
	w.begin_object()
		.member("device", n.device)
		.member("port", n.port)
		.member("ip", rv::format_ipv4(n.ip))
		.member("gid", rv::format_gid(n.gid))
		.member("gid_index", n.gid_index)
		.member("rv_index", n.rv_index)
		.member("index_bits", n.index_bits)
		.member("q_depth", n.q_depth)
		.member("port_mtu", rv::ib_mtu_to_bytes(n.mtu))
		.member("max_fmr_size", n.max_fmr_size)
		.member("mr_chunk", n.mr_chunk)
		.end_object();
}

const char *mode_name(const Endpoint &ep)
{
	switch (ep.kind) {
	case Endpoint::Kind::loopback:
		return ep.threads ? "loopback-threads" : "loopback-fork";
	case Endpoint::Kind::listen:
		return "server";
	default:
		return "client";
	}
}

template <typename T>
void member_opt(rv::json::Writer &w, std::string_view k, const std::optional<T> &v)
{
	if (v)
		w.member(k, *v);
	else
		w.member(k, nullptr);
}

std::string node_text(const rv::bench::NodeInfo &n)
{
	return n.device + " (" + rv::format_ipv4(n.ip) + ", rv_index " +
	       std::to_string(n.rv_index) + ")";
}

// A size that did not run: its size and why.
template <typename Result>
bool write_skipped(rv::json::Writer &w, const Result &r)
{
	if (r.skipped.empty())
		return false;
	w.begin_object()
		.member("size", r.size)
		.member("skipped", r.skipped)
		.end_object();
	return true;
}

void write_bw(rv::json::Writer &w, const rv::bench::BwResult &b)
{
	if (write_skipped(w, b))
		return;
	w.begin_object()
		.member("size", b.size)
		.member("messages", b.messages)
		.member("bytes", b.bytes)
		.member("seconds", b.seconds())
		.member("mb_per_s", b.mb_per_s())
		.member("mmsg_per_s", b.mmsg_per_s())
		.member("window", b.window)
		.member("slots", b.slots)
		.member("post_retries", b.post_retries)
		.member("sender_polls", b.polls)
		.member("sender_empty_polls", b.empty_polls)
		.member("receiver_polls", b.peer_polls)
		.member("receiver_empty_polls", b.peer_empty_polls)
		.member("receiver_mb_per_s", b.peer_mb_per_s())
		.member("credits", b.credits)
		.member("verify", b.verify)
		.member("received", b.received)
		.member("verified", b.verified)
		.member("mismatches", b.mismatches);
	if (!b.first_mismatch.empty())
		w.member("first_mismatch", b.first_mismatch);
	member_opt(w, "sender_rcvd_pkts", b.rcvd_pkts);
	member_opt(w, "receiver_rcvd_pkts", b.peer_rcvd_pkts);
	w.end_object();
}

void write_lat(rv::json::Writer &w, const rv::bench::LatResult &l)
{
	if (write_skipped(w, l))
		return;
	w.begin_object()
		.member("size", l.size)
		.member("iters", l.iters)
		.member("warmup", l.warmup)
		.member("median_ns", l.half_rtt.median)
		.member("p99_ns", l.half_rtt.p99)
		.member("mean_ns", l.half_rtt.mean)
		.member("min_ns", l.half_rtt.min)
		.member("max_ns", l.half_rtt.max)
		.member("post_retries", l.post_retries)
		.member("polls", l.polls)
		.member("empty_polls", l.empty_polls)
		.member("peer_polls", l.peer_polls)
		.member("peer_empty_polls", l.peer_empty_polls)
		.member("verified", l.verified)
		.member("peer_verified", l.peer_verified)
		.member("mismatches", l.mismatches + l.peer_mismatches);
	if (!l.first_mismatch.empty())
		w.member("first_mismatch", l.first_mismatch);
	w.end_object();
}

// The connection's counters at the end of the run.
void write_conn_stats(rv::json::Writer &w, const rv::bench::ClientReport &r)
{
	w.key("conn_stats").begin_object()
		.member("flags", r.conn.flags)
		.member("post_write", r.conn.post_write)
		.member("post_write_fail", r.conn.post_write_fail)
		.member("post_write_bytes", r.conn.post_write_bytes)
		.member("send_write_cqe", r.conn.send_write_cqe)
		.member("send_write_cqe_fail", r.conn.send_write_cqe_fail)
		.member("recv_write_cqe", r.conn.recv_write_cqe)
		.member("recv_write_bytes", r.conn.recv_write_bytes)
		.member("conn_recovery", r.conn.conn_recovery);
	w.key("qp_post_write").begin_array();
	for (auto n : r.qp_post_write)
		w.value(n);
	w.end_array().end_object();
}

} // namespace

std::string transfer_json(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	const bool bw = o.test == rv::bench::Test::bw;
	rv::json::Writer w;

	w.begin_object()
		.member("command", bw ? "bw" : "lat")
		.member("mode", mode_name(o.ep))
		.member("rv_device", o.common.rv_path);
	w.key("abi").begin_object()
		.member("major", r.abi.major)
		.member("minor", r.abi.minor)
		.end_object();
	w.key("local");
	write_node(w, r.self);
	w.key("peer");
	write_node(w, r.peer);
	w.member("path_mtu", rv::ib_mtu_to_bytes(r.path_mtu))
		.member("num_conn", r.conn.num_conn)
		.member("connect_us", r.connect_ns / 1000)
		.member("mr_chunk", r.mr_chunk);
	if (bw)
		w.member("window", r.plan.window)
			.member("buffer", r.plan.buffer)
			.member("verify", r.plan.verify);
	else
		w.member("warmup", r.plan.warmup);

	w.key("results").begin_array();
	for (const auto &b : r.bw)
		write_bw(w, b);
	for (const auto &l : r.lat)
		write_lat(w, l);
	w.end_array();
	write_conn_stats(w, r);
	w.member("mismatches", r.mismatches()).end_object();
	return w.str() + "\n";
}

namespace {

// snprintf into a string (of one line).
[[gnu::format(printf, 1, 2)]] std::string format(const char *fmt, ...)
{
	char line[320];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return line;
}

// The line of a size that did not run: why, and the limits of both nodes.
template <typename Result>
std::string skipped_row(const rv::bench::ClientReport &r, const Result &s)
{
	return format("%9s skipped: %s (MRs of %s; max_fmr_size %" PRIu64 " here, %" PRIu64
		      " at the peer)\n",
		      rv::bench::format_size(s.size).c_str(), s.skipped.c_str(),
		      rv::bench::format_size(r.mr_chunk).c_str(), r.self.max_fmr_size,
		      r.peer.max_fmr_size);
}

std::string bw_table(const rv::bench::ClientReport &r)
{
	std::string out = format("; window %u, buffer %s in MRs of %s\n", r.plan.window,
				 rv::bench::format_size(r.plan.buffer).c_str(),
				 rv::bench::format_size(r.mr_chunk).c_str());
	out += r.plan.verify ? "every message checked by the receiver\n\n"
			     : "payloads not checked (--no-verify): the receiver checks "
			       "each write's status, length and sequence number\n\n";
	out += format("%9s %9s %10s %9s %6s %7s %19s %19s %9s %6s %10s\n",
		      "size", "messages", "MB/s", "Mmsg/s", "window",
		      "retries", "tx polls/empty", "rx polls/empty",
		      "checked", "wrong", "peer pkts");
	for (const auto &b : r.bw) {
		if (!b.skipped.empty()) {
			out += skipped_row(r, b);
			continue;
		}
		std::string txp = std::to_string(b.polls) + "/" +
				  std::to_string(b.empty_polls);
		std::string rxp = std::to_string(b.peer_polls) + "/" +
				  std::to_string(b.peer_empty_polls);
		std::string pkts = b.peer_rcvd_pkts ? std::to_string(*b.peer_rcvd_pkts) : "-";
		out += format("%9s %9" PRIu64 " %10.1f %9.4f %6u %7" PRIu64
			      " %19s %19s %9" PRIu64 " %6" PRIu64 " %10s\n",
			      rv::bench::format_size(b.size).c_str(), b.messages,
			      b.mb_per_s(), b.mmsg_per_s(), b.window,
			      b.post_retries, txp.c_str(), rxp.c_str(),
			      b.verified, b.mismatches, pkts.c_str());
	}
	out += "(MB = 10^6 bytes; the sender's time from its first post to "
	       "its last completion)\n";
	return out;
}

std::string lat_table(const rv::bench::ClientReport &r)
{
	std::string out = format("; %" PRIu64 " untimed round trips first\n\n",
				 r.plan.warmup);
	out += format("%9s %8s %10s %10s %10s %10s %10s %19s %9s %6s\n",
		      "size", "iters", "median us", "p99 us", "mean us",
		      "min us", "max us", "polls/empty", "checked", "wrong");
	for (const auto &l : r.lat) {
		if (!l.skipped.empty()) {
			out += skipped_row(r, l);
			continue;
		}
		std::string p = std::to_string(l.polls) + "/" +
				std::to_string(l.empty_polls);
		out += format("%9s %8" PRIu64 " %10.2f %10.2f %10.2f %10.2f %10.2f %19s %9" PRIu64
			      " %6" PRIu64 "\n",
			      rv::bench::format_size(l.size).c_str(), l.iters,
			      static_cast<double>(l.half_rtt.median) / 1e3,
			      static_cast<double>(l.half_rtt.p99) / 1e3,
			      l.half_rtt.mean / 1e3,
			      static_cast<double>(l.half_rtt.min) / 1e3,
			      static_cast<double>(l.half_rtt.max) / 1e3,
			      p.c_str(), l.verified + l.peer_verified,
			      l.mismatches + l.peer_mismatches);
	}
	out += "(half round trip: post of the ping to the pong's event, "
	       "halved; polls are the client's)\n";
	return out;
}

} // namespace

std::string transfer_table(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	const bool bw = o.test == rv::bench::Test::bw;
	std::string out = format("rvbench %s: %s -> %s via %s (ABI %s, %s)\n",
				 bw ? "bw" : "lat", node_text(r.self).c_str(),
				 node_text(r.peer).c_str(), o.common.rv_path.c_str(),
				 r.abi.to_string().c_str(), mode_name(o.ep));
	out += format("connection: %u QPs, path MTU %u, connected in %.1f ms",
		      r.conn.num_conn, rv::ib_mtu_to_bytes(r.path_mtu),
		      static_cast<double>(r.connect_ns) / 1e6);
	out += bw ? bw_table(r) : lat_table(r);
	for (const auto &b : r.bw)
		if (!b.first_mismatch.empty())
			out += "first wrong message: " + b.first_mismatch + "\n";
	for (const auto &l : r.lat)
		if (!l.first_mismatch.empty())
			out += "first wrong message: " + l.first_mismatch + "\n";
	if (r.mismatches())
		out += format("FAILED: %" PRIu64 " wrong messages\n", r.mismatches());
	return out;
}

std::string server_text(const TransferOptions &o, const rv::bench::ServerReport &r)
{
	if (o.common.json) {
		rv::json::Writer w;
		w.begin_object()
			.member("command", rv::bench::test_name(r.plan.test))
			.member("mode", "server");
		w.key("local");
		write_node(w, r.self);
		w.key("peer");
		write_node(w, r.peer);
		w.member("phases", r.phases).member("skipped", r.skipped);
		if (r.plan.test == rv::bench::Test::bw)
			w.member("verify", r.plan.verify);
		w.member("verified", r.verified)
			.member("mismatches", r.mismatches)
			.end_object();
		return w.str() + "\n";
	}
	const std::string skipped =
		r.skipped ? format(" (%" PRIu64 " skipped: larger than the MR chunk, %s)",
				   r.skipped, rv::bench::format_size(r.mr_chunk).c_str())
			  : std::string();
	return format("rvbench %s server: %s <- %s: %" PRIu64 " sizes%s, %" PRIu64
		      " messages checked, %" PRIu64 " wrong%s\n",
		      rv::bench::test_name(r.plan.test), node_text(r.self).c_str(),
		      node_text(r.peer).c_str(), r.phases, skipped.c_str(), r.verified,
		      r.mismatches,
		      r.plan.verify ? "" : " (--no-verify: payloads not checked)");
}

} // namespace rvbench
