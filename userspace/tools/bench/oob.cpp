// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "oob.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rv/error.hpp>

#include <toolkit/debugfs.hpp>
#include <toolkit/rdma_sysfs.hpp>

namespace rv::bench::oob {

namespace {

constexpr std::size_t max_line = 64 * 1024;

bool bad_token(std::string_view s)
{
	if (s.empty())
		return true;
	for (char c : s)
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '=' ||
		    c == '%')
			return true;
	return false;
}

bool escaped(char c)
{
	return c == '%' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string escape(std::string_view v)
{
	static constexpr char digits[] = "0123456789ABCDEF";
	std::string out;
	for (char c : v) {
		if (escaped(c)) {
			const auto u = static_cast<unsigned char>(c);
			out += '%';
			out += digits[u >> 4];
			out += digits[u & 15];
		} else {
			out += c;
		}
	}
	return out;
}

std::optional<std::string> unescape(std::string_view v)
{
	std::string out;
	for (std::size_t i = 0; i < v.size(); i++) {
		if (v[i] != '%') {
			out += v[i];
			continue;
		}
		if (i + 2 >= v.size())
			return std::nullopt;
		unsigned x = 0;
		auto [p, ec] = std::from_chars(v.data() + i + 1, v.data() + i + 3, x, 16);
		if (ec != std::errc() || p != v.data() + i + 3)
			return std::nullopt;
		out += static_cast<char>(x);
		i += 2;
	}
	return out;
}

// Waits until fd is ready for events or the deadline passes.
void wait_fd(int fd, short events, std::chrono::steady_clock::time_point deadline,
	     const char *what)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			throw_errno(ETIMEDOUT, what);
		pollfd p{fd, events, 0};
		int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(
					      left.count() + 1, 60000)));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			throw_errno(what);
		}
		if (n > 0)
			return;
	}
}

void set_nodelay(int fd)
{
	int one = 1;
	(void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

} // namespace

const std::string &Message::get(std::string_view key) const
{
	auto it = fields.find(key);
	if (it == fields.end())
		throw std::runtime_error("out-of-band message " + verb +
					 " lacks '" + std::string(key) + "'");
	return it->second;
}

std::uint64_t Message::get_u64(std::string_view key) const
{
	const std::string &v = get(key);
	auto n = rv::debugfs::parse_u64(v);
	if (!n)
		throw std::runtime_error("out-of-band message " + verb + ": " +
					 std::string(key) + "='" + v +
					 "' is not a number");
	return *n;
}

Message &Message::set(std::string key, std::string value)
{
	fields[std::move(key)] = std::move(value);
	return *this;
}

Message &Message::set(std::string key, std::uint64_t value)
{
	return set(std::move(key), std::to_string(value));
}

std::string Message::format() const
{
	if (bad_token(verb))
		throw std::invalid_argument("bad out-of-band verb '" + verb + "'");
	std::string out = verb;
	for (const auto &[k, v] : fields) {
		if (bad_token(k))
			throw std::invalid_argument("bad out-of-band key '" + k + "'");
		out += ' ';
		out += k;
		out += '=';
		out += escape(v);
	}
	return out;
}

Message Message::parse(std::string_view line)
{
	Message m;
	std::size_t i = 0;

	auto token = [&]() {
		while (i < line.size() && line[i] == ' ')
			i++;
		std::size_t start = i;
		while (i < line.size() && line[i] != ' ')
			i++;
		return line.substr(start, i - start);
	};
	std::string_view verb = token();
	if (verb.empty() || verb.find('=') != std::string_view::npos)
		throw std::runtime_error("malformed out-of-band message '" +
					 std::string(line) + "'");
	m.verb = verb;
	for (std::string_view t = token(); !t.empty(); t = token()) {
		std::size_t eq = t.find('=');
		if (eq == 0 || eq == std::string_view::npos)
			throw std::runtime_error("malformed out-of-band field '" +
						 std::string(t) + "'");
		auto v = unescape(t.substr(eq + 1));
		if (!v)
			throw std::runtime_error("malformed out-of-band value '" +
						 std::string(t) + "'");
		m.fields[std::string(t.substr(0, eq))] = std::move(*v);
	}
	return m;
}

std::optional<std::pair<std::string, std::uint16_t>>
parse_host_port(std::string_view text)
{
	std::string host;
	std::string_view port = text;
	std::size_t colon = text.rfind(':');
	if (colon != std::string_view::npos) {
		host = text.substr(0, colon);
		port = text.substr(colon + 1);
		if (host.empty())
			return std::nullopt;
	}
	unsigned v = 0;
	auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
	if (port.empty() || ec != std::errc() || p != port.data() + port.size() ||
	    v > 65535)
		return std::nullopt;
	return std::pair{host, static_cast<std::uint16_t>(v)};
}

void Socket::send(const Message &m)
{
	const std::string line = m.format() + "\n";
	std::size_t done = 0;

	while (done < line.size()) {
		ssize_t n = ::send(fd(), line.data() + done, line.size() - done,
				   MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			throw_errno("out-of-band send " + m.verb);
		}
		done += static_cast<std::size_t>(n);
	}
}

Message Socket::recv(std::chrono::milliseconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;

	for (;;) {
		std::size_t nl = buf_.find('\n');
		if (nl != std::string::npos) {
			std::string line = buf_.substr(0, nl);
			buf_.erase(0, nl + 1);
			return Message::parse(line);
		}
		if (buf_.size() > max_line)
			throw std::runtime_error("out-of-band line too long");
		wait_fd(fd(), POLLIN, deadline, "out-of-band receive");
		char chunk[4096];
		ssize_t n = ::recv(fd(), chunk, sizeof(chunk), 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			throw_errno("out-of-band receive");
		}
		if (n == 0)
			throw std::runtime_error("the peer closed the out-of-band "
						 "connection");
		buf_.append(chunk, static_cast<std::size_t>(n));
	}
}

Message Socket::expect(std::string_view verb, std::chrono::milliseconds timeout)
{
	Message m = recv(timeout);
	if (m.verb == "ERROR")
		throw std::runtime_error("the peer failed: " +
					 (m.has("msg") ? m.get("msg") : std::string("?")));
	if (m.verb != verb)
		throw std::runtime_error("out-of-band: expected " + std::string(verb) +
					 ", got " + m.verb);
	return m;
}

std::optional<Message> Socket::peek()
{
	for (;;) {
		const std::size_t nl = buf_.find('\n');
		if (nl != std::string::npos)
			return Message::parse(buf_.substr(0, nl));
		if (buf_.size() > max_line)
			throw std::runtime_error("out-of-band line too long");
		char chunk[4096];
		const ssize_t n = ::recv(fd(), chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return std::nullopt;
			throw_errno("out-of-band receive");
		}
		if (n == 0)
			throw std::runtime_error("the peer closed the out-of-band "
						 "connection");
		buf_.append(chunk, static_cast<std::size_t>(n));
	}
}

UniqueFd listen_tcp(const std::string &host, std::uint16_t port,
		    std::uint16_t *bound_port)
{
	UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!fd)
		throw_errno("socket");
	int one = 1;
	(void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));

	sockaddr_in sa{};
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (!host.empty() && ::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
		throw_errno(EINVAL, "listen address '" + host + "'");
	if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0)
		throw_errno("bind port " + std::to_string(port));
	if (::listen(fd.get(), 1) < 0)
		throw_errno("listen");
	if (bound_port) {
		socklen_t len = sizeof(sa);
		if (::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&sa), &len) < 0)
			throw_errno("getsockname");
		*bound_port = ntohs(sa.sin_port);
	}
	return fd;
}

Socket accept_one(int listen_fd, std::chrono::milliseconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;

	for (;;) {
		wait_fd(listen_fd, POLLIN, deadline, "accept");
		int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == ECONNABORTED)
				continue;
			throw_errno("accept");
		}
		set_nodelay(fd);
		return Socket(UniqueFd(fd));
	}
}

Socket connect_tcp(const std::string &host, std::uint16_t port,
		   std::chrono::milliseconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;
	addrinfo hints{};
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	addrinfo *res = nullptr;
	const std::string service = std::to_string(port);
	int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
	if (rc != 0)
		throw std::runtime_error("cannot resolve '" + host + "': " +
					 ::gai_strerror(rc));
	sockaddr_in sa{};
	std::memcpy(&sa, res->ai_addr, sizeof(sa));
	::freeaddrinfo(res);

	for (;;) {
		UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (!fd)
			throw_errno("socket");
		if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&sa),
			      sizeof(sa)) == 0) {
			set_nodelay(fd.get());
			return Socket(std::move(fd));
		}
		const int err = errno;
		if ((err != ECONNREFUSED && err != EINTR && err != ETIMEDOUT &&
		     err != ENETUNREACH && err != EHOSTUNREACH) ||
		    std::chrono::steady_clock::now() >= deadline)
			throw_errno(err, "connect " + host + ":" + service);
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
}

std::pair<Socket, Socket> socket_pair()
{
	int sv[2];
	if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		throw_errno("socketpair");
	return {Socket(UniqueFd(sv[0])), Socket(UniqueFd(sv[1]))};
}

std::string to_hex(const std::uint8_t *p, std::size_t n)
{
	static constexpr char digits[] = "0123456789abcdef";
	std::string s;
	s.reserve(2 * n);
	for (std::size_t i = 0; i < n; i++) {
		s += digits[p[i] >> 4];
		s += digits[p[i] & 15];
	}
	return s;
}

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view s)
{
	if (s.size() % 2)
		return std::nullopt;
	std::vector<std::uint8_t> out;
	for (std::size_t i = 0; i < s.size(); i += 2) {
		int hi = rv::hex_digit(s[i]), lo = rv::hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return std::nullopt;
		out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
	}
	return out;
}

} // namespace rv::bench::oob
