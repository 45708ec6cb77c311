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
//       (K: distinct conn_handles among the processes, 1 when they share
//       the connection) once all are connected, "done" when they exited.
//   rv_conn_peer [options] recv
//       Listens on --oob PORT, connects, receives a verified transfer of
//       --bytes (mixed sizes, unaligned offsets) and checks every byte.
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
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/rdma_sysfs.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

struct Opts {
	std::string mode;
	std::optional<std::size_t> node;
	std::string dev;
	std::string ip;
	std::optional<std::size_t> peer_node;
	std::string peer_ip;
	std::string job_key;
	unsigned procs = 1;
	unsigned num_conn = 0;
	unsigned reconnect_timeout = 30;
	unsigned timeout = 120;
	std::string oob;
	std::uint64_t bytes = 64ULL << 20;
	std::uint64_t seed = 1;
	bool tolerate = false;
	std::string progress_file;
	unsigned expect_loss = 0;
	bool accept_eio = false;
};

[[noreturn]] void usage(const std::string &why)
{
	std::fprintf(stderr,
		     "rv_conn_peer: %s\n"
		     "usage: rv_conn_peer (--node I | --dev DEV [--ip A]) "
		     "(--peer-node J | --peer-ip B) --job-key HEX [--procs N] "
		     "[--num-conn N] [--reconnect-timeout S] [--timeout S] "
		     "[--oob [HOST:]PORT] [--bytes N] [--seed N] [--tolerate] "
		     "[--progress-file F] [--expect-loss S] [--accept-eio] "
		     "hold|send|recv\n",
		     why.c_str());
	std::exit(2);
}

std::uint64_t number(const std::string &opt, const std::string &v)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long n = std::strtoull(v.c_str(), &end, 0);
	if (errno || !end || *end || v.empty())
		usage(opt + ": not a number: " + v);
	return n;
}

Opts parse(int argc, char **argv)
{
	Opts o;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> std::string {
			if (i + 1 >= argc)
				usage(a + " needs a value");
			return argv[++i];
		};
		if (a == "--node")
			o.node = number(a, val());
		else if (a == "--dev")
			o.dev = val();
		else if (a == "--ip")
			o.ip = val();
		else if (a == "--peer-node")
			o.peer_node = number(a, val());
		else if (a == "--peer-ip")
			o.peer_ip = val();
		else if (a == "--job-key")
			o.job_key = val();
		else if (a == "--procs")
			o.procs = static_cast<unsigned>(number(a, val()));
		else if (a == "--num-conn")
			o.num_conn = static_cast<unsigned>(number(a, val()));
		else if (a == "--reconnect-timeout")
			o.reconnect_timeout = static_cast<unsigned>(number(a, val()));
		else if (a == "--timeout")
			o.timeout = static_cast<unsigned>(number(a, val()));
		else if (a == "--oob")
			o.oob = val();
		else if (a == "--bytes")
			o.bytes = number(a, val());
		else if (a == "--seed")
			o.seed = number(a, val());
		else if (a == "--tolerate")
			o.tolerate = true;
		else if (a == "--progress-file")
			o.progress_file = val();
		else if (a == "--expect-loss")
			o.expect_loss = static_cast<unsigned>(number(a, val()));
		else if (a == "--accept-eio")
			o.accept_eio = true;
		else if (a == "hold" || a == "send" || a == "recv")
			o.mode = a;
		else
			usage("unknown argument " + a);
	}
	if (o.mode.empty())
		usage("no mode");
	if (!o.node && o.dev.empty())
		usage("--node or --dev needed");
	if (!o.peer_node && o.peer_ip.empty())
		usage("--peer-node or --peer-ip needed");
	if (o.job_key.size() != 2 * RV_MAX_JOB_KEY_LEN)
		usage("--job-key needs 32 hex digits");
	if (o.procs < 1 || o.num_conn > RV_MAX_NUM_CONN)
		usage("bad --procs or --num-conn");
	if ((o.mode == "send" || o.mode == "recv") && o.oob.empty())
		usage("--oob needed");
	return o;
}

rv::JobKey job_key(const std::string &hex)
{
	rv::JobKey k{};
	for (std::size_t i = 0; i < k.size(); i++) {
		unsigned v = 0;
		if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1)
			usage("--job-key: bad hex");
		k[i] = static_cast<std::uint8_t>(v);
	}
	return k;
}

Node local_node(const Opts &o)
{
	if (o.node) {
		auto n = node(*o.node);
		if (!n)
			usage("no node " + std::to_string(*o.node) + " (RV_NODES)");
		return *n;
	}
	rv::RdmaSysfs sysfs;
	std::optional<std::uint32_t> ip;
	if (!o.ip.empty()) {
		ip = rv::parse_ipv4(o.ip);
		if (!ip)
			usage("--ip: bad address");
	}
	return roce_node(o.dev, sysfs.find_roce_v2_ipv4_gid(o.dev, 1, ip));
}

Node peer_node(const Opts &o)
{
	if (o.peer_node) {
		auto n = node(*o.peer_node);
		if (!n)
			usage("no node " + std::to_string(*o.peer_node) + " (RV_NODES)");
		return *n;
	}
	auto ip = rv::parse_ipv4(o.peer_ip);
	if (!ip)
		usage("--peer-ip: bad address");
	Node n;
	n.dev = "peer";
	n.ip = *ip;
	n.gid = rv::ipv4_mapped_gid(*ip);
	return n;
}

SideConfig side_config(const Opts &o)
{
	SideConfig c;
	c.num_conn = static_cast<std::uint8_t>(o.num_conn);
	c.reconnect_timeout = o.reconnect_timeout;
	return c;
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
};

int hold(const Opts &o)
{
	const Node local = local_node(o);
	const Node remote = peer_node(o);
	const rv::JobKey key = job_key(o.job_key);
	const SideConfig cfg = side_config(o);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, nullptr);

	std::vector<Peer> workers;
	for (unsigned i = 0; i < o.procs; i++)
		workers.emplace_back([&](Channel &ch) {
			Side s(local, remote, key, cfg);
			s.create_and_connect(seconds(o.timeout));
			ch.send(msg_ready, HoldInfo{s.conn().conn_handle(),
						    s.attach().rv_index,
						    s.conn().stats().num_conn});
			for (;;) {
				Msg m = ch.recv(milliseconds(-1)).value();
				if (m.type == msg_fin)
					return 0;
			}
		});
	std::set<std::uint64_t> handles;
	std::set<std::uint32_t> indexes;
	std::set<std::uint32_t> num_conns;
	for (auto &w : workers) {
		try {
			HoldInfo hi = w.chan().expect_body<HoldInfo>(
				msg_ready, seconds(o.timeout + 60));
			handles.insert(hi.conn_handle);
			indexes.insert(hi.rv_index);
			num_conns.insert(hi.num_conn);
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
	line << " rv_indexes=" << indexes.size();
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

std::pair<std::string, std::uint16_t> host_port(const std::string &s)
{
	auto colon = s.rfind(':');
	std::string host = colon == std::string::npos ? "" : s.substr(0, colon);
	std::string port = colon == std::string::npos ? s : s.substr(colon + 1);
	return {host, static_cast<std::uint16_t>(number("--oob", port))};
}

Channel tcp_accept(const std::string &spec, seconds timeout)
{
	auto [host, port] = host_port(spec);
	rv::UniqueFd ls(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!ls)
		rv::throw_errno("socket");
	int one = 1;
	::setsockopt(ls.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (!host.empty() && ::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
		usage("--oob: bad host");
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

Channel tcp_connect(const std::string &spec, seconds timeout)
{
	auto [host, port] = host_port(spec);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	if (::inet_pton(AF_INET, host.empty() ? "127.0.0.1" : host.c_str(),
			&a.sin_addr) != 1)
		usage("--oob: bad host");
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
			rv::throw_errno(err, "connect " + spec);
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
	Side s(local, peer_node(o), job_key(o.job_key), side_config(o));
	s.connect();
	Channel ch = tcp_accept(o.oob, seconds(o.timeout));
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

int send_mode(const Opts &o)
{
	const Node local = local_node(o);
	Side s(local, peer_node(o), job_key(o.job_key), side_config(o));
	// The receiver listens once its side is connecting: connecting
	// after it keeps this side's REQs from running into its deadline
	// while the receiver is not there yet.
	Channel ch = tcp_connect(o.oob, seconds(o.timeout));
	s.connect();
	if (!s.conn().wait_connected(seconds(o.timeout))) {
		out("result: FAIL not connected: " + to_string(s.conn().stats()));
		return 1;
	}
	auto last = std::chrono::steady_clock::now() - seconds(1);
	auto progress = [&](std::uint64_t bytes) {
		if (o.progress_file.empty())
			return;
		auto now = std::chrono::steady_clock::now();
		if (now - last < milliseconds(100))
			return;
		last = now;
		std::ofstream f(o.progress_file + ".tmp", std::ios::trunc);
		f << bytes << "\n";
		f.close();
		std::rename((o.progress_file + ".tmp").c_str(), o.progress_file.c_str());
	};
	const auto t0 = std::chrono::steady_clock::now();
	TransferResult res = send_transfer(s, ch, progress);
	const double secs = std::chrono::duration<double>(
				    std::chrono::steady_clock::now() - t0).count();
	const SendReport &r = res.send;
	const std::uint64_t count = message_count(res.info.spec);
	out("send: " + to_string(r));
	if (res.recv)
		out("recv: " + to_string(*res.recv));
	std::ostringstream kv;
	kv << "messages=" << count << " bytes=" << r.bytes << " seconds=" << secs
	   << " mbps=" << (secs > 0 ? static_cast<double>(r.bytes) / secs / 1e6 : 0)
	   << " conn_count_first=" << r.conn_count_first
	   << " conn_count_last=" << r.conn_count_last
	   << " cqe_err=" << r.cqe_err << " post_eagain=" << r.post_eagain;
	out(kv.str());
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

	if (o.expect_loss) {
		// The receiver exits (and its node may drop the module).
		try {
			while (ch.recv(seconds(120)))
				;
			out("result: FAIL the receiver did not go away");
			return 1;
		} catch (const std::system_error &) {
			// EOF: gone.
		}
		WriteTarget t{res.info.addr, res.info.rkey, res.info.rv_index};
		LossLog log = watch_loss(s, t, nullptr, milliseconds(0),
					 seconds(o.expect_loss));
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
		out(std::string("loss_seen=") +
		    (log.failed_for_good_s ? "eio" : "recovering"));
		if (!lost_ok) {
			out("result: FAIL connection loss checks");
			return 1;
		}
	}
	out("result: ok");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o = parse(argc, argv);
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
