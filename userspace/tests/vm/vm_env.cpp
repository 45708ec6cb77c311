// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "vm_env.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <grp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/uapi.hpp>

namespace rv::test {

std::string device_path()
{
	const char *env = std::getenv("RV_DEVICE");
	return env && *env ? env : RV_FILE_NAME;
}

std::string rvinfo_path()
{
	if (const char *env = std::getenv("RV_RVINFO"); env && *env)
		return env;
#ifdef RVINFO_PATH
	if (::access(RVINFO_PATH, X_OK) == 0)
		return RVINFO_PATH;
#endif
	std::error_code ec;
	auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
	if (!ec) {
		for (const char *rel : {"rvinfo", "../tools/rvinfo",
					"../../tools/rvinfo"}) {
			auto p = self.parent_path() / rel;
			if (::access(p.c_str(), X_OK) == 0)
				return p.lexically_normal().string();
		}
	}
	return "rvinfo";	// fails visibly in the test that runs it
}

int ioctl_errno(int fd, unsigned long request, void *arg)
{
	errno = 0;
	if (::ioctl(fd, request, arg) < 0)
		return errno ? errno : -1;
	return 0;
}

Node roce_node(const std::string &dev, const rv::RoceGid &g)
{
	Node n;
	n.dev = dev;
	n.netdev = g.netdev;
	n.ip = g.ipv4;
	n.gid_index = g.index;
	n.gid = g.gid;
	return n;
}

namespace {

std::vector<std::string> words(const char *env_name)
{
	std::vector<std::string> out;
	const char *v = std::getenv(env_name);
	if (!v)
		return out;
	std::istringstream in(v);
	std::string w;
	while (in >> w)
		out.push_back(w);
	return out;
}

std::vector<Node> discover_nodes()
{
	std::vector<Node> out;
	rv::RdmaSysfs sysfs;
	auto devs = words("RV_NODES");
	auto netdevs = words("RV_NETDEVS");
	auto ips = words("RV_NODE_IPS");
	auto gid_indexes = words("RV_NODE_GID_INDEXES");

	if (devs.empty()) {
		// Not on the bench: every device with a RoCE v2 IPv4 GID.
		for (const auto &d : sysfs.devices()) {
			auto gids = sysfs.roce_v2_ipv4_gids(d, 1);
			if (!gids.empty())
				out.push_back(roce_node(d, gids.front()));
		}
		return out;
	}

	for (std::size_t i = 0; i < devs.size(); i++) {
		Node n;
		n.dev = devs[i];
		if (i < netdevs.size())
			n.netdev = netdevs[i];
		if (i < ips.size())
			n.ip = rv::parse_ipv4(ips[i]).value_or(0);
		std::optional<std::size_t> setup_index;
		if (i < gid_indexes.size())
			setup_index = std::strtoul(gid_indexes[i].c_str(), nullptr, 10);
		std::optional<rv::RoceGid> found;
		try {
			// The index at setup is read first: reading the whole
			// table (rxe's has 1024 entries) takes a debug kernel
			// tens of seconds.
			found = sysfs.find_roce_v2_ipv4_gid(
				n.dev, 1, n.ip ? std::optional(n.ip) : std::nullopt,
				setup_index);
		} catch (const std::system_error &) {
		}
		// The table as it is now wins: an address that went away and
		// came back may have another index than at setup.
		if (found)
			n.gid_index = found->index;
		else if (setup_index)
			n.gid_index = static_cast<std::uint16_t>(*setup_index);
		if (!n.ip && found)
			n.ip = found->ipv4;
		// What the GID table holds at that index; without sysfs
		// (a dry run against a fake module) what it should hold.
		n.gid = sysfs.gid(n.dev, 1, n.gid_index)
				.value_or(rv::ipv4_mapped_gid(n.ip));
		out.push_back(n);
	}
	return out;
}

} // namespace

const std::vector<Node> &nodes()
{
	static const std::vector<Node> all = discover_nodes();
	return all;
}

Node current(const Node &n, std::chrono::milliseconds timeout)
{
	const rv::RdmaSysfs sysfs;
	const auto end = std::chrono::steady_clock::now() + timeout;
	for (;;) {
		try {
			Node m = n;
			m.gid_index = sysfs.find_roce_v2_ipv4_gid(n.dev, 1, n.ip,
								  n.gid_index).index;
			m.gid = sysfs.gid(n.dev, 1, m.gid_index).value_or(n.gid);
			return m;
		} catch (const std::system_error &) {
			if (std::chrono::steady_clock::now() >= end)
				throw;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
}

std::optional<Node> node(std::size_t i)
{
	const auto &all = nodes();
	if (i >= all.size())
		return std::nullopt;
	return all[i];
}

rv::AttachParams params_for(const Node &n, std::optional<rv::JobKey> key)
{
	rv::AttachParams p;

	p.dev_name = n.dev;
	p.port_num = 1;
	p.loc_gid_index = n.gid_index;
	p.loc_gid = n.gid;
	p.loc_addr = n.ip;
	p.job_key = key ? *key : rv::random_job_key();
	p.job_key_len = RV_MAX_JOB_KEY_LEN;
	return p;
}

rv::Device open_declared(rv::Version abi)
{
	rv::Device dev(device_path());
	(void)dev.capability(abi);
	return dev;
}

rv::Device attach_new(const rv::AttachParams &p, rv::Version abi)
{
	rv::Device dev = open_declared(abi);
	(void)dev.attach(p);
	return dev;
}

void become_nobody()
{
	if (::setgroups(0, nullptr) < 0)
		rv::throw_errno("setgroups");
	if (::setresgid(nobody_id, nobody_id, nobody_id) < 0)
		rv::throw_errno("setresgid");
	if (::setresuid(nobody_id, nobody_id, nobody_id) < 0)
		rv::throw_errno("setresuid");
}

std::string read_file(const std::string &path)
{
	std::ifstream f(path);
	if (!f)
		throw std::system_error(errno, std::generic_category(), path);
	std::ostringstream s;
	s << f.rdbuf();
	return s.str();
}

void write_file(const std::string &path, const std::string &v)
{
	std::ofstream f(path);
	f << v;
	f.flush();
	if (!f)
		throw std::system_error(errno ? errno : EIO,
					std::generic_category(), path + ": " + v);
}

bool is_root()
{
	return ::geteuid() == 0;
}

bool in_test_vm()
{
	const char *v = std::getenv("RV_VM");
	return v && std::string(v) == "1";
}

bool upstream_form()
{
	const char *v = std::getenv("RV_MODULE_FORM");
	return v && std::string(v) == "upstream";
}

int older_form_errno(int err)
{
	return upstream_form() ? EINVAL : err;
}

std::vector<rv::AttachForm> attach_forms()
{
	if (upstream_form())
		return {rv::AttachForm::current};
	return {rv::AttachForm::current, rv::AttachForm::r5};
}

std::string which(const std::string &prog)
{
	const char *path = std::getenv("PATH");
	std::string dirs = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
	std::size_t start = 0;

	for (;;) {
		std::size_t end = dirs.find(':', start);
		std::string dir = dirs.substr(start, end - start);
		if (!dir.empty()) {
			std::string cand = dir + "/" + prog;
			if (::access(cand.c_str(), X_OK) == 0)
				return cand;
		}
		if (end == std::string::npos)
			return {};
		start = end + 1;
	}
}

std::string to_string(const rv::CacheStats &s)
{
	std::ostringstream o;

	o << "cache_size " << s.cache_size << " max_cache_size "
	  << s.max_cache_size << " limit " << s.limit_cache_size
	  << " count " << s.count << " max_count " << s.max_count
	  << " inuse " << s.inuse << " max_inuse " << s.max_inuse
	  << " inuse_bytes " << s.inuse_bytes << " max_inuse_bytes "
	  << s.max_inuse_bytes << " max_refcount " << s.max_refcount
	  << " hit " << s.hit << " miss " << s.miss << " full " << s.full
	  << " failed " << s.failed << " remove " << s.remove << " evict "
	  << s.evict;
	return o.str();
}

void note(const std::string &s)
{
	std::printf("# %s\n", s.c_str());
	std::fflush(stdout);
}

} // namespace rv::test
