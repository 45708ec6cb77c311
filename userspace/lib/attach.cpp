// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/attach.hpp>

#include <cerrno>
#include <cstring>

#include <sys/random.h>

#include <rv/error.hpp>

namespace rv {

JobKey random_job_key()
{
	JobKey key{};
	std::size_t got = 0;

	while (got < key.size()) {
		ssize_t n = ::getrandom(key.data() + got, key.size() - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			throw_errno("getrandom");
		}
		got += static_cast<std::size_t>(n);
	}
	// RFC 4122: version 4 (random), variant 10.
	key[6] = static_cast<std::uint8_t>((key[6] & 0x0f) | 0x40);
	key[8] = static_cast<std::uint8_t>((key[8] & 0x3f) | 0x80);
	return key;
}

AttachParams AttachParams::for_roce(const std::string &dev_name,
				    unsigned port_num,
				    std::optional<std::uint32_t> ipv4,
				    const std::filesystem::path &sysfs_root)
{
	RoceGid g = GidTable(dev_name, port_num, sysfs_root).find_roce_v2_ipv4(ipv4);
	AttachParams p;

	p.dev_name = dev_name;
	p.port_num = static_cast<std::uint8_t>(port_num);
	p.loc_gid_index = g.index;
	p.loc_gid = g.gid;
	p.loc_addr = g.ipv4;
	p.job_key = random_job_key();
	p.job_key_len = RV_MAX_JOB_KEY_LEN;
	return p;
}

namespace {

// The fields shared by both forms of the input struct.
template <typename In>
void fill_common(In &in, const AttachParams &p)
{
	if (p.dev_name.size() >= sizeof(in.dev_name))
		throw_errno(ENAMETOOLONG,
			    "rv::AttachParams: device name '" + p.dev_name + "'");
	std::memcpy(in.dev_name, p.dev_name.data(), p.dev_name.size());
	in.mr_cache_size = p.mr_cache_size;
	in.rdma_mode = p.rdma_mode;
	in.port_num = p.port_num;
	in.num_conn = p.num_conn;
	in.loc_addr = p.loc_addr;
	in.index_bits = p.index_bits;
	in.loc_gid_index = p.loc_gid_index;
	static_assert(sizeof(in.loc_gid) == std::tuple_size_v<Gid>);
	std::memcpy(in.loc_gid, p.loc_gid.data(), p.loc_gid.size());
	static_assert(sizeof(in.job_key) == std::tuple_size_v<JobKey>);
	std::memcpy(in.job_key, p.job_key.data(), p.job_key.size());
	in.job_key_len = p.job_key_len;
	in.service_id = p.service_id;
	in.context = p.context;
	in.cq_entries = p.cq_entries;
	in.q_depth = p.q_depth;
	in.reconnect_timeout = p.reconnect_timeout;
	in.hb_interval = p.hb_interval;
}

} // namespace

rv_attach_params_in AttachParams::to_uapi() const
{
	rv_attach_params_in in{};

	fill_common(in, *this);
	in.fr_page_list_len = fr_page_list_len;
	return in;
}

rv_attach_params_r5_in AttachParams::to_uapi_r5() const
{
	rv_attach_params_r5_in in{};

	fill_common(in, *this);
	return in;
}

Attach Attach::from_uapi(const rv_attach_params_out &out) noexcept
{
	return {out.rv_index, out.mr_cache_size, out.q_depth,
		out.reconnect_timeout, out.max_fmr_size};
}

} // namespace rv
