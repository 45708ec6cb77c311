// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// RV_IOCTL_ATTACH and _R5: PSM3's defaults, the values in use, and every
// error of the validation order in docs/attach.md, each leaving
// no trace (the same file attaches afterwards, and gets rv_index 0 in a
// job nobody else holds).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/device.hpp>
#include <rv/mapping.hpp>

#include "../support/subprocess.hpp"
#include "vm_env.hpp"

using rv::test::attach_new;
using rv::test::ioctl_errno;
using rv::test::older_form_errno;
using rv::test::open_declared;
using rv::test::params_for;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

static_assert(offsetof(rv_attach_params_in, fr_page_list_len) ==
	      sizeof(rv_attach_params_r5_in),
	      "the R5 form is a prefix of the current one");

// ATTACH with exactly these bytes, in the given form (the R5 form gets the
// common prefix of in). Returns 0 or the errno.
int raw_attach(int fd, const rv_attach_params_in &in,
	       rv::AttachForm form = rv::AttachForm::current)
{
	if (form == rv::AttachForm::r5) {
		rv_attach_params_r5 p{};
		std::memcpy(&p.in, &in, sizeof(p.in));
		return ioctl_errno(fd, RV_IOCTL_ATTACH_R5, &p);
	}
	rv_attach_params p{};
	p.in = in;
	return ioctl_errno(fd, RV_IOCTL_ATTACH, &p);
}

const char *form_name(rv::AttachForm f)
{
	return f == rv::AttachForm::r5 ? "ATTACH_R5" : "ATTACH";
}

void set_name(rv_attach_params_in &in, const std::string &name)
{
	std::memset(in.dev_name, 0, sizeof(in.dev_name));
	std::memcpy(in.dev_name, name.data(),
		    std::min(name.size(), sizeof(in.dev_name)));
}

struct Case {
	std::string name;
	std::function<void(rv_attach_params_in &)> mutate;
	int err;
	bool current_only = false;	// a field the R5 form does not have
};

// The cases of invalid_cases(), group by group (the numbers are those of
// ATTACH's checks, in their order).
struct Cases {
	std::vector<Case> list;

	void add(std::string name, int err, std::function<void(rv_attach_params_in &)> f,
		 bool current_only = false)
	{
		list.push_back({std::move(name), std::move(f), err, current_only});
	}
};

// Reserved fields and rdma_mode.
void reserved_and_mode_cases(Cases &c)
{
	// 3. reserved fields
	c.add("resv1", EINVAL, [](auto &in) { in.resv1 = 1; });
	c.add("resv2", EINVAL, [](auto &in) { in.resv2 = 0x80; });
	for (std::size_t i = 0; i < sizeof(rv_attach_params_in::resv3); i++)
		c.add("resv3[" + std::to_string(i) + "]", EINVAL,
		      [i](auto &in) { in.resv3[i] = 1; });
	c.add("resv4", EINVAL, [](auto &in) { in.resv4 = 1; }, true);
	c.add("resv4 high bit", EINVAL,
	      [](auto &in) { in.resv4 = 0x80000000u; }, true);

	// 4. rdma_mode
	c.add("rdma_mode 0x40", EINVAL, [](auto &in) { in.rdma_mode = 0x41; });
	c.add("rdma_mode 0x80", EINVAL, [](auto &in) { in.rdma_mode = 0x81; });
	c.add("rdma_mode 0xff", EINVAL, [](auto &in) { in.rdma_mode = 0xff; });
	c.add("rdma_mode USER", EOPNOTSUPP,
	      [](auto &in) { in.rdma_mode = RV_RDMA_MODE_USER; });
	// The upstream form has no UPSIZE_CPU: a bit outside the mask.
	c.add("rdma_mode USER|UPSIZE_CPU", older_form_errno(EOPNOTSUPP),
	      [](auto &in) {
		      in.rdma_mode = RV_RDMA_MODE_USER | RV_RDMA_MODE_UPSIZE_CPU;
	      });
	c.add("rdma_mode 2", EINVAL, [](auto &in) { in.rdma_mode = 2; });
	c.add("rdma_mode 2|UPSIZE_CPU", EINVAL,
	      [](auto &in) { in.rdma_mode = 2 | RV_RDMA_MODE_UPSIZE_CPU; });
	c.add("rdma_mode 0x1f", EINVAL, [](auto &in) { in.rdma_mode = 0x1f; });
	// Order: bits outside the mask before the USER check.
	c.add("rdma_mode USER|0x40", EINVAL,
	      [](auto &in) { in.rdma_mode = RV_RDMA_MODE_USER | 0x40; });
}

// dev_name and the ranges of the numbers.
void name_and_range_cases(Cases &c, const rv::test::Node &n)
{
	// 5. dev_name
	c.add("dev_name empty", EINVAL, [](auto &in) { set_name(in, ""); });
	c.add("dev_name not NUL-terminated", EINVAL, [](auto &in) {
		std::memset(in.dev_name, 'r', sizeof(in.dev_name));
	});
	c.add("dev_name not NUL-terminated, real prefix", EINVAL, [n](auto &in) {
		std::memset(in.dev_name, ' ', sizeof(in.dev_name));
		std::memcpy(in.dev_name, n.dev.data(), n.dev.size());
	});

	// 6. ranges
	c.add("num_conn 17", EINVAL, [](auto &in) { in.num_conn = 17; });
	c.add("num_conn 255", EINVAL, [](auto &in) { in.num_conn = 255; });
	c.add("index_bits 13", EINVAL, [](auto &in) { in.index_bits = 13; });
	c.add("index_bits 255", EINVAL, [](auto &in) { in.index_bits = 255; });
	c.add("job_key_len 17", EINVAL, [](auto &in) { in.job_key_len = 17; });
	c.add("job_key_len 255", EINVAL, [](auto &in) { in.job_key_len = 255; });
	// A page list of one page holds no range at any offset.
	c.add("fr_page_list_len 1", EINVAL, [](auto &in) { in.fr_page_list_len = 1; },
	      true);
	c.add("cq_entries 1", EINVAL, [](auto &in) { in.cq_entries = 1; });
	c.add("cq_entries 10001", EINVAL,
	      [](auto &in) { in.cq_entries = RV_MAX_CQ_ENTRIES + 1; });
	c.add("cq_entries 0xffffffff", EINVAL,
	      [](auto &in) { in.cq_entries = 0xffffffffu; });
	c.add("q_depth 1", EINVAL, [](auto &in) { in.q_depth = 1; });
	c.add("q_depth 15", EINVAL, [](auto &in) { in.q_depth = 15; });
	c.add("q_depth 65537", EINVAL, [](auto &in) { in.q_depth = 65537; });
	c.add("q_depth 0xffffffff", EINVAL,
	      [](auto &in) { in.q_depth = 0xffffffffu; });
	c.add("mr_cache_size 1048577", EINVAL,
	      [](auto &in) { in.mr_cache_size = 1048577; });
	c.add("mr_cache_size 0xffffffff", EINVAL,
	      [](auto &in) { in.mr_cache_size = 0xffffffffu; });
}

// Heartbeats against the reconnect timeout, the device, the port.
void timing_device_port_cases(Cases &c, const rv::test::Node &n)
{
	// 7. heartbeats must come more often than the reconnect timeout
	c.add("reconnect 1 s, hb 1000 ms", EINVAL, [](auto &in) {
		in.reconnect_timeout = 1;
		in.hb_interval = 1000;
	});
	c.add("reconnect 2 s, hb 5000 ms", EINVAL, [](auto &in) {
		in.reconnect_timeout = 2;
		in.hb_interval = 5000;
	});
	c.add("reconnect 60 s, hb 60000 ms", EINVAL, [](auto &in) {
		in.reconnect_timeout = 60;
		in.hb_interval = 60000;
	});

	// 8. device
	c.add("unknown device", ENODEV,
	      [](auto &in) { set_name(in, "rv_no_such_dev0"); });
	c.add("device name prefix", ENODEV, [n](auto &in) {
		set_name(in, n.dev.substr(0, n.dev.size() - 1));
	});
	c.add("device name with trailing space", ENODEV,
	      [n](auto &in) { set_name(in, n.dev + " "); });

	// 9. port
	c.add("port 0", EINVAL, [](auto &in) { in.port_num = 0; });
	c.add("port 2", EINVAL, [](auto &in) { in.port_num = 2; });
	c.add("port 255", EINVAL, [](auto &in) { in.port_num = 255; });
}

// The GID and its index.
void gid_cases(Cases &c, const rv::test::Node &n)
{
	// 10. GID
	c.add("gid_index 0xffff", ENOENT,
	      [](auto &in) { in.loc_gid_index = 0xffff; });
	std::size_t table = rv::RdmaSysfs().gid_table_len(n.dev, 1);
	if (table) {
		c.add("gid_index = table length", ENOENT, [table](auto &in) {
			in.loc_gid_index = static_cast<std::uint16_t>(table);
		});
		if (table > 1)
			c.add("gid_index of another entry", ENOENT, [n](auto &in) {
				in.loc_gid_index = n.gid_index ? 0 : 1;
			});
	}
	c.add("gid last byte wrong", ENOENT, [](auto &in) { in.loc_gid[15] ^= 1; });
	c.add("gid first byte wrong", ENOENT, [](auto &in) { in.loc_gid[0] ^= 0x80; });
	c.add("gid zero", ENOENT,
	      [](auto &in) { std::memset(in.loc_gid, 0, sizeof(in.loc_gid)); });
}

// Several wrong fields: the first check that fails wins.
void order_cases(Cases &c)
{
	// First failure wins.
	c.add("order: resv1 before rdma_mode USER", EINVAL, [](auto &in) {
		in.resv1 = 1;
		in.rdma_mode = RV_RDMA_MODE_USER;
	});
	c.add("order: rdma_mode USER before dev_name", EOPNOTSUPP, [](auto &in) {
		in.rdma_mode = RV_RDMA_MODE_USER;
		set_name(in, "");
	});
	c.add("order: num_conn before unknown device", EINVAL, [](auto &in) {
		in.num_conn = 17;
		set_name(in, "rv_no_such_dev0");
	});
	c.add("order: hb/reconnect before unknown device", EINVAL, [](auto &in) {
		in.reconnect_timeout = 1;
		in.hb_interval = 1000;
		set_name(in, "rv_no_such_dev0");
	});
	c.add("order: unknown device before port 0", ENODEV, [](auto &in) {
		set_name(in, "rv_no_such_dev0");
		in.port_num = 0;
	});
	c.add("order: port 0 before wrong GID", EINVAL, [](auto &in) {
		in.port_num = 0;
		in.loc_gid[15] ^= 1;
	});
}

std::vector<Case> invalid_cases(const rv::test::Node &n)
{
	Cases c;
	reserved_and_mode_cases(c);
	name_and_range_cases(c, n);
	timing_device_port_cases(c, n);
	gid_cases(c, n);
	order_cases(c);
	return std::move(c.list);
}

} // namespace

TEST(Attach, Psm3DefaultsWork)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);

	// AttachParams starts as what PSM3 sends.
	EXPECT_EQ(p.rdma_mode, RV_RDMA_MODE_KERNEL);
	EXPECT_EQ(p.num_conn, 0);
	EXPECT_EQ(p.q_depth, 0u);
	EXPECT_EQ(p.mr_cache_size, 0u);
	EXPECT_EQ(p.index_bits, 9);
	EXPECT_EQ(p.cq_entries, 192u);
	EXPECT_EQ(p.reconnect_timeout, 30u);
	EXPECT_EQ(p.hb_interval, 1000u);
	EXPECT_EQ(p.fr_page_list_len, 1024u);
	EXPECT_EQ(p.service_id, 0x1000125500000001ULL);
	EXPECT_EQ(p.job_key_len, 16);
	EXPECT_TRUE(rv::is_ipv4_mapped(p.loc_gid)) << rv::format_gid(p.loc_gid);
	EXPECT_EQ(rv::gid_ipv4(p.loc_gid), p.loc_addr);

	rv::Device dev = open_declared();
	rv::Attach a = dev.attach(p);
	EXPECT_EQ(a.rv_index, 0u);
	EXPECT_EQ(a.mr_cache_size, 256u);
	EXPECT_EQ(a.q_depth, 4000u);
	EXPECT_EQ(a.reconnect_timeout, 30u);
	EXPECT_GT(a.max_fmr_size, 0u);
	EXPECT_LE(a.max_fmr_size, 256 * MiB);

	ASSERT_TRUE(dev.attachment());
	EXPECT_EQ(dev.attachment()->out, a);
	EXPECT_EQ(dev.attachment()->cq_entries, 192u);

	rv::CacheStats s = dev.cache_stats();
	EXPECT_EQ(s.limit_cache_size, 256u);
	EXPECT_EQ(s.cache_size, 0u);
	EXPECT_EQ(s.count, 0u);
	EXPECT_EQ(s.hit + s.miss + s.full + s.failed, 0u);

	rv::EventStats e = dev.event_stats();
	EXPECT_EQ(e.send_write_cqe, 0u);
	EXPECT_EQ(e.send_write_cqe_fail, 0u);
	EXPECT_EQ(e.send_write_bytes, 0u);
	EXPECT_EQ(e.recv_write_cqe, 0u);
	EXPECT_EQ(e.recv_write_cqe_fail, 0u);
	EXPECT_EQ(e.recv_write_bytes, 0u);
}

TEST(Attach, Psm3DefaultsFromSysfs)
{
	// AttachParams::for_roce() finds the same GID the bench set up.
	RV_NODE_OR_SKIP(n, 0);
	if (!rv::RdmaSysfs().gid_table_len(n.dev, 1))
		GTEST_SKIP() << n.dev << " has no GID table in sysfs (a fake?)";
	rv::AttachParams p = rv::AttachParams::for_roce(n.dev, 1, n.ip);

	EXPECT_EQ(p.dev_name, n.dev);
	EXPECT_EQ(p.loc_gid_index, n.gid_index);
	EXPECT_EQ(p.loc_gid, rv::ipv4_mapped_gid(n.ip))
		<< rv::format_gid(p.loc_gid);
	EXPECT_EQ(p.loc_addr, n.ip);

	rv::Device dev = open_declared();
	EXPECT_EQ(dev.attach(p).rv_index, 0u);
}

TEST(Attach, R5FormWorks)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);

	rv::Device a = open_declared();
	if (rv::test::upstream_form()) {
		rv_attach_params_r5 r5{};
		r5.in = p.to_uapi_r5();
		EXPECT_EQ(ioctl_errno(a.fd(), RV_IOCTL_ATTACH_R5, &r5), EINVAL);
		return;
	}
	rv::Attach out = a.attach(p, rv::AttachForm::r5);
	EXPECT_EQ(out.rv_index, 0u);
	EXPECT_EQ(out.mr_cache_size, 256u);
	EXPECT_EQ(out.q_depth, 4000u);
	EXPECT_EQ(out.reconnect_timeout, 30u);
	EXPECT_GT(out.max_fmr_size, 0u);
	EXPECT_LE(out.max_fmr_size, 256 * MiB);

	// Raw R5 bytes (152 of them) into the same job, and the current form
	// too: one job-device.
	rv::Device b = open_declared(rv::Version{1, 5});
	rv_attach_params_r5 r5{};
	r5.in = p.to_uapi_r5();
	ASSERT_EQ(ioctl_errno(b.fd(), RV_IOCTL_ATTACH_R5, &r5), 0);
	EXPECT_EQ(r5.out.rv_index, 1u);
	EXPECT_EQ(r5.out.q_depth, 4000u);

	rv::Device c = open_declared();
	EXPECT_EQ(c.attach(p).rv_index, 2u);
	EXPECT_EQ(c.cache_stats().limit_cache_size, 256u);
	EXPECT_EQ(a.cache_stats().limit_cache_size, 256u);
}

TEST(Attach, UpsizeCpuUsesGpuCacheSize)
{
	RV_NODE_OR_SKIP(n, 0);
	rv::AttachParams p = params_for(n);
	p.rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU;

	rv::Device dev = open_declared();
	const std::string gpu_param = "/sys/module/rv/parameters/mr_cache_size_gpu";
	if (rv::test::upstream_form()) {
		rv_attach_params ap{};
		ap.in = p.to_uapi();
		EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, &ap), EINVAL);
		EXPECT_NE(::access(gpu_param.c_str(), F_OK), 0) << gpu_param;
		return;
	}
	EXPECT_EQ(rv::test::read_file(gpu_param), "1024\n");
	rv::Attach a = dev.attach(p);
	EXPECT_EQ(a.mr_cache_size, 1024u);
	EXPECT_GT(a.max_fmr_size, 0u);
	EXPECT_LE(a.max_fmr_size, 1024 * MiB);
	EXPECT_EQ(dev.cache_stats().limit_cache_size, 1024u);

	// A smaller explicit size wins over the upsized default; a larger
	// one is cut to it.
	p = params_for(n);
	p.rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU;
	p.mr_cache_size = 8;
	rv::Device dev2 = open_declared();
	EXPECT_EQ(dev2.attach(p).mr_cache_size, 8u);
	p.mr_cache_size = 4096;
	rv::Device dev3 = open_declared();
	EXPECT_EQ(dev3.attach(p).mr_cache_size, 1024u);
}

TEST(Attach, ExplicitValuesInUse)
{
	RV_NODE_OR_SKIP(n, 0);

	struct Want {
		const char *name;
		std::function<void(rv::AttachParams &)> set;
		std::function<void(const rv::Attach &)> check;
	};
	const std::vector<Want> cases = {
		{"mr_cache_size 1",
		 [](auto &p) { p.mr_cache_size = 1; },
		 [](const rv::Attach &a) {
			 EXPECT_EQ(a.mr_cache_size, 1u);
			 EXPECT_GT(a.max_fmr_size, 0u);
			 EXPECT_LE(a.max_fmr_size, MiB);
		 }},
		{"mr_cache_size 1048576 cut to the module's 256",
		 [](auto &p) { p.mr_cache_size = 1048576; },
		 [](const rv::Attach &a) {
			 EXPECT_EQ(a.mr_cache_size, 256u);
			 EXPECT_GT(a.max_fmr_size, 0u);
		 }},
		{"mr_cache_size 257 cut to the module's 256",
		 [](auto &p) { p.mr_cache_size = 257; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.mr_cache_size, 256u); }},
		{"mr_cache_size 256",
		 [](auto &p) { p.mr_cache_size = 256; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.mr_cache_size, 256u); }},
		{"q_depth 16", [](auto &p) { p.q_depth = 16; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.q_depth, 16u); }},
		{"q_depth 65536", [](auto &p) { p.q_depth = 65536; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.q_depth, 65536u); }},
		{"reconnect_timeout 1000 cut to 300",
		 [](auto &p) { p.reconnect_timeout = 1000; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.reconnect_timeout, 300u); }},
		{"reconnect_timeout 300",
		 [](auto &p) { p.reconnect_timeout = 300; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.reconnect_timeout, 300u); }},
		{"reconnect_timeout 0 (no recovery)",
		 [](auto &p) { p.reconnect_timeout = 0; },
		 [](const rv::Attach &a) { EXPECT_EQ(a.reconnect_timeout, 0u); }},
		{"reconnect_timeout 0xffffffff cut to 300",
		 [](auto &p) {
			 p.reconnect_timeout = 0xffffffffu;
			 p.hb_interval = 0;
		 },
		 [](const rv::Attach &a) { EXPECT_EQ(a.reconnect_timeout, 300u); }},
	};

	for (const auto &c : cases) {
		SCOPED_TRACE(c.name);
		rv::AttachParams p = params_for(n);
		c.set(p);
		rv::Device dev = open_declared();
		try {
			c.check(dev.attach(p));
		} catch (const std::system_error &e) {
			ADD_FAILURE() << e.what();
		}
	}
}

TEST(Attach, BoundaryValuesAccepted)
{
	RV_NODE_OR_SKIP(n, 0);

	const std::vector<std::pair<const char *,
				    std::function<void(rv::AttachParams &)>>>
		cases = {
			{"num_conn 16", [](auto &p) { p.num_conn = 16; }},
			{"num_conn 1", [](auto &p) { p.num_conn = 1; }},
			{"index_bits 12", [](auto &p) { p.index_bits = 12; }},
			{"index_bits 0", [](auto &p) { p.index_bits = 0; }},
			{"job_key_len 1", [](auto &p) { p.job_key_len = 1; }},
			{"cq_entries 0", [](auto &p) { p.cq_entries = 0; }},
			{"cq_entries 2", [](auto &p) { p.cq_entries = 2; }},
			{"cq_entries 10000",
			 [](auto &p) { p.cq_entries = RV_MAX_CQ_ENTRIES; }},
			{"hb_interval 1 (raised)", [](auto &p) { p.hb_interval = 1; }},
			{"hb_interval 0 (off)", [](auto &p) { p.hb_interval = 0; }},
			{"reconnect 1 s, hb 999 ms", [](auto &p) {
				 p.reconnect_timeout = 1;
				 p.hb_interval = 999;
			 }},
			{"reconnect 0, hb 60000 ms", [](auto &p) {
				 p.reconnect_timeout = 0;
				 p.hb_interval = 60000;
			 }},
			{"service_id 0 (default)", [](auto &p) { p.service_id = 0; }},
			{"fr_page_list_len 0", [](auto &p) { p.fr_page_list_len = 0; }},
			{"context", [](auto &p) { p.context = ~0ULL; }},
			{"loc_addr 0", [](auto &p) { p.loc_addr = 0; }},
		};

	for (const auto &[name, set] : cases) {
		SCOPED_TRACE(name);
		rv::AttachParams p = params_for(n);
		set(p);
		rv::Device dev = open_declared();
		try {
			EXPECT_EQ(dev.attach(p).rv_index, 0u);
		} catch (const std::system_error &e) {
			ADD_FAILURE() << e.what();
		}
	}
}

TEST(Attach, InvalidRequestsLeaveNoTrace)
{
	RV_NODE_OR_SKIP(n, 0);
	// One job key throughout: each valid attach after a failure must
	// get rv_index 0, so no failure kept an index or a job-device
	// with other parameters.
	const rv::AttachParams good = params_for(n);
	const rv_attach_params_in good_in = good.to_uapi();

	for (const auto &c : invalid_cases(n)) {
		for (auto form : rv::test::attach_forms()) {
			if (form == rv::AttachForm::r5 && c.current_only)
				continue;
			SCOPED_TRACE(std::string(form_name(form)) + ": " + c.name);
			rv::Device dev = open_declared();
			rv_attach_params_in in = good_in;
			c.mutate(in);
			EXPECT_EQ(raw_attach(dev.fd(), in, form), c.err)
				<< "expected " << std::strerror(c.err);
			// The input struct is not changed on failure either
			// (nothing copied back).
			try {
				EXPECT_EQ(dev.attach(good, form).rv_index, 0u);
			} catch (const std::system_error &e) {
				ADD_FAILURE() << "valid attach after the failure: "
					      << e.what();
			}
		}
	}
}

TEST(Attach, BadPointerIsEfault)
{
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams good = params_for(n);
	rv::Device dev = open_declared();
	void *bad = reinterpret_cast<void *>(std::uintptr_t{8});

	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, nullptr), EFAULT);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, bad), EFAULT);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH_R5, bad),
		  older_form_errno(EFAULT));

	// A struct whose last bytes lie on an unmapped page.
	const std::size_t pg = rv::page_size();
	rv::Mapping m = rv::Mapping::anonymous(2 * pg);
	ASSERT_EQ(::munmap(m.bytes() + pg, pg), 0);
	rv::Mapping first = rv::Mapping::adopt(m.release(), pg);
	auto *p = first.bytes() + pg - sizeof(rv_attach_params) / 2;
	rv_attach_params_in in = good.to_uapi();
	std::memcpy(p, &in, sizeof(rv_attach_params) / 2);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, p), EFAULT);

	EXPECT_EQ(dev.attach(good).rv_index, 0u);
}

TEST(Attach, SecondAttachIsEbusy)
{
	RV_NODE_OR_SKIP(n, 0);
	const rv::AttachParams p = params_for(n);
	rv::Device dev = open_declared();
	rv::Attach first = dev.attach(p);
	ASSERT_EQ(first.rv_index, 0u);

	rv_attach_params_in in = p.to_uapi();
	EXPECT_EQ(raw_attach(dev.fd(), in), EBUSY);
	EXPECT_EQ(raw_attach(dev.fd(), in, rv::AttachForm::r5),
		  older_form_errno(EBUSY));
	// Already attached comes before any check of the contents...
	in.resv1 = 1;
	in.rdma_mode = RV_RDMA_MODE_USER;
	EXPECT_EQ(raw_attach(dev.fd(), in), EBUSY);
	// ...but after copying them in.
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, nullptr), EFAULT);

	// A different job on the same file: still EBUSY.
	rv::AttachParams other = params_for(n);
	EXPECT_EQ(raw_attach(dev.fd(), other.to_uapi()), EBUSY);

	// The first attach is intact: it still holds index 0.
	EXPECT_EQ(dev.cache_stats().limit_cache_size, 256u);
	rv::Device dev2 = open_declared();
	EXPECT_EQ(dev2.attach(p).rv_index, 1u);
}

namespace {

// A soft-RoCE device on a dummy netdev that stays down, so its port is
// not ACTIVE; removed again on destruction.
class DownRxe {
public:
	DownRxe()
	{
		ip_ = rv::test::which("ip");
		rdma_ = rv::test::which("rdma");
		if (ip_.empty() || rdma_.empty()) {
			why_ = "needs ip and rdma in PATH";
			return;
		}
		auto r = run({ip_, "link", "add", netdev, "type", "dummy"});
		if (!r.exited || r.exit_code) {
			why_ = "ip link add " + std::string(netdev) +
			       " type dummy: " + r.err;
			return;
		}
		have_netdev_ = true;
		r = run({rdma_, "link", "add", dev, "type", "rxe", "netdev",
			 netdev});
		if (!r.exited || r.exit_code) {
			why_ = "rdma link add " + std::string(dev) + ": " + r.err;
			return;
		}
		have_dev_ = true;
	}

	~DownRxe()
	{
		if (have_dev_)
			(void)run({rdma_, "link", "delete", dev});
		if (have_netdev_)
			(void)run({ip_, "link", "del", netdev});
	}

	DownRxe(const DownRxe &) = delete;
	DownRxe &operator=(const DownRxe &) = delete;

	[[nodiscard]] bool ok() const { return have_dev_; }
	[[nodiscard]] const std::string &why() const { return why_; }

	static constexpr const char *dev = "rvtest_down0";
	static constexpr const char *netdev = "rvtdown0";

private:
	static rv::test::ProcessResult run(const std::vector<std::string> &argv)
	{
		try {
			return rv::test::run_process(argv);
		} catch (const std::system_error &e) {
			rv::test::ProcessResult r;
			r.err = e.what();
			return r;
		}
	}

	std::string ip_, rdma_, why_;
	bool have_netdev_ = false;
	bool have_dev_ = false;
};

} // namespace

TEST(Attach, PortNotActiveIsEnetdown)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	// It adds a netdev and an RDMA device: only inside the test VM.
	if (!rv::test::in_test_vm())
		GTEST_SKIP() << "creates network devices: only in the test VM "
				"(RV_VM=1)";
	DownRxe down;
	if (!down.ok())
		GTEST_SKIP() << down.why();

	rv::PortState st = rv::RdmaSysfs().port_state(DownRxe::dev, 1);
	ASSERT_FALSE(st.active()) << st.text;

	rv::AttachParams p = params_for(n);
	p.dev_name = DownRxe::dev;
	rv::Device dev = open_declared();
	EXPECT_EQ(raw_attach(dev.fd(), p.to_uapi()), ENETDOWN);
	// Port range still comes first.
	rv_attach_params_in in = p.to_uapi();
	in.port_num = 2;
	EXPECT_EQ(raw_attach(dev.fd(), in), EINVAL);

	// No trace: the same file attaches to a working node.
	EXPECT_EQ(dev.attach(params_for(n)).rv_index, 0u);
}
