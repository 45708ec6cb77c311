// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/connection.hpp>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <sys/ioctl.h>

#include <rv/error.hpp>
#include <rv/ioctl.hpp>

#include "ioctl_call.hpp"

namespace rv {

static_assert(sizeof(rv_conn_create_params) == 48);
static_assert(sizeof(rv_conn_connect_params_in) == 72);
static_assert(sizeof(rv_post_write_params) == 80);
static_assert(sizeof(ib_user_path_rec) == 64);
static_assert(offsetof(ib_user_path_rec, dlid) == 32);
static_assert(offsetof(ib_user_path_rec, pkey) == 52);

// --- Remote -----------------------------------------------------------------

Remote Remote::roce(const Gid &gid, std::uint32_t ipv4, std::uint16_t sgid_index,
		    std::uint8_t port_num)
{
	Remote r;

	r.gid = gid;
	r.is_global = true;
	r.rem_addr = ipv4;
	r.sgid_index = sgid_index;
	r.port_num = port_num;
	return r;
}

rv_conn_create_params_in Remote::to_uapi() const
{
	rv_conn_create_params_in in{};

	if (sgid_index > 0xff)
		throw_errno(EINVAL, "rv::Remote: sgid_index " +
				    std::to_string(sgid_index) +
				    " does not fit struct ib_uverbs_ah_attr");
	static_assert(sizeof(in.ah.grh.dgid) == std::tuple_size_v<Gid>);
	if (is_global) {
		std::memcpy(in.ah.grh.dgid, gid.data(), gid.size());
		in.ah.grh.sgid_index = static_cast<__u8>(sgid_index);
		in.ah.grh.hop_limit = hop_limit;
	}
	in.ah.dlid = dlid;	// host order in struct ib_uverbs_ah_attr
	in.ah.is_global = is_global ? 1 : 0;
	in.ah.port_num = port_num;
	in.rem_addr = rem_addr;
	in.context = context;
	return in;
}

// --- PathRecord -------------------------------------------------------------

std::optional<std::uint8_t> ib_mtu_from_bytes(unsigned bytes) noexcept
{
	switch (bytes) {
	case 256: return 1;
	case 512: return 2;
	case 1024: return 3;
	case 2048: return 4;
	case 4096: return 5;
	default: return std::nullopt;
	}
}

unsigned ib_mtu_to_bytes(std::uint8_t mtu) noexcept
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

PathRecord PathRecord::roce(const Gid &sgid, const Gid &dgid, std::uint8_t mtu)
{
	PathRecord p;

	p.sgid = sgid;
	p.dgid = dgid;
	p.mtu = mtu;
	p.pkey = 0xffff;
	p.hop_limit = 64;
	return p;
}

ib_user_path_rec PathRecord::to_uapi() const
{
	ib_user_path_rec r{};

	static_assert(sizeof(r.sgid) == std::tuple_size_v<Gid>);
	std::memcpy(r.dgid, dgid.data(), dgid.size());
	std::memcpy(r.sgid, sgid.data(), sgid.size());
	r.dlid = htons(dlid);
	r.slid = htons(slid);
	r.raw_traffic = 0;
	r.flow_label = 0;
	r.reversible = 1;
	r.mtu = mtu;
	r.pkey = htons(pkey);
	r.hop_limit = hop_limit;
	r.traffic_class = traffic_class;
	r.numb_path = 1;
	r.sl = sl;
	r.rate = rate;
	r.packet_life_time = packet_life_time;
	return r;
}

// --- WriteRequest -------------------------------------------------------------

rv_post_write_params_in WriteRequest::to_uapi(std::uint64_t handle) const
{
	rv_post_write_params_in in{};

	in.handle = handle;
	in.loc_addr = loc_addr;
	if (mr) {
		in.loc_mr_handle = mr->handle;
		in.loc_mr_addr = mr->addr;
		in.loc_mr_length = mr->length;
		in.loc_mr_access = mr->access;
	}
	in.rkey = rkey;
	in.rem_addr = rem_addr;
	in.length = length;
	in.wr_id = wr_id;
	in.immed = immed;
	return in;
}

// --- Connection -------------------------------------------------------------

Connection::Connection(std::weak_ptr<UniqueFd> fd, std::uint64_t handle,
		       std::uint64_t conn_handle) noexcept
	: fd_(std::move(fd)), handle_(handle), conn_handle_(conn_handle)
{
}

Connection::Connection(Connection &&other) noexcept
	: fd_(std::move(other.fd_)),
	  handle_(std::exchange(other.handle_, 0)),
	  conn_handle_(std::exchange(other.conn_handle_, 0))
{
	other.fd_.reset();
}

Connection &Connection::operator=(Connection &&other) noexcept
{
	if (this != &other) {
		fd_ = std::move(other.fd_);
		other.fd_.reset();
		handle_ = std::exchange(other.handle_, 0);
		conn_handle_ = std::exchange(other.conn_handle_, 0);
	}
	return *this;
}

std::shared_ptr<UniqueFd> Connection::fd_or_throw(unsigned long request) const
{
	std::shared_ptr<UniqueFd> fd = fd_.lock();

	if (!fd || !fd->valid())
		throw_errno(EBADF, ioctl_describe(request));
	return fd;
}

Connection Connection::create(Device &dev, const Remote &remote)
{
	rv_conn_create_params p{};

	p.in = remote.to_uapi();
	if (!dev.fd_ || !dev.fd_->valid())
		throw_errno(EBADF, ioctl_describe(RV_IOCTL_CONN_CREATE));
	detail::checked_ioctl(dev.fd_->get(), RV_IOCTL_CONN_CREATE, &p);
	return Connection(dev.fd_, p.out.handle, p.out.conn_handle);
}

void Connection::connect(const PathRecord &path)
{
	rv_conn_connect_params_in p{};

	p.handle = handle_;
	p.path = path.to_uapi();
	auto fd = fd_or_throw(RV_IOCTL_CONN_CONNECT);
	detail::checked_ioctl(fd->get(), RV_IOCTL_CONN_CONNECT, &p);
}

bool Connection::connected()
{
	rv_conn_connected_params_in p{};

	p.handle = handle_;
	auto fd = fd_or_throw(RV_IOCTL_CONN_CONNECTED);
	return detail::checked_ioctl(fd->get(), RV_IOCTL_CONN_CONNECTED, &p) > 0;
}

bool Connection::wait_connected(std::chrono::milliseconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;

	for (;;) {
		if (connected())
			return true;
		if (std::chrono::steady_clock::now() >= deadline)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
}

std::uint32_t Connection::conn_count(std::uint8_t index)
{
	rv_conn_get_conn_count_params p{};

	p.in.handle = handle_;
	p.in.index = index;
	auto fd = fd_or_throw(RV_IOCTL_CONN_GET_CONN_COUNT);
	detail::checked_ioctl(fd->get(), RV_IOCTL_CONN_GET_CONN_COUNT, &p);
	return p.out.count;
}

ConnStats Connection::stats(std::uint8_t index)
{
	rv_conn_get_stats_params p{};

	p.in.handle = handle_;
	p.in.index = index;
	auto fd = fd_or_throw(RV_IOCTL_CONN_GET_STATS);
	detail::checked_ioctl(fd->get(), RV_IOCTL_CONN_GET_STATS, &p);
	return p.out;
}

ConnStats Connection::all_stats(Device &dev)
{
	rv_conn_get_stats_params p{};

	p.in.handle = 0;
	p.in.index = RV_CONN_STATS_AGGREGATE;
	dev.ioctl(RV_IOCTL_CONN_GET_STATS, &p);
	return p.out;
}

int Connection::try_post_write(const WriteRequest &w, PostResult &out) noexcept
{
	rv_post_write_params p{};

	p.in = w.to_uapi(handle_);
	std::shared_ptr<UniqueFd> fd = fd_.lock();
	if (!fd || !fd->valid())
		return EBADF;
	// The one ioctl(2) of librv outside ioctl_call.hpp: the fast path
	// reports errors as values, never as exceptions.
	if (::ioctl(fd->get(), RV_IOCTL_POST_RDMA_WR_IMMED, &p) < 0)
		return errno ? errno : EIO;
	out.sconn_index = p.out.sconn_index;
	out.conn_count = p.out.conn_count;
	return 0;
}

PostResult Connection::post_write(const WriteRequest &w)
{
	PostResult out;

	if (int err = try_post_write(w, out))
		throw_errno(err, ioctl_describe(RV_IOCTL_POST_RDMA_WR_IMMED));
	return out;
}

} // namespace rv
