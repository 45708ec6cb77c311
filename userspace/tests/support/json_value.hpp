// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Test support: a strict JSON (RFC 8259) reader, used to check what
// rv::json::Writer and the tools' --json produce.
#ifndef RV_TEST_JSON_VALUE_HPP
#define RV_TEST_JSON_VALUE_HPP

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::test {

class JsonValue {
public:
	enum class Type { null, boolean, number, string, array, object };

	[[nodiscard]] Type type() const noexcept { return type_; }
	[[nodiscard]] bool is_null() const noexcept { return type_ == Type::null; }
	[[nodiscard]] bool is_bool() const noexcept { return type_ == Type::boolean; }
	[[nodiscard]] bool is_number() const noexcept { return type_ == Type::number; }
	[[nodiscard]] bool is_string() const noexcept { return type_ == Type::string; }
	[[nodiscard]] bool is_array() const noexcept { return type_ == Type::array; }
	[[nodiscard]] bool is_object() const noexcept { return type_ == Type::object; }

	// Accessors throw std::runtime_error on a type mismatch.
	[[nodiscard]] bool as_bool() const;
	// The string's decoded contents.
	[[nodiscard]] const std::string &as_string() const;
	// The number's text as written, e.g. "-1.5e3".
	[[nodiscard]] const std::string &number_text() const;
	// The number as an integer; throws unless it is one and fits.
	[[nodiscard]] std::int64_t as_int() const;
	[[nodiscard]] std::uint64_t as_uint() const;
	[[nodiscard]] double as_double() const;

	[[nodiscard]] const std::vector<JsonValue> &as_array() const;
	[[nodiscard]] const std::vector<std::pair<std::string, JsonValue>> &
	as_object() const;

	// Object member by name: nullptr if absent.
	[[nodiscard]] const JsonValue *find(std::string_view key) const;
	// Object member by name; throws if absent.
	[[nodiscard]] const JsonValue &at(std::string_view key) const;
	// Array element; throws if out of range.
	[[nodiscard]] const JsonValue &at(std::size_t index) const;
	[[nodiscard]] std::size_t size() const;

	// Parses exactly one JSON text (surrounding whitespace allowed).
	// Throws std::runtime_error with the offset on malformed input,
	// including duplicate object keys and invalid UTF-8.
	static JsonValue parse(std::string_view text);

private:
	friend class JsonParser;

	Type type_ = Type::null;
	bool bool_ = false;
	std::string text_;	// string contents or number text
	std::vector<JsonValue> array_;
	std::vector<std::pair<std::string, JsonValue>> object_;
};

} // namespace rv::test

#endif // RV_TEST_JSON_VALUE_HPP
