// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the link flaps, and the controller's thread that makes them.
#include "soak_flap.hpp"

#include <cstdio>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "soak_controller.hpp"

namespace rv::soak {

namespace {

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

} // namespace

void drop_all(milliseconds down_for, Flap &f, clock::time_point t0,
	      std::uint16_t spare_port)
{
	std::string add;
	std::string del;
	for (const rv::test::Node &x : rv::test::nodes()) {
		if (x.netdev.empty())
			continue;
		const std::string dev = " dev " + x.netdev;
		del += "qdisc del" + dev + " root\n";
		if (!spare_port) {
			add += "qdisc replace" + dev + " root netem loss 100%\n";
			continue;
		}
		// Every packet to band 1 (netem), but TCP to or from
		// spare_port to band 0 (a plain FIFO).
		add += "qdisc replace" + dev + " root handle 1: prio bands 2 priomap"
		       " 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n";
		add += "qdisc add" + dev + " parent 1:2 handle 12: netem loss 100%\n";
		for (const char *end : {"sport", "dport"})
			add += "filter add" + dev + " parent 1: protocol ip prio 1 u32"
			       " match ip protocol 6 0xff match ip " + end + " " +
			       std::to_string(spare_port) + " 0xffff flowid 1:1\n";
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
				drop_all(milliseconds(down), f, t0_,
					 two_vm_ ? o_.control_port : 0);
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

} // namespace rv::soak
