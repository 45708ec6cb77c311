// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_fuzz: an ioctl/mmap fuzzer for /dev/rv.
//
// The orchestrator (this file) forks --procs worker processes
// (worker.cpp), each with --threads threads, and keeps that many
// running until the campaign's call budget or time is used up: workers
// end by themselves after a random number of calls, and the
// orchestrator SIGKILLs one now and then; each is replaced by the next
// generation of its index. A call running longer than --hang seconds is
// reported with the kernel stack of its thread. At the end the summary
// goes to stdout (text, or JSON with --json); the exit status is 0 iff
// there was no failure.
#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "env.hpp"
#include "options.hpp"
#include "rng.hpp"
#include "shared.hpp"
#include "worker.hpp"

namespace rvfuzz {

namespace {

using namespace std::chrono_literals;

Shared *g_shared = nullptr;

extern "C" void on_signal(int)
{
	if (g_shared)
		g_shared->stop.store(true);
}

struct Proc {
	pid_t pid = 0;
	unsigned gen = 0;
	bool killed = false;	// by the orchestrator
	bool hung = false;
	std::int64_t hung_since = 0;
	bool abandoned = false;	// would not die
	std::uint64_t seq = 0;	// calls of its threads, last seen
	std::int64_t seq_since = 0;	// when seq last changed
};

std::string read_file(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream s;

	s << f.rdbuf();
	return s.str();
}

class Orchestrator {
public:
	Orchestrator(const Options &o, const Env &env, Shared &sh)
		: o_(o), env_(env), sh_(sh), rng_(mix_seed(o.seed, 0x6f7263))
	{
	}

	int run();

private:
	void spawn(unsigned i);
	void reap();
	void maybe_kill();
	void check_hangs();
	void progress();
	[[nodiscard]] unsigned alive() const;

	const Options &o_;
	const Env &env_;
	Shared &sh_;
	Rng rng_;
	std::array<Proc, max_procs> procs_{};
	std::int64_t t0_ = now_ns();
	std::int64_t last_progress_ = now_ns();
};

unsigned Orchestrator::alive() const
{
	return static_cast<unsigned>(std::count_if(
		procs_.begin(), procs_.begin() + o_.procs,
		[](const Proc &p) { return p.pid > 0 && !p.abandoned; }));
}

void Orchestrator::spawn(unsigned i)
{
	Proc &p = procs_[i];
	const unsigned gen = p.pid ? p.gen + 1 : p.gen;
	const pid_t parent = ::getpid();
	const pid_t pid = ::fork();

	if (pid < 0) {
		std::fprintf(stderr, "rv_fuzz: fork: %s\n", std::strerror(errno));
		p.pid = 0;
		return;
	}
	if (pid == 0) {
		int rc = 3;
		// No worker outlives the campaign.
		::prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (::getppid() != parent)
			::_exit(0);
		std::signal(SIGINT, SIG_IGN);
		std::signal(SIGTERM, SIG_DFL);
		try {
			Worker w(o_, env_, sh_, i, gen);
			rc = w.run();
		} catch (const std::exception &e) {
			std::fprintf(stderr, "rv_fuzz: worker %u: %s\n", i, e.what());
		}
		std::fflush(stderr);
		::_exit(rc);
	}
	p = Proc{};
	p.pid = pid;
	p.gen = gen;
	p.seq_since = now_ns();
	for (unsigned t = 0; t < o_.threads; t++)
		p.seq += sh_.threads[i][t].seq.load();
	sh_.st.workers_spawned.fetch_add(1);
}

void Orchestrator::reap()
{
	int st = 0;
	pid_t pid;

	while ((pid = ::waitpid(-1, &st, WNOHANG)) > 0) {
		auto it = std::find_if(procs_.begin(), procs_.begin() + o_.procs,
				       [pid](const Proc &p) { return p.pid == pid; });
		if (it == procs_.begin() + o_.procs)
			continue;
		Proc &p = *it;
		const auto i = static_cast<unsigned>(it - procs_.begin());
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
			if (p.killed)
				sh_.st.workers_killed.fetch_add(1);
			else
				sh_.st.workers_died.fetch_add(1);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			// ended by itself: cleanly or with _exit(0)
			if (!sh_.expired())
				sh_.st.workers_died.fetch_add(1);
		} else {
			sh_.st.workers_crashed.fetch_add(1);
			sh_.st.failures.fetch_add(1);
			std::fprintf(stderr,
				     "rv_fuzz: FAIL seed %llu worker %u gen %u (pid %d) ended with %s %d\n",
				     static_cast<unsigned long long>(o_.seed), i, p.gen,
				     static_cast<int>(pid),
				     WIFSIGNALED(st) ? "signal" : "exit status",
				     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
		if (!sh_.expired() && !p.hung)
			spawn(i);
		else
			p.pid = 0;
	}
}

void Orchestrator::maybe_kill()
{
	if (o_.no_kill || sh_.expired() || rng_.below(400))
		return;
	Proc &p = procs_[rng_.below(o_.procs)];
	if (p.pid <= 0 || p.killed)
		return;
	p.killed = true;
	::kill(p.pid, SIGKILL);
}

void Orchestrator::check_hangs()
{
	const std::int64_t now = now_ns();
	const auto limit = static_cast<std::int64_t>(o_.hang_seconds * 1e9);

	for (unsigned i = 0; i < o_.procs; i++) {
		Proc &p = procs_[i];
		if (p.pid <= 0 || p.abandoned)
			continue;
		if (p.hung) {
			if (now - p.hung_since > 30'000'000'000LL) {
				std::fprintf(stderr,
					     "rv_fuzz: worker %u (pid %d) does not die after SIGKILL; left behind\n",
					     i, static_cast<int>(p.pid));
				p.abandoned = true;
			}
			continue;
		}
		// No call at all for that long, none in flight either: the
		// fuzzer itself is stuck.
		std::uint64_t seq = 0;
		for (unsigned t = 0; t < o_.threads; t++)
			seq += sh_.threads[i][t].seq.load();
		if (seq != p.seq) {
			p.seq = seq;
			p.seq_since = now;
		} else if (now - p.seq_since > limit && !sh_.expired()) {
			bool in_call = false;
			for (unsigned t = 0; t < o_.threads; t++)
				in_call = in_call || sh_.threads[i][t].start_ns.load();
			if (!in_call) {
				std::fprintf(stderr,
					     "rv_fuzz: FAIL seed %llu worker %u gen %u: no call for %.0f s (the fuzzer is stuck)\n",
					     static_cast<unsigned long long>(o_.seed), i, p.gen,
					     static_cast<double>(now - p.seq_since) / 1e9);
				sh_.st.hangs.fetch_add(1);
				sh_.st.failures.fetch_add(1);
				p.hung = true;
				p.hung_since = now;
				p.killed = true;
				::kill(p.pid, SIGKILL);
				continue;
			}
		}
		for (unsigned t = 0; t < o_.threads; t++) {
			const ThreadStatus &ts = sh_.threads[i][t];
			const std::int64_t start = ts.start_ns.load();
			if (!start || now - start < limit)
				continue;
			const int tid = ts.tid.load();
			std::string msg = "rv_fuzz: FAIL seed " + std::to_string(o_.seed) +
				" worker " + std::to_string(i) + " gen " +
				std::to_string(p.gen) + " thread " + std::to_string(t) +
				": a call has run for " +
				std::to_string((now - start) / 1000000000) + " s (hang)\n  " +
				describe_call(ts.rec) + "\n";
			const std::string task = "/proc/" + std::to_string(p.pid) + "/task/" +
				std::to_string(tid);
			msg += "  wchan: " + read_file(task + "/wchan") + "\n";
			msg += "  kernel stack:\n" + read_file(task + "/stack");
			std::fputs(msg.c_str(), stderr);
			sh_.st.hangs.fetch_add(1);
			sh_.st.failures.fetch_add(1);
			p.hung = true;
			p.hung_since = now;
			p.killed = true;
			::kill(p.pid, SIGKILL);
			break;
		}
	}
}

void Orchestrator::progress()
{
	const std::int64_t now = now_ns();

	if (!o_.progress || now - last_progress_ < static_cast<std::int64_t>(o_.progress * 1e9))
		return;
	last_progress_ = now;
	const double t = static_cast<double>(now - t0_) / 1e9;
	const std::uint64_t calls = total_calls(sh_);
	std::fprintf(stderr, "rv_fuzz: %.0f s: %llu calls (%.0f/s), %llu failures, %llu workers started\n",
		     t, static_cast<unsigned long long>(calls),
		     t > 0 ? static_cast<double>(calls) / t : 0.0,
		     static_cast<unsigned long long>(sh_.st.failures.load()),
		     static_cast<unsigned long long>(sh_.st.workers_spawned.load()));
}

int Orchestrator::run()
{
	for (unsigned i = 0; i < o_.procs; i++)
		spawn(i);
	while (alive()) {
		std::this_thread::sleep_for(10ms);
		if (sh_.expired())
			sh_.stop.store(true);
		reap();
		maybe_kill();
		check_hangs();
		progress();
	}
	const double elapsed = static_cast<double>(now_ns() - t0_) / 1e9;
	const std::string s = o_.json ? summary_json(sh_, o_, elapsed) :
		summary_text(sh_, o_, elapsed);
	std::fputs(s.c_str(), stdout);
	std::fflush(stdout);
	return sh_.st.failures.load() ? 1 : 0;
}

int run(const Options &o)
{
	{
		// The device must be there; its absence is not a finding.
		rv::UniqueFd fd(::open(o.device.c_str(), O_RDWR | O_CLOEXEC));
		if (!fd)
			rv::throw_errno("open " + o.device);
	}
	const Env env = discover_env();
	std::string nodes;
	for (const auto &n : env.nodes)
		nodes += " " + n.dev + " (" + rv::format_ipv4(n.ip) + ", GID index " +
			 std::to_string(n.gid_index) + ")";
	std::fprintf(stderr, "rv_fuzz: seed %llu, %llu calls, %.0f s, %u procs x %u threads, nodes:%s\n",
		     static_cast<unsigned long long>(o.seed),
		     static_cast<unsigned long long>(o.calls), o.seconds, o.procs,
		     o.threads, nodes.empty() ? " none" : nodes.c_str());
	std::fflush(stderr);

	SharedMap map;
	Shared &sh = map.get();
	sh.limit = o.calls;
	sh.deadline_ns = o.seconds > 0 ?
		now_ns() + static_cast<std::int64_t>(o.seconds * 1e9) : 0;
	g_shared = &sh;
	struct sigaction sa{};
	sa.sa_handler = on_signal;
	::sigaction(SIGINT, &sa, nullptr);
	::sigaction(SIGTERM, &sa, nullptr);

	Orchestrator orch(o, env, sh);
	return orch.run();
}

} // namespace

} // namespace rvfuzz

int main(int argc, char **argv)
{
	rvfuzz::Options o;

	if (auto rc = rv::cli::parse_command_line("rv_fuzz", rvfuzz::usage, rvfuzz::parse_options,
						  argc, argv, o))
		return *rc;
	try {
		return rvfuzz::run(o);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "rv_fuzz: %s\n", e.what());
		return 2;
	}
}
