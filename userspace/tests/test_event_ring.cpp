// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::RingView, the event ring consumer, over plain memory: both entry
// layouts, wraparound, capacity, a corrupted header, and a producer
// thread that publishes the way the module does.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <thread>
#include <vector>

#include <rv/device.hpp>
#include <rv/event_ring.hpp>

namespace rv {

// Names the layout in test parameters.
void PrintTo(EventLayout l, std::ostream *os)
{
	*os << (l == EventLayout::abi_1_7 ? "abi_1_7" : "legacy");
}

} // namespace rv

namespace {

using rv::Event;
using rv::EventLayout;

// Memory for a ring of n entries, 64-byte aligned, filled with junk.
struct RingMemory {
	explicit RingMemory(std::uint32_t n, EventLayout l)
		: bytes(rv::ring_alloc_len(l, n) + 64)
	{
		std::memset(bytes.data(), 0xee, bytes.size());
		std::memset(data(), 0, rv::ring_header_size);
	}
	std::byte *data()
	{
		auto p = reinterpret_cast<std::uintptr_t>(bytes.data());
		return bytes.data() + ((64 - p % 64) % 64);
	}
	std::span<std::byte> span(std::uint32_t n, EventLayout l)
	{
		return {data(), rv::ring_alloc_len(l, n)};
	}
	std::vector<std::byte> bytes;
};

// The producer side, as the module does it: write the entry, then
// publish tail with release ordering. Returns false when full.
class Producer {
public:
	Producer(std::byte *base, std::uint32_t n, EventLayout l)
		: base_(base), n_(n), l_(l) {}

	bool push(const Event &ev)
	{
		std::uint32_t t = tail().load(std::memory_order_relaxed);
		std::uint32_t next = t + 1 == n_ ? 0 : t + 1;
		if (next == head().load(std::memory_order_acquire)) {
			overflow().fetch_add(1, std::memory_order_relaxed);
			return false;
		}
		rv::encode_event(base_ + rv::ring_header_size +
					 std::size_t{t} * rv::event_stride(l_),
				 ev, l_);
		tail().store(next, std::memory_order_release);
		return true;
	}

private:
	std::atomic_ref<std::uint32_t> head()
	{
		return std::atomic_ref<std::uint32_t>(
			*reinterpret_cast<std::uint32_t *>(base_));
	}
	std::atomic_ref<std::uint32_t> tail()
	{
		return std::atomic_ref<std::uint32_t>(
			*reinterpret_cast<std::uint32_t *>(base_ + 4));
	}
	std::atomic_ref<std::uint64_t> overflow()
	{
		return std::atomic_ref<std::uint64_t>(
			*reinterpret_cast<std::uint64_t *>(base_ + 8));
	}

	std::byte *base_;
	std::uint32_t n_;
	EventLayout l_;
};

Event make_event(std::uint64_t i)
{
	Event ev;
	ev.event_type = static_cast<std::uint8_t>(i & 1);
	ev.status = static_cast<std::uint8_t>(i % 23);
	ev.imm_data = static_cast<std::uint32_t>(0x80000000u | i);
	ev.wr_id = 0x1122334455667788ULL ^ i;
	ev.conn_handle = 0xa0b0c0d0e0f00000ULL + i;
	ev.byte_len = static_cast<std::uint32_t>(i * 4096 + 7);
	return ev;
}

class RingLayouts : public testing::TestWithParam<EventLayout> {};

} // namespace

TEST(EventLayout, FollowsDeclaredAndModuleAbi)
{
	using rv::Version;
	EXPECT_EQ(rv::event_layout_for(std::nullopt, std::nullopt), EventLayout::legacy);
	EXPECT_EQ(rv::event_layout_for(Version{1, 2}, Version{1, 7}), EventLayout::legacy);
	EXPECT_EQ(rv::event_layout_for(Version{1, 6}, Version{1, 7}), EventLayout::legacy);
	EXPECT_EQ(rv::event_layout_for(Version{1, 7}, Version{1, 7}), EventLayout::abi_1_7);
	EXPECT_EQ(rv::event_layout_for(Version{1, 8}, Version{1, 7}), EventLayout::abi_1_7);
	EXPECT_EQ(rv::event_layout_for(Version{2, 0}, Version{1, 9}), EventLayout::abi_1_7);
	// An older module writes 65-byte entries whatever the client says.
	EXPECT_EQ(rv::event_layout_for(Version{1, 7}, Version{1, 6}), EventLayout::legacy);
	EXPECT_EQ(rv::event_layout_for(Version{1, 7}, std::nullopt), EventLayout::abi_1_7);
}

TEST(EventLayout, SizesMatchTheHeader)
{
	EXPECT_EQ(rv::event_stride(EventLayout::abi_1_7), 64u);
	EXPECT_EQ(rv::event_stride(EventLayout::legacy), 65u);
	EXPECT_EQ(rv::ring_header_size, 64u);
	EXPECT_EQ(rv::ring_alloc_len(EventLayout::abi_1_7, 4000), 256064u);
	EXPECT_EQ(rv::ring_alloc_len(EventLayout::legacy, 4000), 260064u);
	EXPECT_EQ(rv::ring_alloc_len(EventLayout::abi_1_7, 0), 64u);
}

TEST(EventCodec, CurrentLayoutOffsets)
{
	std::byte e[64];
	Event ev = make_event(5);
	rv::encode_event(e, ev, EventLayout::abi_1_7);

	// The documented offsets of struct rv_event.
	rv_event raw;
	std::memcpy(&raw, e, sizeof(raw));
	EXPECT_EQ(raw.event_type, ev.event_type);
	EXPECT_EQ(raw.wc.status, ev.status);
	EXPECT_EQ(raw.wc.imm_data, ev.imm_data);
	EXPECT_EQ(raw.wc.wr_id, ev.wr_id);
	EXPECT_EQ(raw.wc.conn_handle, ev.conn_handle);
	EXPECT_EQ(raw.wc.byte_len, ev.byte_len);
	EXPECT_EQ(rv::decode_event(e, EventLayout::abi_1_7), ev);
}

TEST(EventCodec, LegacyLayoutOffsets)
{
	// 65 bytes: type 0, status 1, imm_data 4, wr_id 9, conn_handle 17,
	// byte_len 25, unaligned.
	std::byte e[65 + 1];
	std::byte *p = e + 1;	// deliberately misaligned
	std::memset(e, 0, sizeof(e));
	p[0] = std::byte{1};
	p[1] = std::byte{12};
	std::uint32_t imm = 0xdeadbeef;
	std::uint64_t wr = 0x0102030405060708ULL, conn = 0x1112131415161718ULL;
	std::uint32_t len = 65536;
	std::memcpy(p + 4, &imm, 4);
	std::memcpy(p + 9, &wr, 8);
	std::memcpy(p + 17, &conn, 8);
	std::memcpy(p + 25, &len, 4);

	Event ev = rv::decode_event(p, EventLayout::legacy);
	EXPECT_EQ(ev.event_type, 1);
	EXPECT_EQ(ev.status, 12);
	EXPECT_EQ(ev.imm_data, imm);
	EXPECT_EQ(ev.wr_id, wr);
	EXPECT_EQ(ev.conn_handle, conn);
	EXPECT_EQ(ev.byte_len, len);

	std::byte again[65];
	rv::encode_event(again, ev, EventLayout::legacy);
	EXPECT_EQ(std::memcmp(again, p, 65), 0);
}

TEST_P(RingLayouts, EmptyRing)
{
	const EventLayout l = GetParam();
	RingMemory mem(8, l);
	rv::RingView ring(mem.span(8, l), 8, l);

	EXPECT_EQ(ring.cq_entries(), 8u);
	EXPECT_EQ(ring.capacity(), 7u);
	EXPECT_EQ(ring.layout(), l);
	EXPECT_EQ(ring.pending(), 0u);
	EXPECT_EQ(ring.overflow_count(), 0u);
	EXPECT_FALSE(ring.poll());
	EXPECT_EQ(ring.head(), 0u);
}

TEST_P(RingLayouts, FifoWithWraparound)
{
	const EventLayout l = GetParam();
	constexpr std::uint32_t n = 5;
	RingMemory mem(n, l);
	rv::RingView ring(mem.span(n, l), n, l);
	Producer prod(mem.data(), n, l);

	std::uint64_t next_in = 0, next_out = 0;
	// Irregular batches so that head and tail wrap at every offset.
	for (std::uint32_t batch : {1u, 3u, 4u, 2u, 4u, 1u, 3u, 4u, 4u, 2u}) {
		for (std::uint32_t i = 0; i < batch; i++)
			ASSERT_TRUE(prod.push(make_event(next_in++)));
		EXPECT_EQ(ring.pending(), batch);
		for (std::uint32_t i = 0; i < batch; i++) {
			auto ev = ring.poll();
			ASSERT_TRUE(ev);
			EXPECT_EQ(*ev, make_event(next_out++));
		}
		EXPECT_FALSE(ring.poll());
		EXPECT_LT(ring.head(), n);
	}
	EXPECT_EQ(next_out, next_in);
	EXPECT_EQ(ring.head(), ring.tail());
	EXPECT_EQ(ring.head(), next_in % n);
}

TEST_P(RingLayouts, HoldsCqEntriesMinusOne)
{
	const EventLayout l = GetParam();
	constexpr std::uint32_t n = 4;
	RingMemory mem(n, l);
	rv::RingView ring(mem.span(n, l), n, l);
	Producer prod(mem.data(), n, l);

	for (std::uint64_t i = 0; i < n - 1; i++)
		ASSERT_TRUE(prod.push(make_event(i)));
	EXPECT_FALSE(prod.push(make_event(99))) << "full at cq_entries - 1";
	EXPECT_EQ(ring.overflow_count(), 1u);
	EXPECT_EQ(ring.pending(), n - 1);

	std::vector<Event> got;
	EXPECT_EQ(ring.drain([&](const Event &ev) { got.push_back(ev); }), n - 1);
	ASSERT_EQ(got.size(), n - 1);
	for (std::uint64_t i = 0; i < n - 1; i++)
		EXPECT_EQ(got[i], make_event(i));
	// Room again.
	EXPECT_TRUE(prod.push(make_event(7)));
	EXPECT_EQ(ring.drain([](const Event &) {}, 0), 0u);
	EXPECT_EQ(ring.pending(), 1u);
}

TEST_P(RingLayouts, HeadIsStoredInTheHeader)
{
	const EventLayout l = GetParam();
	RingMemory mem(8, l);
	rv::RingView ring(mem.span(8, l), 8, l);
	Producer prod(mem.data(), 8, l);

	prod.push(make_event(1));
	prod.push(make_event(2));
	ASSERT_TRUE(ring.poll());
	rv_ring_header h;
	std::memcpy(&h, mem.data(), sizeof(h));
	EXPECT_EQ(h.head, 1u);
	EXPECT_EQ(h.tail, 2u);
	// The entries after the consumed one are untouched by the consumer.
	EXPECT_EQ(rv::decode_event(ring.entry(1), l), make_event(2));
}

TEST_P(RingLayouts, CorruptHeaderIsRefused)
{
	const EventLayout l = GetParam();
	constexpr std::uint32_t n = 8;
	RingMemory mem(n, l);
	rv::RingView ring(mem.span(n, l), n, l);
	auto *hdr = reinterpret_cast<std::uint32_t *>(mem.data());

	for (auto [head, tail] : {std::pair{n, 0u}, std::pair{0u, n},
				  std::pair{0xffffffffu, 0x7fffffffu},
				  std::pair{3u, 0x80000000u}}) {
		SCOPED_TRACE(testing::Message() << head << "/" << tail);
		hdr[0] = head;
		hdr[1] = tail;
		try {
			(void)ring.poll();
			ADD_FAILURE() << "poll() accepted the header";
		} catch (const std::system_error &e) {
			EXPECT_EQ(e.code().value(), EBADMSG);
		}
		EXPECT_THROW((void)ring.pending(), std::system_error);
		EXPECT_EQ(hdr[0], head) << "poll() wrote head";
	}
	// In range but wrong is just a consumer's own loss: events between.
	hdr[0] = 6;
	hdr[1] = 2;
	EXPECT_EQ(ring.pending(), 4u);
	EXPECT_TRUE(ring.poll());
	EXPECT_EQ(ring.head(), 7u);
}

TEST_P(RingLayouts, ConcurrentProducerAndConsumer)
{
	const EventLayout l = GetParam();
	constexpr std::uint32_t n = 16;
	constexpr std::uint64_t total = 200000;
	RingMemory mem(n, l);
	rv::RingView ring(mem.span(n, l), n, l);

	std::thread producer([&] {
		Producer prod(mem.data(), n, l);
		for (std::uint64_t i = 0; i < total;) {
			if (prod.push(make_event(i)))
				i++;
			else
				std::this_thread::yield();
		}
	});

	std::uint64_t next = 0, bad = 0;
	while (next < total) {
		auto ev = ring.poll();
		if (!ev) {
			std::this_thread::yield();
			continue;
		}
		if (!(*ev == make_event(next)))
			bad++;
		next++;
	}
	producer.join();
	EXPECT_EQ(bad, 0u) << "torn or reordered events";
	EXPECT_FALSE(ring.poll());
}

INSTANTIATE_TEST_SUITE_P(, RingLayouts,
			 testing::Values(EventLayout::abi_1_7, EventLayout::legacy),
			 [](const testing::TestParamInfo<EventLayout> &i) {
				 return i.param == EventLayout::abi_1_7
						? std::string("Abi17")
						: std::string("Legacy");
			 });

TEST(RingView, RefusesBadMemory)
{
	RingMemory mem(8, EventLayout::abi_1_7);
	auto expect_einval = [](auto &&f) {
		try {
			f();
			ADD_FAILURE() << "accepted";
		} catch (const std::system_error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
		}
	};

	expect_einval([&] {
		rv::RingView r(mem.span(8, EventLayout::abi_1_7).first(100), 8,
			       EventLayout::abi_1_7);
	});
	expect_einval([&] {	// the legacy ring is longer
		rv::RingView r(mem.span(8, EventLayout::abi_1_7), 8,
			       EventLayout::legacy);
	});
	expect_einval([&] {
		rv::RingView r(mem.span(8, EventLayout::abi_1_7), 1,
			       EventLayout::abi_1_7);
	});
	expect_einval([&] {
		rv::RingView r({mem.data() + 4, 1000}, 4, EventLayout::abi_1_7);
	});
}

TEST(RingView, MovedFromIsEmpty)
{
	RingMemory mem(8, EventLayout::abi_1_7);
	rv::RingView a(mem.span(8, EventLayout::abi_1_7), 8, EventLayout::abi_1_7);
	rv::RingView b(std::move(a));

	EXPECT_TRUE(b.valid());
	EXPECT_FALSE(a.valid());	// NOLINT(bugprone-use-after-move)
	EXPECT_THROW((void)a.poll(), std::system_error);
	EXPECT_FALSE(b.poll());
}

TEST(EventRing, MapNeedsAnAttach)
{
	rv::Device dev("/dev/null");
	try {
		(void)rv::EventRing::map(dev);
		ADD_FAILURE() << "mapped without an attach";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
}

TEST(EventRing, MmapErrorIsReported)
{
	// /dev/null cannot be mapped shared read-write: ENODEV.
	rv::Device dev("/dev/null");
	try {
		rv::EventRing ring(dev.fd(), 8, EventLayout::abi_1_7);
		ADD_FAILURE() << "mapped /dev/null";
	} catch (const std::system_error &e) {
		EXPECT_NE(e.code().value(), 0);
		EXPECT_NE(std::string(e.what()).find("mmap"), std::string::npos);
	}
}
