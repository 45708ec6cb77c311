// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Connection: this process's handle on the job's shared RC connection
// to one remote node, and the RDMA WRITE with immediate data path.
//
//	rv::Connection c = rv::Connection::create(
//		dev, rv::Remote::roce(peer_gid, peer_ip, p.loc_gid_index));
//	c.connect(rv::PathRecord::roce(p.loc_gid, peer_gid));
//	c.wait_connected(std::chrono::seconds(30));
//	rv::WriteRequest w{buf, &mr.info(), peer_iova + (peer_buf - peer_addr),
//			   peer_rkey, len, wr_id,
//			   rv::make_immed(peer_rv_index, index_bits, tag)};
//	rv::PostResult r = c.post_write(w);	// completion: an RV_WC_RDMA_WRITE event
//
// The peer's process with that rv_index gets an RV_WC_RECV_RDMA_WITH_IMM
// event (imm_data in host order) once the data is in its memory.
//
// The kernel keeps num_conn RC QPs per (job, device, remote node), shared
// by every process of the job on this node; a Connection names the
// process's reference on them. There is no ioctl to drop one: the
// reference goes with the Device's file. A Connection does not keep the
// file open (like MemoryRegion); once it is closed, calls throw EBADF.
#ifndef RV_CONNECTION_HPP
#define RV_CONNECTION_HPP

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>

#include <rv/device.hpp>
#include <rv/gid.hpp>
#include <rv/memory_region.hpp>
#include <rv/uapi.hpp>

namespace rv {

// The remote node of CONN_CREATE: struct rv_conn_create_params_in.
struct Remote {
	Gid gid{};			// RoCE / global IB: the remote GID
	std::uint16_t dlid = 0;		// IB without GRH
	bool is_global = true;
	std::uint32_t rem_addr = 0;	// IPv4 host order (RoCE) or LID
	std::uint8_t port_num = 1;	// must be the attach's port
	std::uint16_t sgid_index = 0;	// must be the attach's GID index
	std::uint8_t hop_limit = 64;
	std::uint64_t context = 0;

	// A RoCE v2 peer: is_global, dgid = gid, rem_addr = ipv4 (host
	// order); port and sgid_index as the attach of the Device.
	[[nodiscard]] static Remote roce(const Gid &gid, std::uint32_t ipv4,
					 std::uint16_t sgid_index,
					 std::uint8_t port_num = 1);

	// struct ib_uverbs_ah_attr holds an 8-bit sgid_index: a larger one
	// throws std::system_error(EINVAL).
	[[nodiscard]] rv_conn_create_params_in to_uapi() const;
};

// enum ib_mtu (IB_MTU_256 = 1 .. IB_MTU_4096 = 5) <-> bytes.
[[nodiscard]] std::optional<std::uint8_t> ib_mtu_from_bytes(unsigned bytes) noexcept;
[[nodiscard]] unsigned ib_mtu_to_bytes(std::uint8_t mtu) noexcept;	// 0 if invalid

// struct ib_user_path_rec as PSM3 fills it for CONN_CONNECT: reversible,
// one path, the LIDs and the pkey in network byte order.
struct PathRecord {
	Gid sgid{};
	Gid dgid{};
	std::uint16_t slid = 0;		// host order here; network in uapi
	std::uint16_t dlid = 0;
	std::uint16_t pkey = 0xffff;	// host order here; network in uapi
	std::uint8_t mtu = 3;		// enum ib_mtu: 1=256 .. 5=4096 (IB_MTU_1024 = 3)
	std::uint8_t sl = 0;
	std::uint8_t rate = 0;		// enum ib_rate, 0 = port current
	std::uint8_t packet_life_time = 0;	// log2(4.096 us); the CM derives
						// its timeouts from it
	std::uint8_t traffic_class = 0;
	std::uint8_t hop_limit = 64;

	// RoCE: sgid (the attach GID) and dgid, pkey 0xffff, hop limit 64,
	// mtu as given: the smaller of both ports' active MTU (rxe over an
	// Ethernet MTU of 1500 is IB_MTU_1024, the default).
	[[nodiscard]] static PathRecord roce(const Gid &sgid, const Gid &dgid,
					     std::uint8_t mtu = 3);

	[[nodiscard]] ib_user_path_rec to_uapi() const;
};

// The immediate data of a write: the top index_bits select the receiving
// process (its rv_index), the rest is the caller's. index_bits 0..32.
[[nodiscard]] constexpr std::uint32_t immed_payload_mask(unsigned index_bits) noexcept
{
	return index_bits >= 32 ? 0 : ~std::uint32_t{0} >> index_bits;
}
[[nodiscard]] constexpr std::uint32_t make_immed(std::uint32_t rv_index,
						  unsigned index_bits,
						  std::uint32_t payload) noexcept
{
	if (index_bits == 0)
		return payload;
	const std::uint32_t top = index_bits >= 32
		? rv_index : rv_index << (32 - index_bits);
	return top | (payload & immed_payload_mask(index_bits));
}
[[nodiscard]] constexpr std::uint32_t immed_index(std::uint32_t immed,
						   unsigned index_bits) noexcept
{
	if (index_bits == 0)
		return 0;
	return index_bits >= 32 ? immed : immed >> (32 - index_bits);
}
[[nodiscard]] constexpr std::uint32_t immed_payload(std::uint32_t immed,
						     unsigned index_bits) noexcept
{
	return immed & immed_payload_mask(index_bits);
}

// One RDMA WRITE with immediate: [loc_addr, loc_addr + length) of the
// local MR mr (a kernel MR of this process, which must contain it) to
// rem_addr under rkey on the peer; the peer's process with rv_index =
// immed >> (32 - index_bits) gets an RV_WC_RECV_RDMA_WITH_IMM event.
struct WriteRequest {
	std::uint64_t loc_addr = 0;
	const MrInfo *mr = nullptr;	// not owned
	std::uint64_t rem_addr = 0;
	std::uint32_t rkey = 0;
	std::uint64_t length = 0;
	std::uint64_t wr_id = 0;
	std::uint32_t immed = 0;

	// The MR fields are exactly mr's addr, length and access as given
	// to REG_MEM (zero without an mr: the module refuses that).
	[[nodiscard]] rv_post_write_params_in to_uapi(std::uint64_t handle) const;
};

// The output of POST_RDMA_WR_IMMED.
struct PostResult {
	std::uint8_t sconn_index = 0;
	std::uint32_t conn_count = 0;
};

using ConnStats = rv_conn_get_stats_params_out;

class Connection {
public:
	// RV_IOCTL_CONN_CREATE on dev (attached). Throws std::system_error.
	static Connection create(Device &dev, const Remote &remote);

	Connection() noexcept = default;
	Connection(const Connection &) = delete;
	Connection &operator=(const Connection &) = delete;
	// A moved-from Connection is empty (handle 0; calls throw EBADF).
	Connection(Connection &&other) noexcept;
	Connection &operator=(Connection &&other) noexcept;
	~Connection() = default;

	[[nodiscard]] bool valid() const noexcept { return handle_ != 0; }
	[[nodiscard]] std::uint64_t handle() const noexcept { return handle_; }
	[[nodiscard]] std::uint64_t conn_handle() const noexcept
	{
		return conn_handle_;
	}

	// RV_IOCTL_CONN_CONNECT.
	void connect(const PathRecord &path);

	// RV_IOCTL_CONN_CONNECTED: true (1) or false (0); throws
	// std::system_error(EIO) when the connection failed for good.
	[[nodiscard]] bool connected();

	// Polls connected() every millisecond until true (returns true) or
	// timeout (returns false). Throws as connected() does.
	bool wait_connected(std::chrono::milliseconds timeout);

	// RV_IOCTL_CONN_GET_CONN_COUNT for QP index.
	[[nodiscard]] std::uint32_t conn_count(std::uint8_t index);

	// RV_IOCTL_CONN_GET_STATS: one QP, or RV_CONN_STATS_AGGREGATE.
	[[nodiscard]] ConnStats stats(std::uint8_t index = RV_CONN_STATS_AGGREGATE);
	// handle 0: the aggregate of all of dev's connections.
	[[nodiscard]] static ConnStats all_stats(Device &dev);

	// RV_IOCTL_POST_RDMA_WR_IMMED. Throws std::system_error on every
	// error; try_post_write() instead returns the errno (0 on success)
	// so that a caller can retry EAGAIN/ENOMEM/EBUSY without exceptions
	// on its fast path (EBADF once the file is gone). out is filled
	// only on success (the module writes the output only then).
	PostResult post_write(const WriteRequest &w);
	int try_post_write(const WriteRequest &w, PostResult &out) noexcept;

	// The errnos of POST_RDMA_WR_IMMED worth a retry: EAGAIN (the
	// connection is recovering), ENOMEM and EBUSY (no send credit).
	[[nodiscard]] static constexpr bool retryable(int err) noexcept
	{
		return err == EAGAIN || err == ENOMEM || err == EBUSY;
	}

private:
	Connection(std::weak_ptr<UniqueFd> fd, std::uint64_t handle,
		   std::uint64_t conn_handle) noexcept;
	// The open descriptor, kept open while the result lives; throws
	// std::system_error(EBADF) naming request once the file is closed.
	std::shared_ptr<UniqueFd> fd_or_throw(unsigned long request) const;

	std::weak_ptr<UniqueFd> fd_;
	std::uint64_t handle_ = 0;
	std::uint64_t conn_handle_ = 0;
};

} // namespace rv

#endif // RV_CONNECTION_HPP
