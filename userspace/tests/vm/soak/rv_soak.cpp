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
//
// --two-vm a|b: one of two VMs (vm-run --two-vm, one rxe each). Each VM
// runs a controller with its own node's processes (a: node 0, b: node 1);
// the controllers are joined by TCP (a listens on --control-port, b
// connects to --peer-ip) and forward to each other the grants and
// releases for the other node's processes, the phases of the run (ready,
// go, stop, drained) and the link flaps, and at the end each node's sums,
// so that both check the same invariants as one VM does. The flapping
// node's controller (--flap-node, default 1: VM b) flaps its own netdev.
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
#include <functional>
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
#include "soak_link.hpp"
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
	char role = 0;			// --two-vm a|b; 0: one VM, both nodes
	std::string peer_ip;		// --peer-ip, default $RV_PEER_IP
	std::uint16_t control_port = 18730;
	unsigned peer_timeout = 300;
};

void usage(FILE *f)
{
	std::fprintf(f,
"usage: %s [options]\n"
"A bounded soak of rv between the two rxe nodes of the test VM (root,\n"
"rv.ko loaded, RV_NODES/RV_NETDEVS as vm-run --rxe 2 sets them), or, with\n"
"--two-vm, between the rxe nodes of two VMs (vm-run --two-vm), one\n"
"controller in each.\n"
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
"      --flap-node I         the node whose netdev goes down (default 1; with\n"
"                            --two-vm the controller of that node's VM\n"
"                            flaps its own netdev)\n"
"      --flap-mode link|drop link: ip link set down/up (default); drop: the\n"
"                            links stay up and every packet is dropped (tc\n"
"                            netem loss 100%% on every node's netdev; with\n"
"                            --two-vm on the flapping VM's)\n"
"      --seed N              random seed (default 1)\n"
"      --slots K             receive buffers per process (default 4)\n"
"      --window W            messages in flight per process (default 4)\n"
"      --max-size BYTES      largest message (default 1048576)\n"
"      --churn PCT           buffer reuses that replace the buffer (default 25)\n"
"      --reconnect-timeout S the job's reconnect_timeout (default 30)\n"
"      --drain-timeout S     after the run, for what is in flight (default 120)\n"
"      --two-vm a|b          this VM's part of a two-VM soak: its node only (a:\n"
"                            node 0, b: node 1); the two controllers talk over\n"
"                            TCP, a listening, b connecting (both must be\n"
"                            given the same options)\n"
"      --peer-ip IP          the other VM's address, also its rxe's (default\n"
"                            $RV_PEER_IP)\n"
"      --control-port P      the controllers' TCP port on VM a (default 18730)\n"
"      --peer-timeout S      longest wait for the other controller to connect\n"
"                            or answer, and longest silence (default 300)\n"
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
	opt_two_vm,
	opt_peer_ip,
	opt_control_port,
	opt_peer_timeout,
};

const option longopts[] = {
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
	{"two-vm", required_argument, nullptr, opt_two_vm},
	{"peer-ip", required_argument, nullptr, opt_peer_ip},
	{"control-port", required_argument, nullptr, opt_control_port},
	{"peer-timeout", required_argument, nullptr, opt_peer_timeout},
	{"json", no_argument, nullptr, 'j'},
	{"quiet", no_argument, nullptr, 'q'},
	{"help", no_argument, nullptr, 'h'},
	{nullptr, 0, nullptr, 0},
};

unsigned uint_arg(const char *what, const char *arg, std::uint64_t min, std::uint64_t max)
{
	return static_cast<unsigned>(count_arg(what, arg, min, max));
}

// The options of the flaps and of two VMs; false if c is none of them.
bool parse_flap_or_vm(int c, const char *arg, Options &o)
{
	switch (c) {
	case 'f':
		o.flap_interval = number_arg("--flap-interval", arg, 0, 3600);
		return true;
	case opt_flap_down:
		o.flap_down_ms = uint_arg("--flap-down", arg, 100, 600000);
		return true;
	case opt_flap_down_min:
		o.flap_down_min_ms = uint_arg("--flap-down-min", arg, 100, 600000);
		return true;
	case opt_flap_node:
		o.flap_node = uint_arg("--flap-node", arg, 0, 1);
		return true;
	case opt_flap_mode:
		if (std::string(arg) != "link" && std::string(arg) != "drop")
			throw UsageError(std::string("invalid --flap-mode '") + arg + "'");
		o.flap_drop = std::string(arg) == "drop";
		return true;
	case opt_two_vm:
		if (std::string(arg) != "a" && std::string(arg) != "b")
			throw UsageError(std::string("invalid --two-vm '") + arg + "' (a or b)");
		o.role = arg[0];
		return true;
	case opt_peer_ip:
		if (!rv::parse_ipv4(arg))
			throw UsageError(std::string("invalid --peer-ip '") + arg + "'");
		o.peer_ip = arg;
		return true;
	case opt_control_port:
		o.control_port = static_cast<std::uint16_t>(
			count_arg("--control-port", arg, 1, 65535));
		return true;
	case opt_peer_timeout:
		o.peer_timeout = uint_arg("--peer-timeout", arg, 10, 3600);
		return true;
	default:
		return false;
	}
}

void parse_option(int c, const char *arg, char **argv, Options &o)
{
	if (parse_flap_or_vm(c, arg, o))
		return;
	switch (c) {
	case 's':
		o.seconds = number_arg("--seconds", arg, 1, 86400);
		break;
	case 'n':
		o.procs = uint_arg("--procs-per-node", arg, 1, 64);
		break;
	case opt_seed:
		o.seed = count_arg("--seed", arg, 0, UINT64_MAX);
		break;
	case opt_slots:
		o.slots = uint_arg("--slots", arg, 1, 64);
		break;
	case opt_window:
		o.window = uint_arg("--window", arg, 1, 64);
		break;
	case opt_max_size:
		o.max_size = count_arg("--max-size", arg, 1, max_message);
		break;
	case opt_churn:
		o.churn = uint_arg("--churn", arg, 0, 100);
		break;
	case opt_reconnect_timeout:
		o.reconnect_timeout = uint_arg("--reconnect-timeout", arg, 1, 3600);
		break;
	case opt_drain_timeout:
		o.drain_timeout = uint_arg("--drain-timeout", arg, 1, 3600);
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

Options parse(int argc, char **argv)
{
	Options o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:f:jqh", longopts, nullptr)) != -1)
		parse_option(c, optarg, argv, o);
	if (auto extra = rv::tools::extra_argument(argc, argv))
		throw UsageError(*extra);
	if (!o.flap_down_ms)
		o.flap_down_ms = o.flap_drop ? 12000 : 5000;
	if (!o.flap_down_min_ms || o.flap_down_min_ms > o.flap_down_ms)
		o.flap_down_min_ms = o.flap_down_ms;
	if (o.role && o.peer_ip.empty()) {
		const char *env = std::getenv("RV_PEER_IP");
		if (!env || !rv::parse_ipv4(env))
			throw UsageError("--two-vm needs --peer-ip (or RV_PEER_IP)");
		o.peer_ip = env;
	}
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

// Sums over the workers of a node (or of both nodes).
struct Totals {
	SendReport s;
	RecvReport r;
	std::uint64_t overflow = 0;
	std::uint64_t stats_disagree = 0;
	std::uint64_t last_ok_ns = 0;
	std::uint64_t min_sent = UINT64_MAX;
	std::uint64_t min_verified = UINT64_MAX;

	void add_send(const SendReport &a)
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
		s.invalidated_mr += a.invalidated_mr;
	}

	void add_recv(const RecvReport &b)
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

	void add(const Worker &w)
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
	void merge(const Totals &o)
	{
		add_send(o.s);
		add_recv(o.r);
		min_sent = std::min(min_sent, o.min_sent);
		min_verified = std::min(min_verified, o.min_verified);
		overflow += o.overflow;
		stats_disagree += o.stats_disagree;
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
	// setup
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
	// the other VM's controller
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
	// the end
	void fail(const std::string &why) { failures_.push_back(why); }
	bool all(bool Worker::*flag) const;
	void progress_line();
	void snapshot(const std::string &why);
	void flapper();
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

bool Controller::all(bool Worker::*flag) const
{
	for (const Worker &w : w_)
		if (!(w.*flag))
			return false;
	return true;
}

// n_: both nodes of this VM, or this VM's node and the other VM's (whose
// RoCE v2 GID is its IPv4 address, mapped).
void Controller::setup_nodes()
{
	for (unsigned i = 0; i < 2; i++) {
		if (!local(i)) {
			const std::uint32_t ip = *rv::parse_ipv4(o_.peer_ip);
			n_[i].dev = "peer";
			n_[i].ip = ip;
			n_[i].gid = rv::ipv4_mapped_gid(ip);
			continue;
		}
		auto n = rv::test::node(two_vm_ ? 0 : i);
		if (!n)
			throw std::runtime_error(two_vm_ ? "needs an RDMA node (RV_NODES, vm-run --two-vm)"
							 : "needs two RDMA nodes (RV_NODES, vm-run --rxe 2)");
		n_[i] = *n;
	}
	if (flapping() && n_[o_.flap_node].netdev.empty())
		throw std::runtime_error("node " + n_[o_.flap_node].dev +
					 " has no netdev to flap (RV_NETDEVS)");
	for (unsigned i = 0; i < 2; i++)
		node_[i].dev = two_vm_ ? std::string(1, static_cast<char>('a' + i)) + ":" +
						 (local(i) ? n_[i].dev : "?")
				       : n_[i].dev;
	if (flapping() && !o_.flap_drop)
		for (const rv::test::Node &x : rv::test::nodes())
			if (!x.netdev.empty())
				links_.emplace_back(x.netdev);
}

void Controller::start_workers()
{
	rv::test::SideConfig side;

	side.reconnect_timeout = o_.reconnect_timeout;
	side.hb_interval = 1000;
	side.cq_entries = std::max(1024u, 4 * (o_.window + o_.slots) + 64);
	for (unsigned node = 0; node < 2; node++) {
		if (!local(node))
			continue;
		for (unsigned i = 0; i < o_.procs; i++) {
			WorkerConfig c;
			c.id = node * o_.procs + i;
			c.procs = o_.procs;
			c.local = n_[node];
			c.remote = n_[1 - node];
			c.key = key_;
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

// A grant or release from worker src (an id) or from the other VM: to a
// worker of this VM, or over the link to the other VM's.
void Controller::route(const Msg &m, unsigned src)
{
	const Route r = rv::test::body_of<Route>(m);
	const unsigned ids = 2 * o_.procs;
	const bool from_peer = src == ids;

	if ((!from_peer && r.src != src) || r.dst >= ids ||
	    (from_peer && (local(r.src / o_.procs) || !local(r.dst / o_.procs)))) {
		dropped_++;
		return;
	}
	if (!local(r.dst / o_.procs)) {
		if (peer_lost_)
			dropped_++;
		else
			send_peer(m);
		return;
	}
	Worker &w = w_[r.dst - first_];
	if (!w.alive) {
		dropped_++;
		return;
	}
	try {
		w.peer.chan().send(m);
	} catch (const std::exception &) {
		w.alive = false;
		dropped_++;
	}
}

void Controller::on_message(unsigned from, const Msg &m)
{
	Worker &w = w_[from];

	switch (m.type) {
	case sm_grant:
	case sm_release:
		route(m, first_ + from);
		return;
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
		notes_.push_back("worker " + std::to_string(first_ + from) + ": " + text_of(m));
		if (!o_.quiet)
			std::fprintf(stderr, "%s: worker %u: %s\n", prog, first_ + from,
				     text_of(m).c_str());
		abort_ = true;
		return;
	default:
		return;
	}
}

void Controller::read_worker(unsigned i)
{
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
			notes_.push_back("worker " + std::to_string(first_ + i) +
					 ": gone before its report");
			abort_ = true;
		}
	}
}

// Waits up to wait for a message from a worker or the other controller
// and handles what came.
void Controller::pump(milliseconds wait)
{
	std::vector<pollfd> pfd;
	std::vector<unsigned> who;	// w_ index; w_.size(): the link

	for (unsigned i = 0; i < w_.size(); i++) {
		if (!w_[i].alive)
			continue;
		pfd.push_back({w_[i].peer.chan().fd(), POLLIN, 0});
		who.push_back(i);
	}
	if (link_.open()) {
		pfd.push_back({link_.fd(), link_.events(), 0});
		who.push_back(static_cast<unsigned>(w_.size()));
	}
	if (pfd.empty()) {
		std::this_thread::sleep_for(wait);
		return;
	}
	const int n = ::poll(pfd.data(), pfd.size(), static_cast<int>(wait.count()));
	for (std::size_t k = 0; n > 0 && k < pfd.size(); k++) {
		if (!pfd[k].revents)
			continue;
		if (who[k] == w_.size())
			read_link();
		else
			read_worker(who[k]);
	}
	keep_link();
}

// Pumps until done() (true), limit passes or the other controller is
// lost (false).
bool Controller::wait_for(const std::function<bool()> &done, clock::duration limit)
{
	const auto end = clock::now() + limit;

	while (!done()) {
		if (clock::now() >= end)
			return false;
		pump(milliseconds(50));
	}
	return true;
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
		for (unsigned i = 0; i < 2; i++) {
			if (!local(i))
				continue;
			const rv::test::Node &n = n_[i];
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


// ------------------------------------------------------------ two VMs

CtlHello Controller::hello() const
{
	CtlHello h;
	h.node = me_;
	h.procs = o_.procs;
	h.slots = o_.slots;
	h.window = o_.window;
	h.churn = o_.churn;
	h.max_size = o_.max_size;
	h.seed = o_.seed;
	h.seconds = o_.seconds;
	h.flap_interval = o_.flap_interval;
	h.flap_node = o_.flap_node;
	h.flap_drop = o_.flap_drop;
	h.reconnect_timeout = o_.reconnect_timeout;
	h.key = key_;
	return h;
}

// Both controllers must have been given the same run.
void Controller::check_hello(const CtlHello &h) const
{
	const CtlHello m = hello();

	if (h.version != m.version || h.node != 1 - me_)
		throw std::runtime_error("the other controller is not --two-vm " +
					 std::string(me_ ? "a" : "b"));
	if (h.procs != m.procs || h.slots != m.slots || h.window != m.window ||
	    h.churn != m.churn || h.max_size != m.max_size || h.seed != m.seed ||
	    h.seconds != m.seconds || h.flap_interval != m.flap_interval ||
	    h.flap_node != m.flap_node || h.flap_drop != m.flap_drop ||
	    h.reconnect_timeout != m.reconnect_timeout)
		throw std::runtime_error("the two controllers were given different options");
}

// VM a listens, VM b connects; they swap CtlHello and b takes a's job
// key.
void Controller::open_link()
{
	const seconds limit(o_.peer_timeout);

	if (!o_.quiet)
		std::fprintf(stderr, "%s: %s VM b's controller on port %u\n", prog,
			     me_ ? "connecting to" : "waiting for", o_.control_port);
	if (me_ == 0)
		link_ = ControlLink::accept_one(o_.control_port, limit, limit);
	else
		link_ = ControlLink::connect_to(o_.peer_ip, o_.control_port, limit, limit);
	last_ping_ = clock::now();
	if (me_ == 0)
		send_peer(ctl_hello, hello());
	if (!wait_for([&] { return peer_hello_ || peer_lost_; }, limit) || peer_lost_)
		throw std::runtime_error("no hello from the other controller");
	check_hello(*peer_hello_);
	if (me_ == 1) {
		key_ = peer_hello_->key;
		send_peer(ctl_hello, hello());
	}
}

void Controller::send_peer(const Msg &m)
{
	if (peer_lost_ || !link_.open())
		return;
	try {
		link_.send(m);
	} catch (const std::exception &e) {
		peer_gone(e.what());
	}
}

void Controller::send_peer_text(const std::string &text)
{
	if (peer_lost_ || !link_.open())
		return;
	try {
		link_.send_text(ctl_failure, text);
	} catch (const std::exception &e) {
		peer_gone(e.what());
	}
}

void Controller::peer_gone(const std::string &why)
{
	if (peer_lost_)
		return;
	peer_lost_ = true;
	link_.close();
	if (peer_bye_)
		return;
	fail("lost the controller of " + vm_name(1 - me_) + ": " + why);
	abort_ = true;
}

void Controller::read_link()
{
	try {
		link_.flush();
		while (link_.open()) {
			std::optional<Msg> m = link_.recv();
			if (!m)
				break;
			on_link_message(*m);
		}
	} catch (const std::exception &e) {
		peer_gone(e.what());
	}
}

// The flapping controller's flaps, as they finish; the other one dates
// them by their arrival (its clock is not the other VM's).
void Controller::send_new_flaps()
{
	std::vector<CtlFlap> out;

	if (!flapping())
		return;
	{
		std::lock_guard lk(mu_);
		for (; flaps_sent_ < flaps_.size(); flaps_sent_++) {
			const Flap &f = flaps_[flaps_sent_];
			CtlFlap c;
			c.start_s = f.start_s;
			c.up_s = f.up_s;
			c.active_s = f.active_s;
			c.down_ms = f.down_ms;
			std::snprintf(c.error, sizeof(c.error), "%s", f.error.c_str());
			out.push_back(c);
		}
	}
	for (const CtlFlap &c : out)
		send_peer(ctl_flap, c);
}

// Pings, flaps and what waits to be written; a silent peer is lost.
void Controller::keep_link()
{
	if (!two_vm_ || peer_lost_ || !link_.open())
		return;
	send_new_flaps();
	const auto now = clock::now();
	if (now - last_ping_ >= seconds(1)) {
		last_ping_ = now;
		send_peer(ctl_ping);
	}
	try {
		link_.flush();
	} catch (const std::exception &e) {
		peer_gone(e.what());
	}
	if (link_.open() && link_.silence() > seconds(o_.peer_timeout))
		peer_gone("no word for " + std::to_string(o_.peer_timeout) + " s");
}

void Controller::on_link_message(const Msg &m)
{
	switch (m.type) {
	case sm_grant:
	case sm_release:
		route(m, 2 * o_.procs);
		return;
	case ctl_hello:
		peer_hello_ = rv::test::body_of<CtlHello>(m);
		return;
	case ctl_ready:
		peer_ready_ = rv::test::body_of<CtlReady>(m);
		return;
	case ctl_go:
		go_ = true;
		return;
	case ctl_stop:
		peer_stop_ = true;
		if (rv::test::body_of<CtlStop>(m).abort)
			abort_ = true;
		return;
	case ctl_drained:
		peer_drained_ = true;
		return;
	case ctl_bye:
		peer_bye_ = true;
		return;
	case ctl_ping:
		return;
	default:
		on_peer_result(m);
		return;
	}
}

// The other node's flaps and, at the end, its numbers.
void Controller::on_peer_result(const Msg &m)
{
	NodeResult &nr = node_[1 - me_];

	switch (m.type) {
	case ctl_flap: {
		const CtlFlap c = rv::test::body_of<CtlFlap>(m);
		Flap f;
		f.start_s = c.start_s;
		f.up_s = c.up_s;
		f.active_s = c.active_s;
		f.down_ms = c.down_ms;
		f.error.assign(c.error, strnlen(c.error, sizeof(c.error)));
		f.up = clock::now();
		std::lock_guard lk(mu_);
		flaps_.push_back(f);
		return;
	}
	case ctl_node_send:
		nr.t.s = rv::test::body_of<SendReport>(m);
		return;
	case ctl_node_recv:
		nr.t.r = rv::test::body_of<RecvReport>(m);
		return;
	case ctl_node_conn:
		nr.cs = rv::test::body_of<rv::ConnStats>(m);
		nr.have_cs = true;
		return;
	case ctl_node_misc: {
		const CtlNode c = rv::test::body_of<CtlNode>(m);
		nr.t.overflow = c.overflow;
		nr.t.stats_disagree = c.stats_disagree;
		nr.t.min_sent = c.min_sent;
		nr.t.min_verified = c.min_verified;
		nr.rx_before = c.rx_before;
		nr.rx_after = c.rx_after;
		nr.conn_count_delta = c.conn_count_delta;
		nr.recoveries = c.recoveries;
		nr.after_last_flap = c.after_last_flap;
		nr.dev.assign(c.dev, strnlen(c.dev, sizeof(c.dev)));
		nr.have = c.reported;
		return;
	}
	case ctl_failure:
		peer_failures_.push_back(text_of(m));
		return;
	case ctl_results_end:
		peer_results_ = true;
		return;
	default:
		notes_.push_back("unknown message " + std::to_string(m.type) +
				 " from the other controller");
		return;
	}
}

// This node's numbers and the invariants broken that only this VM saw.
void Controller::send_results()
{
	const NodeResult &nr = node_[me_];
	CtlNode c;

	send_peer(ctl_node_send, nr.t.s);
	send_peer(ctl_node_recv, nr.t.r);
	if (nr.have_cs)
		send_peer(ctl_node_conn, nr.cs);
	c.overflow = nr.t.overflow;
	c.stats_disagree = nr.t.stats_disagree;
	c.min_sent = nr.t.min_sent;
	c.min_verified = nr.t.min_verified;
	c.rx_before = nr.rx_before;
	c.rx_after = nr.rx_after;
	c.conn_count_delta = nr.conn_count_delta;
	c.dropped = dropped_;
	c.recoveries = nr.recoveries;
	c.have_cs = nr.have_cs;
	c.reported = reported_;
	c.after_last_flap = nr.after_last_flap;
	std::snprintf(c.dev, sizeof(c.dev), "%s", nr.dev.c_str());
	send_peer(ctl_node_misc, c);
	for (const std::string &f : failures_)
		send_peer_text(f);
	send_peer(ctl_results_end);
}

void Controller::exchange_results()
{
	send_results();
	if (!wait_for([&] { return peer_results_ || peer_lost_; }, seconds(o_.peer_timeout)))
		peer_gone("no results within " + std::to_string(o_.peer_timeout) + " s");
	if (!peer_results_)
		node_[1 - me_].have = false;
}

// Both sides have each other's results once both said bye: close.
void Controller::close_link()
{
	send_peer(ctl_bye);
	wait_for([&] { return peer_bye_ || peer_lost_; }, seconds(60));
	wait_for([&] { return peer_lost_ || !link_.open() || !link_.queued(); }, seconds(30));
	peer_lost_ = true;
	link_.close();
}

// ------------------------------------------------------------ the run

void Controller::check_ready()
{
	for (unsigned node = 0; node < 2; node++) {
		if (!local(node))
			continue;
		std::set<std::uint64_t> handles;
		std::set<std::uint32_t> indexes;
		for (unsigned i = 0; i < o_.procs; i++) {
			const Ready &r = w_[node * o_.procs + i - first_].info;
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
		node_[node].rx_before = rv::test::rcvd_pkts(n_[node].dev);
	}
	have_rx_ = true;
}

// Every local worker connected; with two VMs the other VM's too, and VM
// a says go (or stop).
void Controller::wait_ready(clock::time_point t_setup)
{
	const seconds limit(o_.peer_timeout);

	wait_for([&] { return abort_ || all(&Worker::ready); },
		 seconds(300) - (clock::now() - t_setup));
	if (!all(&Worker::ready) && !abort_) {
		fail("not every process connected within 300 s");
		abort_ = true;
	}
	if (!abort_) {
		check_ready();
		if (!o_.quiet)
			std::fprintf(stderr, "%s: %zu processes connected in %.1f s\n", prog,
				     w_.size(), since(t_setup));
	}
	if (!two_vm_)
		return;
	send_peer(ctl_ready, CtlReady{!abort_, 0});
	if (!wait_for([&] { return peer_ready_ || peer_lost_; }, limit))
		peer_gone("not ready within " + std::to_string(o_.peer_timeout) + " s");
	if (!peer_ready_ || !peer_ready_->ok)
		abort_ = true;
	if (me_ == 0) {
		if (abort_)
			send_peer(ctl_stop, CtlStop{1, 0});
		else
			send_peer(ctl_go);
		return;
	}
	if (!abort_ && !wait_for([&] { return go_ || peer_stop_ || peer_lost_; }, limit))
		peer_gone("no go within " + std::to_string(o_.peer_timeout) + " s");
	if (!go_)
		abort_ = true;
}

void Controller::traffic()
{
	vmstat0_ = read_vmstat();
	t0_ = clock::now();
	last_line_ = t0_;
	t_end_ = t0_ + std::chrono::duration_cast<clock::duration>(
			       std::chrono::duration<double>(o_.seconds));
	if (abort_)
		return;
	if (!o_.quiet)
		std::fprintf(stderr, "%s: sending for %.0f s\n", prog, o_.seconds);
	broadcast(sm_go);
	if (flapping()) {
		flapper_done_ = false;
		std::thread([this] { flapper(); }).swap(flap_thread_);
	}
	while (!abort_ && !peer_stop_ && clock::now() < t_end_) {
		pump(milliseconds(50));
		progress_line();
	}
	if (abort_)
		snapshot("a process failed");
}

// One round of the drain; true once it is over.
bool Controller::drain_step(bool &sent_drained)
{
	bool all_drained = true;
	bool any_alive = false;

	for (const Worker &w : w_) {
		any_alive = any_alive || w.alive;
		if (w.alive && !w.drained)
			all_drained = false;
	}
	const bool done = !any_alive || (all_drained && flapper_done_);
	if (done && two_vm_ && !sent_drained) {
		send_new_flaps();
		send_peer(ctl_drained, CtlStop{!all_drained || !any_alive, 0});
		sent_drained = true;
	}
	if (done && (!two_vm_ || peer_drained_ || peer_lost_)) {
		drained_ = all_drained && any_alive;
		return true;
	}
	return false;
}

// Stop: nothing new; what is in flight finishes (through a link flap
// that may still be going on), on both VMs.
void Controller::drain()
{
	bool sent_drained = false;

	t_stop_ = clock::now();
	{
		std::lock_guard lk(mu_);
		stop_flaps_ = true;
	}
	cv_.notify_all();
	broadcast(abort_ ? sm_abort : sm_stop);
	if (two_vm_)
		send_peer(ctl_stop, CtlStop{abort_, 0});
	const auto drain_end = t_stop_ + seconds(o_.drain_timeout);
	while (clock::now() < drain_end && !drain_step(sent_drained)) {
		pump(milliseconds(50));
		progress_line();
	}
	t_drained_ = clock::now();
	drain_s_ = since(t_stop_, t_drained_);
	if (!drained_) {
		snapshot("the drain timed out");
		fail("not every process finished what it had in flight within " +
		     std::to_string(o_.drain_timeout) + " s after the end");
	}
	if (two_vm_ && !sent_drained)
		send_peer(ctl_drained, CtlStop{1, 0});
	while (!flapper_done_)
		pump(milliseconds(50));
	if (flap_thread_.joinable())
		flap_thread_.join();
	if (two_vm_)
		send_new_flaps();
}

void Controller::finish_workers()
{
	broadcast(sm_finish);
	wait_for(
		[&] {
			for (const Worker &w : w_)
				if (w.alive && !w.reported())
					return false;
			return true;
		},
		seconds(60));
	total_s_ = since(t0_);
	vmstat1_ = read_vmstat();
	for (unsigned i = 0; i < 2; i++)
		if (local(i) && have_rx_)
			node_[i].rx_after = rv::test::rcvd_pkts(n_[i].dev);
	broadcast(sm_exit);
	for (Worker &w : w_) {
		w.status = w.peer.wait(seconds(60));
		w.alive = false;
		keep_link();
	}
}

int Controller::run()
{
	setup_nodes();
	key_ = rv::random_job_key();
	if (two_vm_)
		open_link();
	const auto t_setup = clock::now();
	start_workers();
	// The workers keep the CPUs busy: the controller routes their
	// messages and runs `ip` for the link flaps at a higher priority
	// (the nice value is per thread; the flapper thread inherits it).
	(void)::setpriority(PRIO_PROCESS, 0, -10);
	wait_ready(t_setup);
	traffic();
	drain();
	finish_workers();
	evaluate_local();
	if (two_vm_)
		exchange_results();
	evaluate();
	if (two_vm_)
		close_link();
	if (o_.json)
		print_json();
	else
		print_text();
	return failures_.empty() ? 0 : 1;
}

// ------------------------------------------------------------ the end

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
	if (!flaps_.empty() && !node_[0].after_last_flap && !node_[1].after_last_flap)
		fail("no message completed after the last link flap");
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
