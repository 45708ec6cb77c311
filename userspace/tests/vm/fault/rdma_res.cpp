// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "rdma_res.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rv/error.hpp>

namespace rv::test::fault {

namespace {

constexpr std::size_t nl_align(std::size_t len)
{
	return (len + NLMSG_ALIGNTO - 1) & ~static_cast<std::size_t>(NLMSG_ALIGNTO - 1);
}

constexpr std::size_t attr_align(std::size_t len)
{
	return (len + NLA_ALIGNTO - 1) & ~static_cast<std::size_t>(NLA_ALIGNTO - 1);
}

// One attribute of a netlink message: its type (flags masked off) and
// payload.
struct Attr {
	std::uint16_t type;
	std::string_view data;
};

// Calls f for each attribute in buf.
void for_each_attr(std::string_view buf, const std::function<void(const Attr &)> &f)
{
	while (buf.size() >= sizeof(nlattr)) {
		nlattr a{};
		std::memcpy(&a, buf.data(), sizeof(a));
		if (a.nla_len < sizeof(nlattr) || a.nla_len > buf.size())
			break;
		f(Attr{static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK),
		       buf.substr(sizeof(nlattr), a.nla_len - sizeof(nlattr))});
		std::size_t step = attr_align(a.nla_len);
		if (step >= buf.size())
			break;
		buf.remove_prefix(step);
	}
}

std::string_view attr_string(const Attr &a)
{
	std::string_view s = a.data;
	auto nul = s.find('\0');
	return nul == std::string_view::npos ? s : s.substr(0, nul);
}

std::uint32_t attr_u32(const Attr &a)
{
	std::uint32_t v = 0;
	if (a.data.size() >= sizeof(v))
		std::memcpy(&v, a.data.data(), sizeof(v));
	return v;
}

std::uint64_t attr_u64(const Attr &a)
{
	std::uint64_t v = 0;
	if (a.data.size() >= sizeof(v))
		std::memcpy(&v, a.data.data(), sizeof(v));
	return v;
}

} // namespace

std::string ResCounts::str() const
{
	return "pd " + std::to_string(pd) + " cq " + std::to_string(cq) + " qp " +
	       std::to_string(qp) + " mr " + std::to_string(mr);
}

RdmaRes::RdmaRes()
	: fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA))
{
	if (!fd_)
		rv::throw_errno("socket(NETLINK_RDMA)");
	sockaddr_nl sa{};
	sa.nl_family = AF_NETLINK;
	if (::bind(fd_.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) < 0)
		rv::throw_errno("bind(NETLINK_RDMA)");
}

namespace {

// Sends one dump request of RDMA_NLDEV command cmd (with the device
// index as its attribute if given) and calls f for every message of the
// answer.
void nl_dump(int fd, std::uint32_t seq, std::uint16_t cmd,
	     const std::uint32_t *index,
	     const std::function<void(std::string_view attrs)> &f)
{
	struct {
		nlmsghdr h;
		nlattr a;
		std::uint32_t index;
	} req{};
	req.h.nlmsg_len = static_cast<std::uint32_t>(
		index ? sizeof(req) : sizeof(req.h));
	req.h.nlmsg_type = static_cast<std::uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = seq;
	if (index) {
		req.a.nla_len = sizeof(nlattr) + sizeof(std::uint32_t);
		req.a.nla_type = RDMA_NLDEV_ATTR_DEV_INDEX;
		req.index = *index;
	}
	if (::send(fd, &req, req.h.nlmsg_len, 0) < 0)
		rv::throw_errno("send(NETLINK_RDMA)");

	std::vector<char> buf(64 * 1024);
	for (;;) {
		ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rv::throw_errno("recv(NETLINK_RDMA)");
		std::string_view data(buf.data(), static_cast<std::size_t>(n));
		while (data.size() >= sizeof(nlmsghdr)) {
			nlmsghdr h{};
			std::memcpy(&h, data.data(), sizeof(h));
			if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > data.size())
				rv::throw_errno(EBADMSG, "NETLINK_RDMA: bad message");
			if (h.nlmsg_seq == seq) {
				if (h.nlmsg_type == NLMSG_DONE)
					return;
				if (h.nlmsg_type == NLMSG_ERROR) {
					nlmsgerr e{};
					if (h.nlmsg_len >= sizeof(h) + sizeof(e))
						std::memcpy(&e, data.data() + sizeof(h), sizeof(e));
					if (!e.error)
						return;
					rv::throw_errno(-e.error, "NETLINK_RDMA dump");
				}
				f(data.substr(sizeof(h), h.nlmsg_len - sizeof(h)));
			}
			std::size_t step = nl_align(h.nlmsg_len);
			if (step >= data.size())
				break;
			data.remove_prefix(step);
		}
	}
}

} // namespace

std::uint32_t RdmaRes::dev_index(const std::string &dev)
{
	std::optional<std::uint32_t> found;
	nl_dump(fd_.get(), seq_++, RDMA_NLDEV_CMD_GET, nullptr,
		[&](std::string_view attrs) {
			std::optional<std::uint32_t> index;
			std::string_view name;
			for_each_attr(attrs, [&](const Attr &a) {
				if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX)
					index = attr_u32(a);
				else if (a.type == RDMA_NLDEV_ATTR_DEV_NAME)
					name = attr_string(a);
			});
			if (index && name == dev)
				found = index;
		});
	if (!found)
		rv::throw_errno(ENODEV, "RDMA device " + dev);
	return *found;
}

void RdmaRes::for_each_entry(std::uint32_t index, std::uint16_t cmd, std::uint16_t table,
			     std::uint16_t entry, const std::string &kern_name,
			     const std::function<void(std::string_view)> &f)
{
	nl_dump(fd_.get(), seq_++, cmd, &index, [&](std::string_view attrs) {
		for_each_attr(attrs, [&](const Attr &t) {
			if (t.type != table)
				return;
			for_each_attr(t.data, [&](const Attr &e) {
				if (e.type != entry)
					return;
				bool mine = false;
				for_each_attr(e.data, [&](const Attr &a) {
					if (a.type == RDMA_NLDEV_ATTR_RES_KERN_NAME &&
					    attr_string(a) == kern_name)
						mine = true;
				});
				if (mine)
					f(e.data);
			});
		});
	});
}

std::uint32_t RdmaRes::count_type(std::uint32_t index, std::uint16_t cmd,
				  std::uint16_t table, std::uint16_t entry,
				  const std::string &kern_name)
{
	std::uint32_t n = 0;
	for_each_entry(index, cmd, table, entry, kern_name, [&](std::string_view) { n++; });
	return n;
}

std::uint64_t RdmaRes::cq_users(const std::string &dev, const std::string &kern_name)
{
	std::uint64_t users = 0;
	for_each_entry(dev_index(dev), RDMA_NLDEV_CMD_RES_CQ_GET, RDMA_NLDEV_ATTR_RES_CQ,
		       RDMA_NLDEV_ATTR_RES_CQ_ENTRY, kern_name, [&](std::string_view cq) {
			       for_each_attr(cq, [&](const Attr &a) {
				       if (a.type == RDMA_NLDEV_ATTR_RES_USECNT)
					       users += attr_u64(a);
			       });
		       });
	return users;
}

ResCounts RdmaRes::count(const std::string &dev, const std::string &kern_name)
{
	const std::uint32_t i = dev_index(dev);
	ResCounts c;
	c.pd = count_type(i, RDMA_NLDEV_CMD_RES_PD_GET, RDMA_NLDEV_ATTR_RES_PD,
			  RDMA_NLDEV_ATTR_RES_PD_ENTRY, kern_name);
	c.cq = count_type(i, RDMA_NLDEV_CMD_RES_CQ_GET, RDMA_NLDEV_ATTR_RES_CQ,
			  RDMA_NLDEV_ATTR_RES_CQ_ENTRY, kern_name);
	c.qp = count_type(i, RDMA_NLDEV_CMD_RES_QP_GET, RDMA_NLDEV_ATTR_RES_QP,
			  RDMA_NLDEV_ATTR_RES_QP_ENTRY, kern_name);
	c.mr = count_type(i, RDMA_NLDEV_CMD_RES_MR_GET, RDMA_NLDEV_ATTR_RES_MR,
			  RDMA_NLDEV_ATTR_RES_MR_ENTRY, kern_name);
	return c;
}

} // namespace rv::test::fault
