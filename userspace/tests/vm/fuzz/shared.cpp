// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "shared.hpp"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <new>
#include <type_traits>

#include <rv/ioctl.hpp>

#include <toolkit/json.hpp>

#include "memory.hpp"

namespace rvfuzz {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::is_trivially_destructible_v<Shared>);

std::int64_t now_ns() noexcept
{
	timespec ts{};

	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool Shared::reserve() noexcept
{
	if (stop.load(std::memory_order_relaxed))
		return false;
	if (done.load(std::memory_order_relaxed) >= limit) {
		stop.store(true, std::memory_order_relaxed);
		return false;
	}
	return true;
}

bool Shared::expired() const noexcept
{
	if (stop.load(std::memory_order_relaxed))
		return true;
	return deadline_ns && now_ns() >= deadline_ns;
}

void Shared::publish(const TargetCopy &t) noexcept
{
	Target &e = board[board_next.fetch_add(1) % board_size];

	e.seq.fetch_add(1, std::memory_order_acq_rel);
	e.node.store(t.node, std::memory_order_relaxed);
	e.rv_index.store(t.rv_index, std::memory_order_relaxed);
	e.rkey.store(t.rkey, std::memory_order_relaxed);
	e.addr.store(t.addr, std::memory_order_relaxed);
	e.len.store(t.len, std::memory_order_relaxed);
	e.seq.fetch_add(1, std::memory_order_release);
}

bool Shared::read_target(std::size_t i, TargetCopy &out) const noexcept
{
	const Target &e = board[i % board_size];
	const std::uint32_t s = e.seq.load(std::memory_order_acquire);

	if (!s || (s & 1))
		return false;
	out.node = e.node.load(std::memory_order_relaxed);
	out.rv_index = e.rv_index.load(std::memory_order_relaxed);
	out.rkey = e.rkey.load(std::memory_order_relaxed);
	out.addr = e.addr.load(std::memory_order_relaxed);
	out.len = e.len.load(std::memory_order_relaxed);
	std::atomic_thread_fence(std::memory_order_acquire);
	return e.seq.load(std::memory_order_relaxed) == s;
}

void Shared::count(Op op, int err) noexcept
{
	if (counts_as_call(op))
		done.fetch_add(1, std::memory_order_relaxed);
	st.calls[idx(op)].fetch_add(1, std::memory_order_relaxed);
	if (!err)
		st.ok[idx(op)].fetch_add(1, std::memory_order_relaxed);
	else if (err > 0 && err < max_errno)
		st.err[idx(op)][static_cast<std::size_t>(err)].fetch_add(
			1, std::memory_order_relaxed);
}

SharedMap::SharedMap()
	: map_(rv::Mapping::map(sizeof(Shared), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS))
{
	sh_ = new (map_.data()) Shared();
}

// Shared is trivially destructible: unmapping is all it takes.
SharedMap::~SharedMap() = default;

std::uint64_t total_calls(const Shared &sh) noexcept
{
	std::uint64_t n = 0;

	for (std::size_t i = 0; i < op_calls_end; i++)
		n += sh.st.calls[i].load();
	return n;
}

namespace {

std::string hex(std::uint64_t v)
{
	char buf[24];

	std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
	return buf;
}

} // namespace

std::string describe_call(const CallRecord &r)
{
	const Op op = static_cast<Op>(r.op);
	std::string s(op_name(op));
	char buf[256];

	s += " fd=" + std::to_string(r.fd);
	switch (op) {
	case Op::open:
		s += " flags=" + hex(r.extra[0]);
		break;
	case Op::close:
	case Op::dup:
	case Op::fork:
	case Op::arena:
	case Op::ring_poll:
	case Op::count:
		break;
	case Op::mmap:
		std::snprintf(buf, sizeof(buf),
			      " addr=0x%llx len=0x%llx prot=0x%llx flags=0x%llx off=0x%llx",
			      static_cast<unsigned long long>(r.extra[0]),
			      static_cast<unsigned long long>(r.extra[1]),
			      static_cast<unsigned long long>(r.extra[2]),
			      static_cast<unsigned long long>(r.extra[3]),
			      static_cast<unsigned long long>(r.extra[4]));
		s += buf;
		break;
	case Op::munmap:
		s += " addr=" + hex(r.extra[0]) + " len=" + hex(r.extra[1]);
		break;
	case Op::mremap:
		s += " addr=" + hex(r.extra[0]) + " old_len=" + hex(r.extra[1]) +
		     " new_len=" + hex(r.extra[2]) + " flags=" + hex(r.extra[3]);
		break;
	default: {
		const auto name = rv::ioctl_name(static_cast<unsigned int>(r.cmd));
		s += " cmd=" + hex(r.cmd);
		if (!name.empty())
			s += " (" + std::string(name) + ")";
		s += " arg=" + std::string(ptr_kind_name(static_cast<PtrKind>(r.ptr_kind))) +
		     " " + hex(r.ptr) + " size=" + std::to_string(r.len);
		for (std::uint32_t i = 0; i < r.nbytes; i++) {
			if (i % 32 == 0) {
				std::snprintf(buf, sizeof(buf), "\n    %04x:", i);
				s += buf;
			}
			if (i % 8 == 0)
				s += ' ';
			std::snprintf(buf, sizeof(buf), "%02x", r.bytes[i]);
			s += buf;
		}
		if (r.len > r.nbytes)
			s += "\n    ...";
		break;
	}
	}
	return s;
}

namespace {

std::uint64_t errno_total(const Shared &sh, std::size_t e, bool calls_only)
{
	std::uint64_t n = 0;

	for (std::size_t i = 0; i < (calls_only ? op_calls_end : op_count); i++)
		n += sh.st.err[i][e].load();
	return n;
}

std::uint64_t successes(const Shared &sh)
{
	std::uint64_t n = 0;

	for (std::size_t i = 0; i < op_calls_end; i++)
		n += sh.st.ok[i].load();
	return n;
}

[[gnu::format(printf, 2, 3)]] void appendf(std::string &s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s += buf;
}

} // namespace

std::string summary_text(const Shared &sh, const Options &o, double elapsed_s)
{
	const Stats &st = sh.st;
	const std::uint64_t calls = total_calls(sh);
	std::string s;

	appendf(s, "rv_fuzz: seed %llu, %u procs x %u threads, limit %llu calls, %.0f s\n",
		static_cast<unsigned long long>(o.seed), o.procs, o.threads,
		static_cast<unsigned long long>(o.calls), o.seconds);
	appendf(s, "calls %llu, successes %llu, failures %llu, elapsed %.1f s, %.0f calls/s\n",
		static_cast<unsigned long long>(calls),
		static_cast<unsigned long long>(successes(sh)),
		static_cast<unsigned long long>(st.failures.load()), elapsed_s,
		elapsed_s > 0 ? static_cast<double>(calls) / elapsed_s : 0.0);
	appendf(s, "workers spawned %llu, killed %llu, died by themselves %llu, crashed %llu, hangs %llu\n",
		static_cast<unsigned long long>(st.workers_spawned.load()),
		static_cast<unsigned long long>(st.workers_killed.load()),
		static_cast<unsigned long long>(st.workers_died.load()),
		static_cast<unsigned long long>(st.workers_crashed.load()),
		static_cast<unsigned long long>(st.hangs.load()));
	appendf(s, "ring events %llu (write completions ok %llu, receives %llu)\n",
		static_cast<unsigned long long>(st.ring_events.load()),
		static_cast<unsigned long long>(st.post_ok_events.load()),
		static_cast<unsigned long long>(st.recv_events.load()));
	appendf(s, "%-15s %10s %10s  %s\n", "call", "count", "ok", "errno");
	for (std::size_t i = 0; i < op_count; i++) {
		if (i == op_calls_end)
			s += "side actions (not counted as calls):\n";
		const Op op = static_cast<Op>(i);
		std::string errs;

		for (std::size_t e = 1; e < max_errno; e++) {
			const std::uint64_t n = st.err[i][e].load();
			if (n)
				appendf(errs, " %s %llu", errno_name(static_cast<int>(e)).c_str(),
					static_cast<unsigned long long>(n));
		}
		appendf(s, "%-15.*s %10llu %10llu ", static_cast<int>(op_name(op).size()),
			op_name(op).data(),
			static_cast<unsigned long long>(st.calls[i].load()),
			static_cast<unsigned long long>(st.ok[i].load()));
		s += errs + "\n";
	}
	s += "errno histogram:";
	for (std::size_t e = 1; e < max_errno; e++) {
		const std::uint64_t n = errno_total(sh, e, true);
		if (n)
			appendf(s, " %s %llu", errno_name(static_cast<int>(e)).c_str(),
				static_cast<unsigned long long>(n));
	}
	s += "\n";
	appendf(s, "result: %s\n", st.failures.load() ? "FAIL" : "PASS");
	return s;
}

std::string summary_json(const Shared &sh, const Options &o, double elapsed_s)
{
	const Stats &st = sh.st;
	rv::json::Writer w(2);

	w.begin_object()
		.member("seed", o.seed)
		.member("procs", o.procs)
		.member("threads", o.threads)
		.member("limit_calls", o.calls)
		.member("limit_seconds", o.seconds)
		.member("calls", total_calls(sh))
		.member("successes", successes(sh))
		.member("failures", st.failures.load())
		.member("elapsed_s", elapsed_s)
		.member("workers_spawned", st.workers_spawned.load())
		.member("workers_killed", st.workers_killed.load())
		.member("workers_died", st.workers_died.load())
		.member("workers_crashed", st.workers_crashed.load())
		.member("hangs", st.hangs.load())
		.member("ring_events", st.ring_events.load())
		.member("write_completions_ok", st.post_ok_events.load())
		.member("receive_events", st.recv_events.load());
	w.key("ops").begin_object();
	for (std::size_t i = 0; i < op_count; i++) {
		w.key(op_name(static_cast<Op>(i))).begin_object()
			.member("calls", st.calls[i].load())
			.member("ok", st.ok[i].load());
		w.key("errno").begin_object();
		for (std::size_t e = 1; e < max_errno; e++)
			if (std::uint64_t n = st.err[i][e].load())
				w.member(errno_name(static_cast<int>(e)), n);
		w.end_object().end_object();
	}
	w.end_object();
	w.key("errno").begin_object();
	for (std::size_t e = 1; e < max_errno; e++)
		if (std::uint64_t n = errno_total(sh, e, true))
			w.member(errno_name(static_cast<int>(e)), n);
	w.end_object();
	w.member("result", st.failures.load() ? "fail" : "pass");
	w.end_object();
	return w.str() + "\n";
}

} // namespace rvfuzz
