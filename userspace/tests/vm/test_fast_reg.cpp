// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Fast registration (FRWR) of the MR cache's kernel MRs: what ATTACH
// makes of fr_page_list_len (max_fmr_size), REG_MEM's length limit
// (E2BIG), the ports ATTACH refuses (an iWARP port: Soft-iWARP), and the
// failures of a registration (the fault-injection knobs of the debug
// kernel, /sys/kernel/debug/rv/fail_reg_*): each leaves no MR, no pinned
// page and one more failed registration in the statistics, and the same
// REG_MEM then works and its MR carries a write between the two nodes.
//
//   RV_SIW_KO  siw.ko for the booted kernel (vm-run sets it; built by
//              tools/testing/kernel/siw.sh); without it the iWARP test
//              skips, with the reason siw.sh left beside it
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "../support/subprocess.hpp"
#include "conn_util.hpp"
#include "fault/fault_inject.hpp"
#include "fault/rdma_res.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using rv::test::fault::KernelLog;
using rv::test::fault::RdmaRes;
using rv::test::fault::ResCounts;
using std::chrono::milliseconds;
using std::chrono::seconds;
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t recv = rv::access::psm3_recv;
constexpr std::uint32_t send = rv::access::psm3_send;

// Soft-RoCE's max_fast_reg_page_list_len (RXE_MAX_FMR_PAGE_LIST_LEN in
// rxe_param.h: 512 on 6.1 and 6.12).
constexpr std::uint64_t rxe_fr_pages = 512;

std::uint64_t page()
{
	return rv::page_size();
}

bool is_rxe(const Node &n)
{
	return n.dev.rfind("rxe", 0) == 0;
}

std::string read_line(const std::string &path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

// ATTACH of a new file with p (in form), in a job of its own: 0 and
// *out, or the errno.
int attach_errno(const rv::AttachParams &p, rv::Attach *out = nullptr,
		 rv::AttachForm form = rv::AttachForm::current)
{
	rv::AttachParams q = p;
	q.job_key = rv::random_job_key();
	rv::Device dev = open_declared();
	try {
		const rv::Attach a = dev.attach(q, form);
		if (out)
			*out = a;
		return 0;
	} catch (const std::system_error &e) {
		return e.code().value();
	}
}

// A file attached to n (no ring) asking for fr_page_list_len pages.
rv::Device fr_device(const Node &n, std::uint32_t fr_page_list_len, rv::Attach &out,
		     std::uint32_t mr_cache_size = 0)
{
	rv::AttachParams p = params_for(n);
	p.fr_page_list_len = fr_page_list_len;
	p.mr_cache_size = mr_cache_size;
	p.cq_entries = 0;
	rv::Device dev = open_declared();
	out = dev.attach(p);
	return dev;
}

// max_fmr_size as the uAPI defines it for a page list of pages entries
// (any range at any offset fits) and a cache of cache_mb MB; soft-RoCE's
// largest MR (max_mr_size) is far larger than both.
std::uint64_t expected_max_fmr(std::uint64_t pages, std::uint32_t cache_mb)
{
	return std::min((pages - 1) * page(), std::uint64_t{cache_mb} << 20);
}

} // namespace

// ------------------------------------------------------------ sizes

// fr_page_list_len: 16 pages make MRs of 15 pages at any offset; 1 is no
// page list; 0 (and the ABI 1.5 form, which has no such field) is the
// device's length, and more than the device has is cut to it.
TEST(FastReg, FrPageListLen)
{
	RV_NODE_OR_SKIP(n, 0);
	const std::uint64_t pg = page();

	rv::Attach a16;
	rv::Device dev = fr_device(n, 16, a16);
	EXPECT_EQ(a16.max_fmr_size, 15 * pg) << "fr_page_list_len 16";
	rv::Mapping buf = rv::Mapping::anonymous(32 * pg);
	// 15 pages starting 1 byte before a page boundary touch 16 pages.
	rv_mem_params_out out{};
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr() + pg - 1, 15 * pg, recv, &out), 0)
		<< "15 pages at 1 byte before a page boundary";
	EXPECT_EQ(out.iova, buf.addr() + pg - 1);
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), 15 * pg + 1, recv), E2BIG)
		<< "one byte over max_fmr_size";
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr() + pg - 1, 15 * pg + 1, recv), E2BIG);
	const rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.miss, 1u) << to_string(s);
	EXPECT_EQ(s.count, 1u) << to_string(s);
	EXPECT_EQ(s.failed, 0u) << "E2BIG is the argument's fault: " << to_string(s);

	// Two pages are the least: MRs of one page, at any offset.
	rv::Attach a2;
	rv::Device dev2 = fr_device(n, 2, a2);
	EXPECT_EQ(a2.max_fmr_size, pg) << "fr_page_list_len 2";
	EXPECT_EQ(reg_errno(dev2.fd(), buf.addr() + pg - 1, pg, send), 0);
	EXPECT_EQ(reg_errno(dev2.fd(), buf.addr(), pg + 1, send), E2BIG);

	rv::AttachParams p = params_for(n);
	p.cq_entries = 0;
	p.fr_page_list_len = 1;
	EXPECT_EQ(attach_errno(p), EINVAL) << "fr_page_list_len 1";

	// 0: the device's length.
	rv::Attach a0;
	p.fr_page_list_len = 0;
	ASSERT_EQ(attach_errno(p, &a0), 0) << "fr_page_list_len 0";
	EXPECT_GT(a0.max_fmr_size, 0u);
	EXPECT_EQ(a0.max_fmr_size % pg, 0u) << a0.max_fmr_size;
	EXPECT_LE(a0.max_fmr_size, std::uint64_t{a0.mr_cache_size} << 20);
	if (is_rxe(n)) {
		ASSERT_GE(a0.mr_cache_size, 2u) << "the module's mr_cache_size";
		EXPECT_EQ(a0.max_fmr_size, (rxe_fr_pages - 1) * pg)
			<< n.dev << ": max_fast_reg_page_list_len " << rxe_fr_pages;
	} else {
		note("FrPageListLen: " + n.dev +
		     " is no rxe: its page list length is not known here");
	}

	// More than the device has: the device's.
	for (std::uint32_t len :
	     {std::uint32_t{1} << 20, std::numeric_limits<std::uint32_t>::max()}) {
		SCOPED_TRACE(testing::Message() << "fr_page_list_len " << len);
		rv::Attach big;
		p.fr_page_list_len = len;
		ASSERT_EQ(attach_errno(p, &big), 0);
		EXPECT_EQ(big.max_fmr_size, a0.max_fmr_size);
	}
	// librv's default (PSM3's 1024) on a device that has fewer.
	{
		rv::Attach dflt;
		rv::AttachParams d = params_for(n);
		d.cq_entries = 0;
		ASSERT_EQ(d.fr_page_list_len, 1024u);
		ASSERT_EQ(attach_errno(d, &dflt), 0);
		if (is_rxe(n)) {
			EXPECT_EQ(dflt.max_fmr_size,
				  expected_max_fmr(rxe_fr_pages, dflt.mr_cache_size));
		}
	}
	// The ABI 1.5 form has no fr_page_list_len: as 0.
	{
		rv::Attach r5;
		p.fr_page_list_len = 1;	// not sent in this form
		const int err = rv::test::older_form_errno(0);
		ASSERT_EQ(attach_errno(p, &r5, rv::AttachForm::r5), err) << "RV_IOCTL_ATTACH_R5";
		if (!err) {
			EXPECT_EQ(r5.max_fmr_size, a0.max_fmr_size);
		}
	}
	// The MR cache bounds it too: 1 MB.
	{
		rv::Attach small;
		rv::Device d1 = fr_device(n, 0, small, 1);
		ASSERT_EQ(small.mr_cache_size, 1u);
		EXPECT_EQ(small.max_fmr_size, std::min<std::uint64_t>(MiB, a0.max_fmr_size));
	}
}

// The largest MR registers at any offset into a page, and one byte more
// is E2BIG there too; a length of 0 and a range that wraps stay EINVAL,
// in every REG_MEM form. None of them is counted.
TEST(FastReg, MaxFmrSizeAtAnyOffsetAndE2big)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::Attach att;
	rv::Device dev = fr_device(n, 0, att);
	const std::uint64_t max = att.max_fmr_size;
	const std::uint64_t pg = page();
	ASSERT_GT(max, 0u);
	rv::Mapping buf = rv::Mapping::anonymous(max + 2 * pg);

	for (std::uint64_t off : {std::uint64_t{0}, std::uint64_t{1}, pg / 2, pg - 1}) {
		SCOPED_TRACE(testing::Message() << "offset " << off);
		rv_mem_params_out out{};
		EXPECT_EQ(reg_errno(dev.fd(), buf.addr() + off, max, recv, &out), 0);
		EXPECT_EQ(reg_errno(dev.fd(), buf.addr() + off, max + 1, recv), E2BIG);
		if (out.mr_handle) {
			EXPECT_EQ(dereg_errno(dev.fd(), out.mr_handle, buf.addr() + off, max,
					      recv),
				  0);
		}
		// One at a time: the cache holds a few of them at most.
		(void)dev.evict_amount(~0ULL, ~0u);
	}
	const rv::CacheStats s0 = dev.cache_stats();

	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), 0, recv), EINVAL) << "length 0";
	EXPECT_EQ(reg_errno(dev.fd(), ~0ULL - 4095, 8192, recv), EINVAL) << "wraps";
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), 1ULL << 30, recv), E2BIG) << "1 GiB";
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), max + pg, recv), E2BIG);

	// The older forms answer the same (the upstream form has none).
	const int e2big = rv::test::older_form_errno(E2BIG);
	rv_mem_params_r4 r4{};
	r4.in.addr = buf.addr();
	r4.in.length = max + 1;
	r4.in.access = recv;
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_REG_MEM_R4, &r4), e2big) << "REG_MEM_R4";
	rv_mem_params_r1 r1{};
	r1.in.addr = buf.addr();
	r1.in.length = max + 1;
	r1.in.access = recv;
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_REG_MEM_R1, &r1), e2big) << "REG_MEM_R1";

	// Through the library: a system_error with E2BIG.
	try {
		(void)dev.reg_mem(buf.addr(), max + 1, recv);
		ADD_FAILURE() << "REG_MEM of max_fmr_size + 1 succeeded";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), E2BIG) << e.what();
	}
	const rv::CacheStats s1 = dev.cache_stats();
	EXPECT_EQ(s1.hit + s1.miss + s1.full + s1.failed, s0.hit + s0.miss + s0.full + s0.failed)
		<< "refused arguments counted: " << to_string(s1);
}

// ------------------------------------------------------------ iWARP

namespace {

constexpr const char *siw_dev = "siw_rv";

std::string run_out(const ProcessResult &r)
{
	std::string s = r.out + r.err;
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

bool module_loaded(const std::string &name)
{
	return fs::exists("/sys/module/" + name);
}

// Soft-iWARP loaded, and an siw device on a netdev of the VM for as long
// as this lives. unavailable() says why not, when siw cannot be had (the
// test skips); error() what went wrong otherwise (the test fails).
class SiwLink {
public:
	explicit SiwLink(const std::string &netdev)
	{
		if (!load())
			return;
		const std::string rdma = which("rdma");
		// A device of an earlier run that died before deleting it.
		if (fs::exists(std::string("/sys/class/infiniband/") + siw_dev))
			(void)run_process({rdma, "link", "delete", siw_dev});
		const ProcessResult r = run_process(
			{rdma, "link", "add", siw_dev, "type", "siw", "netdev", netdev});
		if (!r.ok()) {
			error_ = "rdma link add " + std::string(siw_dev) + " type siw netdev " +
				 netdev + ": " + run_out(r);
			return;
		}
		added_ = true;
	}
	~SiwLink()
	{
		if (added_) {
			const ProcessResult r =
				run_process({which("rdma"), "link", "delete", siw_dev});
			if (!r.ok())
				note(std::string("rdma link delete ") + siw_dev + ": " +
				     run_out(r));
		}
		if (loaded_) {
			const ProcessResult r = run_process({which("rmmod"), "siw"});
			if (!r.ok())
				note("rmmod siw: " + run_out(r));
		}
	}
	SiwLink(const SiwLink &) = delete;
	SiwLink &operator=(const SiwLink &) = delete;

	[[nodiscard]] const std::string &unavailable() const noexcept { return unavailable_; }
	[[nodiscard]] const std::string &error() const noexcept { return error_; }
	[[nodiscard]] bool ok() const noexcept { return added_; }

private:
	// siw is loaded (by this, or it was): true; else unavailable_ or
	// error_ says why.
	bool load()
	{
		if (module_loaded("siw"))
			return true;
		const char *env = std::getenv("RV_SIW_KO");
		const std::string ko = env ? env : "";
		if (ko.empty() || !fs::exists(ko)) {
			// A kernel that has siw itself.
			if (run_process({which("modprobe"), "siw"}).ok()) {
				loaded_ = true;
				return true;
			}
			if (ko.empty()) {
				unavailable_ = "RV_SIW_KO is not set (vm-run sets it) and the "
					       "kernel has no siw module";
				return false;
			}
			const std::string why =
				read_line((fs::path(ko).parent_path() / "unavailable").string());
			unavailable_ = "no " + ko + ": " +
				       (why.empty() ? "run tools/testing/kernel/siw.sh" : why);
			return false;
		}
		// Its dependencies: a module built beside it (libcrc32c for a
		// kernel without one), else the kernel's own.
		const ProcessResult deps = run_process({which("modinfo"), "-F", "depends", ko});
		std::string list = deps.out;
		std::replace(list.begin(), list.end(), ',', ' ');
		for (const std::string &d : split_words(list)) {
			if (module_loaded(d))
				continue;
			const fs::path beside = fs::path(ko).parent_path() / (d + ".ko");
			const ProcessResult r =
				fs::exists(beside) ? run_process({which("insmod"), beside.string()})
						   : run_process({which("modprobe"), d});
			if (!r.ok()) {
				error_ = "loading " + d + ", which siw needs: " + run_out(r);
				return false;
			}
		}
		const ProcessResult r = run_process({which("insmod"), ko});
		if (!r.ok()) {
			error_ = "insmod " + ko + ": " + run_out(r);
			return false;
		}
		loaded_ = true;
		return true;
	}

	bool loaded_ = false;
	bool added_ = false;
	std::string unavailable_;
	std::string error_;
};

// The lines of records that contain what.
std::vector<std::string> lines_with(const std::vector<std::string> &records,
				    const std::string &what)
{
	std::vector<std::string> out;
	for (const std::string &r : records)
		if (r.find(what) != std::string::npos)
			out.push_back(r);
	return out;
}

std::string joined(const std::vector<std::string> &lines)
{
	std::string s;
	for (const std::string &l : lines)
		s += "\n  " + l;
	return s;
}

} // namespace

// rv needs RDMA WRITE with immediate, which iWARP has not: ATTACH to a
// Soft-iWARP port fails with EPROTONOSUPPORT and one kernel log line that
// says so, and leaves nothing behind (no verbs object of rv on the
// device, the file not attached and free to attach elsewhere).
TEST(FastReg, AttachRefusesIwarp)
{
	RV_ROOT_OR_SKIP();
	if (!in_test_vm())
		GTEST_SKIP() << "adds an RDMA link: only in the test VM (RV_VM=1)";
	if (which("rdma").empty())
		GTEST_SKIP() << "needs rdma(8) (iproute2)";
	const std::optional<Node> n0 = node(0);
	std::string netdev = "lo";
	std::uint32_t ip = 0x7f000001;
	if (n0 && !n0->netdev.empty() && fs::exists("/sys/class/net/" + n0->netdev)) {
		netdev = n0->netdev;
		ip = n0->ip;
	}

	SiwLink link(netdev);
	if (!link.unavailable().empty())
		GTEST_SKIP() << "no Soft-iWARP: " << link.unavailable();
	ASSERT_TRUE(link.ok()) << link.error();
	const std::string sys = std::string("/sys/class/infiniband/") + siw_dev;
	EXPECT_NE(read_line(sys + "/node_type").find("RNIC"), std::string::npos)
		<< "siw is an iWARP RNIC: node_type " << read_line(sys + "/node_type");
	ASSERT_TRUE(wait_until(
		[&] {
			return read_line(sys + "/ports/1/state").find("ACTIVE") !=
			       std::string::npos;
		},
		seconds(10)))
		<< siw_dev << " port 1: " << read_line(sys + "/ports/1/state");

	rv::AttachParams p;
	p.dev_name = siw_dev;
	p.port_num = 1;
	p.loc_addr = ip;
	p.loc_gid_index = 0;
	p.loc_gid = rv::RdmaSysfs().gid(siw_dev, 1, 0).value_or(rv::Gid{});
	p.job_key = rv::random_job_key();
	RdmaRes res;
	const ResCounts before = res.count(siw_dev);
	EXPECT_TRUE(before == ResCounts{}) << before.str();
	rv::Device dev = open_declared();

	KernelLog log;
	ASSERT_TRUE(log.available()) << "cannot read /dev/kmsg";
	int err = 0;
	try {
		(void)dev.attach(p);
	} catch (const std::system_error &e) {
		err = e.code().value();
	}
	EXPECT_EQ(err, EPROTONOSUPPORT) << "ATTACH to " << siw_dev << ": " << std::strerror(err);
	// The module logs as it returns; nothing is deferred.
	const std::vector<std::string> recs = log.read_new();
	const std::vector<std::string> refused =
		lines_with(recs, "refused: iWARP has no RDMA WRITE with immediate");
	ASSERT_EQ(refused.size(), 1u) << "kernel log since the ATTACH:" << joined(recs);
	EXPECT_NE(refused[0].find(siw_dev), std::string::npos) << refused[0];
	EXPECT_NE(refused[0].find("port 1"), std::string::npos) << refused[0];
	EXPECT_EQ(lines_with(recs, "refused").size(), 1u) << joined(recs);

	// Nothing registered: no object of rv on the device, the file not
	// attached (its MR ioctls say so), and it may attach elsewhere.
	const ResCounts after = res.count(siw_dev);
	EXPECT_TRUE(after == ResCounts{}) << "rv objects on " << siw_dev << ": " << after.str();
	EXPECT_FALSE(dev.attachment().has_value());
	rv::Mapping buf = rv::Mapping::anonymous(64 * KiB);
	EXPECT_EQ(reg_errno(dev.fd(), buf.addr(), buf.size(), recv), EINVAL)
		<< "REG_MEM after the refused ATTACH";
	rv::CacheStats cs{};
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_GET_CACHE_STATS, &cs), EINVAL);
	if (n0) {
		rv::AttachParams ok = params_for(*n0);
		ok.cq_entries = 0;
		EXPECT_NO_THROW((void)dev.attach(ok)) << "ATTACH to " << n0->dev
						      << " after the refused one";
	}
}

// ------------------------------------------------------------ failures

namespace {

constexpr const char *fault_dir = "/sys/kernel/debug/rv";

// One of rv's fault_attr directories (Documentation/fault-injection):
// set to fail every check (probability 100, interval 1, any task) but
// with times 0 until arm(); everything put back when destroyed.
class RvFault {
public:
	explicit RvFault(std::string name)
		: name_(std::move(name)), dir_(std::string(fault_dir) + "/" + name_)
	{
		for (const char *knob : {"times", "probability", "interval", "space", "verbose",
					 "task-filter"})
			saved_.emplace_back(knob, get(knob));
		// times 0 first: nothing fails while the others change.
		set("times", "0");
		set("probability", "100");
		set("interval", "1");
		set("space", "0");
		set("verbose", "1");
		set("task-filter", "N");
	}
	~RvFault()
	{
		try {
			set("times", "0");
			for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
				set(it->first, it->second);
		} catch (const std::exception &e) {
			note(std::string("restoring ") + dir_ + ": " + e.what());
		}
	}
	RvFault(const RvFault &) = delete;
	RvFault &operator=(const RvFault &) = delete;

	// The next check fails, and only that one.
	void arm() { set("times", "1"); }
	void disarm() { set("times", "0"); }
	// Failures left to inject: 0 once the armed one happened.
	[[nodiscard]] long times() const { return std::stol(get("times")); }
	[[nodiscard]] const std::string &name() const noexcept { return name_; }

private:
	[[nodiscard]] std::string get(const std::string &knob) const
	{
		const std::string path = dir_ + "/" + knob;
		std::ifstream in(path);
		std::string v;
		if (!in || !std::getline(in, v))
			throw std::system_error(errno ? errno : ENOENT, std::generic_category(),
						"read " + path);
		return v;
	}
	void set(const std::string &knob, const std::string &value)
	{
		const std::string path = dir_ + "/" + knob;
		std::ofstream out(path);
		out << value << std::flush;
		if (!out)
			throw std::system_error(errno ? errno : EIO, std::generic_category(),
						"write " + value + " to " + path);
	}

	std::string name_;
	std::string dir_;
	std::vector<std::pair<std::string, std::string>> saved_;
};

// VmPin of this process, in kB (pages ib_umem_get() pinned).
std::uint64_t vm_pin_kb()
{
	std::ifstream f("/proc/self/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("VmPin:", 0) == 0)
			return std::strtoull(line.c_str() + 6, nullptr, 10);
	throw std::runtime_error("no VmPin in /proc/self/status");
}

// rv's objects on dev, polled until they are want or 10 s passed (the
// registration QP may be reset from a workqueue).
ResCounts settle(RdmaRes &res, const std::string &dev, const ResCounts &want)
{
	const auto end = std::chrono::steady_clock::now() + seconds(10);
	for (;;) {
		const ResCounts now = res.count(dev);
		if (now == want || std::chrono::steady_clock::now() >= end)
			return now;
		std::this_thread::sleep_for(milliseconds(50));
	}
}

constexpr std::uint64_t fault_len = 64 * KiB;

// One process attached to both nodes with one key and connected; node 1's
// side holds a registered destination buffer.
struct WritePair {
	WritePair(const Node &n0, const Node &n1)
		: key(rv::random_job_key()), a(n0, n1, key), b(n1, n0, key)
	{
		a.create();
		b.create();
		a.connect();
		b.connect();
		dst = rv::Mapping::map(fault_len, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
		dmr = b.dev().reg_mem(dst.data(), dst.size(), recv);
		if (!a.conn().wait_connected(seconds(120)) ||
		    !b.conn().wait_connected(seconds(120)))
			throw std::runtime_error("not connected: " + to_string(a.conn().stats()));
	}

	// A write of src through mr into dst arrives intact.
	void expect_write(const rv::Mapping &src, const rv::MemoryRegion &mr, std::uint64_t key_)
	{
		fill_pattern(src.bytes(), fault_len, key_);
		std::memset(dst.data(), 0, dst.size());
		rv::WriteRequest w;
		w.loc_addr = src.addr();
		w.mr = &mr.info();
		w.rem_addr = dst.addr();
		w.rkey = dmr.rkey();
		w.length = fault_len;
		w.wr_id = key_;
		w.immed = a.immed(b.attach().rv_index, 0x77);
		ASSERT_NO_THROW((void)a.conn().post_write(w)) << "POST_RDMA_WR_IMMED";
		const std::vector<rv::Event> sent = a.wait_events(1, seconds(60));
		ASSERT_EQ(sent.size(), 1u) << to_string(a.conn().stats());
		EXPECT_EQ(sent[0].status, 0) << to_string(sent[0]);
		EXPECT_EQ(sent[0].wr_id, key_);
		const std::vector<rv::Event> got = b.wait_events(1, seconds(60));
		ASSERT_EQ(got.size(), 1u) << to_string(b.conn().stats());
		EXPECT_EQ(got[0].status, 0) << to_string(got[0]);
		EXPECT_EQ(got[0].byte_len, fault_len);
		EXPECT_FALSE(check_pattern(dst.bytes(), fault_len, key_).has_value())
			<< "the data that arrived differs";
	}

	rv::JobKey key;
	Side a;
	Side b;
	rv::Mapping dst;
	rv::MemoryRegion dmr;
};

// REG_MEM of a fresh range fails once as knob makes it, with want; the
// failure leaves nothing (MRs, pinned pages, the cache) but one more
// failed registration; then the same REG_MEM works and its MR writes.
void fail_once(const std::string &knob, int want)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	if (!fs::exists(std::string(fault_dir) + "/fail_reg_post"))
		GTEST_SKIP() << "no " << fault_dir
			     << "/fail_reg_post: rv's fault injection needs the debug "
				"kernel (CONFIG_FAULT_INJECTION_DEBUG_FS)";
	ASSERT_TRUE(fs::exists(std::string(fault_dir) + "/" + knob))
		<< fault_dir << "/" << knob << " is missing beside fail_reg_post";

	WritePair p(n0, n1);
	RdmaRes res;
	rv::Mapping src = rv::Mapping::map(fault_len, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	const rv::CacheStats s0 = p.a.dev().cache_stats();
	const ResCounts r0 = res.count(n0.dev);
	const std::uint64_t pin0 = vm_pin_kb();

	int err = 0;
	long left = -1;
	std::vector<std::string> recs;
	{
		RvFault f(knob);
		KernelLog log;
		f.arm();
		err = reg_errno(p.a.fd(), src.addr(), fault_len, send);
		left = f.times();
		f.disarm();
		recs = log.read_new();
	}
	EXPECT_EQ(left, 0) << knob << " did not fire: REG_MEM never checked it";
	EXPECT_EQ(err, want) << "REG_MEM with " << knob << ": " << std::strerror(err);
	EXPECT_FALSE(lines_with(recs, "name " + knob).empty())
		<< "no FAULT_INJECTION report of " << knob << ":" << joined(recs);

	const rv::CacheStats s1 = p.a.dev().cache_stats();
	EXPECT_EQ(s1.failed, s0.failed + 1) << to_string(s1);
	EXPECT_EQ(s1.miss, s0.miss) << to_string(s1);
	EXPECT_EQ(s1.hit, s0.hit);
	EXPECT_EQ(s1.full, s0.full);
	EXPECT_EQ(s1.count, s0.count) << to_string(s1);
	EXPECT_EQ(s1.cache_size, s0.cache_size);
	EXPECT_EQ(s1.inuse, s0.inuse);
	EXPECT_EQ(res.count(n0.dev).mr, r0.mr) << "an MR of the failed REG_MEM is left";
	const ResCounts r1 = settle(res, n0.dev, r0);
	EXPECT_TRUE(r1 == r0) << "rv objects on " << n0.dev << " after the failure: " << r1.str()
			      << ", before " << r0.str();
	EXPECT_EQ(vm_pin_kb(), pin0) << "pages of the failed REG_MEM are still pinned";

	// The same range again: a miss that works, and its MR writes.
	rv::MemoryRegion mr;
	try {
		mr = p.a.dev().reg_mem(src.data(), fault_len, send);
	} catch (const std::system_error &e) {
		FAIL() << "REG_MEM after the failure: " << e.what();
	}
	const rv::CacheStats s2 = p.a.dev().cache_stats();
	EXPECT_EQ(s2.miss, s1.miss + 1) << to_string(s2);
	EXPECT_EQ(s2.failed, s1.failed) << to_string(s2);
	EXPECT_EQ(s2.count, s1.count + 1);
	EXPECT_EQ(res.count(n0.dev).mr, r0.mr + 1);
	EXPECT_EQ(vm_pin_kb(), pin0 + fault_len / 1024);
	p.expect_write(src, mr, 0xfa117000 + static_cast<std::uint64_t>(want));
	// And once more: the registration QP stays usable.
	rv::Mapping src2 = rv::Mapping::map(fault_len, PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	rv::MemoryRegion mr2 = p.a.dev().reg_mem(src2.data(), fault_len, send);
	p.expect_write(src2, mr2, 0xfa118000 + static_cast<std::uint64_t>(want));
}

} // namespace

// ib_alloc_mr() fails: ENOMEM.
TEST(FastReg, FailedMrAllocationLeavesNothing)
{
	fail_once("fail_reg_alloc_mr", ENOMEM);
}

// ib_post_send() of the REG_MR work request fails: EIO.
TEST(FastReg, FailedPostLeavesNothing)
{
	fail_once("fail_reg_post", EIO);
}

// The REG_MR completes in error: EIO; the registration QP, in the error
// state then, is reset and the next REG_MEM works.
TEST(FastReg, FailedCompletionLeavesNothing)
{
	fail_once("fail_reg_wc", EIO);
}
