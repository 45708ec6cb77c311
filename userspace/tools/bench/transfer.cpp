// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench bw and lat: the client and the server, in two processes, two
// threads or one process each on two machines (bench/two_node.hpp does
// the transfers).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "bench/command_line.hpp"
#include "bench/commands.hpp"
#include "bench/oob.hpp"
#include "bench/session.hpp"
#include "bench/transfer_options.hpp"
#include "bench/transfer_report.hpp"
#include "bench/two_node.hpp"

namespace rvbench {

namespace {

rv::bench::Plan make_plan(const TransferOptions &o)
{
	rv::bench::Plan p;
	p.test = o.test;
	p.sizes = o.sizes;
	p.warmup = o.test == rv::bench::Test::lat ? o.warmup : 0;
	p.window = o.window;
	p.buffer = o.buffer;
	p.verify = o.verify;
	for (std::uint64_t s : o.sizes) {
		if (o.iters)
			p.counts.push_back(*o.iters);
		else if (o.test == rv::bench::Test::lat)
			p.counts.push_back(default_lat_iters);
		else
			p.counts.push_back(std::max<std::uint64_t>(1, o.bytes / s));
	}
	return p;
}

// role: "client" or "server"; show_progress: this process prints the
// progress lines of the run (not a loopback server: its client does).
rv::bench::NodeConfig node_config(const TransferOptions &o, const std::string &device,
				  const char *role, bool show_progress = true)
{
	rv::bench::NodeConfig c;
	c.rv_path = o.common.rv_path;
	c.port = o.common.port;
	c.sysfs = o.common.sysfs;
	c.device = device.empty() ? default_device(rv::RdmaSysfs(o.common.sysfs))
				  : device;
	c.num_conn = o.num_conn;
	c.index_bits = o.index_bits;
	c.mr_cache_mb = o.cache_mb;
	c.mtu = o.mtu;
	c.packet_life_time = o.packet_life_time;
	c.timeout_s = o.timeout_s;
	c.yield = o.yield;
	c.job_key = o.job_key;
	if (show_progress)
		c.progress = progress_sink(o.common);
	c.progress_interval_ns = o.common.progress_interval_ns;
	if (o.common.verbose) {
		const std::string who = role;
		c.log = [who](const std::string &m) {
			std::fprintf(stderr, "%s: %s: %s\n", prog, who.c_str(), m.c_str());
		};
	}
	return c;
}

std::chrono::milliseconds ms_of(double s)
{
	return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// --- the two processes ---

// A forked child, killed and reaped if still running when this goes.
class Child {
public:
	explicit Child(pid_t pid) noexcept : pid_(pid) {}
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	~Child()
	{
		if (pid_ > 0) {
			::kill(pid_, SIGTERM);
			(void)wait();
		}
	}

	// The exit status (128 + signal if killed).
	int wait() noexcept
	{
		int st = 0;
		while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR)
			;
		pid_ = -1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}

private:
	pid_t pid_;
};

int serve(const TransferOptions &o, const rv::bench::NodeConfig &cfg, int listen_fd,
	  bool quiet)
{
	// A server waits for its client without a limit; loopback ones not.
	auto s = rv::bench::oob::accept_one(
		listen_fd, quiet ? ms_of(o.timeout_s) : std::chrono::hours(24 * 365));
	rv::bench::ServerReport r = rv::bench::run_server(cfg, std::move(s));
	if (!quiet && print(server_text(o, r)))
		return 1;
	return r.mismatches ? 1 : 0;
}

int client_done(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	if (print(o.common.json ? transfer_json(o, r) : transfer_table(o, r)))
		return 1;
	return r.mismatches() ? 1 : 0;
}

int run_transfer(int argc, char **argv, rv::bench::Test test)
{
	const TransferOptions o = parse_transfer(argc, argv, test);
	const rv::bench::Plan plan = make_plan(o);
	const auto to = ms_of(o.timeout_s);

	switch (o.ep.kind) {
	case Endpoint::Kind::connect: {
		const auto cfg = node_config(o, o.common.device, "client");
		auto s = rv::bench::oob::connect_tcp(o.ep.host, o.ep.tcp_port, to);
		return client_done(o, rv::bench::run_client(cfg, plan, std::move(s)));
	}
	case Endpoint::Kind::listen: {
		const auto cfg = node_config(o, o.common.device, "server");
		rv::UniqueFd l = rv::bench::oob::listen_tcp(o.ep.host, o.ep.tcp_port);
		progress(o.common, "listening on port " + std::to_string(o.ep.tcp_port));
		return serve(o, cfg, l.get(), false);
	}
	default:
		break;
	}

	// Loopback: the server on the second node, in a thread or a child.
	const auto ccfg = node_config(o, o.ep.client_dev, "client");
	const auto scfg = node_config(o, o.ep.server_dev, "server", false);
	std::uint16_t port = 0;
	rv::UniqueFd l = rv::bench::oob::listen_tcp("127.0.0.1", 0, &port);

	if (o.ep.threads) {
		int server_rc = 1;
		std::string server_err;
		std::thread t([&] {
			try {
				server_rc = serve(o, scfg, l.get(), true);
			} catch (const std::exception &e) {
				server_err = e.what();
			}
		});
		int rc = 1;
		std::string client_err;
		try {
			auto s = rv::bench::oob::connect_tcp("127.0.0.1", port, to);
			rc = client_done(o, rv::bench::run_client(ccfg, plan, std::move(s)));
		} catch (const std::exception &e) {
			client_err = e.what();
			::shutdown(l.get(), SHUT_RDWR);	// a server still in accept
		}
		t.join();
		if (!server_err.empty())
			std::fprintf(stderr, "%s: server: %s\n", prog, server_err.c_str());
		if (!client_err.empty())
			throw std::runtime_error(client_err);
		return rc ? rc : server_rc ? 1 : 0;
	}

	std::fflush(nullptr);
	const pid_t pid = ::fork();
	if (pid < 0)
		rv::throw_errno("fork");
	if (pid == 0) {
		int rc = 1;
		try {
			rc = serve(o, scfg, l.get(), true);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "%s: server: %s\n", prog, e.what());
		}
		std::fflush(nullptr);
		::_exit(rc);
	}
	Child child(pid);
	l.reset();
	auto s = rv::bench::oob::connect_tcp("127.0.0.1", port, to);
	const int rc = client_done(o, rv::bench::run_client(ccfg, plan, std::move(s)));
	const int server_rc = child.wait();
	if (server_rc)
		std::fprintf(stderr, "%s: the server exited with status %d\n", prog,
			     server_rc);
	return rc ? rc : server_rc ? 1 : 0;
}

} // namespace

int run_bw(int argc, char **argv)
{
	return run_transfer(argc, argv, rv::bench::Test::bw);
}

int run_lat(int argc, char **argv)
{
	return run_transfer(argc, argv, rv::bench::Test::lat);
}

} // namespace rvbench
