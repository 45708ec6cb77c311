// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's out-of-band channel: one TCP connection between the two
// processes of a transfer benchmark, carrying one-line text messages
//
//	VERB key=value key=value ...\n
//
// Values are percent-escaped on the wire ('%', space, tab, CR, LF), so
// they may hold any text; verbs and keys may not. Errors are
// std::system_error with the errno, or std::runtime_error for a malformed
// or unexpected message. A peer that fails sends "ERROR msg=...", which
// expect() turns into a std::runtime_error.
#ifndef RV_BENCH_OOB_HPP
#define RV_BENCH_OOB_HPP

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rv/unique_fd.hpp>

namespace rv::bench::oob {

// One message.
struct Message {
	std::string verb;
	std::map<std::string, std::string, std::less<>> fields;

	// The value of key; std::runtime_error naming it if absent.
	[[nodiscard]] const std::string &get(std::string_view key) const;
	[[nodiscard]] bool has(std::string_view key) const
	{
		return fields.find(key) != fields.end();
	}
	// Decimal or 0x-hex; std::runtime_error if absent or not a number.
	[[nodiscard]] std::uint64_t get_u64(std::string_view key) const;

	Message &set(std::string key, std::string value);
	Message &set(std::string key, std::uint64_t value);

	// "VERB k=v ...", no newline, values escaped. A verb or key that is
	// empty or holds white space or '=' is std::invalid_argument.
	[[nodiscard]] std::string format() const;
	// The inverse of format(); std::runtime_error for a malformed line.
	[[nodiscard]] static Message parse(std::string_view line);
};

// "HOST:PORT" or "PORT" (host empty); nullopt if malformed.
[[nodiscard]] std::optional<std::pair<std::string, std::uint16_t>>
parse_host_port(std::string_view text);

class Socket {
public:
	Socket() noexcept = default;
	explicit Socket(UniqueFd fd) noexcept : fd_(std::move(fd)) {}

	[[nodiscard]] int fd() const noexcept { return fd_.get(); }
	[[nodiscard]] bool valid() const noexcept { return fd_.valid(); }
	void close() noexcept { fd_.reset(); }

	void send(const Message &m);
	// The next message; waits at most timeout. std::system_error
	// (ETIMEDOUT) on timeout, std::runtime_error at end of stream.
	Message recv(std::chrono::milliseconds timeout);
	// recv() that must bring verb.
	Message expect(std::string_view verb, std::chrono::milliseconds timeout);
	// The next message if one has fully arrived, left for recv(); does
	// not block. std::runtime_error at end of stream.
	[[nodiscard]] std::optional<Message> peek();

private:
	UniqueFd fd_;
	std::string buf_;
};

// A listening TCP socket on host (empty: any IPv4 address) and port (0:
// any); bound_port gets the port.
[[nodiscard]] UniqueFd listen_tcp(const std::string &host, std::uint16_t port,
				  std::uint16_t *bound_port = nullptr);

// Accepts one connection, waiting at most timeout.
[[nodiscard]] Socket accept_one(int listen_fd, std::chrono::milliseconds timeout);

// Connects to host:port (IPv4 address or name), retrying while the peer
// refuses (it may not listen yet) until timeout.
[[nodiscard]] Socket connect_tcp(const std::string &host, std::uint16_t port,
				 std::chrono::milliseconds timeout);

// A connected pair of sockets in this process (socketpair), for tests.
[[nodiscard]] std::pair<Socket, Socket> socket_pair();

// Lower-case hex of bytes, and back (nullopt: odd length or not hex).
[[nodiscard]] std::string to_hex(const std::uint8_t *p, std::size_t n);
[[nodiscard]] std::optional<std::vector<std::uint8_t>> from_hex(std::string_view s);

} // namespace rv::bench::oob

#endif // RV_BENCH_OOB_HPP
