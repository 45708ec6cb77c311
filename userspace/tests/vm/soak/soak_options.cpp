// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: the options (usage, parsing, the number parsers).
#include "soak_options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <getopt.h>

#include <rv/rdma_sysfs.hpp>

#include "getopt_error.hpp"
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
"                            --two-vm on the flapping VM's)\n"
"      --seed N              random seed (default 1)\n"
"      --slots K             receive buffers per process (default 4)\n"
"      --window W            messages in flight per process (default 4)\n"
"      --max-size BYTES      largest message (default 1048576)\n"
"      --churn PCT           buffer reuses that replace the buffer (default 25)\n"
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

double number_arg(const char *what, const char *arg, double min, double max)
{
	char *end = nullptr;
	errno = 0;
	const double v = std::strtod(arg, &end);
	if (!*arg || *end || errno || !std::isfinite(v) || v < min || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

std::uint64_t count_arg(const char *what, const char *arg, std::uint64_t min,
			std::uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	const unsigned long long v = std::strtoull(arg, &end, 0);
	if (!*arg || *end || errno || *arg == '-' || v < min || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

enum : int {
	opt_flap_down = 0x100,
	opt_flap_down_min,
	opt_flap_node,
	opt_flap_mode,
	opt_seed,
	opt_slots,
	opt_window,
	opt_max_size,
	opt_churn,
	opt_reconnect_timeout,
	opt_drain_timeout,
	opt_two_vm,
	opt_peer_ip,
	opt_control_port,
	opt_peer_timeout,
};

const option longopts[] = {
	{"seconds", required_argument, nullptr, 's'},
	{"procs-per-node", required_argument, nullptr, 'n'},
	{"flap-interval", required_argument, nullptr, 'f'},
	{"flap-down", required_argument, nullptr, opt_flap_down},
	{"flap-down-min", required_argument, nullptr, opt_flap_down_min},
	{"flap-node", required_argument, nullptr, opt_flap_node},
	{"flap-mode", required_argument, nullptr, opt_flap_mode},
	{"seed", required_argument, nullptr, opt_seed},
	{"slots", required_argument, nullptr, opt_slots},
	{"window", required_argument, nullptr, opt_window},
	{"max-size", required_argument, nullptr, opt_max_size},
	{"churn", required_argument, nullptr, opt_churn},
	{"reconnect-timeout", required_argument, nullptr, opt_reconnect_timeout},
	{"drain-timeout", required_argument, nullptr, opt_drain_timeout},
	{"two-vm", required_argument, nullptr, opt_two_vm},
	{"peer-ip", required_argument, nullptr, opt_peer_ip},
	{"control-port", required_argument, nullptr, opt_control_port},
	{"peer-timeout", required_argument, nullptr, opt_peer_timeout},
	{"json", no_argument, nullptr, 'j'},
	{"quiet", no_argument, nullptr, 'q'},
	{"help", no_argument, nullptr, 'h'},
	{nullptr, 0, nullptr, 0},
};

unsigned uint_arg(const char *what, const char *arg, std::uint64_t min, std::uint64_t max)
{
	return static_cast<unsigned>(count_arg(what, arg, min, max));
}

// The options of the flaps and of two VMs; false if c is none of them.
bool parse_flap_or_vm(int c, const char *arg, Options &o)
{
	switch (c) {
	case 'f':
		o.flap_interval = number_arg("--flap-interval", arg, 0, 3600);
		return true;
	case opt_flap_down:
		o.flap_down_ms = uint_arg("--flap-down", arg, 100, 600000);
		return true;
	case opt_flap_down_min:
		o.flap_down_min_ms = uint_arg("--flap-down-min", arg, 100, 600000);
		return true;
	case opt_flap_node:
		o.flap_node = uint_arg("--flap-node", arg, 0, 1);
		return true;
	case opt_flap_mode:
		if (std::string(arg) != "link" && std::string(arg) != "drop")
			throw UsageError(std::string("invalid --flap-mode '") + arg + "'");
		o.flap_drop = std::string(arg) == "drop";
		return true;
	case opt_two_vm:
		if (std::string(arg) != "a" && std::string(arg) != "b")
			throw UsageError(std::string("invalid --two-vm '") + arg + "' (a or b)");
		o.role = arg[0];
		return true;
	case opt_peer_ip:
		if (!rv::parse_ipv4(arg))
			throw UsageError(std::string("invalid --peer-ip '") + arg + "'");
		o.peer_ip = arg;
		return true;
	case opt_control_port:
		o.control_port = static_cast<std::uint16_t>(
			count_arg("--control-port", arg, 1, 65535));
		return true;
	case opt_peer_timeout:
		o.peer_timeout = uint_arg("--peer-timeout", arg, 10, 3600);
		return true;
	default:
		return false;
	}
}

void parse_option(int c, const char *arg, char **argv, Options &o)
{
	if (parse_flap_or_vm(c, arg, o))
		return;
	switch (c) {
	case 's':
		o.seconds = number_arg("--seconds", arg, 1, 86400);
		break;
	case 'n':
		o.procs = uint_arg("--procs-per-node", arg, 1, 64);
		break;
	case opt_seed:
		o.seed = count_arg("--seed", arg, 0, UINT64_MAX);
		break;
	case opt_slots:
		o.slots = uint_arg("--slots", arg, 1, 64);
		break;
	case opt_window:
		o.window = uint_arg("--window", arg, 1, 64);
		break;
	case opt_max_size:
		o.max_size = count_arg("--max-size", arg, 1, max_message);
		break;
	case opt_churn:
		o.churn = uint_arg("--churn", arg, 0, 100);
		break;
	case opt_reconnect_timeout:
		o.reconnect_timeout = uint_arg("--reconnect-timeout", arg, 1, 3600);
		break;
	case opt_drain_timeout:
		o.drain_timeout = uint_arg("--drain-timeout", arg, 1, 3600);
		break;
	case 'j':
		o.json = true;
		break;
	case 'q':
		o.quiet = true;
		break;
	case 'h':
		usage(stdout);
		std::exit(std::fflush(stdout) == 0 ? 0 : 1);
	default:
		throw UsageError(rv::tools::getopt_error(c, argv));
	}
}

} // namespace

Options parse(int argc, char **argv)
{
	Options o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:f:jqh", longopts, nullptr)) != -1)
		parse_option(c, optarg, argv, o);
	if (auto extra = rv::tools::extra_argument(argc, argv))
		throw UsageError(*extra);
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
	return o;
}

} // namespace rv::soak
