// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The MR contract (rv_user_ioctls.h, "MR lifetime"): an MR that REG_MEM
// returned stays valid for the writes it posts and for the peer's writes
// until its DEREG_MEM, whatever the kernel does to the memory meanwhile.
// An invalidation only decides whether a later REG_MEM finds it again:
// events that leave pinned pages where they are (a huge page collapse or
// split, reclaim, compaction, mprotect, fork) keep it a hit; munmap and
// new pages at the same addresses make the next REG_MEM a miss, and the
// write from the new MR lands from the new pages.
//
// Every round writes a fresh pattern into the sender's buffer with the
// CPU after the event and checks it in the receiver's buffer with the
// CPU: had either MR kept pages the process no longer maps, the bytes
// would not match.
//
//   RV_KHUGEPAGED_TEST_SECONDS  length of HeldMr.KhugepagedScanning (20)
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;
constexpr std::uint64_t huge = 2 * MiB;
// Each side's MR: 2 MiB less a page (as large as an MR of soft-RoCE gets,
// max_fmr_size, and no whole number of MiB: conn_util.hpp) from the
// middle of the buffer's first huge page into its second, so that it
// covers a huge page boundary.
constexpr std::uint64_t mr_off = MiB;
constexpr std::uint64_t mr_len = slot_bytes(2);
static_assert(mr_off < huge && mr_off + mr_len > huge);

std::uint64_t huge_kb(std::uint64_t addr);

// Private anonymous memory of len bytes (a whole number of huge pages)
// starting on a huge page boundary, where transparent huge pages may be
// used (MADV_HUGEPAGE), populated.
rv::Mapping thp_buffer(std::uint64_t len)
{
	rv::Mapping raw = rv::Mapping::map(len + huge, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS);
	const std::uint64_t start = (raw.addr() + huge - 1) & ~(huge - 1);
	std::byte *p = raw.bytes();
	const std::uint64_t head = start - raw.addr();
	(void)raw.release();
	if (head)
		::munmap(p, head);
	if (huge - head)
		::munmap(p + head + len, huge - head);
	rv::Mapping m = rv::Mapping::adopt(p + head, len);
	(void)::madvise(m.data(), len, MADV_HUGEPAGE);	// EINVAL without THP
	std::memset(m.data(), 0xa5, len);
	return m;
}

// What a round does to the buffers of both sides before its write.
enum Event : std::uint32_t {
	ev_none,
	ev_collapse,	// MADV_COLLAPSE: a collapse attempt over pinned pages
	ev_split,	// a VMA boundary inside a huge page: the PMD is split
	ev_pageout,	// MADV_PAGEOUT: reclaim tries to unmap the pages
	ev_compact,	// compaction of all memory: migration attempts
	ev_mprotect,	// read-only, then read-write again
	ev_fork,	// a child writes its copy of the buffer
	ev_count,
};

const char *event_name(std::uint32_t e)
{
	static const char *const names[] = {"none",	"collapse", "split",
					    "pageout",	"compact",  "mprotect",
					    "fork"};
	return e < ev_count ? names[e] : "?";
}

// Best effort: a knob the kernel lacks is left alone.
void write_sysctl(const std::string &path, const std::string &value)
{
	std::ofstream f(path);
	f << value;
	f.flush();
}

// The first line of path; empty if it cannot be read.
std::string first_line(const std::string &path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

// Does event e to [p, p + len); a failure of the kernel's own attempt
// (EAGAIN of a collapse over pinned pages) is part of the event.
void apply(std::uint32_t e, std::byte *p, std::uint64_t len)
{
	switch (e) {
	case ev_collapse:
		(void)::madvise(p, len, MADV_COLLAPSE);
		break;
	case ev_split:
		// Inside the second huge page, and inside the MR.
		(void)::madvise(p + huge + MiB / 2, 4096, MADV_NOHUGEPAGE);
		(void)::madvise(p + huge + MiB / 2, 4096, MADV_HUGEPAGE);
		break;
	case ev_pageout:
		(void)::madvise(p, len, MADV_PAGEOUT);
		break;
	case ev_compact:
		write_sysctl("/proc/sys/vm/compact_memory", "1");
		break;
	case ev_mprotect:
		if (::mprotect(p, len, PROT_READ) ||
		    ::mprotect(p, len, PROT_READ | PROT_WRITE))
			throw std::system_error(errno, std::generic_category(), "mprotect");
		break;
	case ev_fork: {
		const pid_t pid = ::fork();
		if (pid < 0)
			throw std::system_error(errno, std::generic_category(), "fork");
		if (pid == 0) {
			std::memset(p, 0x11, len);
			::_exit(0);
		}
		int st = 0;
		::waitpid(pid, &st, 0);
		break;
	}
	default:
		break;
	}
}

struct Round {
	std::uint32_t event;
	std::uint32_t pad;
	std::uint64_t key;	// of the pattern the write carries
};

struct RoundResult {
	std::uint32_t events;
	std::uint32_t ok;
	std::int64_t bad_at;	// first wrong byte, or -1
};

struct HeldInfo {
	std::uint64_t addr;
	std::uint32_t rkey;
	std::uint32_t rv_index;
};

struct EndReport {
	std::uint32_t same_handle;	// REG_MEM again found the held MR
	std::uint32_t pad;
	rv::CacheStats cs;
};

constexpr std::uint32_t msg_round = msg_user;
constexpr std::uint32_t msg_info = msg_user + 1;
constexpr std::uint32_t msg_result = msg_user + 2;
constexpr std::uint32_t msg_end = msg_user + 3;

// The receiver: one held MR over a THP buffer; each round applies the
// event to its buffer, then checks the write that follows.
int held_receiver(Channel &ch, const Node &local, const Node &remote,
		  const rv::JobKey &key)
{
	Side s(local, remote, key);
	s.connect();
	rv::Mapping buf = thp_buffer(4 * MiB);
	rv::MemoryRegion mr = s.dev().reg_mem(buf.bytes() + mr_off, mr_len,
					      rv::access::psm3_recv);
	if (!s.conn().wait_connected(seconds(120)))
		throw std::runtime_error("receiver not connected");
	ch.send(msg_info, HeldInfo{mr.addr(), mr.rkey(), s.attach().rv_index});

	for (;;) {
		const Msg m = ch.expect(msg_round, seconds(300));
		const Round r = body_of<Round>(m);
		if (r.event == ev_count)
			break;
		apply(r.event, buf.bytes(), buf.size());
		std::memset(buf.data(), 0, buf.size());	// the write must fill it
		ch.send(msg_ready);
		RoundResult res{0, 0, -1};
		// The sender's post result: no write to wait for if it failed.
		if (body_of<std::int32_t>(ch.expect(msg_go, seconds(120)))) {
			ch.send(msg_result, res);
			continue;
		}
		const std::vector<rv::Event> evs = s.wait_events(1, seconds(60));
		for (const rv::Event &e : evs) {
			res.events++;
			if (e.event_type != RV_WC_RECV_RDMA_WITH_IMM || e.status ||
			    e.byte_len != mr_len)
				continue;
			const auto bad = check_pattern(buf.bytes() + mr_off, mr_len, r.key);
			if (bad)
				res.bad_at = static_cast<std::int64_t>(*bad);
			else
				res.ok++;
		}
		ch.send(msg_result, res);
	}
	EndReport end{};
	rv::MemoryRegion again = s.dev().reg_mem(buf.bytes() + mr_off, mr_len,
						 rv::access::psm3_recv);
	end.same_handle = again.handle() == mr.handle();
	end.cs = s.dev().cache_stats();
	ch.send(msg_end, end);
	ch.expect(msg_fin, seconds(60));
	return 0;
}

// The sender's side of the rounds.
class Sender {
public:
	Sender(const Node &local, const Node &remote, const rv::JobKey &key, Peer &peer)
		: s_(local, remote, key), peer_(peer)
	{
		s_.connect();
		if (!s_.conn().wait_connected(seconds(120)))
			throw std::runtime_error("sender not connected");
		info_ = peer_.chan().expect_body<HeldInfo>(msg_info, seconds(120));
	}

	Side &side() { return s_; }

	// One round: the event on both sides, a new pattern written into buf
	// (mr's part of it, at mr_off) with the CPU (unless !fill: the
	// receiver then expects the last one), posted from mr, checked by the
	// receiver. Returns the post's errno (0, and the round checked, on
	// success).
	int round(std::uint32_t event, const rv::Mapping &buf, const rv::MemoryRegion &mr,
		  bool fill = true)
	{
		++n_;
		if (fill)
			key_ = 0x4e1d0000ULL + n_;
		SCOPED_TRACE(std::string("event ") + event_name(event));
		peer_.chan().send(msg_round, Round{event, 0, key_});
		apply(event, buf.bytes(), buf.size());
		peer_.chan().expect(msg_ready, seconds(120));
		if (fill)
			fill_pattern(buf.bytes() + mr_off, mr_len, key_);

		rv::WriteRequest w;
		w.loc_addr = mr.addr();
		w.mr = &mr.info();
		w.rem_addr = info_.addr;
		w.rkey = info_.rkey;
		w.length = mr_len;
		w.wr_id = n_;
		w.immed = s_.immed(info_.rv_index, 0x100 + (n_ & 0xff));
		rv::PostResult pr;
		int err;
		while ((err = s_.conn().try_post_write(w, pr)) == EBUSY || err == ENOMEM)
			std::this_thread::sleep_for(milliseconds(1));
		peer_.chan().send(msg_go, static_cast<std::int32_t>(err));
		if (err) {
			(void)peer_.chan().expect(msg_result, seconds(120));
			return err;
		}
		const std::vector<rv::Event> evs = s_.wait_events(1, seconds(60));
		EXPECT_EQ(evs.size(), 1u);
		for (const rv::Event &e : evs)
			EXPECT_EQ(e.status, 0) << to_string(e);
		const auto res = peer_.chan().expect_body<RoundResult>(msg_result, seconds(120));
		EXPECT_EQ(res.events, 1u);
		EXPECT_EQ(res.ok, 1u) << "first wrong byte at " << res.bad_at;
		return 0;
	}

	EndReport finish()
	{
		peer_.chan().send(msg_round, Round{ev_count, 0, 0});
		const auto end = peer_.chan().expect_body<EndReport>(msg_end, seconds(120));
		peer_.chan().send(msg_fin);
		EXPECT_TRUE(peer_.wait(seconds(60)).ok());
		return end;
	}

private:
	Side s_;
	Peer &peer_;
	HeldInfo info_{};
	std::uint64_t n_ = 0;
	std::uint64_t key_ = 0;
};

// A test's two sides, in a new job: the receiver, a child on node n1,
// and the sender, this process on node n0.
struct Pair {
	Pair(const Node &n0, const Node &n1, const rv::JobKey &key)
		: child([&](Channel &ch) { return held_receiver(ch, n1, n0, key); }),
		  snd(n0, n1, key, child)
	{
	}

	Peer child;
	Sender snd;
};

} // namespace

// Each event, on both sides, over an MR each side holds: the write posted
// afterwards from the sender's MR into the receiver's lands and checks,
// and REG_MEM of the same range afterwards finds the held MR again.
TEST(HeldMr, SurvivesEventsThatKeepPinnedPages)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	Pair p(n0, n1, rv::random_job_key());
	Sender &snd = p.snd;
	rv::Mapping buf = thp_buffer(4 * MiB);
	rv::MemoryRegion mr = snd.side().dev().reg_mem(buf.bytes() + mr_off, mr_len,
						       rv::access::psm3_send);
	const std::uint64_t rcvd0 = rcvd_pkts(n1.dev);
	// Without a huge page the split below is no event at all.
	note("sender's buffer: " + std::to_string(huge_kb(buf.addr())) +
	     " kB in transparent huge pages");

	for (std::uint32_t e = ev_none; e < ev_count; e++)
		EXPECT_EQ(snd.round(e, buf, mr), 0)
			<< "posting from the held MR after " << event_name(e);
	// Everything again, one after the other, before a single write.
	for (std::uint32_t e = ev_collapse; e < ev_count; e++)
		apply(e, buf.bytes(), buf.size());
	EXPECT_EQ(snd.round(ev_none, buf, mr), 0);

	rv::MemoryRegion again = snd.side().dev().reg_mem(buf.bytes() + mr_off, mr_len,
							  rv::access::psm3_send);
	EXPECT_EQ(again.handle(), mr.handle()) << "the pinned pages did not move";
	const rv::CacheStats cs = snd.side().dev().cache_stats();
	EXPECT_EQ(cs.miss, 1u) << to_string(cs);
	EXPECT_EQ(cs.remove, 0u);
	const EndReport end = snd.finish();
	EXPECT_TRUE(end.same_handle) << "the receiver's pinned pages did not move";
	EXPECT_EQ(end.cs.miss, 1u);
	EXPECT_EQ(end.cs.remove, 0u);
	EXPECT_GT(rcvd_pkts(n1.dev), rcvd0) << "the writes crossed the link";
}

// munmap and new pages at the same addresses: the held MR still posts,
// from the pages it pinned; REG_MEM then misses, and the write from the
// new MR carries what the process wrote into the new pages.
TEST(HeldMr, NewPagesAtTheSameAddressesAreAMiss)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	Pair p(n0, n1, rv::random_job_key());
	Sender &snd = p.snd;
	rv::Mapping buf = thp_buffer(4 * MiB);
	const std::uint64_t addr = buf.addr();
	rv::MemoryRegion old = snd.side().dev().reg_mem(buf.bytes() + mr_off, mr_len,
							rv::access::psm3_send);
	ASSERT_EQ(snd.round(ev_none, buf, old), 0);

	buf.unmap();
	EXPECT_EQ(snd.side().dev().cache_stats().remove, 0u)
		<< "a held MR is not destroyed";
	buf = rv::Mapping::map(4 * MiB, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1,
			       0, reinterpret_cast<void *>(addr));
	ASSERT_EQ(buf.addr(), addr);
	std::memset(buf.data(), 0x3c, buf.size());
	// The old MR, held all along, still posts: the pattern its pages
	// were given before the munmap.
	EXPECT_EQ(snd.round(ev_none, buf, old, false), 0) << "posting from the held MR";

	rv::MemoryRegion fresh = snd.side().dev().reg_mem(buf.bytes() + mr_off, mr_len,
							  rv::access::psm3_send);
	EXPECT_NE(fresh.handle(), old.handle()) << "the old MR was found for new pages";
	rv::CacheStats cs = snd.side().dev().cache_stats();
	EXPECT_EQ(cs.miss, 2u) << to_string(cs);
	EXPECT_EQ(cs.hit, 0u);
	// The new MR carries what the process writes into the new pages.
	EXPECT_EQ(snd.round(ev_none, buf, fresh), 0);

	// Its last DEREG_MEM destroys the old MR; the new one stays cached.
	old.release();
	cs = snd.side().dev().cache_stats();
	EXPECT_EQ(cs.remove, 1u) << to_string(cs);
	EXPECT_EQ(cs.count, 1u);
	const EndReport end = snd.finish();
	EXPECT_TRUE(end.same_handle);
}

namespace {

// khugepaged's knobs, set for a test and put back after it.
class KhugepagedKnobs {
public:
	KhugepagedKnobs()
	{
		for (const auto &[file, value] : wanted()) {
			saved_.emplace_back(file, first_line(file));
			write_sysctl(file, value);
		}
	}
	~KhugepagedKnobs()
	{
		for (const auto &[file, value] : saved_)
			write_sysctl(file, value.substr(0, value.find(' ')));
	}
	KhugepagedKnobs(const KhugepagedKnobs &) = delete;
	KhugepagedKnobs &operator=(const KhugepagedKnobs &) = delete;

	static bool available()
	{
		return !first_line(dir + "/enabled").empty();
	}

private:
	static inline const std::string dir = "/sys/kernel/mm/transparent_hugepage";
	static std::vector<std::pair<std::string, std::string>> wanted()
	{
		return {{dir + "/enabled", "always"},
			{dir + "/khugepaged/scan_sleep_millisecs", "0"},
			{dir + "/khugepaged/alloc_sleep_millisecs", "0"},
			{dir + "/khugepaged/pages_to_scan", "4096"}};
	}
	std::vector<std::pair<std::string, std::string>> saved_;
};

// The current value of a sysfs setting like "always [madvise] never".
std::string selected(const std::string &s)
{
	const auto a = s.find('[');
	const auto b = s.find(']');
	return a == std::string::npos || b == std::string::npos ? s
								: s.substr(a + 1, b - a - 1);
}

// REG_MEM, repeated as PSM3 does while it fails with EAGAIN (the range
// changed while it was being registered); counts those in eagain.
rv::MemoryRegion reg_repeating(rv::Device &dev, const void *p, std::uint64_t len,
			       std::uint32_t access, unsigned &eagain)
{
	for (;;) {
		try {
			return dev.reg_mem(p, len, access);
		} catch (const std::system_error &e) {
			if (e.code().value() != EAGAIN || eagain >= 10000)
				throw;
			eagain++;
		}
	}
}

// kB of the VMA at addr mapped by huge pages (smaps' AnonHugePages).
std::uint64_t huge_kb(std::uint64_t addr)
{
	std::ifstream f("/proc/self/smaps");
	std::string line;
	bool in = false;
	while (std::getline(f, line)) {
		unsigned long long lo, hi;
		if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2) {
			in = lo <= addr && addr < hi;
			continue;
		}
		unsigned long long kb;
		if (in && std::sscanf(line.c_str(), "AnonHugePages: %llu kB", &kb) == 1)
			return kb;
	}
	return 0;
}

std::uint64_t full_scans()
{
	return std::strtoull(first_line("/sys/kernel/mm/transparent_hugepage/khugepaged/full_scans")
				     .c_str(),
			     nullptr, 10);
}

} // namespace

// PSM3's pattern with THP "always" and khugepaged scanning without pause:
// each message registers its send buffer, posts it whole from that MR and
// deregisters it. Every other message uses a new buffer, mapped with small
// pages that khugepaged wants to collapse, so that its scans race with
// the buffer's first registration (the race that made MPI jobs abort);
// the others reuse one of the last four buffers (hits). No post may fail,
// every byte must land; the hit rate is printed ("# held-mr: ...").
TEST(HeldMr, KhugepagedScanning)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	if (!KhugepagedKnobs::available())
		GTEST_SKIP() << "no transparent huge pages in this kernel";
	const char *env = std::getenv("RV_KHUGEPAGED_TEST_SECONDS");
	const auto duration = seconds(env ? std::atoi(env) : 20);
	KhugepagedKnobs knobs;
	const std::uint64_t scans0 = full_scans();

	Pair p(n0, n1, rv::random_job_key());
	Sender &snd = p.snd;
	std::vector<rv::Mapping> bufs;
	const auto t0 = std::chrono::steady_clock::now();
	unsigned rounds = 0, failed = 0, fresh = 0, eagain = 0;
	while (std::chrono::steady_clock::now() - t0 < duration && failed < 8) {
		if (rounds % 2 == 0 || bufs.empty()) {
			// Small pages first: khugepaged has something to collapse.
			rv::Mapping b = rv::Mapping::map(4 * MiB, PROT_READ | PROT_WRITE,
							 MAP_PRIVATE | MAP_ANONYMOUS);
			(void)::madvise(b.data(), b.size(), MADV_NOHUGEPAGE);
			std::memset(b.data(), static_cast<int>(rounds), b.size());
			(void)::madvise(b.data(), b.size(), MADV_HUGEPAGE);
			std::this_thread::sleep_for(milliseconds(rounds % 7));
			if (bufs.size() == 4)
				bufs.erase(bufs.begin());
			bufs.push_back(std::move(b));
			fresh++;
		}
		const rv::Mapping &b = rounds % 2 == 0 ? bufs.back()
						       : bufs[(rounds / 2) % bufs.size()];
		rv::MemoryRegion mr = reg_repeating(snd.side().dev(), b.bytes() + mr_off,
						    mr_len, rv::access::psm3_send, eagain);
		const int err = snd.round(ev_none, b, mr);
		if (err) {
			failed++;
			ADD_FAILURE() << "post " << rounds << ": " << std::strerror(err);
		}
		rounds++;
	}
	const rv::CacheStats cs = snd.side().dev().cache_stats();
	const EndReport end = snd.finish();
	const auto hits = static_cast<double>(cs.hit);
	const auto lookups = static_cast<double>(cs.hit + cs.miss);
	const double rate = lookups > 0 ? 100.0 * hits / lookups : 0.0;
	char line[256];
	std::snprintf(line, sizeof(line),
		      "held-mr: khugepaged %s, %llu full scans: %u messages (%u new buffers), "
		      "%u failed, REG_MEM %llu hits %llu misses (%.1f%% hits) %u EAGAIN, "
		      "%llu removed, %llu evicted",
		      selected(first_line("/sys/kernel/mm/transparent_hugepage/enabled")).c_str(),
		      static_cast<unsigned long long>(full_scans() - scans0), rounds, fresh,
		      failed,
		      static_cast<unsigned long long>(cs.hit),
		      static_cast<unsigned long long>(cs.miss), rate, eagain,
		      static_cast<unsigned long long>(cs.remove),
		      static_cast<unsigned long long>(cs.evict));
	note(line);
	EXPECT_EQ(failed, 0u);
	EXPECT_GT(rounds, 0u);
	EXPECT_TRUE(end.same_handle);
}
