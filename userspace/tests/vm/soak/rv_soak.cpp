// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: a bounded soak of rv's shared connections between the two rxe
// nodes of the test VM (vm-run --rxe 2, as root, rv.ko loaded).
//
// --procs-per-node processes on each node attach as one job and connect
// to the other node; each one both sends and receives for --seconds:
// RDMA WRITEs with immediate data of mixed sizes (1 byte to --max-size),
// to buffers that random processes on the other node granted it, with a
// pattern that names the sender, the message and the offset of every
// word; the receiver checks every byte. Receive buffers are withdrawn and
// replaced now and then (munmap/mmap, MAP_FIXED or MADV_DONTNEED under a
// registered MR, EVICT; then REG_MEM again), and so are source buffers.
// Meanwhile a link goes down and up every --flap-interval seconds (or,
// with --flap-mode drop, every packet is dropped for a while). The
// protocol (soak.hpp) never aims a write at a withdrawn buffer; a write
// whose completion reports an error is written again, so a message may
// be delivered twice (counted as a duplicate).
//
// At the end it checks that every post got exactly one completion, every
// message finished, every successful completion was a verified delivery,
// no byte differed, no event was stray or lost, the rings did not
// overflow, the kernel's event and connection counters agree with what
// the processes saw, the connections never failed for good, the link
// flaps happened and were recovered from, traffic went on after the last
// one, and the receiving devices' rcvd_pkts rose by at least the pages
// moved. It prints the numbers ("key: value" lines, or --json) and exits
// 0 iff all of that held; 1 otherwise, 2 for bad usage.
//
// --two-vm a|b: one of two VMs (vm-run --two-vm, one rxe each). Each VM
// runs a controller with its own node's processes (a: node 0, b: node 1);
// the controllers are joined by TCP (a listens on --control-port, b
// connects to --peer-ip) and forward to each other the grants and
// releases for the other node's processes, the phases of the run (ready,
// go, stop, drained) and the link flaps, and at the end each node's sums,
// so that both check the same invariants as one VM does. The flapping
// node's controller (--flap-node, default 1: VM b) flaps its own netdev.
//
// This file holds main() only: the options are in soak_options.cpp, the
// controller in soak_controller.cpp and the files soak_controller.hpp
// names (soak_flap.cpp, soak_peer.cpp, soak_report.cpp), the worker
// processes in soak_worker.cpp.
#include <cstdio>
#include <exception>

#include "soak_controller.hpp"
#include "soak_options.hpp"

using namespace rv::soak;

int main(int argc, char **argv)
{
	Options o;
	if (auto rc = rv::cli::parse_command_line(prog, usage, parse, argc, argv, o))
		return *rc;
	try {
		Controller c(o);
		const int rc = c.run();
		std::fflush(stdout);
		return rc;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
