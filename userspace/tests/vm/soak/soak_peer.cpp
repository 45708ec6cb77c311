// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak --two-vm: the controller's side of the TCP connection to the
// other VM's controller (ControlLink, soak_link.cpp): the hello, the
// messages that cross it, the flaps and results sent, and the close.
#include "soak_controller.hpp"

#include <cstdio>
#include <stdexcept>

namespace rv::soak {

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

} // namespace rv::soak
