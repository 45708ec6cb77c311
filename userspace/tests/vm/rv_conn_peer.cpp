// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_conn_peer: one node's side of an rv connection, for shell tests
// (tools/testing/selftests/rv/conn.sh) in one VM with two rxe nodes or in
// two VMs.
//
//   rv_conn_peer [options] hold
//       --procs N processes attach to the local node with the job key,
//       create and connect the connection to the peer, and hold it until
//       SIGTERM/SIGINT. Prints one line
//         connected procs=N conn_handles=K num_conn=Q rv_indexes=I
//           attach_ms_max=A connect_ms_max=C req_sent_max=R rej_recv_max=J
//       (K: distinct conn_handles among the processes, 1 when they share
//       the connection; the rest the slowest or busiest process's) once
//       all are connected, "done" when they exited.
//       With --oob [HOST:]PORT the two holds meet over TCP before their
//       processes start (the one whose node's IP is the lower listens), so
//       that neither side's connect deadline counts the other's start.
//   rv_conn_peer [options] recv
//       Listens on --oob PORT; once the sender is there, connects and
//       receives a verified transfer of --bytes (mixed sizes, unaligned
//       offsets) and checks every byte.
//   rv_conn_peer [options] send
//       Connects to the receiver at --oob HOST:PORT (retrying until
//       --timeout), then its rv connection, and sends the writes.
//       --tolerate re-posts writes that complete in error (link down/up);
//       --progress-file F keeps the bytes finished so far in F;
//       --expect-loss S then waits for the receiver to go away and
//       watches for S seconds how the connection fails (EIO) or recovers.
//   With --accept-eio (send and recv), a transfer cut short because the
//   connection failed for good also passes if it failed cleanly: the
//   sender's posts answered EIO, every post completed exactly once and
//   CONN_CONNECTED answers EIO; the receiver found no bad byte or event
//   and its own connection fails for good (CONN_CONNECTED EIO) within
//   --reconnect-timeout + 60 s. Both print "outcome=complete" or
//   "outcome=eio".
//
// Node options: --node I (the Ith node of RV_NODES, see vm_env.hpp) or
// --dev DEV [--ip A]; the peer: --peer-node J or --peer-ip B (its GID is
// ::ffff:B). Job: --job-key HEX (32 hex digits), --num-conn N,
// --reconnect-timeout S, --timeout S (connect timeout, default 120).
//
// Results are key=value lines on stdout; "result: ok" and exit status 0
// when every check passed, "result: FAIL ..." and 1 otherwise; 2 for bad
// usage.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rv/error.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "cli.hpp"
#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr const char *prog = "rv_conn_peer";

struct Opts {
	std::string mode;
	std::optional<std::size_t> node;
	std::string dev;
	std::optional<std::uint32_t> ip;
	std::optional<std::size_t> peer_node;
	std::optional<std::uint32_t> peer_ip;
	std::optional<rv::JobKey> job_key;
	unsigned procs = 1;
	unsigned num_conn = 0;
	unsigned reconnect_timeout = 30;
	unsigned timeout = 120;
	std::string oob;			// --oob [HOST:]PORT, as given
	std::optional<std::uint32_t> oob_ip;	// its HOST (default any / 127.0.0.1)
	std::uint16_t oob_port = 0;		// its PORT
	std::uint64_t bytes = 64ULL << 20;
	std::uint64_t seed = 1;
	bool tolerate = false;
	std::string progress_file;
	unsigned expect_loss = 0;
	bool accept_eio = false;
};

void usage(std::FILE *f)
{
	std::fprintf(f,
		     "usage: %s (--node I | --dev DEV [--ip A]) "
		     "(--peer-node J | --peer-ip B) --job-key HEX [--procs N] "
		     "[--num-conn N] [--reconnect-timeout S] [--timeout S] "
		     "[--oob [HOST:]PORT] [--bytes N] [--seed N] [--tolerate] "
		     "[--progress-file F] [--expect-loss S] [--accept-eio] "
		     "hold|send|recv\n"
		     "(see the comment at the top of rv_conn_peer.cpp)\n",
		     prog);
}

std::uint32_t ipv4(const char *what, std::string_view text)
{
	auto ip = rv::parse_ipv4(text);
	if (!ip)
		throw rv::cli::UsageError(std::string("invalid ") + what + " '" +
					  std::string(text) + "': not an IPv4 address");
	return *ip;
}

rv::JobKey job_key(std::string_view hex)
{
	rv::JobKey k{};
	const std::string s(hex);
	for (std::size_t i = 0; i < k.size(); i++) {
		unsigned v = 0;
		if (s.size() != 2 * k.size() ||
		    std::sscanf(s.c_str() + 2 * i, "%2x", &v) != 1)
			throw rv::cli::UsageError("invalid --job-key '" + s +
						  "': not 32 hex digits");
		k[i] = static_cast<std::uint8_t>(v);
	}
	return k;
}

// --oob [HOST:]PORT
void oob(Opts &o, std::string_view spec)
{
	o.oob = spec;
	const auto colon = spec.rfind(':');
	if (colon != std::string_view::npos && colon)
		o.oob_ip = ipv4("--oob host", spec.substr(0, colon));
	o.oob_port = static_cast<std::uint16_t>(rv::cli::parse_uint(
		"--oob port", colon == std::string_view::npos ? spec : spec.substr(colon + 1),
		1, 65535));
}

// The checks across the options.
void check(const Opts &o)
{
	using rv::cli::UsageError;
	if (o.mode != "hold" && o.mode != "send" && o.mode != "recv")
		throw UsageError("say hold, send or recv");
	if (!o.node && o.dev.empty())
		throw UsageError("--node or --dev needed");
	if (!o.peer_node && !o.peer_ip)
		throw UsageError("--peer-node or --peer-ip needed");
	if (!o.job_key)
		throw UsageError("--job-key needed");
	if (o.mode != "hold" && !o.oob_port)
		throw UsageError("--oob needed");
}

rv::cli::Parsed parse(int argc, char **argv, Opts &o)
{
	const rv::cli::Option options[] = {
		rv::cli::value("node", 0, [&o](std::string_view v) {
			o.node = rv::cli::parse_uint("--node", v);
		}),
		rv::cli::text("dev", 0, o.dev),
		rv::cli::value("ip", 0, [&o](std::string_view v) { o.ip = ipv4("--ip", v); }),
		rv::cli::value("peer-node", 0, [&o](std::string_view v) {
			o.peer_node = rv::cli::parse_uint("--peer-node", v);
		}),
		rv::cli::value("peer-ip", 0, [&o](std::string_view v) {
			o.peer_ip = ipv4("--peer-ip", v);
		}),
		rv::cli::value("job-key", 0, [&o](std::string_view v) { o.job_key = job_key(v); }),
		rv::cli::number("procs", 0, o.procs, 1, 1024),
		rv::cli::number("num-conn", 0, o.num_conn, 0, RV_MAX_NUM_CONN),
		rv::cli::number("reconnect-timeout", 0, o.reconnect_timeout),
		rv::cli::number("timeout", 0, o.timeout),
		rv::cli::value("oob", 0, [&o](std::string_view v) { oob(o, v); }),
		rv::cli::size("bytes", 0, o.bytes),
		rv::cli::number("seed", 0, o.seed),
		rv::cli::flag("tolerate", 0, o.tolerate),
		rv::cli::text("progress-file", 0, o.progress_file),
		rv::cli::number("expect-loss", 0, o.expect_loss),
		rv::cli::flag("accept-eio", 0, o.accept_eio),
	};
	std::vector<std::string> modes;
	if (rv::cli::parse(argc, argv, options, &modes) == rv::cli::Parsed::help)
		return rv::cli::Parsed::help;
	if (modes.size() > 1)
		throw rv::cli::UsageError("one of hold, send or recv, not '" + modes[1] + "'");
	o.mode = modes.empty() ? "" : modes[0];
	check(o);
	return rv::cli::Parsed::run;
}

// The ith node of RV_NODES.
Node rv_node(std::size_t i)
{
	auto n = node(i);
	if (!n)
		throw std::runtime_error("no node " + std::to_string(i) + " (RV_NODES)");
	return *n;
}

Node local_node(const Opts &o)
{
	if (o.node)
		return rv_node(*o.node);
	rv::RdmaSysfs sysfs;
	return roce_node(o.dev, sysfs.find_roce_v2_ipv4_gid(o.dev, 1, o.ip));
}

Node peer_node(const Opts &o)
{
	if (o.peer_node)
		return rv_node(*o.peer_node);
	Node n;
	n.dev = "peer";
	n.ip = *o.peer_ip;
	n.gid = rv::ipv4_mapped_gid(*o.peer_ip);
	return n;
}

SideConfig side_config(const Opts &o)
{
	SideConfig c;
	c.num_conn = static_cast<std::uint8_t>(o.num_conn);
	c.reconnect_timeout = o.reconnect_timeout;
	return c;
}

long long ms_since(std::chrono::steady_clock::time_point from,
		   std::chrono::steady_clock::time_point to = std::chrono::steady_clock::now())
{
	return std::chrono::duration_cast<milliseconds>(to - from).count();
}

void out(const std::string &line)
{
	std::cout << line << std::endl;
}

// ------------------------------------------------------------ hold

struct HoldInfo {
	std::uint64_t conn_handle;
	std::uint32_t rv_index;
	std::uint32_t num_conn;
	std::int64_t attach_ms;		/* from the worker's start */
	std::int64_t connect_ms;	/* CONN_CONNECT to connected */
	std::uint32_t req_sent;
	std::uint32_t rej_recv;
};

Channel tcp_accept(const Opts &o, seconds timeout);
Channel tcp_connect(const Opts &o, seconds timeout);

int hold(const Opts &o)
{
	const Node local = local_node(o);
	const Node remote = peer_node(o);
	const rv::JobKey key = *o.job_key;
	const SideConfig cfg = side_config(o);

	// Both holds run before either connects (recv_mode()); the channel
	// stays open while they hold.
	std::optional<Channel> met;
	if (o.oob_port)
		met.emplace(local.ip < remote.ip ? tcp_accept(o, seconds(o.timeout))
						 : tcp_connect(o, seconds(o.timeout)));

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, nullptr);

	std::vector<Peer> workers;
	for (unsigned i = 0; i < o.procs; i++)
		workers.emplace_back([&, i](Channel &ch) {
			const auto t0 = std::chrono::steady_clock::now();
			Side s(local, remote, key, cfg);
			const auto t1 = std::chrono::steady_clock::now();
			try {
				s.create_and_connect(seconds(o.timeout));
			} catch (const std::exception &e) {
				// What the QP went through, for a failed run's log.
				std::cerr << "worker " << i << ": attached in " << ms_since(t0, t1)
					  << " ms, " << e.what() << " after " << ms_since(t1) << " ms"
					  << (s.conn().valid() ? ": " + to_string(s.conn().stats()) : "")
					  << std::endl;
				throw;
			}
			const rv::ConnStats st = s.conn().stats();
			ch.send(msg_ready, HoldInfo{s.conn().conn_handle(), s.attach().rv_index,
						    st.num_conn, ms_since(t0, t1), ms_since(t1),
						    st.req_sent, st.rej_recv});
			for (;;) {
				Msg m = ch.recv(milliseconds(-1)).value();
				if (m.type == msg_fin)
					return 0;
			}
		});
	std::set<std::uint64_t> handles;
	std::set<std::uint32_t> indexes;
	std::set<std::uint32_t> num_conns;
	HoldInfo most{};
	for (auto &w : workers) {
		try {
			HoldInfo hi = w.chan().expect_body<HoldInfo>(
				msg_ready, seconds(o.timeout + 60));
			handles.insert(hi.conn_handle);
			indexes.insert(hi.rv_index);
			num_conns.insert(hi.num_conn);
			most.attach_ms = std::max(most.attach_ms, hi.attach_ms);
			most.connect_ms = std::max(most.connect_ms, hi.connect_ms);
			most.req_sent = std::max(most.req_sent, hi.req_sent);
			most.rej_recv = std::max(most.rej_recv, hi.rej_recv);
		} catch (const std::exception &e) {
			out(std::string("result: FAIL worker: ") + e.what());
			return 1;
		}
	}
	std::ostringstream line;
	line << "connected procs=" << o.procs << " conn_handles=" << handles.size()
	     << " num_conn=";
	for (auto n : num_conns)
		line << n << (n == *num_conns.rbegin() ? "" : ",");
	line << " rv_indexes=" << indexes.size() << " attach_ms_max=" << most.attach_ms
	     << " connect_ms_max=" << most.connect_ms << " req_sent_max=" << most.req_sent
	     << " rej_recv_max=" << most.rej_recv;
	out(line.str());

	int sig = 0;
	sigwait(&set, &sig);
	bool ok = true;
	for (auto &w : workers) {
		try {
			w.chan().send(msg_fin);
		} catch (...) {
			ok = false;
		}
	}
	for (auto &w : workers) {
		Peer::Status st = w.wait(seconds(60));
		if (!st.ok()) {
			ok = false;
			out("worker " + st.str());
		}
	}
	out(ok ? "done" : "result: FAIL a worker failed");
	return ok ? 0 : 1;
}

// ------------------------------------------------------------ transfer

Channel tcp_accept(const Opts &o, seconds timeout)
{
	rv::UniqueFd ls(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!ls)
		rv::throw_errno("socket");
	int one = 1;
	::setsockopt(ls.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(o.oob_port);
	a.sin_addr.s_addr = htonl(o.oob_ip.value_or(INADDR_ANY));
	if (::bind(ls.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0)
		rv::throw_errno("bind");
	if (::listen(ls.get(), 1) < 0)
		rv::throw_errno("listen");
	pollfd pfd{ls.get(), POLLIN, 0};
	int r = ::poll(&pfd, 1, static_cast<int>(timeout.count() * 1000));
	if (r <= 0)
		throw std::system_error(r ? errno : ETIMEDOUT, std::generic_category(),
					"accept");
	int fd = ::accept4(ls.get(), nullptr, nullptr, SOCK_CLOEXEC);
	if (fd < 0)
		rv::throw_errno("accept");
	::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return Channel(rv::UniqueFd(fd));
}

Channel tcp_connect(const Opts &o, seconds timeout)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(o.oob_port);
	a.sin_addr.s_addr = htonl(o.oob_ip.value_or(INADDR_LOOPBACK));
	auto end = std::chrono::steady_clock::now() + timeout;
	for (;;) {
		rv::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (!fd)
			rv::throw_errno("socket");
		if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0) {
			int one = 1;
			::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return Channel(std::move(fd));
		}
		int err = errno;
		if (std::chrono::steady_clock::now() >= end)
			rv::throw_errno(err, "connect " + o.oob);
		std::this_thread::sleep_for(milliseconds(100));
	}
}

TransferSpec transfer_spec(const Opts &o)
{
	TransferSpec s;
	s.seed = o.seed;
	s.bytes = o.bytes;
	s.slots = 8;
	s.slot_size = slot_bytes(2);
	s.max_len = slot_bytes(2);
	s.tolerate_errors = o.tolerate;
	s.stall_s = 120;
	s.timeout_s = 1200;
	return s;
}

// No bad byte or event, whether or not every message arrived.
bool recv_clean(const RecvReport &r, bool tolerate)
{
	return !r.result && !r.mismatches && !r.bad_type && !r.bad_index &&
	       !r.bad_seq && !r.bad_len && !r.bad_conn_handle && !r.overflow &&
	       (tolerate || (!r.duplicates && !r.bad_status));
}

bool recv_ok(const RecvReport &r, std::uint64_t count, bool tolerate)
{
	return recv_clean(r, tolerate) && r.verified == count;
}

// CONN_CONNECTED's errno now (0 when it succeeds).
int connected_errno(Side &s)
{
	return conn_connected_errno(s.fd(), s.conn().handle());
}

// Stats for the log; a failed connection may not have them.
std::string stats_line(Side &s)
{
	try {
		return "stats: " + to_string(s.conn().stats());
	} catch (const std::system_error &e) {
		return std::string("stats: ") + e.what();
	}
}

int recv_mode(const Opts &o)
{
	const Node local = local_node(o);
	Side s(local, peer_node(o), *o.job_key, side_config(o));
	// Its rv connection once the sender is there, which connects its own
	// right after: neither side's connect deadline (--reconnect-timeout,
	// from CONN_CONNECT) counts the time the other takes to arrive.
	Channel ch = tcp_accept(o, seconds(o.timeout));
	s.connect();
	if (!s.conn().wait_connected(seconds(o.timeout))) {
		out("result: FAIL not connected: " + to_string(s.conn().stats()));
		return 1;
	}
	const std::uint64_t rx = rcvd_pkts(local.dev);
	const TransferSpec spec = transfer_spec(o);
	RecvReport r = recv_transfer(s, ch, spec);
	const std::uint64_t count = message_count(spec);
	out("recv: " + to_string(r));
	out("messages=" + std::to_string(count) + " bytes=" + std::to_string(r.bytes) +
	    " rcvd_pkts_delta=" + std::to_string(rcvd_pkts(local.dev) - rx));
	out(stats_line(s));
	if (recv_ok(r, count, o.tolerate)) {
		if (o.accept_eio)
			out("outcome=complete");
		out("result: ok");
		return 0;
	}
	if (!o.accept_eio || !recv_clean(r, o.tolerate)) {
		out("result: FAIL receiver checks");
		return 1;
	}
	// Cut short: the connection must fail for good, also here.
	const auto t0 = std::chrono::steady_clock::now();
	bool eio = wait_until([&] { return connected_errno(s) == EIO; },
			      seconds(o.reconnect_timeout + 60));
	const double secs = std::chrono::duration<double>(
				    std::chrono::steady_clock::now() - t0).count();
	int count_err = conn_count_errno(s.fd(), s.conn().handle(), 0);
	std::ostringstream l;
	l << "conn: connected errno " << connected_errno(s)
	  << " conn_count errno " << count_err << " after " << secs << " s";
	out(l.str());
	if (!eio) {
		out("result: FAIL transfer cut short, the connection did not fail (EIO)");
		return 1;
	}
	out("outcome=eio");
	out("result: ok");
	return 0;
}

// --progress-file F: the bytes finished so far, at most every 100 ms,
// replaced atomically (rename).
class ProgressFile {
public:
	explicit ProgressFile(std::string path) : path_(std::move(path)) {}

	void operator()(std::uint64_t bytes)
	{
		if (path_.empty())
			return;
		auto now = std::chrono::steady_clock::now();
		if (now - last_ < milliseconds(100))
			return;
		last_ = now;
		std::ofstream f(path_ + ".tmp", std::ios::trunc);
		f << bytes << "\n";
		f.close();
		std::rename((path_ + ".tmp").c_str(), path_.c_str());
	}

private:
	std::string path_;
	std::chrono::steady_clock::time_point last_ =
		std::chrono::steady_clock::now() - seconds(1);
};

// The sender's counters and rate, one key=value line.
std::string send_line(const SendReport &r, std::uint64_t count, double secs)
{
	std::ostringstream kv;
	kv << "messages=" << count << " bytes=" << r.bytes << " seconds=" << secs
	   << " mbps=" << (secs > 0 ? static_cast<double>(r.bytes) / secs / 1e6 : 0)
	   << " conn_count_first=" << r.conn_count_first
	   << " conn_count_last=" << r.conn_count_last
	   << " cqe_err=" << r.cqe_err << " post_eagain=" << r.post_eagain;
	return kv.str();
}

// --expect-loss: after a complete transfer, waits for the receiver to go
// away, then watches how the connection fails or recovers.
int expect_loss(const Opts &o, Side &s, Channel &ch, const RecvInfo &info)
{
	// The receiver exits (and its node may drop the module).
	try {
		while (ch.recv(seconds(120)))
			;
		out("result: FAIL the receiver did not go away");
		return 1;
	} catch (const std::system_error &) {
		// EOF: gone.
	}
	WriteTarget t{info.addr, info.rkey, info.rv_index};
	LossLog log = watch_loss(s, t, nullptr, milliseconds(0), seconds(o.expect_loss));
	out("loss: " + log.str());
	bool lost_ok = !log.post_other && !log.connected_other_err &&
		       !log.cqe_unknown && !log.outstanding_end &&
		       log.post_eagain + log.post_eio + log.cqe_err > 0 &&
		       (log.failed_for_good_s
				? log.final_connected == -1 &&
					  log.last_post_err == EIO &&
					  log.final_count_err == EIO
				: log.final_connected == 1 &&
					  log.last_post_err == EAGAIN);
	out(std::string("loss_seen=") + (log.failed_for_good_s ? "eio" : "recovering"));
	if (!lost_ok) {
		out("result: FAIL connection loss checks");
		return 1;
	}
	out("result: ok");
	return 0;
}

int send_mode(const Opts &o)
{
	const Node local = local_node(o);
	Side s(local, peer_node(o), *o.job_key, side_config(o));
	// Both sides connect once the other is there (recv_mode()).
	Channel ch = tcp_connect(o, seconds(o.timeout));
	s.connect();
	if (!s.conn().wait_connected(seconds(o.timeout))) {
		out("result: FAIL not connected: " + to_string(s.conn().stats()));
		return 1;
	}
	ProgressFile progress(o.progress_file);
	const auto t0 = std::chrono::steady_clock::now();
	TransferResult res = send_transfer(s, ch, std::ref(progress));
	const double secs = std::chrono::duration<double>(
				    std::chrono::steady_clock::now() - t0).count();
	const SendReport &r = res.send;
	const std::uint64_t count = message_count(res.info.spec);
	out("send: " + to_string(r));
	if (res.recv)
		out("recv: " + to_string(*res.recv));
	out(send_line(r, count, secs));
	out(stats_line(s));
	// Every post completed exactly once, no bad event.
	const bool clean = !r.outstanding_end && !r.cqe_unknown && !r.cqe_bad &&
			   !r.post_other && r.cqe_ok + r.cqe_err == r.posts &&
			   !r.overflow && (o.tolerate || !r.cqe_err) && res.recv &&
			   recv_clean(*res.recv, o.tolerate);
	const bool ok = clean && !r.result && r.messages == count && !r.post_eio &&
			recv_ok(*res.recv, count, o.tolerate);
	if (o.accept_eio && !ok) {
		// Failed for good: posts answered EIO, so does CONN_CONNECTED.
		const int conn_err = connected_errno(s);
		out("conn: connected errno " + std::to_string(conn_err) +
		    " post_eio=" + std::to_string(r.post_eio) +
		    " reposts=" + std::to_string(r.reposts));
		if (clean && r.result == EIO && r.post_eio && conn_err == EIO) {
			out("outcome=eio");
			out("result: ok");
			return 0;
		}
	}
	if (!ok) {
		out("result: FAIL transfer checks");
		return 1;
	}
	if (o.accept_eio)
		out("outcome=complete reposts=" + std::to_string(r.reposts));
	if (o.expect_loss)
		return expect_loss(o, s, ch, res.info);
	out("result: ok");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o;
	if (auto rc = rv::cli::parse_command_line(prog, usage, parse, argc, argv, o))
		return *rc;
	try {
		if (o.mode == "hold")
			return hold(o);
		if (o.mode == "recv")
			return recv_mode(o);
		return send_mode(o);
	} catch (const std::exception &e) {
		out(std::string("result: FAIL ") + e.what());
		return 1;
	}
}
