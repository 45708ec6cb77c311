// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::json: a small streaming JSON writer for the tools' --json output.
//
//	rv::json::Writer w;
//	w.begin_object()
//	 .member("device", "/dev/rv")
//	 .key("abi").begin_object().member("major", 1).end_object()
//	 .key("capabilities").begin_array().value("evict").end_array()
//	 .end_object();
//	std::puts(w.str().c_str());
//
// The writer checks the structure as it goes: a value where a key is
// due, a key inside an array, an unbalanced end_*() or a second top-level
// value throws std::logic_error, and str() throws until the document is
// complete. Strings are emitted as valid JSON whatever bytes they hold:
// '"', '\\' and control characters are escaped, well-formed UTF-8 is
// copied, and each byte that is not part of well-formed UTF-8 becomes
// U+FFFD. Non-finite doubles are written as null.
#ifndef RV_TOOLKIT_JSON_HPP
#define RV_TOOLKIT_JSON_HPP

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rv::json {

// s as a JSON string literal, quotes included.
[[nodiscard]] std::string quote(std::string_view s);

// Appends quote(s) to out.
void append_quoted(std::string &out, std::string_view s);

template <typename T>
concept Integer = std::integral<T> && !std::same_as<T, bool> &&
		  !std::same_as<T, char> && !std::same_as<T, wchar_t> &&
		  !std::same_as<T, char8_t> && !std::same_as<T, char16_t> &&
		  !std::same_as<T, char32_t>;

class Writer {
public:
	// indent 0 writes everything on one line with no spaces; indent n > 0
	// puts each member and element on its own line, n spaces per level.
	explicit Writer(unsigned indent = 0) : indent_(indent) {}

	Writer &begin_object();
	Writer &end_object();
	Writer &begin_array();
	Writer &end_array();

	// The next member's name; only inside an object.
	Writer &key(std::string_view name);

	Writer &value(std::string_view s);
	Writer &value(const char *s) { return value(std::string_view(s)); }
	Writer &value(const std::string &s)
	{
		return value(std::string_view(s));
	}
	Writer &value(bool b);
	Writer &value(std::nullptr_t);
	Writer &value(double d);
	template <Integer T>
	Writer &value(T v)
	{
		if constexpr (std::is_signed_v<T>)
			return value_int(static_cast<std::int64_t>(v));
		else
			return value_uint(static_cast<std::uint64_t>(v));
	}

	// key(name).value(v)
	template <typename T>
	Writer &member(std::string_view name, const T &v)
	{
		key(name);
		return value(v);
	}

	// The top-level value has been written and every container closed.
	[[nodiscard]] bool complete() const noexcept
	{
		return done_ && stack_.empty();
	}

	// The document; throws std::logic_error unless complete().
	[[nodiscard]] const std::string &str() const;

	// What has been written so far, complete or not.
	[[nodiscard]] const std::string &buffer() const noexcept
	{
		return out_;
	}

private:
	enum class Kind : std::uint8_t { object, array };
	struct Level {
		Kind kind;
		bool has_key = false;	// object: key() written, value due
		std::size_t count = 0;	// members or elements so far
	};

	Writer &value_int(std::int64_t v) { return value_integer(v); }
	Writer &value_uint(std::uint64_t v) { return value_integer(v); }
	template <typename T> Writer &value_integer(T v);
	void before_value();
	void after_value();
	void newline(std::size_t depth);
	Writer &end(Kind kind);

	unsigned indent_;
	std::string out_;
	std::vector<Level> stack_;
	bool done_ = false;
};

} // namespace rv::json

#endif // RV_TOOLKIT_JSON_HPP
