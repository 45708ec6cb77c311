// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the link flaps (soak_flap.cpp): a node's netdev down and up
// (--flap-mode link), or every packet dropped (--flap-mode drop).
#ifndef RV_SOAK_SOAK_FLAP_HPP
#define RV_SOAK_SOAK_FLAP_HPP

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "conn_util.hpp"
#include "vm_env.hpp"

namespace rv::soak {

struct Flap {
	double start_s = 0;	// since the start of the run: link down
	double up_s = 0;	// link set up again
	double active_s = 0;	// routes back, ports ACTIVE again
	unsigned down_ms = 0;
	std::chrono::steady_clock::time_point up;
	std::string error;
};

// --flap-mode drop: the links stay up (the ports ACTIVE) and every packet
// that leaves a node's netdev is dropped for down_for, except TCP to or
// from spare_port (not 0): the two controllers' own connection
// (--two-vm), which must not lose packets itself. TCP backs off
// exponentially while its retransmissions are lost: after 12 s of drops
// the next retransmission may come tens of seconds later and fall into
// the next drop, and the grants and releases that it carries, without
// which no process sends, wait for minutes.
void drop_all(std::chrono::milliseconds down_for, Flap &f,
	      std::chrono::steady_clock::time_point t0, std::uint16_t spare_port);

// link_flap() of conn_util with the times of its steps, and with the
// routes and neighbours of every node's netdev saved once before the run
// (each `ip` costs seconds while the soak keeps both CPUs busy): n's
// netdev down for down_for, up, the routes and neighbours back (IPv4
// flushes them when a link goes down), then both ports ACTIVE.
void flap_link(const rv::test::Node &n, std::chrono::milliseconds down_for,
	       const std::vector<rv::test::LinkState> &saved, Flap &f,
	       std::chrono::steady_clock::time_point t0);

} // namespace rv::soak

#endif // RV_SOAK_SOAK_FLAP_HPP
