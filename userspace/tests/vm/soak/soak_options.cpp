// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the options (usage and the option table, tools/cli.hpp).
#include "soak_options.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include <toolkit/rdma_sysfs.hpp>

#include "soak.hpp"

namespace rv::soak {

void usage(FILE *f)
{
	std::fprintf(f,
"usage: %s [options]\n"
"A bounded soak of rv between the two rxe nodes of the test VM (root,\n"
"rv.ko loaded, RV_NODES/RV_NETDEVS as vm-run --rxe 2 sets them), or, with\n"
"--two-vm, between the rxe nodes of two VMs (vm-run --two-vm), one\n"
"controller in each.\n"
"\n"
"  -s, --seconds S           how long to send (default 30)\n"
"  -n, --procs-per-node N    processes per node, one job (default 16, 1..64)\n"
"  -f, --flap-interval S     seconds from a link coming back up to it going\n"
"                            down again; 0: no link flaps (default 8)\n"
"      --flap-down MS        how long the link stays down (default 5000; with\n"
"                            --flap-mode drop 12000: a loss that RC retries\n"
"                            do not outlast)\n"
"      --flap-down-min MS    later flaps (not the first) stay down a random\n"
"                            time in MS..--flap-down (default: --flap-down).\n"
"                            Downs of 1-2 s can wedge soft RoCE's MAD QP\n"
"                            (userspace/tests/vm/soak/README.md)\n"
"      --flap-node I         the node whose netdev goes down (default 1; with\n"
"                            --two-vm the controller of that node's VM\n"
"                            flaps its own netdev)\n"
"      --flap-mode link|drop link: ip link set down/up (default); drop: the\n"
"                            links stay up and every packet is dropped (tc\n"
"                            netem loss 100%% on every node's netdev; with\n"
"                            --two-vm on the flapping VM's, but not for the\n"
"                            controllers' connection)\n"
"      --seed N              random seed (default 1)\n"
"      --slots K             receive buffers per process (default 4)\n"
"      --window W            messages in flight per process (default 4)\n"
"      --max-size BYTES      largest message (default 1048576)\n"
"      --churn PCT           buffer reuses that replace the buffer (default 25)\n"
"      --small-pages         every buffer starts in small pages that may be\n"
"                            merged into huge ones (MADV_HUGEPAGE): with THP\n"
"                            and khugepaged, its collapses race with the\n"
"                            buffers' registrations\n"
"      --reconnect-timeout S the job's reconnect_timeout (default 30)\n"
"      --drain-timeout S     after the run, for what is in flight (default 120)\n"
"      --two-vm a|b          this VM's part of a two-VM soak: its node only (a:\n"
"                            node 0, b: node 1); the two controllers talk over\n"
"                            TCP, a listening, b connecting (both must be\n"
"                            given the same options)\n"
"      --peer-ip IP          the other VM's address, also its rxe's (default\n"
"                            $RV_PEER_IP)\n"
"      --control-port P      the controllers' TCP port on VM a (default 18730)\n"
"      --peer-timeout S      longest wait for the other controller to connect\n"
"                            or answer, and longest silence (default 300)\n"
"  -j, --json                one JSON object on stdout instead of key: value lines\n"
"  -q, --quiet               no progress lines on stderr\n"
"  -h, --help                this help\n"
"\n"
"Exit status: 0 if every invariant held, 1 if not, 2 for bad usage.\n",
		     prog);
}

namespace {

// The options of the flaps and of two VMs.
std::vector<rv::cli::Option> flap_and_vm_options(Options &o)
{
	return {
		rv::cli::seconds("flap-interval", 'f', o.flap_interval, 0, 3600),
		rv::cli::number("flap-down", 0, o.flap_down_ms, 100, 600000),
		rv::cli::number("flap-down-min", 0, o.flap_down_min_ms, 100, 600000),
		rv::cli::number("flap-node", 0, o.flap_node, 0, 1),
		rv::cli::value("flap-mode", 0, [&o](std::string_view v) {
			if (v != "link" && v != "drop")
				throw rv::cli::UsageError("invalid --flap-mode '" + std::string(v) +
							  "' (link or drop)");
			o.flap_drop = v == "drop";
		}),
		rv::cli::value("two-vm", 0, [&o](std::string_view v) {
			if (v != "a" && v != "b")
				throw rv::cli::UsageError("invalid --two-vm '" + std::string(v) +
							  "' (a or b)");
			o.role = v[0];
		}),
		rv::cli::value("peer-ip", 0, [&o](std::string_view v) {
			if (!rv::parse_ipv4(std::string(v)))
				throw rv::cli::UsageError("invalid --peer-ip '" + std::string(v) + "'");
			o.peer_ip = v;
		}),
		rv::cli::number("control-port", 0, o.control_port, 1, 65535),
		rv::cli::number("peer-timeout", 0, o.peer_timeout, 10, 3600),
	};
}

// What is sent, and how the run ends.
std::vector<rv::cli::Option> traffic_options(Options &o)
{
	return {
		rv::cli::seconds("seconds", 's', o.seconds, 1, 86400),
		rv::cli::number("procs-per-node", 'n', o.procs, 1, 64),
		rv::cli::number("seed", 0, o.seed),
		rv::cli::number("slots", 0, o.slots, 1, 64),
		rv::cli::number("window", 0, o.window, 1, 64),
		rv::cli::size("max-size", 0, o.max_size, 1, max_message),
		rv::cli::number("churn", 0, o.churn, 0, 100),
		rv::cli::flag("small-pages", 0, o.small_pages),
		rv::cli::number("reconnect-timeout", 0, o.reconnect_timeout, 1, 3600),
		rv::cli::number("drain-timeout", 0, o.drain_timeout, 1, 3600),
		rv::cli::flag("json", 'j', o.json),
		rv::cli::flag("quiet", 'q', o.quiet),
	};
}

// The defaults that depend on other options.
void finish(Options &o)
{
	if (!o.flap_down_ms)
		o.flap_down_ms = o.flap_drop ? 12000 : 5000;
	if (!o.flap_down_min_ms || o.flap_down_min_ms > o.flap_down_ms)
		o.flap_down_min_ms = o.flap_down_ms;
	if (o.role && o.peer_ip.empty()) {
		const char *env = std::getenv("RV_PEER_IP");
		if (!env || !rv::parse_ipv4(env))
			throw UsageError("--two-vm needs --peer-ip (or RV_PEER_IP)");
		o.peer_ip = env;
	}
}

} // namespace

rv::cli::Parsed parse(int argc, char **argv, Options &o)
{
	std::vector<rv::cli::Option> options = traffic_options(o);
	for (auto &opt : flap_and_vm_options(o))
		options.push_back(std::move(opt));
	if (rv::cli::parse(argc, argv, options) == rv::cli::Parsed::help)
		return rv::cli::Parsed::help;
	finish(o);
	return rv::cli::Parsed::run;
}

} // namespace rv::soak
