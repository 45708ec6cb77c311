// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "json_value.hpp"

#include <charconv>
#include <cstdlib>

namespace rv::test {

namespace {

[[noreturn]] void type_error(const char *want)
{
	throw std::runtime_error(std::string("JSON value is not ") + want);
}

} // namespace

class JsonParser {
public:
	explicit JsonParser(std::string_view text) : s_(text) {}

	JsonValue document()
	{
		skip_ws();
		JsonValue v = value(0);
		skip_ws();
		if (pos_ != s_.size())
			fail("trailing characters");
		return v;
	}

private:
	static constexpr int max_depth = 256;

	[[noreturn]] void fail(const std::string &what) const
	{
		throw std::runtime_error("JSON parse error at offset " +
					 std::to_string(pos_) + ": " + what);
	}

	[[nodiscard]] bool at_end() const { return pos_ >= s_.size(); }
	[[nodiscard]] char peek() const { return at_end() ? '\0' : s_[pos_]; }

	void skip_ws()
	{
		while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
				     s_[pos_] == '\n' || s_[pos_] == '\r'))
			pos_++;
	}

	void expect(char c)
	{
		if (peek() != c || at_end())
			fail(std::string("expected '") + c + "'");
		pos_++;
	}

	void literal(std::string_view word)
	{
		if (s_.substr(pos_, word.size()) != word)
			fail("invalid literal");
		pos_ += word.size();
	}

	JsonValue value(int depth)
	{
		if (depth > max_depth)
			fail("nesting too deep");

		JsonValue v;
		switch (peek()) {
		case '{':
			v.type_ = JsonValue::Type::object;
			object(v, depth);
			break;
		case '[':
			v.type_ = JsonValue::Type::array;
			array(v, depth);
			break;
		case '"':
			v.type_ = JsonValue::Type::string;
			v.text_ = string();
			break;
		case 't':
			literal("true");
			v.type_ = JsonValue::Type::boolean;
			v.bool_ = true;
			break;
		case 'f':
			literal("false");
			v.type_ = JsonValue::Type::boolean;
			break;
		case 'n':
			literal("null");
			break;
		default:
			v.type_ = JsonValue::Type::number;
			v.text_ = number();
			break;
		}
		return v;
	}

	void object(JsonValue &v, int depth)
	{
		expect('{');
		skip_ws();
		if (peek() == '}') {
			pos_++;
			return;
		}
		for (;;) {
			skip_ws();
			if (peek() != '"')
				fail("expected a member name");
			std::string key = string();
			if (v.find(key))
				fail("duplicate key \"" + key + "\"");
			skip_ws();
			expect(':');
			skip_ws();
			JsonValue member = value(depth + 1);
			v.object_.emplace_back(std::move(key), std::move(member));
			skip_ws();
			if (peek() == ',') {
				pos_++;
				continue;
			}
			expect('}');
			return;
		}
	}

	void array(JsonValue &v, int depth)
	{
		expect('[');
		skip_ws();
		if (peek() == ']') {
			pos_++;
			return;
		}
		for (;;) {
			skip_ws();
			v.array_.push_back(value(depth + 1));
			skip_ws();
			if (peek() == ',') {
				pos_++;
				continue;
			}
			expect(']');
			return;
		}
	}

	std::string number()
	{
		std::size_t start = pos_;
		auto digits = [&] {
			std::size_t n = 0;
			while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') {
				pos_++;
				n++;
			}
			return n;
		};

		if (peek() == '-')
			pos_++;
		if (peek() == '0')
			pos_++;
		else if (!digits())
			fail("invalid value");
		if (peek() == '.') {
			pos_++;
			if (!digits())
				fail("digit expected after '.'");
		}
		if (peek() == 'e' || peek() == 'E') {
			pos_++;
			if (peek() == '+' || peek() == '-')
				pos_++;
			if (!digits())
				fail("digit expected in exponent");
		}
		return std::string(s_.substr(start, pos_ - start));
	}

	unsigned hex4()
	{
		unsigned v = 0;

		for (int i = 0; i < 4; i++, pos_++) {
			char c = peek();
			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= static_cast<unsigned>(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= static_cast<unsigned>(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v |= static_cast<unsigned>(c - 'A' + 10);
			else
				fail("invalid \\u escape");
		}
		return v;
	}

	static void put_utf8(std::string &out, unsigned cp)
	{
		auto byte = [&](unsigned b) { out += static_cast<char>(b); };

		if (cp < 0x80) {
			byte(cp);
		} else if (cp < 0x800) {
			byte(0xc0 | cp >> 6);
			byte(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			byte(0xe0 | cp >> 12);
			byte(0x80 | (cp >> 6 & 0x3f));
			byte(0x80 | (cp & 0x3f));
		} else {
			byte(0xf0 | cp >> 18);
			byte(0x80 | (cp >> 12 & 0x3f));
			byte(0x80 | (cp >> 6 & 0x3f));
			byte(0x80 | (cp & 0x3f));
		}
	}

	// Validates one raw UTF-8 sequence at pos_ and copies it.
	void utf8(std::string &out)
	{
		auto b = [&](std::size_t k) -> unsigned {
			return pos_ + k < s_.size()
				? static_cast<unsigned char>(s_[pos_ + k]) : 0u;
		};
		auto in = [](unsigned v, unsigned lo, unsigned hi) {
			return v >= lo && v <= hi;
		};
		unsigned b0 = b(0);
		std::size_t len = 0;

		if (in(b0, 0xc2, 0xdf) && in(b(1), 0x80, 0xbf))
			len = 2;
		else if (b0 == 0xe0 && in(b(1), 0xa0, 0xbf) && in(b(2), 0x80, 0xbf))
			len = 3;
		else if ((in(b0, 0xe1, 0xec) || in(b0, 0xee, 0xef)) &&
			 in(b(1), 0x80, 0xbf) && in(b(2), 0x80, 0xbf))
			len = 3;
		else if (b0 == 0xed && in(b(1), 0x80, 0x9f) && in(b(2), 0x80, 0xbf))
			len = 3;
		else if (b0 == 0xf0 && in(b(1), 0x90, 0xbf) &&
			 in(b(2), 0x80, 0xbf) && in(b(3), 0x80, 0xbf))
			len = 4;
		else if (in(b0, 0xf1, 0xf3) && in(b(1), 0x80, 0xbf) &&
			 in(b(2), 0x80, 0xbf) && in(b(3), 0x80, 0xbf))
			len = 4;
		else if (b0 == 0xf4 && in(b(1), 0x80, 0x8f) &&
			 in(b(2), 0x80, 0xbf) && in(b(3), 0x80, 0xbf))
			len = 4;
		if (!len)
			fail("invalid UTF-8 in string");
		out.append(s_.substr(pos_, len));
		pos_ += len;
	}

	std::string string()
	{
		std::string out;

		expect('"');
		for (;;) {
			if (at_end())
				fail("unterminated string");
			auto c = static_cast<unsigned char>(s_[pos_]);
			if (c == '"') {
				pos_++;
				return out;
			}
			if (c < 0x20)
				fail("unescaped control character in string");
			if (c >= 0x80) {
				utf8(out);
				continue;
			}
			pos_++;
			if (c != '\\') {
				out += static_cast<char>(c);
				continue;
			}
			char e = peek();
			pos_++;
			switch (e) {
			case '"': out += '"'; break;
			case '\\': out += '\\'; break;
			case '/': out += '/'; break;
			case 'b': out += '\b'; break;
			case 'f': out += '\f'; break;
			case 'n': out += '\n'; break;
			case 'r': out += '\r'; break;
			case 't': out += '\t'; break;
			case 'u': {
				unsigned cp = hex4();
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (s_.substr(pos_, 2) != "\\u")
						fail("lone high surrogate");
					pos_ += 2;
					unsigned lo = hex4();
					if (lo < 0xdc00 || lo > 0xdfff)
						fail("invalid low surrogate");
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					fail("lone low surrogate");
				}
				put_utf8(out, cp);
				break;
			}
			default:
				pos_--;
				fail("invalid escape");
			}
		}
	}

	std::string_view s_;
	std::size_t pos_ = 0;
};

JsonValue JsonValue::parse(std::string_view text)
{
	return JsonParser(text).document();
}

bool JsonValue::as_bool() const
{
	if (!is_bool())
		type_error("a boolean");
	return bool_;
}

const std::string &JsonValue::as_string() const
{
	if (!is_string())
		type_error("a string");
	return text_;
}

const std::string &JsonValue::number_text() const
{
	if (!is_number())
		type_error("a number");
	return text_;
}

std::int64_t JsonValue::as_int() const
{
	const std::string &t = number_text();
	std::int64_t v = 0;
	auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
	if (ec != std::errc() || ptr != t.data() + t.size())
		type_error("an int64");
	return v;
}

std::uint64_t JsonValue::as_uint() const
{
	const std::string &t = number_text();
	std::uint64_t v = 0;
	auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
	if (ec != std::errc() || ptr != t.data() + t.size())
		type_error("a uint64");
	return v;
}

double JsonValue::as_double() const
{
	const std::string &t = number_text();
	double v = 0;
	auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
	if (ec != std::errc() || ptr != t.data() + t.size())
		type_error("a double");
	return v;
}

const std::vector<JsonValue> &JsonValue::as_array() const
{
	if (!is_array())
		type_error("an array");
	return array_;
}

const std::vector<std::pair<std::string, JsonValue>> &
JsonValue::as_object() const
{
	if (!is_object())
		type_error("an object");
	return object_;
}

const JsonValue *JsonValue::find(std::string_view key) const
{
	for (const auto &[k, v] : as_object())
		if (k == key)
			return &v;
	return nullptr;
}

const JsonValue &JsonValue::at(std::string_view key) const
{
	const JsonValue *v = find(key);
	if (!v)
		throw std::runtime_error("JSON object has no member \"" +
					 std::string(key) + "\"");
	return *v;
}

const JsonValue &JsonValue::at(std::size_t index) const
{
	const auto &a = as_array();
	if (index >= a.size())
		throw std::runtime_error("JSON array index out of range");
	return a[index];
}

std::size_t JsonValue::size() const
{
	if (is_array())
		return array_.size();
	return as_object().size();
}

} // namespace rv::test
