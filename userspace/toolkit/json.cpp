// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <toolkit/json.hpp>

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace rv::json {

namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (whose byte
// is >= 0x80), or 0 if there is none (Unicode 15, table 3-7).
std::size_t utf8_length(std::string_view s, std::size_t i) noexcept
{
	auto byte = [&](std::size_t k) -> unsigned {
		return i + k < s.size() ? static_cast<unsigned char>(s[i + k])
					: 0u;
	};
	auto cont = [&](std::size_t k, unsigned lo = 0x80,
			unsigned hi = 0xbf) {
		unsigned b = byte(k);
		return b >= lo && b <= hi;
	};

	unsigned b0 = byte(0);
	if (b0 >= 0xc2 && b0 <= 0xdf)
		return cont(1) ? 2 : 0;
	if (b0 == 0xe0)
		return cont(1, 0xa0) && cont(2) ? 3 : 0;
	if ((b0 >= 0xe1 && b0 <= 0xec) || b0 == 0xee || b0 == 0xef)
		return cont(1) && cont(2) ? 3 : 0;
	if (b0 == 0xed)	// excludes the UTF-16 surrogates
		return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
	if (b0 == 0xf0)
		return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
	if (b0 >= 0xf1 && b0 <= 0xf3)
		return cont(1) && cont(2) && cont(3) ? 4 : 0;
	if (b0 == 0xf4)	// up to U+10FFFF
		return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
	return 0;
}

} // namespace

void append_quoted(std::string &out, std::string_view s)
{
	static constexpr char hex[] = "0123456789abcdef";

	out += '"';
	for (std::size_t i = 0; i < s.size();) {
		auto c = static_cast<unsigned char>(s[i]);

		if (c >= 0x80) {
			std::size_t len = utf8_length(s, i);
			if (len) {
				out.append(s, i, len);
				i += len;
			} else {
				out += "\\ufffd";
				i++;
			}
			continue;
		}

		switch (c) {
		case '"':
			out += "\\\"";
			break;
		case '\\':
			out += "\\\\";
			break;
		case '\b':
			out += "\\b";
			break;
		case '\f':
			out += "\\f";
			break;
		case '\n':
			out += "\\n";
			break;
		case '\r':
			out += "\\r";
			break;
		case '\t':
			out += "\\t";
			break;
		default:
			if (c < 0x20) {
				out += "\\u00";
				out += hex[c >> 4];
				out += hex[c & 0xf];
			} else {
				out += static_cast<char>(c);
			}
			break;
		}
		i++;
	}
	out += '"';
}

std::string quote(std::string_view s)
{
	std::string out;

	out.reserve(s.size() + 2);
	append_quoted(out, s);
	return out;
}

void Writer::newline(std::size_t depth)
{
	if (!indent_)
		return;
	out_ += '\n';
	out_.append(depth * indent_, ' ');
}

void Writer::before_value()
{
	if (stack_.empty()) {
		if (done_)
			throw std::logic_error(
				"json::Writer: a second top-level value");
		return;
	}

	Level &top = stack_.back();
	if (top.kind == Kind::object) {
		if (!top.has_key)
			throw std::logic_error(
				"json::Writer: object member without a key");
		top.has_key = false;
		return;
	}

	if (top.count++)
		out_ += ',';
	newline(stack_.size());
}

void Writer::after_value()
{
	if (stack_.empty())
		done_ = true;
}

Writer &Writer::key(std::string_view name)
{
	if (stack_.empty() || stack_.back().kind != Kind::object)
		throw std::logic_error("json::Writer: key outside an object");

	Level &top = stack_.back();
	if (top.has_key)
		throw std::logic_error("json::Writer: key after key");
	if (top.count++)
		out_ += ',';
	newline(stack_.size());
	append_quoted(out_, name);
	out_ += ':';
	if (indent_)
		out_ += ' ';
	top.has_key = true;
	return *this;
}

Writer &Writer::begin_object()
{
	before_value();
	out_ += '{';
	stack_.push_back({Kind::object});
	return *this;
}

Writer &Writer::begin_array()
{
	before_value();
	out_ += '[';
	stack_.push_back({Kind::array});
	return *this;
}

Writer &Writer::end(Kind kind)
{
	if (stack_.empty() || stack_.back().kind != kind)
		throw std::logic_error(kind == Kind::object
			? "json::Writer: end_object() without an open object"
			: "json::Writer: end_array() without an open array");

	Level top = stack_.back();
	if (top.has_key)
		throw std::logic_error("json::Writer: key without a value");
	stack_.pop_back();
	if (top.count)
		newline(stack_.size());
	out_ += kind == Kind::object ? '}' : ']';
	after_value();
	return *this;
}

Writer &Writer::end_object()
{
	return end(Kind::object);
}

Writer &Writer::end_array()
{
	return end(Kind::array);
}

Writer &Writer::value(std::string_view s)
{
	before_value();
	append_quoted(out_, s);
	after_value();
	return *this;
}

Writer &Writer::value(bool b)
{
	before_value();
	out_ += b ? "true" : "false";
	after_value();
	return *this;
}

Writer &Writer::value(std::nullptr_t)
{
	before_value();
	out_ += "null";
	after_value();
	return *this;
}

Writer &Writer::value(double d)
{
	before_value();
	if (std::isfinite(d)) {
		char buf[64];
		auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), d);
		if (ec != std::errc())
			throw std::logic_error("json::Writer: to_chars failed");
		out_.append(buf, ptr);
	} else {
		out_ += "null";
	}
	after_value();
	return *this;
}

template <typename T> Writer &Writer::value_integer(T v)
{
	char buf[32];
	auto res = std::to_chars(buf, buf + sizeof(buf), v);

	before_value();
	out_.append(buf, res.ptr);
	after_value();
	return *this;
}

template Writer &Writer::value_integer(std::int64_t v);
template Writer &Writer::value_integer(std::uint64_t v);

const std::string &Writer::str() const
{
	if (!complete())
		throw std::logic_error("json::Writer: document incomplete");
	return out_;
}

} // namespace rv::json
