// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// RV_IOCTL_ATTACH: joining a job on an RDMA device.
//
//	rv::Device dev;
//	dev.capability();
//	rv::AttachParams p = rv::AttachParams::for_roce("rxe0");
//	rv::Attach a = dev.attach(p);	// a.rv_index, a.max_fmr_size, ...
//
// AttachParams starts out as what PSM3 sends by default; for_roce() also
// fills the local RoCE v2 IPv4 GID, its index and the NIC's address from
// sysfs and picks a random job key.
#ifndef RV_ATTACH_HPP
#define RV_ATTACH_HPP

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <rv/gid.hpp>
#include <rv/roce_gid.hpp>
#include <rv/uapi.hpp>

namespace rv {

using JobKey = std::array<std::uint8_t, RV_MAX_JOB_KEY_LEN>;

// A random RFC 4122 version 4 UUID, as PSM3 uses for a job key. Throws
// std::system_error ("getrandom") if the kernel cannot supply randomness.
[[nodiscard]] JobKey random_job_key();

// Which ioctl form ATTACH is sent in.
enum class AttachForm : std::uint8_t {
	current,	// RV_IOCTL_ATTACH, struct rv_attach_params (ABI 1.6+)
	r5,		// RV_IOCTL_ATTACH_R5, without fr_page_list_len (ABI 1.5)
};

// The input of ATTACH. The defaults are what PSM3 sends unless told
// otherwise; dev_name, loc_gid_index, loc_gid, loc_addr and job_key have
// no useful default (for_roce() fills them).
struct AttachParams {
	std::string dev_name;			// RDMA device, < 64 bytes
	std::uint8_t port_num = 1;
	std::uint8_t rdma_mode = RV_RDMA_MODE_KERNEL;	// may include UPSIZE_CPU
	std::uint8_t num_conn = 0;		// 0 = module default
	std::uint8_t index_bits = 9;
	std::uint32_t mr_cache_size = 0;	// MB, 0 = module default
	std::uint32_t loc_addr = 0;		// IPv4, host order
	std::uint16_t loc_gid_index = 0;
	Gid loc_gid{};
	JobKey job_key{};
	// Bytes of job_key that count. Values above RV_MAX_JOB_KEY_LEN are
	// passed through unchanged (the module refuses them).
	std::uint8_t job_key_len = RV_MAX_JOB_KEY_LEN;
	std::uint64_t service_id = 0x1000125500000001ULL;
	std::uint64_t context = 0;
	std::uint32_t cq_entries = 192;		// event ring, 0 = none
	std::uint32_t q_depth = 0;		// 0 = module default
	std::uint32_t reconnect_timeout = 30;	// s
	std::uint32_t hb_interval = 1000;	// ms, 0 = none
	std::uint32_t fr_page_list_len = 1024;	// not in the R5 form

	// PSM3's defaults for the RoCE port dev_name/port_num: the port's
	// RoCE v2 IPv4-mapped GID (the one for ipv4 if given, else the
	// first), its index and address (GidTable::find_roce_v2_ipv4(),
	// under sysfs_root), and a random job key.
	static AttachParams for_roce(const std::string &dev_name,
				     unsigned port_num = 1,
				     std::optional<std::uint32_t> ipv4 = {},
				     const std::filesystem::path &sysfs_root =
					     std::filesystem::path(rdma_sysfs_root));

	// The structs the ioctls take, reserved fields zero. Throws
	// std::system_error(ENAMETOOLONG) if dev_name does not fit with its
	// NUL.
	[[nodiscard]] rv_attach_params_in to_uapi() const;
	[[nodiscard]] rv_attach_params_r5_in to_uapi_r5() const;
};

// The output of ATTACH.
struct Attach {
	std::uint32_t rv_index = 0;
	std::uint32_t mr_cache_size = 0;	// MB in use
	std::uint32_t q_depth = 0;
	std::uint32_t reconnect_timeout = 0;	// s
	std::uint64_t max_fmr_size = 0;		// bytes

	[[nodiscard]] static Attach from_uapi(
		const rv_attach_params_out &out) noexcept;
	friend bool operator==(const Attach &, const Attach &) = default;
};

} // namespace rv

#endif // RV_ATTACH_HPP
