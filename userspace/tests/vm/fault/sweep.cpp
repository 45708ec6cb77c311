// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/error.hpp>

namespace rv::test::fault {

namespace {

using clock = std::chrono::steady_clock;

// Messages between this process and the peer.
enum : std::uint32_t {
	msg_join = msg_user + 1,	// PeerJoin
	msg_info,			// PeerInfo
	msg_leave,			// empty; answered with msg_ready
};

struct PeerJoin {
	rv::JobKey key;
};

constexpr std::size_t peer_buffer_len = 1 << 20;

void copy_text(char *dst, std::size_t cap, const std::string &s)
{
	std::size_t n = std::min(cap - 1, s.size());
	std::memcpy(dst, s.data(), n);
	dst[n] = '\0';
}

// The peer process: serves msg_join and msg_leave until msg_fin or EOF.
int peer_main(Channel &ch, const Node &self, const Node &remote)
{
	rv::MemoryRegion mr;
	rv::Mapping buf;
	std::unique_ptr<Side> side;

	for (;;) {
		std::optional<Msg> m;
		try {
			m = ch.recv(milliseconds(-1));
		} catch (const std::system_error &) {
			return 0;	// the sweep went away
		}
		if (!m)
			continue;
		if (m->type == msg_fin)
			return 0;
		if (m->type == msg_leave) {
			mr.reset();
			side.reset();
			buf.reset();
			ch.send(msg_ready);
			continue;
		}
		if (m->type != msg_join)
			continue;
		PeerInfo info;
		try {
			mr.reset();
			side.reset();
			const auto j = body_of<PeerJoin>(*m);
			SideConfig cfg;
			cfg.num_conn = job_num_conn;
			cfg.index_bits = job_index_bits;
			cfg.cq_entries = job_cq_entries;
			cfg.q_depth = job_q_depth;
			side = std::make_unique<Side>(self, remote, j.key, cfg);
			side->connect();
			if (!buf)
				buf = shared_buffer(peer_buffer_len);
			mr = side->dev().reg_mem(buf.data(), buf.size(),
						 rv::access::psm3_recv);
			info.addr = mr.addr();
			info.length = mr.length();
			info.rkey = mr.rkey();
			info.rv_index = side->attach().rv_index;
		} catch (const std::system_error &e) {
			info.err = e.code().value() ? e.code().value() : EIO;
			copy_text(info.what, sizeof(info.what), e.what());
		} catch (const std::exception &e) {
			info.err = EIO;
			copy_text(info.what, sizeof(info.what), e.what());
		}
		ch.send(msg_info, info);
	}
}

std::string join_lines(const std::vector<std::string> &v)
{
	std::string s;
	for (const auto &x : v) {
		std::string one = x;
		std::replace(one.begin(), one.end(), '\n', ' ');
		s += one + "\n";
	}
	return s;
}

// A Point across a pipe, as text.
std::string serialize(const Point &pt)
{
	std::ostringstream o;
	o << pt.injected << ' ' << pt.consumed << ' ' << pt.err << '\n';
	o << (pt.site ? 1 : 0) << '\n';
	if (pt.site) {
		o << pt.site->injector << '\n' << pt.site->kind << '\n'
		  << pt.site->frames.size() << '\n' << join_lines(pt.site->frames);
	}
	o << pt.problems.size() << '\n' << join_lines(pt.problems);
	o << pt.notes.size() << '\n' << join_lines(pt.notes);
	return o.str();
}

void read_lines(std::istream &in, std::vector<std::string> &out)
{
	std::string line;
	std::getline(in, line);
	std::size_t n = std::strtoul(line.c_str(), nullptr, 10);
	for (std::size_t i = 0; i < n && std::getline(in, line); i++)
		out.push_back(line);
}

void deserialize(const std::string &s, Point &pt)
{
	std::istringstream in(s);
	int injected = 0, consumed = 0, has_site = 0;
	in >> injected >> consumed >> pt.err >> has_site;
	pt.injected = injected;
	pt.consumed = consumed;
	std::string line;
	std::getline(in, line);
	if (has_site) {
		Site site;
		std::getline(in, site.injector);
		std::getline(in, site.kind);
		read_lines(in, site.frames);
		pt.site = site;
	}
	read_lines(in, pt.problems);
	read_lines(in, pt.notes);
}

// Runs op.point() for n in a forked child with its own fail-nth.
void point_in_child(Ctx &ctx, Op &op, Point &pt)
{
	int fds[2];
	if (::pipe2(fds, O_CLOEXEC) < 0)
		rv::throw_errno("pipe2");
	rv::UniqueFd rd(fds[0]);
	rv::UniqueFd wr(fds[1]);

	std::fflush(nullptr);
	pid_t pid = ::fork();
	if (pid < 0)
		rv::throw_errno("fork");
	if (pid == 0) {
		rd.reset();
		close_inherited_rv_files();
		Point cp;
		cp.n = pt.n;
		try {
			ctx.reopen();
			op.point(ctx, cp);
		} catch (const Abort &) {
		} catch (const std::exception &e) {
			cp.problems.push_back(std::string("exception: ") + e.what());
		}
		const std::string s = serialize(cp);
		std::size_t done = 0;
		while (done < s.size()) {
			ssize_t w = ::write(wr.get(), s.data() + done, s.size() - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				::_exit(3);
			done += static_cast<std::size_t>(w);
		}
		::_exit(0);
	}
	wr.reset();

	std::string s;
	char buf[4096];
	const auto end = clock::now() + seconds(600);
	bool timed_out = false;
	for (;;) {
		auto left = std::chrono::duration_cast<milliseconds>(end - clock::now());
		if (left.count() <= 0) {
			timed_out = true;
			break;
		}
		pollfd p{rd.get(), POLLIN, 0};
		int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t got = ::read(rd.get(), buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		s.append(buf, static_cast<std::size_t>(got));
	}
	if (timed_out)
		::kill(pid, SIGKILL);
	ExitStatus st = wait_exit(pid);
	deserialize(s, pt);
	if (timed_out)
		pt.problems.push_back("the point's child process hung (killed after 600 s)");
	else if (!st.ok())
		pt.problems.push_back("the point's child process " +
				      (st.exited ? "exited " + std::to_string(st.exit_code)
						 : "was killed by signal " +
							   std::to_string(st.signal)));
}

bool allowed_err(const std::vector<Allowed> &allowed, int err)
{
	if (err == ENOMEM)
		return true;
	return std::any_of(allowed.begin(), allowed.end(),
			   [&](const Allowed &a) { return a.err == err; });
}

std::string point_line(const OpResult &r, const Point &pt)
{
	std::string s = r.name + " n=" + std::to_string(pt.n) + ": ";
	if (pt.skipped)
		return s + "skipped (--skip)";
	if (!pt.injected)
		return s + "not reached (setup failed)";
	if (!pt.consumed)
		return s + (pt.err ? "no fault consumed, failed with " + errname(pt.err)
				   : "no fault consumed: end of the sweep");
	s += pt.err ? errname(pt.err) : std::string("tolerated (the call succeeded)");
	s += " <- ";
	s += pt.site ? (pt.site->injector.empty() ? "" : pt.site->injector + " ") +
			       pt.site->summary()
		     : "silent (no fault report: a __GFP_NOWARN allocation)";
	return s;
}

} // namespace

std::string errname(int err)
{
	if (!err)
		return "0";
	const char *n = ::strerrorname_np(err);
	return n ? n : "errno " + std::to_string(err);
}

void expect(Point &pt, bool ok, const std::string &what)
{
	if (!ok)
		pt.problems.push_back(what);
}

void require(Point &pt, bool ok, const std::string &what)
{
	if (!ok) {
		pt.problems.push_back(what);
		throw Abort(what);
	}
}

rv::AttachParams job_params(const Node &n, const rv::JobKey &key)
{
	rv::AttachParams p = params_for(n, key);
	p.num_conn = job_num_conn;
	p.index_bits = job_index_bits;
	p.q_depth = job_q_depth;
	p.cq_entries = job_cq_entries;
	return p;
}

rv::Mapping shared_buffer(std::size_t len)
{
	return rv::Mapping::map(len, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
}

// ------------------------------------------------------------ Ctx

Ctx::Ctx(const Options &o) : opts(o)
{
	auto a = node(0);
	if (!a)
		throw std::runtime_error("no RDMA node 0 (RV_NODES, or a RoCE v2 device)");
	n0 = *a;
	if (auto b = node(1)) {
		n1 = *b;
		have_n1 = true;
	}
	reopen();
}

Ctx::~Ctx() = default;

void Ctx::reopen()
{
	fail_ = std::make_unique<FailNth>(opts.burst);
	log_ = std::make_unique<KernelLog>();
	res_ = std::make_unique<RdmaRes>();
}

void Ctx::add_bad_lines(std::vector<std::string> &problems,
			const std::vector<std::string> &records, const std::string &when)
{
	for (const std::string &bad : KernelLog::bad_lines(records)) {
		const std::string p = "kernel log " + when + ": " + bad;
		bool seen = std::any_of(problems.begin(), problems.end(),
					[&](const std::string &q) {
						return q.find(bad) != std::string::npos;
					});
		if (!seen)
			problems.push_back(p);
	}
}

void Ctx::check_log(std::vector<std::string> &problems, const std::string &when)
{
	add_bad_lines(problems, log_->read_new(), when);
}

bool Ctx::settle(std::vector<std::string> &problems, const ResCounts &want,
		 const std::string &what)
{
	const auto end = clock::now() + opts.settle;
	ResCounts now;
	for (;;) {
		now = res0();
		if (now == want)
			return true;
		if (clock::now() >= end)
			break;
		std::this_thread::sleep_for(milliseconds(20));
	}
	problems.push_back("rv objects on " + n0.dev + " " + what + ": " + now.str() +
			   ", want " + want.str() + " (after " +
			   std::to_string(opts.settle.count()) + " ms)");
	return false;
}

bool Ctx::settle(Point &pt, const ResCounts &want, const std::string &what)
{
	return settle(pt.problems, want, what);
}

PeerNode &Ctx::peer()
{
	if (!have_n1)
		throw std::runtime_error("no RDMA node 1 for the peer");
	if (!peer_)
		peer_ = std::make_unique<PeerNode>(n1, n0);
	return *peer_;
}

void Ctx::stop_peer()
{
	peer_.reset();
}

// ------------------------------------------------------------ PeerNode

PeerNode::PeerNode(const Node &self, const Node &remote)
	: p_([self, remote](Channel &ch) { return peer_main(ch, self, remote); })
{
}

PeerNode::~PeerNode()
{
	try {
		p_.chan().send(msg_fin);
		(void)p_.wait(seconds(30));
	} catch (...) {
	}
}

PeerInfo PeerNode::join(const rv::JobKey &key)
{
	PeerJoin j{};
	j.key = key;
	p_.chan().send(msg_join, j);
	auto info = p_.chan().expect_body<PeerInfo>(msg_info, seconds(120));
	if (info.err)
		throw std::system_error(info.err, std::generic_category(),
					std::string("peer: ") + info.what);
	return info;
}

void PeerNode::leave()
{
	p_.chan().send(msg_leave);
	(void)p_.chan().expect(msg_ready, seconds(120));
}

// ------------------------------------------------------------ Local

Local::Local(const Node &l, const Node &r, const rv::JobKey &key)
	: local(l), remote(r), dev(device_path())
{
	(void)dev.capability();
	att = dev.attach(job_params(local, key));
}

void Local::map_ring()
{
	const std::size_t len = rv::ring_alloc_len(dev.event_layout(), job_cq_entries);
	ring = rv::Mapping::map(len, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd(), 0);
	view = rv::RingView(ring.span(), job_cq_entries, dev.event_layout());
}

void Local::create()
{
	conn = rv::Connection::create(dev, remote_of(local, remote));
}

void Local::connect()
{
	conn.connect(path_of(local, remote));
}

bool Local::wait_connected(milliseconds timeout)
{
	return conn.wait_connected(timeout);
}

std::optional<rv::Event> Local::wait_event(std::uint64_t wr_id, milliseconds timeout)
{
	const auto end = clock::now() + timeout;
	for (;;) {
		while (std::optional<rv::Event> e = view.poll()) {
			if (e->event_type == RV_WC_RDMA_WRITE && e->wr_id == wr_id)
				return e;
		}
		if (clock::now() >= end)
			return std::nullopt;
		std::this_thread::sleep_for(milliseconds(1));
	}
}

std::string Local::write_and_wait(const rv::MrInfo &mr, const PeerInfo &to,
				  std::uint64_t wr_id, milliseconds timeout)
{
	rv::WriteRequest w;
	w.loc_addr = mr.addr;
	w.mr = &mr;
	w.rem_addr = to.addr;
	w.rkey = to.rkey;
	w.length = std::min<std::uint64_t>(mr.length, 4096);
	w.wr_id = wr_id;
	w.immed = rv::make_immed(to.rv_index, job_index_bits,
				 static_cast<std::uint32_t>(wr_id));
	const auto end = clock::now() + timeout;
	for (;;) {
		rv::PostResult out;
		int err = conn.try_post_write(w, out);
		if (!err)
			break;
		if (!rv::Connection::retryable(err) || clock::now() >= end)
			return "POST_RDMA_WR_IMMED: " + errname(err);
		std::this_thread::sleep_for(milliseconds(5));
	}
	std::optional<rv::Event> e = wait_event(wr_id, timeout);
	if (!e)
		return "no completion event for the write";
	if (e->status)
		return "the write completed with status " + std::to_string(e->status);
	return {};
}

// ------------------------------------------------------------ OpResult

bool OpResult::ok() const
{
	if (!problems.empty())
		return false;
	return std::all_of(points.begin(), points.end(),
			   [](const Point &p) { return p.problems.empty(); });
}

unsigned OpResult::sites() const
{
	return static_cast<unsigned>(std::count_if(
		points.begin(), points.end(), [](const Point &p) { return p.consumed; }));
}

unsigned OpResult::failed_calls() const
{
	return static_cast<unsigned>(std::count_if(
		points.begin(), points.end(),
		[](const Point &p) { return p.consumed && p.err; }));
}

unsigned OpResult::tolerated() const
{
	return static_cast<unsigned>(std::count_if(
		points.begin(), points.end(),
		[](const Point &p) { return p.consumed && !p.err; }));
}

std::string OpResult::summary() const
{
	if (skipped)
		return skip_reason;
	std::map<std::string, unsigned> errs;
	unsigned skipped_points = 0, bad = 0;
	for (const auto &p : points) {
		if (p.consumed && p.err)
			errs[errname(p.err)]++;
		skipped_points += p.skipped;
		bad += !p.problems.empty();
	}
	std::ostringstream o;
	o << sites() << " fault sites: " << failed_calls() << " failed";
	if (!errs.empty()) {
		o << " (";
		bool first = true;
		for (const auto &[err, count] : errs) {
			o << (first ? "" : ", ") << err << " x" << count;
			first = false;
		}
		o << ")";
	}
	o << ", " << tolerated() << " tolerated";
	if (skipped_points)
		o << ", " << skipped_points << " skipped";
	if (bad)
		o << "; " << bad << " points with problems";
	if (!problems.empty())
		o << "; " << problems.size() << " sweep problems";
	char t[32];
	std::snprintf(t, sizeof(t), "%.1f", seconds);
	o << "; " << t << " s";
	return o.str();
}

// ------------------------------------------------------------ run_op

namespace {

// A '# ' line of the text output (not with --quiet or --json).
void say(const Ctx &ctx, const std::string &s)
{
	if (!ctx.opts.quiet && !ctx.opts.json) {
		std::printf("# %s\n", s.c_str());
		std::fflush(stdout);
	}
}

// The call of point pt, in a child if the operation wants one.
void call_point(Ctx &ctx, Op &op, Point &pt)
{
	try {
		if (op.fork_per_point())
			point_in_child(ctx, op, pt);
		else
			op.point(ctx, pt);
	} catch (const Abort &) {
	} catch (const std::exception &e) {
		pt.problems.push_back(std::string("exception: ") + e.what());
	}
}

// What the outcome of a point that injected a fault says of the call.
void judge_injected(const Op &op, const OpResult &r, Point &pt)
{
	if (pt.consumed && op.must_not_allocate())
		pt.problems.insert(pt.problems.begin(),
				   "the call passed a fault-injection check: "
				   "this path must not allocate");
	if (pt.consumed && pt.err && !allowed_err(r.allowed, pt.err))
		pt.problems.insert(pt.problems.begin(),
				   "unexpected errno " + errname(pt.err) +
					   " for an injected fault");
	if (!pt.consumed && pt.err)
		pt.problems.insert(pt.problems.begin(),
				   "failed with " + errname(pt.err) +
					   " without an injected fault");
}

// How a point went, for the sweep.
enum class PointOutcome {
	skipped,	// --skip
	consumed,	// the call consumed the fault: on to n + 1
	end,		// the call consumed none: the sweep is complete
	not_reached,	// no fault was injected
};

// Point n of op's sweep, into r.points.
PointOutcome sweep_point(Ctx &ctx, Op &op, OpResult &r, unsigned n,
			 const ResCounts &base)
{
	Point pt;
	pt.n = n;
	if (ctx.opts.skip.count({op.name(), n})) {
		pt.skipped = true;
		say(ctx, point_line(r, pt));
		r.points.push_back(std::move(pt));
		return PointOutcome::skipped;
	}
	call_point(ctx, op, pt);
	if (pt.injected)
		judge_injected(op, r, pt);
	// Whatever the point did is gone once its files are closed.
	if (!op.fork_per_point() || pt.injected)
		ctx.settle(pt, base, "after the point's files were closed");
	ctx.check_log(pt.problems, "after the call (checks, teardown)");

	say(ctx, point_line(r, pt));
	for (const auto &p : pt.problems)
		say(ctx, "  PROBLEM: " + p);
	for (const auto &p : pt.notes)
		say(ctx, "  note: " + p);
	const PointOutcome o = !pt.injected ? PointOutcome::not_reached
			     : pt.consumed ? PointOutcome::consumed : PointOutcome::end;
	r.points.push_back(std::move(pt));
	return o;
}

// The points n = 1, 2, ... of op's sweep until one consumes no fault.
void sweep_points(Ctx &ctx, Op &op, OpResult &r, const ResCounts &base)
{
	unsigned not_reached = 0;
	for (unsigned n = 1; n <= ctx.opts.max_n; n++) {
		switch (sweep_point(ctx, op, r, n, base)) {
		case PointOutcome::end:
			return;
		case PointOutcome::consumed:
			not_reached = 0;
			break;
		case PointOutcome::not_reached:
			if (++not_reached < 3)
				break;
			r.problems.push_back("three points in a row did not reach the call: "
					     "giving up");
			return;
		case PointOutcome::skipped:
			break;
		}
	}
	if (r.problems.empty())
		r.problems.push_back("the call still consumed a fault at n = " +
				     std::to_string(ctx.opts.max_n) + " (--max-n)");
}

} // namespace

OpResult run_op(Ctx &ctx, Op &op)
{
	OpResult r;
	r.name = op.name();
	if (ctx.opts.burst > 1)
		r.name += "/burst" + std::to_string(ctx.opts.burst);
	r.what = op.what();
	r.allowed = op.allowed();
	const auto t0 = clock::now();

	if (op.needs_peer() && !ctx.have_peer_node()) {
		r.skipped = true;
		r.skip_reason = "needs a second RDMA node (vm-run --rxe 2)";
		return r;
	}

	// Nothing of earlier sweeps may be left on the device.
	ctx.settle(r.problems, ResCounts{}, "before the sweep");
	ctx.check_log(r.problems, "before the sweep");

	ResCounts base;
	try {
		base = op.begin(ctx);
	} catch (const std::exception &e) {
		r.problems.push_back(std::string("setup of the sweep failed: ") + e.what());
		say(ctx, r.name + ": " + r.problems.back());
		try {
			op.end(ctx, r.problems);
		} catch (const std::exception &) {
		}
		ctx.settle(r.problems, ResCounts{}, "after the failed setup");
		r.seconds = std::chrono::duration<double>(clock::now() - t0).count();
		return r;
	}

	sweep_points(ctx, op, r, base);
	try {
		op.end(ctx, r.problems);
	} catch (const std::exception &e) {
		r.problems.push_back(std::string("end of the sweep: ") + e.what());
	}
	ctx.settle(r.problems, ResCounts{}, "after the sweep");
	ctx.check_log(r.problems, "at the end of the sweep");
	for (const auto &p : r.problems)
		say(ctx, r.name + ": PROBLEM: " + p);
	r.seconds = std::chrono::duration<double>(clock::now() - t0).count();
	return r;
}

} // namespace rv::test::fault
