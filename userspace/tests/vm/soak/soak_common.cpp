// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "soak.hpp"

#include <cstring>
#include <sstream>

#include <sys/socket.h>

namespace rv::soak {

void pattern_fill(std::byte *dst, std::uint64_t len, std::uint32_t sender,
		  std::uint64_t seq) noexcept
{
	const std::uint64_t words = len / 8;

	for (std::uint64_t w = 0; w < words; w++) {
		const std::uint64_t v = pattern_word(sender, seq, w);
		std::memcpy(dst + w * 8, &v, 8);
	}
	if (len % 8) {
		const std::uint64_t v = pattern_word(sender, seq, words);
		std::memcpy(dst + words * 8, &v, len % 8);
	}
}

PatternCheck pattern_check(const std::byte *p, std::uint64_t len,
			   std::uint32_t sender, std::uint64_t seq) noexcept
{
	PatternCheck c;
	const std::uint64_t words = (len + 7) / 8;

	for (std::uint64_t w = 0; w < words; w++) {
		const std::uint64_t want = pattern_word(sender, seq, w);
		const std::uint64_t n = len - w * 8 < 8 ? len - w * 8 : 8;
		std::uint64_t found = 0;

		std::memcpy(&found, p + w * 8, n);
		const std::uint64_t mask = n == 8 ? ~std::uint64_t{0}
						  : (std::uint64_t{1} << (8 * n)) - 1;
		const std::uint64_t diff = (found ^ want) & mask;
		if (!diff)
			continue;
		for (std::uint64_t i = 0; i < n; i++) {
			if (!((diff >> (8 * i)) & 0xff))
				continue;
			if (!c.bad_bytes) {
				c.first_bad = w * 8 + i;
				c.want = want & mask;
				c.found = found;
			}
			c.bad_bytes++;
		}
	}
	return c;
}

std::string pattern_decode(std::uint64_t word)
{
	const auto sender = static_cast<std::uint32_t>((word >> 8) & 0xff);
	const std::uint64_t seq = (word >> 16) & 0xffffff;
	const std::uint64_t w = word >> 40;
	std::ostringstream o;

	if (pattern_word(sender, seq, w) != word) {
		o << "not a pattern word";
		return o.str();
	}
	o << "worker " << sender << " message " << seq << " word " << w;
	return o.str();
}

void grow_socket_buffers(int fd) noexcept
{
	const int size = 1 << 20;

	if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		(void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

} // namespace rv::soak
