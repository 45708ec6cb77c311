// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The MR cache stays coherent for RDMA: a receive buffer that is replaced
// under the same address (munmap + mmap MAP_FIXED) gets a new MR on the
// next REG_MEM, and the peer's RDMA write through it lands in the new
// pages, not in the old ones (which stay visible here through a second
// mapping of the same memfd).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/error.hpp>
#include <rv/mapping.hpp>
#include <rv/unique_fd.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::seconds;

namespace {

constexpr std::uint64_t buf_len = 1ULL << 20;
constexpr std::uint64_t write_len = 256 * 1024 + 3;
constexpr std::uint64_t write_off = 4096 + 5;

// Receiver -> sender: where to write and with which key.
struct Target {
	std::uint64_t addr;
	std::uint32_t rkey;
	std::uint32_t rv_index;
	std::uint64_t key;	// pattern key of the write
};

enum : std::uint32_t {
	msg_target = msg_user + 10,	// Target
	msg_written = msg_user + 11,	// the sender's completion status
};

// The sender: writes one pattern per Target it is sent, until msg_fin.
int sender(Channel &ch, const Node &local, const Node &remote,
	   const rv::JobKey &key)
{
	Side s(local, remote, key);
	s.connect();
	rv::Mapping src = rv::Mapping::anonymous(buf_len);
	rv::MemoryRegion mr = s.dev().reg_mem(src.data(), src.size(),
					      rv::access::psm3_send);
	if (!s.conn().wait_connected(seconds(120)))
		throw std::runtime_error("sender not connected");
	for (;;) {
		const std::optional<Msg> got = ch.recv(seconds(300));
		if (!got)
			throw std::runtime_error("no message from the receiver");
		const Msg &m = *got;
		if (m.type == msg_fin)
			return 0;
		if (m.type != msg_target)
			throw std::runtime_error("unexpected message");
		const Target t = body_of<Target>(m);
		fill_pattern(src.bytes(), write_len, t.key);
		rv::WriteRequest w;
		w.loc_addr = src.addr();
		w.mr = &mr.info();
		w.rem_addr = t.addr + write_off;
		w.rkey = t.rkey;
		w.length = write_len;
		w.wr_id = t.key;
		w.immed = s.immed(t.rv_index, 1);
		s.conn().post_write(w);
		const std::vector<rv::Event> evs = s.wait_events(1, seconds(60));
		const std::uint32_t status = evs.size() == 1 ? evs[0].status : 0xffff;
		ch.send(msg_written, status);
	}
}

// A shared mapping of fd at addr (MAP_FIXED when addr is given).
void *map_fd(int fd, void *addr)
{
	void *p = ::mmap(addr, buf_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE | (addr ? MAP_FIXED : 0), fd, 0);
	if (p == MAP_FAILED)
		rv::throw_errno("mmap");
	return p;
}

rv::UniqueFd new_memfd(const char *name)
{
	rv::UniqueFd fd(::memfd_create(name, MFD_CLOEXEC));
	if (!fd.valid())
		rv::throw_errno("memfd_create");
	if (::ftruncate(fd.get(), buf_len) < 0)
		rv::throw_errno("ftruncate");
	return fd;
}

} // namespace

TEST(ConnRemap, WriteIntoReplacedPagesLandsInTheNewPages)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();

	Peer child([&](Channel &ch) { return sender(ch, n0, n1, key); });
	Side me(n1, n0, key);
	me.connect();

	// The receive buffer X, and Y: the same (old) pages at another address.
	rv::UniqueFd old_fd = new_memfd("rv-old");
	rv::Mapping x = rv::Mapping::adopt(map_fd(old_fd.get(), nullptr), buf_len);
	rv::Mapping y = rv::Mapping::adopt(map_fd(old_fd.get(), nullptr), buf_len);
	ASSERT_TRUE(me.conn().wait_connected(seconds(120)))
		<< to_string(me.conn().stats());

	// First write: through MR 1 into the old pages.
	std::uint64_t mr1_handle;
	{
		rv::MemoryRegion mr1 = me.dev().reg_mem(x.data(), buf_len,
							rv::access::psm3_recv);
		mr1_handle = mr1.handle();
		child.chan().send(msg_target, Target{x.addr(), mr1.rkey(),
						     me.attach().rv_index, 1});
		ASSERT_EQ(child.chan().expect_body<std::uint32_t>(msg_written, seconds(120)), 0u);
		ASSERT_EQ(me.wait_events(1, seconds(60)).size(), 1u);
		EXPECT_FALSE(check_pattern(y.bytes() + write_off, write_len, 1))
			<< "the first write did not land in the old pages";
	}

	// Replace X's pages: a new memfd mapped over the same address.
	const rv::CacheStats before = me.dev().cache_stats();
	const std::uint64_t rx_before = rcvd_pkts(n1.dev);
	rv::UniqueFd new_fd = new_memfd("rv-new");
	ASSERT_EQ(map_fd(new_fd.get(), x.data()), x.data());

	rv::MemoryRegion mr2 = me.dev().reg_mem(x.data(), buf_len,
						rv::access::psm3_recv);
	const rv::CacheStats after = me.dev().cache_stats();
	EXPECT_NE(mr2.handle(), mr1_handle) << "REG_MEM after the remap hit the old MR";
	EXPECT_EQ(after.miss, before.miss + 1) << "REG_MEM after the remap was not a miss";

	child.chan().send(msg_target, Target{x.addr(), mr2.rkey(),
					     me.attach().rv_index, 2});
	ASSERT_EQ(child.chan().expect_body<std::uint32_t>(msg_written, seconds(120)), 0u);
	const std::vector<rv::Event> evs = me.wait_events(1, seconds(60));
	ASSERT_EQ(evs.size(), 1u);
	EXPECT_EQ(evs[0].event_type, RV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(evs[0].byte_len, write_len);

	const auto bad_new = check_pattern(x.bytes() + write_off, write_len, 2);
	EXPECT_FALSE(bad_new) << "the write is not in the new pages (first bad byte "
			      << bad_new.value_or(0) << ")";
	EXPECT_FALSE(check_pattern(y.bytes() + write_off, write_len, 1))
		<< "the second write changed the old pages";
	EXPECT_GE(rcvd_pkts(n1.dev) - rx_before, write_len / 4096)
		<< "rcvd_pkts of " << n1.dev << " did not rise: the data did not cross";

	child.chan().send(msg_fin);
	const Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}
