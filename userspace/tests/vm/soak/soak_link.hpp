// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak --two-vm: the TCP connection between the two controllers. It
// carries rv::test::Msg as a Channel does (Channel reads it), but sends
// never block: a message that the socket does not take now waits in a
// queue, written as the socket drains (poll for events()). The link goes
// over the network whose link the soak takes down, so the socket has no
// keepalive and a long TCP_USER_TIMEOUT: TCP retransmits across seconds
// of outage. A peer that has gone quiet is detected by silence()
// (the controllers send ctl_ping every second), not by TCP.
#ifndef RV_SOAK_SOAK_LINK_HPP
#define RV_SOAK_SOAK_LINK_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <type_traits>

#include "conn_util.hpp"

namespace rv::soak {

class ControlLink {
public:
	using clock = std::chrono::steady_clock;

	ControlLink() noexcept = default;

	// VM a: listens on port (all addresses) and accepts one connection,
	// waiting at most timeout. Throws std::system_error (ETIMEDOUT).
	static ControlLink accept_one(std::uint16_t port, std::chrono::seconds timeout,
				      std::chrono::seconds user_timeout);
	// VM b: connects to ip:port, trying again every 200 ms until
	// timeout (VM a may not listen yet, or its link may be down).
	static ControlLink connect_to(const std::string &ip, std::uint16_t port,
				      std::chrono::seconds timeout,
				      std::chrono::seconds user_timeout);

	[[nodiscard]] bool open() const noexcept { return ch_.valid(); }
	[[nodiscard]] int fd() const noexcept { return ch_.fd(); }
	// POLLIN, and POLLOUT while messages wait.
	[[nodiscard]] short events() const noexcept;
	[[nodiscard]] std::size_t queued() const noexcept { return out_.size(); }

	// Queues m and writes what the socket takes. Throws
	// std::system_error when the connection failed.
	void send(const rv::test::Msg &m);
	void send(std::uint32_t type) { send(rv::test::Msg{type, 0, {}}); }
	template <typename T>
	void send(std::uint32_t type, const T &body)
	{
		static_assert(std::is_trivially_copyable_v<T>);
		static_assert(sizeof(T) <= sizeof(rv::test::Msg::body));
		rv::test::Msg m;
		m.type = type;
		m.len = sizeof(T);
		std::memcpy(m.body.data(), &body, sizeof(T));
		send(m);
	}
	void send_text(std::uint32_t type, const std::string &text);
	// Writes what the socket takes now; true when nothing waits.
	bool flush();
	// The next whole message that has arrived, without waiting.
	// Throws std::system_error (EPIPE at EOF).
	std::optional<rv::test::Msg> recv();
	// Since the last message arrived (or the link opened).
	[[nodiscard]] clock::duration silence() const noexcept
	{
		return clock::now() - heard_;
	}
	// The longest time between two messages that arrived since
	// the last reset_longest_gap() (the peer pings every second: more
	// is TCP waiting to retransmit).
	[[nodiscard]] clock::duration longest_gap() const noexcept { return gap_; }
	void reset_longest_gap() noexcept { gap_ = {}; }
	void close() noexcept;

private:
	explicit ControlLink(rv::UniqueFd fd);

	rv::test::Channel ch_;
	std::deque<rv::test::Msg> out_;
	std::size_t off_ = 0;		// bytes of out_.front() written
	clock::time_point heard_ = clock::now();
	clock::duration gap_{};
};

} // namespace rv::soak

#endif // RV_SOAK_SOAK_LINK_HPP
