// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::AttachParams: PSM3's defaults and the structs they become; the
// Device calls that need the module fail cleanly without it.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <system_error>

#include <rv/attach.hpp>
#include <rv/device.hpp>
#include <rv/memory_region.hpp>

namespace {

template <typename F>
std::system_error catch_system_error(F &&f)
{
	try {
		f();
	} catch (const std::system_error &e) {
		return e;
	}
	ADD_FAILURE() << "no std::system_error thrown";
	return std::system_error(0, std::generic_category());
}

bool mentions(const std::system_error &e, const char *what)
{
	return std::string(e.what()).find(what) != std::string::npos;
}

} // namespace

TEST(AttachParams, DefaultsArePsm3s)
{
	rv::AttachParams p;

	EXPECT_EQ(p.rdma_mode, RV_RDMA_MODE_KERNEL);
	EXPECT_EQ(p.port_num, 1);
	EXPECT_EQ(p.num_conn, 0);
	EXPECT_EQ(p.q_depth, 0u);
	EXPECT_EQ(p.mr_cache_size, 0u);
	EXPECT_EQ(p.index_bits, 9);
	EXPECT_EQ(p.cq_entries, 192u);
	EXPECT_EQ(p.reconnect_timeout, 30u);
	EXPECT_EQ(p.hb_interval, 1000u);
	EXPECT_EQ(p.fr_page_list_len, 1024u);
	EXPECT_EQ(p.service_id, 0x1000125500000001ULL);
	EXPECT_EQ(p.job_key_len, RV_MAX_JOB_KEY_LEN);
	EXPECT_EQ(p.context, 0u);
}

TEST(AttachParams, ToUapi)
{
	rv::AttachParams p;
	p.dev_name = "rxe0";
	p.port_num = 1;
	p.loc_addr = 0x0a4d0101;
	p.loc_gid_index = 3;
	p.loc_gid = rv::ipv4_mapped_gid(0x0a4d0101);
	for (std::size_t i = 0; i < p.job_key.size(); i++)
		p.job_key[i] = static_cast<std::uint8_t>(i + 1);
	p.context = 0x1234;
	p.rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU;

	rv_attach_params_in in = p.to_uapi();
	EXPECT_STREQ(in.dev_name, "rxe0");
	for (std::size_t i = 4; i < sizeof(in.dev_name); i++)
		EXPECT_EQ(in.dev_name[i], 0) << i;
	EXPECT_EQ(in.rdma_mode, RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU);
	EXPECT_EQ(in.port_num, 1);
	EXPECT_EQ(in.loc_addr, 0x0a4d0101u);
	EXPECT_EQ(in.index_bits, 9);
	EXPECT_EQ(in.loc_gid_index, 3);
	EXPECT_EQ(std::memcmp(in.loc_gid, p.loc_gid.data(), 16), 0);
	EXPECT_EQ(in.loc_gid[10], 0xff);
	EXPECT_EQ(in.loc_gid[15], 0x01);
	EXPECT_EQ(std::memcmp(in.job_key, p.job_key.data(), 16), 0);
	EXPECT_EQ(in.job_key_len, 16);
	EXPECT_EQ(in.service_id, 0x1000125500000001ULL);
	EXPECT_EQ(in.context, 0x1234u);
	EXPECT_EQ(in.cq_entries, 192u);
	EXPECT_EQ(in.q_depth, 0u);
	EXPECT_EQ(in.reconnect_timeout, 30u);
	EXPECT_EQ(in.hb_interval, 1000u);
	EXPECT_EQ(in.fr_page_list_len, 1024u);
	EXPECT_EQ(in.resv1, 0);
	EXPECT_EQ(in.resv2, 0);
	for (auto b : in.resv3)
		EXPECT_EQ(b, 0);
	EXPECT_EQ(in.resv4, 0u);

	rv_attach_params_r5_in r5 = p.to_uapi_r5();
	static_assert(sizeof(r5) + 8 == sizeof(in));
	EXPECT_EQ(std::memcmp(&r5, &in, sizeof(r5)), 0)
		<< "the R5 form is the same prefix";
}

TEST(AttachParams, JobKeyLenPassesThrough)
{
	rv::AttachParams p;
	p.dev_name = "x";
	p.job_key_len = 200;	// the module refuses it, not the library
	EXPECT_EQ(p.to_uapi().job_key_len, 200);
}

TEST(AttachParams, DeviceNameMustFit)
{
	rv::AttachParams p;
	p.dev_name = std::string(RV_MAX_DEV_NAME_LEN - 1, 'd');
	EXPECT_EQ(p.to_uapi().dev_name[RV_MAX_DEV_NAME_LEN - 1], 0);

	p.dev_name = std::string(RV_MAX_DEV_NAME_LEN, 'd');
	auto e = catch_system_error([&] { (void)p.to_uapi(); });
	EXPECT_EQ(e.code().value(), ENAMETOOLONG);
	auto e2 = catch_system_error([&] { (void)p.to_uapi_r5(); });
	EXPECT_EQ(e2.code().value(), ENAMETOOLONG);
}

TEST(AttachParams, ForRoceNeedsTheGid)
{
	const char *none = "/nonexistent-rv-test";
	auto e = catch_system_error(
		[&] { (void)rv::AttachParams::for_roce("rxe0", 1, {}, none); });
	EXPECT_EQ(e.code().value(), ENOENT);
	EXPECT_TRUE(mentions(e, "rxe0")) << e.what();
}

TEST(JobKey, RandomUuidV4)
{
	std::set<rv::JobKey> seen;
	for (int i = 0; i < 100; i++) {
		rv::JobKey k = rv::random_job_key();
		EXPECT_EQ(k[6] >> 4, 4) << "version 4";
		EXPECT_EQ(k[8] >> 6, 2) << "variant 10";
		EXPECT_TRUE(seen.insert(k).second);
	}
}

TEST(Attach, FromUapi)
{
	rv_attach_params_out out{};
	out.rv_index = 3;
	out.mr_cache_size = 256;
	out.q_depth = 4000;
	out.reconnect_timeout = 30;
	out.max_fmr_size = 1ULL << 28;
	rv::Attach a = rv::Attach::from_uapi(out);
	EXPECT_EQ(a, (rv::Attach{3, 256, 4000, 30, 1ULL << 28}));
}

// Without the module: every new call names its ioctl and carries the
// errno; nothing is recorded on failure.
TEST(DeviceWithoutModule, NewIoctlsThrowEnotty)
{
	rv::Device dev("/dev/null");
	rv::AttachParams p;
	p.dev_name = "rxe0";

	auto e = catch_system_error([&] { (void)dev.attach(p); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	EXPECT_TRUE(mentions(e, "RV_IOCTL_ATTACH")) << e.what();
	EXPECT_FALSE(dev.attachment());
	e = catch_system_error([&] { (void)dev.attach(p, rv::AttachForm::r5); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_ATTACH_R5")) << e.what();

	int x = 0;
	e = catch_system_error([&] { (void)dev.reg_mem(&x, sizeof(x), 0); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	EXPECT_TRUE(mentions(e, "RV_IOCTL_REG_MEM")) << e.what();
	e = catch_system_error(
		[&] { (void)dev.reg_mem(&x, sizeof(x), 0, rv::RegMemForm::r4); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_REG_MEM_R4")) << e.what();
	e = catch_system_error(
		[&] { (void)dev.reg_mem(&x, sizeof(x), 0, rv::RegMemForm::r1); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_REG_MEM_R1")) << e.what();

	e = catch_system_error([&] { dev.dereg_mem(1, 2, 3, 4); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_DEREG_MEM")) << e.what();
	// ENOTTY is an error, not "nothing to evict".
	e = catch_system_error([&] { (void)dev.evict_exact(1, 2, 3); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_EVICT")) << e.what();
	e = catch_system_error([&] { (void)dev.evict_range(1, 2); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	e = catch_system_error([&] { (void)dev.evict_amount(1, 2); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	e = catch_system_error([&] { (void)dev.cache_stats(); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_GET_CACHE_STATS")) << e.what();
	e = catch_system_error([&] { (void)dev.event_stats(); });
	EXPECT_TRUE(mentions(e, "RV_IOCTL_GET_EVENT_STATS")) << e.what();

	EXPECT_FALSE(dev.declared_abi());
	(void)catch_system_error([&] { (void)dev.capability(); });
	EXPECT_FALSE(dev.declared_abi()) << "recorded a failed CAPABILITY";
	EXPECT_EQ(dev.event_layout(), rv::EventLayout::legacy);
}

TEST(MemoryRegion, EmptyHandle)
{
	rv::MemoryRegion mr;
	EXPECT_FALSE(mr.valid());
	EXPECT_NO_THROW(mr.release());
	mr.reset();
	rv::MemoryRegion moved(std::move(mr));
	EXPECT_FALSE(moved.valid());
}
