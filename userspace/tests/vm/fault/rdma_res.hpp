// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::test::fault::RdmaRes: counts the kernel verbs objects a module owns
// on an RDMA device, from the RDMA core's resource tracking (what `rdma
// resource show pd|cq|qp|mr` lists with comm [rv]), over RDMA netlink
// directly: no rdma(8) process per check.
#ifndef RV_TEST_VM_FAULT_RDMA_RES_HPP
#define RV_TEST_VM_FAULT_RDMA_RES_HPP

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <rv/unique_fd.hpp>

namespace rv::test::fault {

struct ResCounts {
	std::uint32_t pd = 0;
	std::uint32_t cq = 0;
	std::uint32_t qp = 0;
	std::uint32_t mr = 0;

	friend bool operator==(const ResCounts &, const ResCounts &) = default;
	[[nodiscard]] std::string str() const;
};

class RdmaRes {
public:
	// Opens a NETLINK_RDMA socket. Throws std::system_error.
	RdmaRes();

	// The objects of dev whose owner is the kernel module kern_name.
	// Throws std::system_error (ENODEV: no such device).
	ResCounts count(const std::string &dev, const std::string &kern_name = "rv");

	// The QPs' references to the CQs of dev that kern_name owns: each
	// QP's send and receive queue counts one (`rdma resource show cq`'s
	// "users"). With "ib_core": the CQ pool's users. Throws as count().
	std::uint64_t cq_users(const std::string &dev, const std::string &kern_name);

private:
	std::uint32_t dev_index(const std::string &dev);
	// Calls f with the attributes of each object of the dump cmd
	// (table, entry) that kern_name owns.
	void for_each_entry(std::uint32_t index, std::uint16_t cmd, std::uint16_t table,
			    std::uint16_t entry, const std::string &kern_name,
			    const std::function<void(std::string_view)> &f);
	std::uint32_t count_type(std::uint32_t index, std::uint16_t cmd,
				 std::uint16_t table, std::uint16_t entry,
				 const std::string &kern_name);

	rv::UniqueFd fd_;
	std::uint32_t seq_ = 1;
};

} // namespace rv::test::fault

#endif // RV_TEST_VM_FAULT_RDMA_RES_HPP
