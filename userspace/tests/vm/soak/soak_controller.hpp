// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the controller, the parent of a node's (or both nodes')
// worker processes. soak_controller.cpp starts the workers, routes their
// messages and runs the phases of the run; soak_flap.cpp flaps the link;
// soak_peer.cpp talks to the other VM's controller (--two-vm);
// soak_report.cpp checks the invariants and prints the summary.
#ifndef RV_SOAK_SOAK_CONTROLLER_HPP
#define RV_SOAK_SOAK_CONTROLLER_HPP

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <rv/attach.hpp>
#include <rv/connection.hpp>

#include <toolkit/json.hpp>

#include "conn_util.hpp"
#include "soak.hpp"
#include "soak_flap.hpp"
#include "soak_link.hpp"
#include "soak_options.hpp"
#include "vm_env.hpp"

namespace rv::soak {

using rv::test::Peer;
using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

inline double since(clock::time_point t0, clock::time_point t = clock::now())
{
	return std::chrono::duration<double>(t - t0).count();
}

inline std::uint64_t ns_of(clock::time_point t)
{
	return static_cast<std::uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch())
			.count());
}

inline std::string text_of(const Msg &m)
{
	return std::string(reinterpret_cast<const char *>(m.body.data()),
			   std::min<std::size_t>(m.len, m.body.size()));
}

// The /proc/vmstat counters of what moves or remaps a process's pages
// behind its back (and may invalidate its MRs).
inline const char *const vmstat_keys[] = {
	"thp_fault_alloc", "thp_collapse_alloc", "thp_collapse_alloc_failed",
	"thp_split_pmd", "pgmigrate_success", "pgmigrate_fail", "compact_stall",
	"numa_pages_migrated", "numa_hint_faults",
};

// /proc/vmstat's vmstat_keys, 0 for the ones it lacks.
std::vector<std::uint64_t> read_vmstat();

struct Worker {
	Peer peer;
	bool alive = true;
	bool ready = false;
	bool drained = false;
	Ready info;
	Progress progress;
	std::optional<SendReport> send;
	std::optional<RecvReport> recv;
	std::optional<MiscReport> misc;
	std::optional<rv::ConnStats> conn;
	std::optional<rv::test::Peer::Status> status;

	[[nodiscard]] bool reported() const { return send && recv && misc && conn; }
};

// Sums over the workers of a node (or of both nodes).
struct Totals {
	SendReport s;
	RecvReport r;
	std::uint64_t overflow = 0;
	std::uint64_t stats_disagree = 0;
	std::uint64_t last_ok_ns = 0;
	std::uint64_t min_sent = UINT64_MAX;
	std::uint64_t min_verified = UINT64_MAX;

	void add_send(const SendReport &a);
	void add_recv(const RecvReport &b);
	void add(const Worker &w);
	// Another node's sums (last_ok_ns is of its own clock: not taken).
	void merge(const Totals &o);
};

struct NodeResult {
	std::string dev;
	Totals t;
	std::uint64_t rx_before = 0;
	std::uint64_t rx_after = 0;
	std::uint32_t recoveries = 0;	// conn_recovery, all QPs
	std::uint64_t conn_count_delta = 0;
	rv::ConnStats cs{};		// the connection, as last seen
	bool have_cs = false;
	bool after_last_flap = false;	// a message completed after it
	bool have = false;		// its numbers are here
};

class Controller {
public:
	explicit Controller(const Options &o)
		: o_(o), rng_(mix64(o.seed)), two_vm_(o.role != 0),
		  me_(o.role == 'b' ? 1 : 0), first_(two_vm_ ? me_ * o.procs : 0)
	{
	}
	int run();

private:
	// setup (this and the run, routing: soak_controller.cpp)
	void setup_nodes();
	[[nodiscard]] bool local(unsigned node) const { return !two_vm_ || node == me_; }
	[[nodiscard]] bool flapping() const
	{
		return o_.flap_interval > 0 && local(o_.flap_node);
	}
	[[nodiscard]] std::string vm_name(unsigned node) const
	{
		return std::string("VM ") + (node ? "b" : "a");
	}
	void start_workers();
	void wait_ready(clock::time_point t_setup);
	void check_ready();
	// the run
	void traffic();
	void drain();
	bool drain_step(bool &sent_drained);
	void finish_workers();
	// routing
	bool wait_for(const std::function<bool()> &done, clock::duration limit);
	void pump(milliseconds wait);
	void read_worker(unsigned i);
	void on_message(unsigned from, const Msg &m);
	void route(const Msg &m, unsigned src);
	void broadcast(std::uint32_t type);
	// the other VM's controller (soak_peer.cpp)
	void open_link();
	[[nodiscard]] CtlHello hello() const;
	void check_hello(const CtlHello &h) const;
	void read_link();
	void on_link_message(const Msg &m);
	void on_peer_result(const Msg &m);
	void keep_link();
	void send_new_flaps();
	void send_peer(const Msg &m);
	template <typename T>
	void send_peer(std::uint32_t type, const T &body)
	{
		Msg m;
		m.type = type;
		m.len = sizeof(T);
		std::memcpy(m.body.data(), &body, sizeof(T));
		send_peer(m);
	}
	void send_peer(std::uint32_t type) { send_peer(Msg{type, 0, {}}); }
	void send_peer_text(const std::string &text);
	void peer_gone(const std::string &why);
	void exchange_results();
	void send_results();
	void close_link();
	// progress and failures
	void fail(const std::string &why) { failures_.push_back(why); }
	bool all(bool Worker::*flag) const;
	void progress_line();
	void snapshot(const std::string &why);
	// the link flaps (soak_flap.cpp)
	void flapper();
	// the end (soak_report.cpp)
	void evaluate_local();
	void evaluate();
	void evaluate_totals();
	void evaluate_nodes();
	void evaluate_flaps();
	void print_text() const;
	void print_json() const;
	void json_config(rv::json::Writer &j) const;
	void json_counts(rv::json::Writer &j) const;
	void json_nodes(rv::json::Writer &j) const;
	void json_flaps(rv::json::Writer &j) const;

	Options o_;
	std::mt19937_64 rng_;
	const bool two_vm_;
	const unsigned me_;		// --two-vm: the node of this VM
	const unsigned first_;		// the id of w_[0]
	rv::JobKey key_{};
	rv::test::Node n_[2];
	std::vector<Worker> w_;
	std::vector<std::string> failures_;
	std::vector<std::string> notes_;
	bool abort_ = false;
	bool snapped_ = false;
	bool reported_ = false;		// every local worker reported
	bool have_rx_ = false;		// rx_before read
	bool drained_ = false;		// every local worker drained
	std::thread flap_thread_;
	std::uint64_t dropped_ = 0;

	clock::time_point t0_;
	clock::time_point t_end_;
	clock::time_point t_stop_;
	clock::time_point t_drained_;
	clock::time_point last_line_;
	double drain_s_ = 0;
	double total_s_ = 0;

	std::mutex mu_;
	std::condition_variable cv_;
	bool stop_flaps_ = false;
	std::atomic<bool> flapper_done_{true};
	std::vector<Flap> flaps_;
	std::vector<rv::test::LinkState> links_;

	// --two-vm
	ControlLink link_;
	clock::time_point last_ping_;
	std::size_t flaps_sent_ = 0;
	double link_gap_s_ = 0;		// the longest silence of the other
					// controller, from the go to drained
	std::optional<CtlHello> peer_hello_;
	std::optional<CtlReady> peer_ready_;
	bool go_ = false;
	bool peer_stop_ = false;
	bool peer_drained_ = false;
	bool peer_results_ = false;
	bool peer_bye_ = false;
	bool peer_lost_ = false;
	std::vector<std::string> peer_failures_;

	NodeResult node_[2];
	std::vector<std::uint64_t> vmstat0_;
	std::vector<std::uint64_t> vmstat1_;
	Totals all_;
	std::uint64_t lost_completions_ = 0;
	std::uint32_t recoveries_ = 0;
};

} // namespace rv::soak

#endif // RV_SOAK_SOAK_CONTROLLER_HPP
