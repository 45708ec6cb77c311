// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the end of the run: the reports summed, the invariants
// checked, the summary printed (key: value lines or --json).
#include "soak_controller.hpp"

#include <cstdio>

namespace rv::soak {

void Totals::add_send(const SendReport &a)
{
	s.grants += a.grants;
	s.returned += a.returned;
	s.started += a.started;
	s.messages += a.messages;
	s.bytes += a.bytes;
	s.posts += a.posts;
	s.post_eagain += a.post_eagain;
	s.post_nocredit += a.post_nocredit;
	s.post_eio += a.post_eio;
	s.post_other += a.post_other;
	s.cqe_ok += a.cqe_ok;
	s.cqe_err += a.cqe_err;
	s.cqe_err_flush += a.cqe_err_flush;
	s.cqe_unknown += a.cqe_unknown;
	s.cqe_bad += a.cqe_bad;
	s.reposts += a.reposts;
	s.outstanding_end += a.outstanding_end;
	s.active_end += a.active_end;
	s.buf_churn += a.buf_churn;
	s.sub_mr += a.sub_mr;
}

void Totals::add_recv(const RecvReport &b)
{
	r.grants += b.grants;
	r.releases += b.releases;
	r.returns += b.returns;
	r.events += b.events;
	r.verified += b.verified;
	r.bytes_verified += b.bytes_verified;
	r.duplicates += b.duplicates;
	r.late_duplicates += b.late_duplicates;
	r.excess_events += b.excess_events;
	r.stray_events += b.stray_events;
	r.stray_releases += b.stray_releases;
	r.bad_status += b.bad_status;
	r.bad_index += b.bad_index;
	r.bad_len += b.bad_len;
	r.bad_conn_handle += b.bad_conn_handle;
	r.lost += b.lost;
	r.corrupt_msgs += b.corrupt_msgs;
	r.corrupt_bytes += b.corrupt_bytes;
	r.open_end += b.open_end;
	r.abandoned += b.abandoned;
	r.churn_remap += b.churn_remap;
	r.churn_fixed += b.churn_fixed;
	r.churn_dontneed += b.churn_dontneed;
	r.churn_evict += b.churn_evict;
	r.rereg += b.rereg;
	r.stale_mr += b.stale_mr;
	// The first corrupt message seen, for the failure message.
	if (b.corrupt_msgs && r.corrupt_msgs == b.corrupt_msgs) {
		r.first_bad_sender = b.first_bad_sender;
		r.first_bad_seq = b.first_bad_seq;
		r.first_bad_offset = b.first_bad_offset;
	}
}

void Totals::add(const Worker &w)
{
	add_send(*w.send);
	add_recv(*w.recv);
	last_ok_ns = std::max(last_ok_ns, w.send->last_ok_ns);
	min_sent = std::min(min_sent, w.send->messages);
	min_verified = std::min(min_verified, w.recv->verified);
	overflow += w.misc->overflow;
	stats_disagree += !w.misc->event_stats_agree;
}

// Another node's sums (last_ok_ns is of its own clock: not taken).
void Totals::merge(const Totals &o)
{
	add_send(o.s);
	add_recv(o.r);
	min_sent = std::min(min_sent, o.min_sent);
	min_verified = std::min(min_verified, o.min_verified);
	overflow += o.overflow;
	stats_disagree += o.stats_disagree;
}

// What only this VM can see: its workers' exits and reports, summed per
// node.
void Controller::evaluate_local()
{
	reported_ = true;
	for (const std::string &n : notes_)
		fail(n);
	for (unsigned k = 0; k < w_.size(); k++) {
		const Worker &w = w_[k];
		const std::string who = "worker " + std::to_string(first_ + k) + ": ";
		if (w.status && !w.status->ok())
			fail(who + w.status->str());
		if (!w.reported()) {
			reported_ = false;
			fail(who + "no report");
			continue;
		}
		const std::string err = who + w.misc->error;
		if (w.misc->result && std::find(notes_.begin(), notes_.end(), err) == notes_.end())
			fail(err);
		NodeResult &nr = node_[(first_ + k) / o_.procs];
		nr.t.add(w);
		const rv::ConnStats &cs = *w.conn;
		if (!nr.have_cs || cs.post_write + cs.recv_write_cqe >=
					   nr.cs.post_write + nr.cs.recv_write_cqe)
			nr.cs = cs;
		nr.have_cs = true;
		nr.recoveries = std::max(nr.recoveries, cs.conn_recovery);
		// (the count is 0 once the connection failed for good)
		if (w.send->conn_count_last > w.send->conn_count_first)
			nr.conn_count_delta = std::max(nr.conn_count_delta,
						       w.send->conn_count_last -
							       w.send->conn_count_first);
	}
	if (dropped_)
		fail(std::to_string(dropped_) + " grants/releases for a process that was gone");
	std::lock_guard lk(mu_);
	for (unsigned i = 0; i < 2; i++) {
		if (!local(i))
			continue;
		node_[i].have = reported_;
		node_[i].after_last_flap =
			!flaps_.empty() && node_[i].t.last_ok_ns > ns_of(flaps_.back().up);
	}
}

// The invariants, over both nodes' numbers.
void Controller::evaluate()
{
	for (const std::string &f : peer_failures_)
		fail(vm_name(1 - me_) + ": " + f);
	recoveries_ = node_[0].recoveries + node_[1].recoveries;
	if (!node_[0].have || !node_[1].have)
		return;
	all_.merge(node_[0].t);
	all_.merge(node_[1].t);
	evaluate_totals();
	evaluate_nodes();
	evaluate_flaps();
}

void Controller::evaluate_totals()
{
	const SendReport &s = all_.s;
	const RecvReport &r = all_.r;
	const std::uint64_t completions = s.cqe_ok + s.cqe_err;
	lost_completions_ = s.outstanding_end +
			    (s.posts > completions ? s.posts - completions : 0);
	if (lost_completions_)
		fail(std::to_string(lost_completions_) + " posts without a completion");
	if (completions > s.posts || s.cqe_unknown)
		fail(std::to_string(s.cqe_unknown) + " completions of no outstanding post (" +
		     std::to_string(completions) + " completions for " +
		     std::to_string(s.posts) + " posts)");
	if (s.cqe_bad)
		fail(std::to_string(s.cqe_bad) + " completions with a wrong conn_handle or byte_len");
	if (s.active_end)
		fail(std::to_string(s.active_end) + " messages never finished");
	if (s.post_eio || s.post_other)
		fail("posts failed for good: " + std::to_string(s.post_eio) + " EIO, " +
		     std::to_string(s.post_other) + " other");
	if (s.messages != r.verified + r.corrupt_msgs || r.lost)
		fail(std::to_string(s.messages) + " successful messages but " +
		     std::to_string(r.verified) + " verified, " +
		     std::to_string(r.corrupt_msgs) + " corrupt, " + std::to_string(r.lost) +
		     " never delivered");
	if (r.releases != s.messages || r.returns != s.returned || r.grants != s.grants)
		fail("grants out of step: issued " + std::to_string(r.grants) + ", received " +
		     std::to_string(s.grants) + "; released " + std::to_string(r.releases) +
		     " of " + std::to_string(s.messages) + ", returned " +
		     std::to_string(r.returns) + " of " + std::to_string(s.returned));
	if (r.corrupt_bytes || r.corrupt_msgs)
		fail(std::to_string(r.corrupt_bytes) + " corrupt bytes in " +
		     std::to_string(r.corrupt_msgs) + " messages (first: message " +
		     std::to_string(r.first_bad_seq) + " of worker " +
		     std::to_string(r.first_bad_sender) + " at offset " +
		     std::to_string(r.first_bad_offset) + ")");
	if (r.stray_events || r.stray_releases || r.excess_events)
		fail(std::to_string(r.stray_events) + " stray deliveries, " +
		     std::to_string(r.excess_events) + " more deliveries than posts, " +
		     std::to_string(r.stray_releases) + " stray releases");
	if (r.bad_status || r.bad_index || r.bad_len || r.bad_conn_handle)
		fail("bad receive events: status " + std::to_string(r.bad_status) +
		     ", index " + std::to_string(r.bad_index) + ", byte_len " +
		     std::to_string(r.bad_len) + ", conn_handle " +
		     std::to_string(r.bad_conn_handle));
	if (r.open_end)
		fail(std::to_string(r.open_end) + " grants still open at the end");
	if (r.stale_mr)
		fail(std::to_string(r.stale_mr) + " REG_MEM after replaced pages gave the old MR");
	if (all_.overflow)
		fail(std::to_string(all_.overflow) + " events lost to full rings");
	if (all_.stats_disagree)
		fail(std::to_string(all_.stats_disagree) +
		     " processes whose GET_EVENT_STATS differ from the events they read");
	if (all_.min_sent == 0 || all_.min_verified == 0)
		fail("a process sent or received no message at all");
}

// Each node's device and connection, as the kernel counted them.
void Controller::evaluate_nodes()
{
	for (unsigned i = 0; i < 2; i++) {
		NodeResult &nr = node_[i];
		const std::uint64_t pages = nr.t.r.bytes_verified / 4096;
		const std::uint64_t delta = nr.rx_after - nr.rx_before;
		if (delta < pages || !delta)
			fail(nr.dev + " rcvd_pkts rose by " + std::to_string(delta) +
			     ", less than the " + std::to_string(pages) + " pages it received");
		const rv::ConnStats &cs = nr.cs;
		if (cs.post_write != nr.t.s.posts || cs.send_write_cqe != nr.t.s.cqe_ok ||
		    cs.send_write_cqe_fail != nr.t.s.cqe_err ||
		    cs.recv_write_cqe != nr.t.r.events || cs.recv_drop ||
		    cs.outstand_send_write)
			fail(nr.dev + ": the connection's counters differ: post_write " +
			     std::to_string(cs.post_write) + " (posts " +
			     std::to_string(nr.t.s.posts) + "), send_write_cqe " +
			     std::to_string(cs.send_write_cqe) + "/" +
			     std::to_string(cs.send_write_cqe_fail) + " (completions " +
			     std::to_string(nr.t.s.cqe_ok) + "/" + std::to_string(nr.t.s.cqe_err) +
			     "), recv_write_cqe " + std::to_string(cs.recv_write_cqe) +
			     " (deliveries " + std::to_string(nr.t.r.events) + "), recv_drop " +
			     std::to_string(cs.recv_drop) + ", outstanding " +
			     std::to_string(cs.outstand_send_write));
	}
}

void Controller::evaluate_flaps()
{
	if (o_.flap_interval <= 0)
		return;
	if (flaps_.empty())
		fail("no link flap happened (the run is too short for --flap-interval)");
	bool long_flap = false;
	for (const Flap &f : flaps_) {
		if (!f.error.empty())
			fail("link flap at " + std::to_string(f.start_s) + " s: " + f.error);
		// Long enough to lose the QPs: a downed link fails the sends
		// at once; silent loss must outlast the RC retries (7 x
		// 0.5 s) and heartbeats.
		long_flap = long_flap || f.down_ms >= (o_.flap_drop ? 10000u : 4500u);
	}
	if (long_flap && !recoveries_)
		fail("the link was down for seconds but no connection recovered");
	if (!flaps_.empty() && !node_[0].after_last_flap && !node_[1].after_last_flap) {
		// The controllers' TCP connection carries every grant
		// and release between the VMs: while it is held up no
		// process can send, however well rv recovered.
		char held[160] = "";
		if (two_vm_ && link_gap_s_ >= 5)
			std::snprintf(held, sizeof(held),
				      " (the controllers' connection, which carries the "
				      "grants and releases, was silent for %.0f s)",
				      link_gap_s_);
		fail(std::string("no message completed after the last link flap") + held);
	}
}

void Controller::print_text() const
{
	const SendReport &s = all_.s;
	const RecvReport &r = all_.r;
	auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };

	if (two_vm_)
		std::printf("vm: %c (node %u, %zu processes; the other VM node %u)\n",
			    o_.role, me_, w_.size(), 1 - me_);
	std::printf("processes: %u (%u per node)\n", 2 * o_.procs, o_.procs);
	std::printf("duration_s: %.1f (run %.1f, drain %.1f)\n", total_s_,
		    since(t0_, t_stop_), drain_s_);
	std::printf("seed: %llu\n", u(o_.seed));
	std::printf("messages_sent: %llu\n", u(s.messages));
	std::printf("messages_verified: %llu\n", u(r.verified));
	std::printf("bytes_verified: %llu\n", u(r.bytes_verified));
	std::printf("posts: %llu\n", u(s.posts));
	std::printf("error_completions: %llu (%llu flushed)\n", u(s.cqe_err),
		    u(s.cqe_err_flush));
	std::printf("retries: %llu (reposts after an error %llu, EAGAIN %llu, "
		    "EBUSY/ENOMEM %llu)\n",
		    u(s.reposts + s.post_eagain + s.post_nocredit), u(s.reposts),
		    u(s.post_eagain), u(s.post_nocredit));
	std::printf("duplicates: %llu (after the release %llu)\n", u(r.duplicates),
		    u(r.late_duplicates));
	std::printf("link_flaps: %zu\n", flaps_.size());
	if (two_vm_)
		std::printf("control_link_silence_s: %.1f (longest, from %s)\n", link_gap_s_,
			    vm_name(1 - me_).c_str());
	std::printf("recoveries: %u (%s %u, %s %u)\n", recoveries_,
		    node_[0].dev.c_str(), node_[0].recoveries, node_[1].dev.c_str(),
		    node_[1].recoveries);
	std::printf("qp_reestablishments: %llu\n",
		    u(node_[0].conn_count_delta + node_[1].conn_count_delta));
	std::printf("lost_completions: %llu\n", u(lost_completions_));
	std::printf("lost_deliveries: %llu\n", u(r.lost));
	std::printf("corrupt_bytes: %llu\n", u(r.corrupt_bytes));
	std::printf("mr_churn: remap %llu fixed %llu dontneed %llu evict %llu "
		    "rereg %llu source %llu own_mr %llu\n",
		    u(r.churn_remap), u(r.churn_fixed), u(r.churn_dontneed),
		    u(r.churn_evict), u(r.rereg), u(s.buf_churn), u(s.sub_mr));
	for (const NodeResult &n : node_)
		std::printf("rcvd_pkts_delta: %s %llu (>= %llu pages received)\n",
			    n.dev.c_str(), u(n.rx_after - n.rx_before),
			    u(n.t.r.bytes_verified / 4096));
	for (const NodeResult &n : node_) {
		if (!n.have_cs)
			continue;
		std::printf("conn_stats: %s %s\n", n.dev.c_str(),
			    rv::test::to_string(n.cs).c_str());
		std::printf("conn_cm: %s req_error %u rep_error %u dreq_error %u "
			    "drep_sent %u drep_recv %u timewait %u unexp_event %u\n",
			    n.dev.c_str(), n.cs.req_error, n.cs.rep_error,
			    n.cs.dreq_error, n.cs.drep_sent, n.cs.drep_recv,
			    n.cs.timewait, n.cs.unexp_event);
	}
	std::printf("vmstat_delta:");
	for (std::size_t i = 0; i < vmstat0_.size(); i++)
		std::printf(" %s %llu", vmstat_keys[i], u(vmstat1_[i] - vmstat0_[i]));
	std::printf("\n");
	for (const Flap &f : flaps_)
		std::printf("flap: at %.1f s down %u ms, up at %.1f s, ports ACTIVE at "
			    "%.1f s%s%s\n",
			    f.start_s, f.down_ms, f.up_s, f.active_s,
			    f.error.empty() ? "" : ": ", f.error.c_str());
	for (const std::string &f : failures_)
		std::printf("failure: %s\n", f.c_str());
	if (failures_.empty())
		std::printf("result: ok\n");
	else
		std::printf("result: FAIL (%zu invariants broken)\n", failures_.size());
}

void Controller::print_json() const
{
	rv::json::Writer j(2);

	j.begin_object();
	j.member("result", failures_.empty() ? "ok" : "fail");
	j.key("failures").begin_array();
	for (const std::string &f : failures_)
		j.value(f);
	j.end_array();
	json_config(j);
	j.member("processes", 2 * o_.procs);
	if (two_vm_)
		j.member("vm", std::string(1, o_.role));
	json_counts(j);
	json_nodes(j);
	json_flaps(j);
	j.end_object();
	std::puts(j.str().c_str());
}

void Controller::json_config(rv::json::Writer &j) const
{
	j.key("config").begin_object()
		.member("seconds", o_.seconds)
		.member("procs_per_node", o_.procs)
		.member("flap_interval_s", o_.flap_interval)
		.member("flap_down_ms", o_.flap_down_ms)
		.member("flap_down_min_ms", o_.flap_down_min_ms)
		.member("flap_node", o_.flap_node)
		.member("flap_mode", o_.flap_drop ? "drop" : "link")
		.member("seed", o_.seed)
		.member("slots", o_.slots)
		.member("window", o_.window)
		.member("max_size", o_.max_size)
		.member("churn_pct", o_.churn)
		.member("reconnect_timeout", o_.reconnect_timeout)
		.member("two_vm", two_vm_)
		.end_object();
}

void Controller::json_counts(rv::json::Writer &j) const
{
	const SendReport &s = all_.s;
	const RecvReport &r = all_.r;

	j.member("duration_s", total_s_);
	j.member("run_s", since(t0_, t_stop_));
	j.member("drain_s", drain_s_);
	j.member("messages_sent", s.messages);
	j.member("messages_verified", r.verified);
	j.member("bytes_verified", r.bytes_verified);
	j.member("posts", s.posts);
	j.member("error_completions", s.cqe_err);
	j.member("flushed_completions", s.cqe_err_flush);
	j.member("retries", s.reposts + s.post_eagain + s.post_nocredit);
	j.member("reposts", s.reposts);
	j.member("post_eagain", s.post_eagain);
	j.member("post_nocredit", s.post_nocredit);
	j.member("duplicates", r.duplicates);
	j.member("late_duplicates", r.late_duplicates);
	j.member("link_flaps", flaps_.size());
	if (two_vm_)
		j.member("control_link_silence_s", link_gap_s_);
	j.member("recoveries", recoveries_);
	j.member("qp_reestablishments",
		 node_[0].conn_count_delta + node_[1].conn_count_delta);
	j.member("lost_completions", lost_completions_);
	j.member("lost_deliveries", r.lost);
	j.member("corrupt_bytes", r.corrupt_bytes);
	j.member("corrupt_messages", r.corrupt_msgs);
	j.key("mr_churn").begin_object()
		.member("remap", r.churn_remap)
		.member("fixed", r.churn_fixed)
		.member("dontneed", r.churn_dontneed)
		.member("evict", r.churn_evict)
		.member("rereg", r.rereg)
		.member("source", s.buf_churn)
		.member("own_mr", s.sub_mr)
		.end_object();
	j.key("vmstat_delta").begin_object();
	for (std::size_t i = 0; i < vmstat0_.size(); i++)
		j.member(vmstat_keys[i], vmstat1_[i] - vmstat0_[i]);
	j.end_object();
}

void Controller::json_nodes(rv::json::Writer &j) const
{
	j.key("nodes").begin_array();
	for (const NodeResult &n : node_) {
		j.begin_object()
			.member("dev", n.dev)
			.member("rcvd_pkts_delta", n.rx_after - n.rx_before)
			.member("pages_received", n.t.r.bytes_verified / 4096)
			.member("bytes_received", n.t.r.bytes_verified)
			.member("recoveries", n.recoveries)
			.member("qp_reestablishments", n.conn_count_delta);
		if (n.have_cs)
			j.key("conn_stats").begin_object()
				.member("conn_recovery", n.cs.conn_recovery)
				.member("req_sent", n.cs.req_sent)
				.member("req_recv", n.cs.req_recv)
				.member("rep_sent", n.cs.rep_sent)
				.member("rep_recv", n.cs.rep_recv)
				.member("rej_sent", n.cs.rej_sent)
				.member("rej_recv", n.cs.rej_recv)
				.member("established", n.cs.established)
				.member("req_error", n.cs.req_error)
				.member("rep_error", n.cs.rep_error)
				.member("dreq_sent", n.cs.dreq_sent)
				.member("dreq_recv", n.cs.dreq_recv)
				.member("dreq_error", n.cs.dreq_error)
				.member("post_write", n.cs.post_write)
				.member("send_write_cqe", n.cs.send_write_cqe)
				.member("send_write_cqe_fail", n.cs.send_write_cqe_fail)
				.member("recv_write_cqe", n.cs.recv_write_cqe)
				.member("post_hb", n.cs.post_hb)
				.member("send_hb_cqe_fail", n.cs.send_hb_cqe_fail)
				.end_object();
		j.end_object();
	}
	j.end_array();
}

void Controller::json_flaps(rv::json::Writer &j) const
{
	j.key("flaps").begin_array();
	for (const Flap &f : flaps_) {
		j.begin_object()
			.member("start_s", f.start_s)
			.member("down_ms", f.down_ms)
			.member("up_s", f.up_s)
			.member("active_s", f.active_s);
		if (!f.error.empty())
			j.member("error", f.error);
		j.end_object();
	}
	j.end_array();
}

} // namespace rv::soak
