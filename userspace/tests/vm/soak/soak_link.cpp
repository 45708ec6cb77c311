// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "soak_link.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rv/error.hpp>

#include "soak.hpp"

namespace rv::soak {

namespace {

using std::chrono::milliseconds;

// No keepalive; unacknowledged data is given up on only after
// user_timeout (the default would be about 15 minutes of retries, which
// the controllers' own silence check cuts short anyway).
void link_options(int fd, std::chrono::seconds user_timeout)
{
	const int one = 1;
	const int zero = 0;
	const unsigned ut = static_cast<unsigned>(user_timeout.count()) * 1000u;

	(void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &zero, sizeof(zero));
	if (::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut)) < 0)
		rv::throw_errno("setsockopt TCP_USER_TIMEOUT");
	grow_socket_buffers(fd);
}

sockaddr_in address(std::uint32_t ip_net, std::uint16_t port)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = ip_net;
	return a;
}

} // namespace

ControlLink::ControlLink(rv::UniqueFd fd) : ch_(std::move(fd)) {}

ControlLink ControlLink::accept_one(std::uint16_t port, std::chrono::seconds timeout,
				   std::chrono::seconds user_timeout)
{
	rv::UniqueFd ls(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!ls)
		rv::throw_errno("socket");
	const int one = 1;
	(void)::setsockopt(ls.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	const sockaddr_in a = address(htonl(INADDR_ANY), port);
	if (::bind(ls.get(), reinterpret_cast<const sockaddr *>(&a), sizeof(a)) < 0)
		rv::throw_errno("bind port " + std::to_string(port));
	if (::listen(ls.get(), 1) < 0)
		rv::throw_errno("listen");
	pollfd pfd{ls.get(), POLLIN, 0};
	int r;
	do {
		r = ::poll(&pfd, 1, static_cast<int>(timeout.count() * 1000));
	} while (r < 0 && errno == EINTR);
	if (r <= 0)
		throw std::system_error(r ? errno : ETIMEDOUT, std::generic_category(),
					"no controller connected to port " +
						std::to_string(port));
	rv::UniqueFd fd(::accept4(ls.get(), nullptr, nullptr, SOCK_CLOEXEC));
	if (!fd)
		rv::throw_errno("accept");
	link_options(fd.get(), user_timeout);
	return ControlLink(std::move(fd));
}

ControlLink ControlLink::connect_to(const std::string &ip, std::uint16_t port,
				    std::chrono::seconds timeout,
				    std::chrono::seconds user_timeout)
{
	in_addr in{};
	if (::inet_pton(AF_INET, ip.c_str(), &in) != 1)
		throw std::system_error(EINVAL, std::generic_category(),
					"not an IPv4 address: " + ip);
	const sockaddr_in a = address(in.s_addr, port);
	const auto end = clock::now() + timeout;
	for (;;) {
		rv::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (!fd)
			rv::throw_errno("socket");
		if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&a), sizeof(a)) == 0) {
			link_options(fd.get(), user_timeout);
			return ControlLink(std::move(fd));
		}
		const int err = errno;
		if (clock::now() >= end)
			rv::throw_errno(err, "connect " + ip + ":" + std::to_string(port));
		std::this_thread::sleep_for(milliseconds(200));
	}
}

short ControlLink::events() const noexcept
{
	return static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT));
}

void ControlLink::send(const rv::test::Msg &m)
{
	if (!open())
		throw std::system_error(EPIPE, std::generic_category(), "control link closed");
	out_.push_back(m);
	flush();
}

void ControlLink::send_text(std::uint32_t type, const std::string &text)
{
	rv::test::Msg m;
	m.type = type;
	m.len = static_cast<std::uint32_t>(std::min(text.size(), m.body.size() - 1));
	std::memcpy(m.body.data(), text.data(), m.len);
	send(m);
}

bool ControlLink::flush()
{
	while (!out_.empty() && open()) {
		const auto *p = reinterpret_cast<const char *>(&out_.front());
		const ssize_t n = ::send(fd(), p + off_, sizeof(rv::test::Msg) - off_,
					 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		if (n <= 0)
			rv::throw_errno(n < 0 ? errno : EPIPE, "control link send");
		off_ += static_cast<std::size_t>(n);
		if (off_ == sizeof(rv::test::Msg)) {
			out_.pop_front();
			off_ = 0;
		}
	}
	return out_.empty();
}

std::optional<rv::test::Msg> ControlLink::recv()
{
	if (!open())
		throw std::system_error(EPIPE, std::generic_category(), "control link closed");
	std::optional<rv::test::Msg> m = ch_.recv(milliseconds(0));
	if (m) {
		const auto now = clock::now();
		gap_ = std::max(gap_, now - heard_);
		heard_ = now;
	}
	return m;
}

void ControlLink::close() noexcept
{
	ch_.close();
	out_.clear();
	off_ = 0;
}

} // namespace rv::soak
