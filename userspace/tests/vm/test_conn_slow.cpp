// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// A connection on a crawling link: a write that takes far longer than the
// module's stall watchdog (RV_STALL_MS, 9 s) but whose packets keep being
// acknowledged is progress, not a loss. The link is slowed with netem's
// rate limit on node 0's netdev (no loss: its queue holds everything rxe
// has in flight). The buffers are MAP_SHARED: tc's fork must not take
// private pages' MRs out of the cache.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>

#include "../support/subprocess.hpp"
#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// One MR as large as soft-RoCE registers them (max_fmr_size: 511 pages)
// at 1.5 Mbit/s: about 12 s, more than the stall watchdog's base. Not
// slower: rxe asks for an ACK every 66 packets (RXE_MAX_PKT_PER_ACK),
// which must come back within the QP's ACK timeout (RV_MIN_QP_TIMEOUT,
// about 0.54 s), and 66 packets of 1 KiB take 0.39 s at this rate.
constexpr std::uint64_t write_len = slot_bytes(2);
constexpr const char *rate = "1500kbit";

bool tc(const std::vector<std::string> &args)
{
	std::vector<std::string> argv = {which("tc")};
	argv.insert(argv.end(), args.begin(), args.end());
	return run_process(argv).ok();
}

// netem's rate limit on a netdev for as long as it lives.
class SlowLink {
public:
	explicit SlowLink(std::string netdev) : netdev_(std::move(netdev))
	{
		ok_ = tc({"qdisc", "replace", "dev", netdev_, "root", "netem", "rate", rate,
			  "limit", "100000"});
	}
	~SlowLink()
	{
		if (ok_)
			(void)tc({"qdisc", "del", "dev", netdev_, "root"});
	}
	SlowLink(const SlowLink &) = delete;
	SlowLink &operator=(const SlowLink &) = delete;

	[[nodiscard]] bool ok() const noexcept { return ok_; }

private:
	std::string netdev_;
	bool ok_ = false;
};

std::uint64_t recoveries(rv::Connection &c)
{
	return c.stats().conn_recovery;
}

} // namespace

TEST(ConnSlow, LongWriteOnCrawlingLinkIsNotALoss)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	if (!in_test_vm() || n0.netdev.empty())
		GTEST_SKIP() << "changes node 0's link: only in the test VM (RV_VM=1)";
	if (which("tc").empty() || !run_process({which("modprobe"), "sch_netem"}).ok())
		GTEST_SKIP() << "needs tc(8) and the sch_netem module";

	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 120;
	Side a(n0, n1, key, cfg);
	Side b(n1, n0, key, cfg);
	a.create();
	b.create();
	a.connect();
	b.connect();
	rv::Mapping src = rv::Mapping::map(write_len, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	rv::Mapping dst = rv::Mapping::map(write_len, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	fill_pattern(src.bytes(), write_len, 0x51);
	ASSERT_LE(write_len, a.attach().max_fmr_size) << "one MR";
	rv::MemoryRegion smr = a.dev().reg_mem(src.data(), src.size(), rv::access::psm3_send);
	rv::MemoryRegion dmr = b.dev().reg_mem(dst.data(), dst.size(), rv::access::psm3_recv);
	ASSERT_TRUE(a.conn().wait_connected(seconds(120))) << to_string(a.conn().stats());
	ASSERT_TRUE(b.conn().wait_connected(seconds(120))) << to_string(b.conn().stats());
	const std::uint64_t rec_a = recoveries(a.conn()), rec_b = recoveries(b.conn());

	SlowLink slow(n0.netdev);
	ASSERT_TRUE(slow.ok()) << "tc qdisc replace dev " << n0.netdev << " root netem rate "
			       << rate;
	const std::uint64_t rx = rcvd_pkts(n1.dev);
	rv::WriteRequest w;
	w.loc_addr = src.addr();
	w.mr = &smr.info();
	w.rem_addr = dst.addr();
	w.rkey = dmr.rkey();
	w.length = write_len;
	w.wr_id = 0x5105;
	w.immed = a.immed(b.attach().rv_index, 0x51);
	const auto t0 = std::chrono::steady_clock::now();
	a.conn().post_write(w);
	const std::vector<rv::Event> sent = a.wait_events(1, seconds(240), milliseconds(0));
	const auto ms = std::chrono::duration_cast<milliseconds>(
		std::chrono::steady_clock::now() - t0);
	note("one " + std::to_string(write_len / 1024) + " KiB write at " + rate + ": " +
	     std::to_string(ms.count()) + " ms");

	ASSERT_EQ(sent.size(), 1u) << to_string(a.conn().stats());
	EXPECT_EQ(sent[0].status, 0) << to_string(sent[0]) << "; " << to_string(a.conn().stats());
	EXPECT_EQ(sent[0].wr_id, w.wr_id);
	const std::vector<rv::Event> got = b.wait_events(1, seconds(30), milliseconds(0));
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].status, 0) << to_string(got[0]);
	EXPECT_EQ(got[0].byte_len, write_len);
	EXPECT_FALSE(check_pattern(dst.bytes(), write_len, 0x51)) << "data corrupt";
	EXPECT_EQ(recoveries(a.conn()), rec_a)
		<< "the sender's watchdog took the slow write for a loss: "
		<< to_string(a.conn().stats());
	EXPECT_EQ(recoveries(b.conn()), rec_b) << to_string(b.conn().stats());
	EXPECT_GE(rcvd_pkts(n1.dev) - rx, write_len / 1024) << "rcvd_pkts of " << n1.dev;
}
