// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The fuzzer's random numbers: xoshiro256** seeded through splitmix64, so
// that a (seed, worker, generation, thread) tuple always yields the same
// sequence of calls. Helpers pick boundary values: 0, 1, the maximum, the
// maximum + 1 of a narrower field, negative numbers as unsigned, powers of
// two and their neighbours.
#ifndef RV_FUZZ_RNG_HPP
#define RV_FUZZ_RNG_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <type_traits>

namespace rvfuzz {

// splitmix64: one step of the seed expansion, also a decent hash.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t &x) noexcept
{
	std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

// A seed for one stream of a campaign: mixes the campaign seed with the
// stream's coordinates.
[[nodiscard]] constexpr std::uint64_t mix_seed(std::uint64_t seed,
					       std::uint64_t a,
					       std::uint64_t b = 0,
					       std::uint64_t c = 0) noexcept
{
	std::uint64_t x = seed;

	x ^= splitmix64(a);
	x ^= splitmix64(b) << 1;
	x ^= splitmix64(c) << 2;
	return splitmix64(x);
}

class Rng {
public:
	explicit Rng(std::uint64_t seed = 0) noexcept
	{
		for (auto &w : s_)
			w = splitmix64(seed);
	}

	std::uint64_t next() noexcept
	{
		const std::uint64_t r = rotl(s_[1] * 5, 7) * 9;
		const std::uint64_t t = s_[1] << 17;

		s_[2] ^= s_[0];
		s_[3] ^= s_[1];
		s_[1] ^= s_[2];
		s_[0] ^= s_[3];
		s_[2] ^= t;
		s_[3] = rotl(s_[3], 45);
		return r;
	}

	// Uniform in [0, n); 0 if n is 0.
	std::uint64_t below(std::uint64_t n) noexcept
	{
		// The modulo bias is irrelevant here.
		return n ? next() % n : 0;
	}

	// Uniform in [lo, hi].
	std::uint64_t range(std::uint64_t lo, std::uint64_t hi) noexcept
	{
		return lo + below(hi - lo + 1);
	}

	// True with probability percent / 100.
	bool chance(unsigned percent) noexcept
	{
		return below(100) < percent;
	}

	// True with probability permille / 1000.
	bool chance_permille(unsigned permille) noexcept
	{
		return below(1000) < permille;
	}

	template <typename T>
	T pick(std::initializer_list<T> values) noexcept
	{
		return *(values.begin() + below(values.size()));
	}

	template <typename T>
	T &pick(std::span<T> values) noexcept
	{
		return values[below(values.size())];
	}

	// A value for an integer field of type T: half the time one of the
	// interesting values given for it, else a generic boundary value of
	// T (0, 1, max, max - 1, -1 and -2 as unsigned, 2^k and 2^k +- 1),
	// else random bits.
	template <typename T>
	T fuzz(std::initializer_list<T> interesting = {}) noexcept
	{
		static_assert(std::is_integral_v<T>);
		const unsigned r = static_cast<unsigned>(below(8));

		if (interesting.size() && r < 4)
			return pick(interesting);
		if (r < 7)
			return boundary<T>();
		return static_cast<T>(next());
	}

	template <typename T>
	T boundary() noexcept
	{
		using U = std::make_unsigned_t<T>;
		constexpr unsigned bits = std::numeric_limits<U>::digits;
		const U max = std::numeric_limits<U>::max();
		const unsigned k = static_cast<unsigned>(below(bits));
		const U p = static_cast<U>(U{1} << k);

		switch (below(9)) {
		case 0: return static_cast<T>(U{0});
		case 1: return static_cast<T>(U{1});
		case 2: return static_cast<T>(max);
		case 3: return static_cast<T>(static_cast<U>(max - 1));
		case 4: return static_cast<T>(static_cast<U>(max >> 1));
		case 5: return static_cast<T>(static_cast<U>(max >> 1) + 1);
		case 6: return static_cast<T>(p);
		case 7: return static_cast<T>(static_cast<U>(p - 1));
		default: return static_cast<T>(static_cast<U>(p + 1));
		}
	}

	// Fills bytes with random data.
	void fill(std::span<std::byte> bytes) noexcept
	{
		std::size_t i = 0;

		while (i < bytes.size()) {
			std::uint64_t v = next();
			for (int k = 0; k < 8 && i < bytes.size(); k++, i++) {
				bytes[i] = static_cast<std::byte>(v & 0xff);
				v >>= 8;
			}
		}
	}

private:
	static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept
	{
		return (x << k) | (x >> (64 - k));
	}

	std::array<std::uint64_t, 4> s_{};
};

} // namespace rvfuzz

#endif // RV_FUZZ_RNG_HPP
