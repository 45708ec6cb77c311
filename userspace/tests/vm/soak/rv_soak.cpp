// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: a bounded soak of rv's shared connections between the two rxe
// nodes of the test VM (vm-run --rxe 2, as root, rv.ko loaded).
//
// --procs-per-node processes on each node attach as one job and connect
// to the other node; each one both sends and receives for --seconds:
// RDMA WRITEs with immediate data of mixed sizes (1 byte to --max-size),
// to buffers that random processes on the other node granted it, with a
// pattern that names the sender, the message and the offset of every
// word; the receiver checks every byte. Receive buffers are withdrawn and
// replaced now and then (munmap/mmap, MAP_FIXED or MADV_DONTNEED under a
// registered MR, EVICT; then REG_MEM again), and so are source buffers.
// Meanwhile a link goes down and up every --flap-interval seconds (or,
// with --flap-mode drop, every packet is dropped for a while). The
// protocol (soak.hpp) never aims a write at a withdrawn buffer; a write
// whose completion reports an error is written again, so a message may
// be delivered twice (counted as a duplicate).
//
// At the end it checks that every post got exactly one completion, every
// message finished, every successful completion was a verified delivery,
// no byte differed, no event was stray or lost, the rings did not
// overflow, the kernel's event and connection counters agree with what
// the processes saw, the connections never failed for good, the link
// flaps happened and were recovered from, traffic went on after the last
// one, and the receiving devices' rcvd_pkts rose by at least the pages
// moved. It prints the numbers ("key: value" lines, or --json) and exits
// 0 iff all of that held; 1 otherwise, 2 for bad usage.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <getopt.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/error.hpp>
#include <rv/json.hpp>
#include <rv/rdma_sysfs.hpp>
#include <rv/unique_fd.hpp>

#include "conn_util.hpp"
#include "getopt_error.hpp"
#include "soak.hpp"
#include "vm_env.hpp"

namespace {

using namespace rv::soak;
using rv::test::Peer;
using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char *prog = "rv_soak";

struct UsageError : std::exception {
	explicit UsageError(std::string m) : msg(std::move(m)) {}
	const char *what() const noexcept override { return msg.c_str(); }
	std::string msg;
};

struct Options {
	double seconds = 30;
	unsigned procs = 16;
	double flap_interval = 8;
	unsigned flap_down_ms = 0;	// 0: 5000, or 12000 with --flap-mode drop
	unsigned flap_down_min_ms = 0;	// 0: flap_down_ms
	unsigned flap_node = 1;
	bool flap_drop = false;		// --flap-mode drop
	std::uint64_t seed = 1;
	unsigned slots = 4;
	unsigned window = 4;
	std::uint64_t max_size = 1ULL << 20;
	unsigned churn = 25;
	unsigned reconnect_timeout = 30;
	unsigned drain_timeout = 120;
	bool json = false;
	bool quiet = false;
};

void usage(FILE *f)
{
	std::fprintf(f,
"usage: %s [options]\n"
"A bounded soak of rv between the two rxe nodes of the test VM (root,\n"
"rv.ko loaded, RV_NODES/RV_NETDEVS as vm-run --rxe 2 sets them).\n"
"\n"
"  -s, --seconds S           how long to send (default 30)\n"
"  -n, --procs-per-node N    processes per node, one job (default 16, 1..64)\n"
"  -f, --flap-interval S     seconds from a link coming back up to it going\n"
"                            down again; 0: no link flaps (default 8)\n"
"      --flap-down MS        how long the link stays down (default 5000; with\n"
"                            --flap-mode drop 12000: a loss that RC retries\n"
"                            do not outlast)\n"
"      --flap-down-min MS    later flaps (not the first) stay down a random\n"
"                            time in MS..--flap-down (default: --flap-down).\n"
"                            Downs of 1-2 s can wedge soft RoCE's MAD QP\n"
"                            (userspace/tests/vm/soak/README.md)\n"
"      --flap-node I         the node whose netdev goes down (default 1)\n"
"      --flap-mode link|drop link: ip link set down/up (default); drop: the\n"
"                            links stay up and every packet is dropped (tc\n"
"                            netem loss 100%% on every node's netdev)\n"
"      --seed N              random seed (default 1)\n"
"      --slots K             receive buffers per process (default 4)\n"
"      --window W            messages in flight per process (default 4)\n"
"      --max-size BYTES      largest message (default 1048576)\n"
"      --churn PCT           buffer reuses that replace the buffer (default 25)\n"
"      --reconnect-timeout S the job's reconnect_timeout (default 30)\n"
"      --drain-timeout S     after the run, for what is in flight (default 120)\n"
"  -j, --json                one JSON object on stdout instead of key: value lines\n"
"  -q, --quiet               no progress lines on stderr\n"
"  -h, --help                this help\n"
"\n"
"Exit status: 0 if every invariant held, 1 if not, 2 for bad usage.\n",
		     prog);
}

double number_arg(const char *what, const char *arg, double min, double max)
{
	char *end = nullptr;
	errno = 0;
	const double v = std::strtod(arg, &end);
	if (!*arg || *end || errno || !std::isfinite(v) || v < min || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

std::uint64_t count_arg(const char *what, const char *arg, std::uint64_t min,
			std::uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	const unsigned long long v = std::strtoull(arg, &end, 0);
	if (!*arg || *end || errno || *arg == '-' || v < min || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

enum : int {
	opt_flap_down = 0x100,
	opt_flap_down_min,
	opt_flap_node,
	opt_flap_mode,
	opt_seed,
	opt_slots,
	opt_window,
	opt_max_size,
	opt_churn,
	opt_reconnect_timeout,
	opt_drain_timeout,
};

Options parse(int argc, char **argv)
{
	static const option longopts[] = {
		{"seconds", required_argument, nullptr, 's'},
		{"procs-per-node", required_argument, nullptr, 'n'},
		{"flap-interval", required_argument, nullptr, 'f'},
		{"flap-down", required_argument, nullptr, opt_flap_down},
		{"flap-down-min", required_argument, nullptr, opt_flap_down_min},
		{"flap-node", required_argument, nullptr, opt_flap_node},
		{"flap-mode", required_argument, nullptr, opt_flap_mode},
		{"seed", required_argument, nullptr, opt_seed},
		{"slots", required_argument, nullptr, opt_slots},
		{"window", required_argument, nullptr, opt_window},
		{"max-size", required_argument, nullptr, opt_max_size},
		{"churn", required_argument, nullptr, opt_churn},
		{"reconnect-timeout", required_argument, nullptr, opt_reconnect_timeout},
		{"drain-timeout", required_argument, nullptr, opt_drain_timeout},
		{"json", no_argument, nullptr, 'j'},
		{"quiet", no_argument, nullptr, 'q'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:f:jqh", longopts, nullptr)) != -1) {
		switch (c) {
		case 's':
			o.seconds = number_arg("--seconds", optarg, 1, 86400);
			break;
		case 'n':
			o.procs = static_cast<unsigned>(count_arg("--procs-per-node", optarg, 1, 64));
			break;
		case 'f':
			o.flap_interval = number_arg("--flap-interval", optarg, 0, 3600);
			break;
		case opt_flap_down:
			o.flap_down_ms = static_cast<unsigned>(count_arg("--flap-down", optarg, 100, 600000));
			break;
		case opt_flap_down_min:
			o.flap_down_min_ms = static_cast<unsigned>(
				count_arg("--flap-down-min", optarg, 100, 600000));
			break;
		case opt_flap_node:
			o.flap_node = static_cast<unsigned>(count_arg("--flap-node", optarg, 0, 1));
			break;
		case opt_flap_mode:
			if (std::string(optarg) != "link" && std::string(optarg) != "drop")
				throw UsageError(std::string("invalid --flap-mode '") + optarg + "'");
			o.flap_drop = std::string(optarg) == "drop";
			break;
		case opt_seed:
			o.seed = count_arg("--seed", optarg, 0, UINT64_MAX);
			break;
		case opt_slots:
			o.slots = static_cast<unsigned>(count_arg("--slots", optarg, 1, 64));
			break;
		case opt_window:
			o.window = static_cast<unsigned>(count_arg("--window", optarg, 1, 64));
			break;
		case opt_max_size:
			o.max_size = count_arg("--max-size", optarg, 1, max_message);
			break;
		case opt_churn:
			o.churn = static_cast<unsigned>(count_arg("--churn", optarg, 0, 100));
			break;
		case opt_reconnect_timeout:
			o.reconnect_timeout = static_cast<unsigned>(
				count_arg("--reconnect-timeout", optarg, 1, 3600));
			break;
		case opt_drain_timeout:
			o.drain_timeout = static_cast<unsigned>(
				count_arg("--drain-timeout", optarg, 1, 3600));
			break;
		case 'j':
			o.json = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			std::exit(std::fflush(stdout) == 0 ? 0 : 1);
		default:
			throw UsageError(rv::tools::getopt_error(c, argv));
		}
	}
	if (auto extra = rv::tools::extra_argument(argc, argv))
		throw UsageError(*extra);
	if (!o.flap_down_ms)
		o.flap_down_ms = o.flap_drop ? 12000 : 5000;
	if (!o.flap_down_min_ms || o.flap_down_min_ms > o.flap_down_ms)
		o.flap_down_min_ms = o.flap_down_ms;
	return o;
}

double since(clock::time_point t0, clock::time_point t = clock::now())
{
	return std::chrono::duration<double>(t - t0).count();
}

std::uint64_t ns_of(clock::time_point t)
{
	return static_cast<std::uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch())
			.count());
}


std::string text_of(const Msg &m)
{
	return std::string(reinterpret_cast<const char *>(m.body.data()),
			   std::min<std::size_t>(m.len, m.body.size()));
}

// The /proc/vmstat counters of what moves or remaps a process's pages
// behind its back (and may invalidate its MRs).
const char *const vmstat_keys[] = {
	"thp_fault_alloc", "thp_collapse_alloc", "thp_collapse_alloc_failed",
	"thp_split_pmd", "pgmigrate_success", "pgmigrate_fail", "compact_stall",
	"numa_pages_migrated", "numa_hint_faults",
};

std::vector<std::uint64_t> read_vmstat()
{
	std::vector<std::uint64_t> v(std::size(vmstat_keys));
	FILE *f = std::fopen("/proc/vmstat", "re");
	char key[128];
	unsigned long long n;

	if (!f)
		return v;
	while (std::fscanf(f, "%127s %llu", key, &n) == 2)
		for (std::size_t i = 0; i < v.size(); i++)
			if (!std::strcmp(key, vmstat_keys[i]))
				v[i] = n;
	std::fclose(f);
	return v;
}

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

struct Flap {
	double start_s = 0;	// since the start of the run: link down
	double up_s = 0;	// link set up again
	double active_s = 0;	// routes back, ports ACTIVE again
	unsigned down_ms = 0;
	clock::time_point up;
	std::string error;
};

// link_flap() of conn_util with the times of its steps, and with the
// routes and neighbours of every node's netdev saved once before the run
// (each `ip` costs seconds while the soak keeps both CPUs busy): n's
// netdev down for down_for, up, the routes and neighbours back (IPv4
// flushes them when a link goes down), then both ports ACTIVE.
// `tc -batch` of commands: one exec, which costs seconds while the soak
// keeps both CPUs busy.
void tc_batch(const std::string &commands)
{
	char path[] = "/tmp/rv_soak_tc.XXXXXX";
	rv::UniqueFd fd(::mkstemp(path));

	if (!fd.valid())
		rv::throw_errno("mkstemp");
	const bool written = ::write(fd.get(), commands.data(), commands.size()) ==
			     static_cast<ssize_t>(commands.size());
	fd.reset();
	try {
		if (!written)
			rv::throw_errno(std::string("write ") + path);
		rv::test::run_checked({"tc", "-batch", path});
	} catch (...) {
		::unlink(path);
		throw;
	}
	::unlink(path);
}

// --flap-mode drop: the links stay up (the ports ACTIVE) and every packet
// that leaves a node's netdev is dropped for down_for.
void drop_all(milliseconds down_for, Flap &f, clock::time_point t0)
{
	std::string add;
	std::string del;
	for (const rv::test::Node &x : rv::test::nodes()) {
		if (x.netdev.empty())
			continue;
		add += "qdisc replace dev " + x.netdev + " root netem loss 100%\n";
		del += "qdisc del dev " + x.netdev + " root\n";
	}
	tc_batch(add);
	f.start_s = since(t0);
	std::this_thread::sleep_for(down_for);
	tc_batch(del);
	f.up = clock::now();
	f.up_s = since(t0, f.up);
	f.active_s = f.up_s;
}

void flap_link(const rv::test::Node &n, milliseconds down_for,
	       const std::vector<rv::test::LinkState> &saved, Flap &f,
	       clock::time_point t0)
{
	rv::test::run_checked({"ip", "link", "set", n.netdev, "down"});
	f.start_s = since(t0);
	std::this_thread::sleep_for(down_for);
	rv::test::run_checked({"ip", "link", "set", n.netdev, "up"});
	f.up = clock::now();
	f.up_s = since(t0, f.up);
	for (const rv::test::LinkState &st : saved)
		st.restore();
	const rv::RdmaSysfs sysfs;
	for (const rv::test::Node &x : rv::test::nodes()) {
		const bool active = rv::test::wait_until(
			[&] {
				try {
					return sysfs.port_state(x.dev, 1).active();
				} catch (const std::exception &) {
					return false;
				}
			},
			seconds(30));
		if (!active)
			throw std::runtime_error(x.dev + " not ACTIVE 30 s after link up");
	}
	f.active_s = since(t0);
}

// Sums over the workers of a node (or all).
struct Totals {
	SendReport s;
	RecvReport r;
	std::uint64_t overflow = 0;
	std::uint64_t stats_disagree = 0;
	std::uint64_t last_ok_ns = 0;
	std::uint64_t min_sent = UINT64_MAX;
	std::uint64_t min_verified = UINT64_MAX;

	void add(const Worker &w)
	{
		const SendReport &a = *w.send;
		const RecvReport &b = *w.recv;
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
		s.invalidated_mr += a.invalidated_mr;
		last_ok_ns = std::max(last_ok_ns, a.last_ok_ns);
		min_sent = std::min(min_sent, a.messages);

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
		min_verified = std::min(min_verified, b.verified);

		overflow += w.misc->overflow;
		stats_disagree += !w.misc->event_stats_agree;
	}
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
};

class Controller {
public:
	explicit Controller(const Options &o) : o_(o), rng_(mix64(o.seed)) {}
	int run();

private:
	void start_workers();
	void pump(milliseconds wait);
	void on_message(unsigned from, const Msg &m);
	void broadcast(std::uint32_t type);
	void fail(const std::string &why) { failures_.push_back(why); }
	bool all(bool Worker::*flag) const;
	void progress_line();
	void snapshot(const std::string &why);
	void flapper();
	void evaluate();
	void print_text() const;
	void print_json() const;

	Options o_;
	std::mt19937_64 rng_;
	rv::test::Node n_[2];
	std::vector<Worker> w_;
	std::vector<std::string> failures_;
	std::vector<std::string> notes_;
	bool abort_ = false;
	bool snapped_ = false;
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

	NodeResult node_[2];
	std::vector<std::uint64_t> vmstat0_;
	std::vector<std::uint64_t> vmstat1_;
	Totals all_;
	std::uint64_t lost_completions_ = 0;
	std::uint32_t recoveries_ = 0;
};

bool Controller::all(bool Worker::*flag) const
{
	for (const Worker &w : w_)
		if (!(w.*flag))
			return false;
	return true;
}

void Controller::start_workers()
{
	const rv::JobKey key = rv::random_job_key();
	rv::test::SideConfig side;

	side.reconnect_timeout = o_.reconnect_timeout;
	side.hb_interval = 1000;
	side.cq_entries = std::max(1024u, 4 * (o_.window + o_.slots) + 64);
	for (unsigned node = 0; node < 2; node++) {
		for (unsigned i = 0; i < o_.procs; i++) {
			WorkerConfig c;
			c.id = node * o_.procs + i;
			c.procs = o_.procs;
			c.local = n_[node];
			c.remote = n_[1 - node];
			c.key = key;
			c.side = side;
			c.seed = o_.seed;
			c.slots = o_.slots;
			c.window = o_.window;
			c.max_len = o_.max_size;
			c.buf_len = o_.max_size + (64ULL << 10);
			c.churn_pct = o_.churn;
			Worker w;
			w.peer = Peer([c](Channel &ch) { return run_worker(ch, c); });
			grow_socket_buffers(w.peer.chan().fd());
			w_.push_back(std::move(w));
		}
	}
}

void Controller::broadcast(std::uint32_t type)
{
	for (Worker &w : w_) {
		if (!w.alive)
			continue;
		try {
			w.peer.chan().send(type);
		} catch (const std::exception &) {
			w.alive = false;
		}
	}
}

void Controller::on_message(unsigned from, const Msg &m)
{
	Worker &w = w_[from];

	switch (m.type) {
	case sm_grant:
	case sm_release: {
		const Route r = rv::test::body_of<Route>(m);
		if (r.src != from || r.dst >= w_.size() || !w_[r.dst].alive) {
			dropped_++;
			return;
		}
		try {
			w_[r.dst].peer.chan().send(m);
		} catch (const std::exception &) {
			w_[r.dst].alive = false;
			dropped_++;
		}
		return;
	}
	case sm_ready:
		w.ready = true;
		w.info = rv::test::body_of<Ready>(m);
		return;
	case sm_progress:
		w.progress = rv::test::body_of<Progress>(m);
		return;
	case sm_drained:
		w.drained = true;
		return;
	case sm_report_send:
		w.send = rv::test::body_of<SendReport>(m);
		return;
	case sm_report_recv:
		w.recv = rv::test::body_of<RecvReport>(m);
		return;
	case sm_report_misc:
		w.misc = rv::test::body_of<MiscReport>(m);
		return;
	case sm_conn_stats:
		w.conn = rv::test::body_of<rv::ConnStats>(m);
		return;
	case sm_note:
	case rv::test::msg_text:
		notes_.push_back("worker " + std::to_string(from) + ": " + text_of(m));
		if (!o_.quiet)
			std::fprintf(stderr, "%s: worker %u: %s\n", prog, from,
				     text_of(m).c_str());
		abort_ = true;
		return;
	default:
		return;
	}
}

void Controller::pump(milliseconds wait)
{
	std::vector<pollfd> pfd;
	std::vector<unsigned> who;

	for (unsigned i = 0; i < w_.size(); i++) {
		if (!w_[i].alive)
			continue;
		pfd.push_back({w_[i].peer.chan().fd(), POLLIN, 0});
		who.push_back(i);
	}
	if (pfd.empty()) {
		std::this_thread::sleep_for(wait);
		return;
	}
	const int n = ::poll(pfd.data(), pfd.size(), static_cast<int>(wait.count()));
	if (n <= 0)
		return;
	for (std::size_t k = 0; k < pfd.size(); k++) {
		if (!pfd[k].revents)
			continue;
		const unsigned i = who[k];
		try {
			while (w_[i].alive) {
				std::optional<Msg> m = w_[i].peer.chan().recv(milliseconds(0));
				if (!m)
					break;
				on_message(i, *m);
			}
		} catch (const std::exception &) {
			// EOF: the worker exited (or died).
			w_[i].alive = false;
			if (!w_[i].reported()) {
				notes_.push_back("worker " + std::to_string(i) +
						 ": gone before its report");
				abort_ = true;
			}
		}
	}
}

void Controller::progress_line()
{
	if (o_.quiet)
		return;
	const auto now = clock::now();
	if (now - last_line_ < seconds(5))
		return;
	last_line_ = now;
	Progress sum;
	for (const Worker &w : w_) {
		sum.sent += w.progress.sent;
		sum.verified += w.progress.verified;
		sum.bytes_verified += w.progress.bytes_verified;
		sum.cqe_err += w.progress.cqe_err;
		sum.post_eagain += w.progress.post_eagain;
	}
	std::size_t flaps;
	{
		std::lock_guard lk(mu_);
		flaps = flaps_.size();
	}
	std::fprintf(stderr,
		     "%s: %.0f s: sent %llu verified %llu (%.1f MB) error "
		     "completions %llu eagain %llu flaps %zu\n",
		     prog, since(t0_), static_cast<unsigned long long>(sum.sent),
		     static_cast<unsigned long long>(sum.verified),
		     static_cast<double>(sum.bytes_verified) / 1e6,
		     static_cast<unsigned long long>(sum.cqe_err),
		     static_cast<unsigned long long>(sum.post_eagain), flaps);
}

// What the devices look like when something went wrong, on stderr: rv's
// QPs and the MAD QPs (rdma res show qp), and packet counters twice, two
// seconds apart (a device whose rcvd_pkts stands still drops what comes).
void Controller::snapshot(const std::string &why)
{
	if (snapped_)
		return;
	snapped_ = true;
	std::string out;
	char head[128];
	std::snprintf(head, sizeof(head), "%s: snapshot at %.1f s (", prog, since(t0_));
	out = head + why + "):\n";
	const std::string rdma = rv::test::which("rdma");
	if (!rdma.empty()) {
		const rv::test::ProcessResult r =
			rv::test::run_process({rdma, "res", "show", "qp"});
		std::istringstream in(r.out);
		std::string line;
		while (std::getline(in, line))
			if (line.find("[rv]") != std::string::npos ||
			    line.find(" GSI ") != std::string::npos)
				out += "  " + line + "\n";
	}
	const rv::RdmaSysfs sysfs;
	for (int k = 0; k < 2; k++) {
		if (k)
			std::this_thread::sleep_for(seconds(2));
		for (const rv::test::Node &n : n_) {
			out += "  " + n.dev + (k ? " 2 s later:" : ":");
			for (const char *c : {"rcvd_pkts", "sent_pkts", "send_err",
					      "completer_retry_err", "retry_exceeded_err"})
				out += std::string(" ") + c + " " +
				       std::to_string(sysfs.hw_counter(n.dev, 1, c).value_or(0));
			out += "\n";
		}
	}
	std::fputs(out.c_str(), stderr);
}

// The link flapper: a thread of the controller, while the main thread
// routes. flap_link() takes the link down, waits, brings it up, puts the
// routes back and waits for both ports to be ACTIVE.
void Controller::flapper()
{
	std::unique_lock lk(mu_);
	const auto interval = std::chrono::duration_cast<milliseconds>(
		std::chrono::duration<double>(o_.flap_interval));
	const auto first = std::min(interval,
				    std::max(milliseconds(2000),
					     milliseconds(static_cast<long>(o_.seconds * 1000 / 6))));
	auto next = t0_ + first;

	for (;;) {
		if (cv_.wait_until(lk, next, [&] { return stop_flaps_; }))
			break;
		unsigned down = o_.flap_down_ms;
		if (!flaps_.empty()) {
			const unsigned lo = o_.flap_down_min_ms;
			down = lo + static_cast<unsigned>(rng_() % (down - lo + 1));
		}
		// Not so late that the run ends before the connections
		// have recovered and moved data again.
		if (clock::now() + milliseconds(down) + seconds(12) > t_end_)
			break;
		lk.unlock();
		Flap f;
		f.down_ms = down;
		try {
			if (o_.flap_drop)
				drop_all(milliseconds(down), f, t0_);
			else
				flap_link(n_[o_.flap_node], milliseconds(down), links_, f, t0_);
		} catch (const std::exception &e) {
			f.error = e.what();
		}
		if (f.up == clock::time_point{})
			f.up = clock::now();
		lk.lock();
		flaps_.push_back(f);
		if (!o_.quiet)
			std::fprintf(stderr, "%s: %.1f s: %s for %u ms, up at "
				     "%.1f s, ports ACTIVE at %.1f s%s%s\n",
				     prog, f.start_s,
				     o_.flap_drop ? "every packet dropped"
						  : ("link " + n_[o_.flap_node].netdev + " down").c_str(),
				     f.down_ms, f.up_s, f.active_s,
				     f.error.empty() ? "" : ": ", f.error.c_str());
		next = clock::now() + interval;
	}
	flapper_done_ = true;
}

int Controller::run()
{
	for (unsigned i = 0; i < 2; i++) {
		auto n = rv::test::node(i);
		if (!n)
			throw std::runtime_error("needs two RDMA nodes (RV_NODES, vm-run --rxe 2)");
		n_[i] = *n;
	}
	if (o_.flap_interval > 0 && n_[o_.flap_node].netdev.empty())
		throw std::runtime_error("node " + n_[o_.flap_node].dev +
					 " has no netdev to flap (RV_NETDEVS)");
	for (unsigned i = 0; i < 2; i++)
		node_[i].dev = n_[i].dev;

	if (o_.flap_interval > 0 && !o_.flap_drop)
		for (const rv::test::Node &x : rv::test::nodes())
			if (!x.netdev.empty())
				links_.emplace_back(x.netdev);

	const auto t_setup = clock::now();
	bool have_rx = false;
	start_workers();
	// The workers keep both CPUs busy: the controller routes their
	// messages and runs `ip` for the link flaps at a higher priority
	// (the nice value is per thread; the flapper thread inherits it).
	(void)::setpriority(PRIO_PROCESS, 0, -10);
	while (!abort_ && !all(&Worker::ready) && clock::now() - t_setup < seconds(300))
		pump(milliseconds(100));
	if (!all(&Worker::ready)) {
		fail("not every process connected within 300 s");
		abort_ = true;
	}

	if (!abort_) {
		for (unsigned node = 0; node < 2; node++) {
			std::set<std::uint64_t> handles;
			std::set<std::uint32_t> indexes;
			for (unsigned i = 0; i < o_.procs; i++) {
				const Ready &r = w_[node * o_.procs + i].info;
				handles.insert(r.conn_handle);
				indexes.insert(r.rv_index);
				if (r.max_fmr_size && r.max_fmr_size < o_.max_size + (64 << 10))
					fail("max_fmr_size " + std::to_string(r.max_fmr_size) +
					     " is below the buffer size");
			}
			if (handles.size() != 1)
				fail(n_[node].dev + ": the processes do not share one connection");
			if (indexes.size() != o_.procs)
				fail(n_[node].dev + ": rv_index values are not distinct");
		}
		for (unsigned i = 0; i < 2; i++)
			node_[i].rx_before = rv::test::rcvd_pkts(n_[i].dev);
		have_rx = true;
		if (!o_.quiet)
			std::fprintf(stderr, "%s: %zu processes connected in %.1f s; "
				     "sending for %.0f s\n",
				     prog, w_.size(), since(t_setup), o_.seconds);
	}

	vmstat0_ = read_vmstat();
	t0_ = clock::now();
	last_line_ = t0_;
	t_end_ = t0_ + std::chrono::duration_cast<clock::duration>(
			       std::chrono::duration<double>(o_.seconds));
	std::thread flap_thread;
	if (!abort_) {
		broadcast(sm_go);
		if (o_.flap_interval > 0) {
			flapper_done_ = false;
			flap_thread = std::thread([this] { flapper(); });
		}
		while (!abort_ && clock::now() < t_end_) {
			pump(milliseconds(50));
			progress_line();
		}
		if (abort_)
			snapshot("a process failed");
	}

	// Stop: nothing new; what is in flight finishes (through a link
	// flap that may still be going on).
	t_stop_ = clock::now();
	{
		std::lock_guard lk(mu_);
		stop_flaps_ = true;
	}
	cv_.notify_all();
	broadcast(abort_ ? sm_abort : sm_stop);
	const auto drain_end = t_stop_ + seconds(o_.drain_timeout);
	bool drained = false;
	while (clock::now() < drain_end) {
		bool all_drained = true;
		bool any_alive = false;
		for (const Worker &w : w_) {
			any_alive = any_alive || w.alive;
			if (w.alive && !w.drained)
				all_drained = false;
		}
		if (!any_alive || (all_drained && flapper_done_)) {
			drained = all_drained && any_alive;
			break;
		}
		pump(milliseconds(50));
		progress_line();
	}
	t_drained_ = clock::now();
	drain_s_ = since(t_stop_, t_drained_);
	if (!drained) {
		snapshot("the drain timed out");
		fail("not every process finished what it had in flight within " +
		     std::to_string(o_.drain_timeout) + " s after the end");
	}
	while (!flapper_done_)
		pump(milliseconds(50));
	if (flap_thread.joinable())
		flap_thread.join();

	broadcast(sm_finish);
	const auto report_end = clock::now() + seconds(60);
	for (;;) {
		bool done = true;
		for (const Worker &w : w_)
			if (w.alive && !w.reported())
				done = false;
		if (done || clock::now() >= report_end)
			break;
		pump(milliseconds(50));
	}
	total_s_ = since(t0_);
	vmstat1_ = read_vmstat();
	if (have_rx)
		for (unsigned i = 0; i < 2; i++)
			node_[i].rx_after = rv::test::rcvd_pkts(n_[i].dev);

	broadcast(sm_exit);
	for (Worker &w : w_) {
		w.status = w.peer.wait(seconds(60));
		w.alive = false;
	}

	evaluate();
	if (o_.json)
		print_json();
	else
		print_text();
	return failures_.empty() ? 0 : 1;
}

void Controller::evaluate()
{
	bool all_reported = true;

	for (const std::string &n : notes_)
		fail(n);
	for (unsigned i = 0; i < w_.size(); i++) {
		const Worker &w = w_[i];
		if (w.status && !w.status->ok())
			fail("worker " + std::to_string(i) + ": " + w.status->str());
		if (!w.reported()) {
			all_reported = false;
			fail("worker " + std::to_string(i) + ": no report");
			continue;
		}
		const std::string err = "worker " + std::to_string(i) + ": " + w.misc->error;
		if (w.misc->result && std::find(notes_.begin(), notes_.end(), err) == notes_.end())
			fail(err);
		NodeResult &nr = node_[i / o_.procs];
		nr.t.add(w);
		all_.add(w);
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
	recoveries_ = node_[0].recoveries + node_[1].recoveries;
	if (!all_reported)
		return;

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
	if (dropped_)
		fail(std::to_string(dropped_) + " grants/releases for a process that was gone");
	if (all_.min_sent == 0 || all_.min_verified == 0)
		fail("a process sent or received no message at all");
	for (unsigned i = 0; i < 2; i++) {
		NodeResult &nr = node_[i];
		const std::uint64_t pages = nr.t.r.bytes_verified / 4096;
		const std::uint64_t delta = nr.rx_after - nr.rx_before;
		if (delta < pages || !delta)
			fail(nr.dev + " rcvd_pkts rose by " + std::to_string(delta) +
			     ", less than the " + std::to_string(pages) + " pages it received");
		// The node's connection, as the kernel counted it.
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
	if (o_.flap_interval > 0) {
		if (flaps_.empty())
			fail("no link flap happened (the run is too short for --flap-interval)");
		bool long_flap = false;
		for (const Flap &f : flaps_) {
			if (!f.error.empty())
				fail("link flap at " + std::to_string(f.start_s) + " s: " + f.error);
			// Long enough to lose the QPs: a downed link fails
			// the sends at once; silent loss must outlast the
			// RC retries (7 x 0.5 s) and heartbeats.
			long_flap = long_flap || f.down_ms >= (o_.flap_drop ? 10000u : 4500u);
		}
		if (long_flap && !recoveries_)
			fail("the link was down for seconds but no connection recovered");
		if (!flaps_.empty() && all_.last_ok_ns <= ns_of(flaps_.back().up))
			fail("no message completed after the last link flap");
	}
}

void Controller::print_text() const
{
	const SendReport &s = all_.s;
	const RecvReport &r = all_.r;
	auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };

	std::printf("processes: %zu (%u per node)\n", w_.size(), o_.procs);
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
	std::printf("recoveries: %u (%s %u, %s %u)\n", recoveries_,
		    node_[0].dev.c_str(), node_[0].recoveries, node_[1].dev.c_str(),
		    node_[1].recoveries);
	std::printf("qp_reestablishments: %llu\n",
		    u(node_[0].conn_count_delta + node_[1].conn_count_delta));
	std::printf("invalidated_mr_posts: %llu\n", u(s.invalidated_mr));
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
	const SendReport &s = all_.s;
	const RecvReport &r = all_.r;
	rv::json::Writer j(2);

	j.begin_object();
	j.member("result", failures_.empty() ? "ok" : "fail");
	j.key("failures").begin_array();
	for (const std::string &f : failures_)
		j.value(f);
	j.end_array();
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
		.end_object();
	j.member("processes", w_.size());
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
	j.member("recoveries", recoveries_);
	j.member("qp_reestablishments",
		 node_[0].conn_count_delta + node_[1].conn_count_delta);
	j.member("invalidated_mr_posts", s.invalidated_mr);
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
	j.key("vmstat_delta").begin_object();
	for (std::size_t i = 0; i < vmstat0_.size(); i++)
		j.member(vmstat_keys[i], vmstat1_[i] - vmstat0_[i]);
	j.end_object();
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
	j.end_object();
	std::puts(j.str().c_str());
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	try {
		o = parse(argc, argv);
	} catch (const UsageError &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		usage(stderr);
		return 2;
	}
	try {
		Controller c(o);
		const int rc = c.run();
		std::fflush(stdout);
		return rc;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
