// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the controller's run: its workers started, their grants and
// releases routed, the phases (ready, go, stop, drain, finish).
#include "soak_controller.hpp"

#include <cstdio>
#include <set>
#include <sstream>

#include <poll.h>
#include <sys/resource.h>

#include <toolkit/rdma_sysfs.hpp>

#include "vm_env.hpp"

namespace rv::soak {

namespace {

// A file of /proc, or "?" when it cannot be read (the process is gone).
std::string proc_text(const std::string &path)
{
	try {
		std::string t = rv::test::read_file(path);
		while (!t.empty() && t.back() == '\n')
			t.pop_back();
		return t;
	} catch (const std::exception &) {
		return "?";
	}
}

// The state letter of /proc/PID/stat ("R", "S", "D" ...): the field
// after the command's closing parenthesis.
std::string proc_state(const std::string &proc)
{
	const std::string st = proc_text(proc + "/stat");
	const std::size_t p = st.rfind(") ");
	return p == std::string::npos || p + 2 >= st.size() ? "?" : st.substr(p + 2, 1);
}

} // namespace

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
			c.small_pages = o_.small_pages;
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
	// The local processes that have not drained: what they did, and
	// where each one is (a process asleep in the kernel shows its stack).
	for (unsigned i = 0; i < w_.size(); i++) {
		const Worker &w = w_[i];
		if (!w.alive || w.drained)
			continue;
		const std::string proc = "/proc/" + std::to_string(w.peer.pid());
		char line[256];
		std::snprintf(line, sizeof(line),
			      "  process %u (pid %d) not drained: sent %llu verified %llu "
			      "eagain %llu; state %s, wchan %s\n",
			      first_ + i, static_cast<int>(w.peer.pid()),
			      static_cast<unsigned long long>(w.progress.sent),
			      static_cast<unsigned long long>(w.progress.verified),
			      static_cast<unsigned long long>(w.progress.post_eagain),
			      proc_state(proc).c_str(), proc_text(proc + "/wchan").c_str());
		out += line;
		std::istringstream stack(proc_text(proc + "/stack"));
		std::string frame;
		while (std::getline(stack, frame))
			out += "    " + frame + "\n";
	}
	std::fputs(out.c_str(), stderr);
}

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
				     " is below the buffer size " +
				     std::to_string(o_.max_size + (64 << 10)) +
				     " (--max-size + 64 KiB, one MR): use --max-size " +
				     std::to_string(r.max_fmr_size > (64 << 10)
							    ? r.max_fmr_size - (64 << 10)
							    : 0) +
				     " or less");
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
	if (two_vm_)
		link_.reset_longest_gap();
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
	if (two_vm_)
		link_gap_s_ = std::chrono::duration<double>(
				      std::max(link_.longest_gap(), link_.silence()))
				      .count();
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

} // namespace rv::soak
