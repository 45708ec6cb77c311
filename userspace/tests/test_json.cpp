// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gtest/gtest.h>

#include <toolkit/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "support/json_value.hpp"

using rv::json::quote;
using rv::json::Writer;
using rv::test::JsonValue;

using namespace std::string_literals;

TEST(JsonQuote, Plain)
{
	EXPECT_EQ(quote(""), R"("")");
	EXPECT_EQ(quote("evict"), R"("evict")");
	EXPECT_EQ(quote("/dev/rv"), R"("/dev/rv")");	// '/' needs no escape
	EXPECT_EQ(quote("a b~\x7f"), "\"a b~\x7f\"");
}

TEST(JsonQuote, QuoteAndBackslash)
{
	EXPECT_EQ(quote(R"(a"b)"), R"("a\"b")");
	EXPECT_EQ(quote(R"(a\b)"), R"("a\\b")");
	EXPECT_EQ(quote(R"(\")"), R"("\\\"")");
}

TEST(JsonQuote, ControlCharacters)
{
	EXPECT_EQ(quote("\b\f\n\r\t"), R"("\b\f\n\r\t")");
	EXPECT_EQ(quote("\x01"), R"("\u0001")");
	EXPECT_EQ(quote("\x1f"), R"("\u001f")");
	EXPECT_EQ(quote("\x0b"), R"("\u000b")");
	EXPECT_EQ(quote("a\0b"s), R"("a\u0000b")");
}

TEST(JsonQuote, EveryAsciiByteRoundTrips)
{
	for (int c = 0; c < 0x80; c++) {
		std::string s(1, static_cast<char>(c));
		SCOPED_TRACE(c);
		std::string q = quote(s);
		for (char qc : q)
			EXPECT_GE(static_cast<unsigned char>(qc), 0x20u);
		EXPECT_EQ(JsonValue::parse(q).as_string(), s);
	}
}

TEST(JsonQuote, Utf8Copied)
{
	for (std::string s : {"\xc3\xa9"s,		// U+00E9
			      "\xe2\x82\xac"s,		// U+20AC
			      "\xef\xbf\xbf"s,		// U+FFFF
			      "\xf0\x9f\x98\x80"s,	// U+1F600
			      "\xf4\x8f\xbf\xbf"s,	// U+10FFFF
			      "mlx5_0 \xe2\x86\x92 port 1"s}) {
		SCOPED_TRACE(s);
		EXPECT_EQ(quote(s), '"' + s + '"');
		EXPECT_EQ(JsonValue::parse(quote(s)).as_string(), s);
	}
}

TEST(JsonQuote, InvalidUtf8Replaced)
{
	const std::string r = R"(\ufffd)";

	EXPECT_EQ(quote("\xff"), '"' + r + '"');
	EXPECT_EQ(quote("a\x80z"), "\"a" + r + "z\"");	// lone continuation
	EXPECT_EQ(quote("\xc3"), '"' + r + '"');	// truncated
	EXPECT_EQ(quote("\xc3z"), '"' + r + "z\"");
	EXPECT_EQ(quote("\xc0\xaf"), '"' + r + r + '"');	// overlong
	EXPECT_EQ(quote("\xe0\x80\xaf"), '"' + r + r + r + '"');
	EXPECT_EQ(quote("\xed\xa0\x80"), '"' + r + r + r + '"');  // surrogate
	EXPECT_EQ(quote("\xf4\x90\x80\x80"), '"' + r + r + r + r + '"');
	EXPECT_EQ(quote("\xf8\x88\x80\x80\x80"),
		  '"' + r + r + r + r + r + '"');
	// Whatever the bytes, the result is valid JSON.
	std::string all;
	for (int c = 0; c < 256; c++)
		all += static_cast<char>(c);
	EXPECT_NO_THROW(JsonValue::parse(quote(all)));
}

TEST(JsonWriter, Scalars)
{
	EXPECT_EQ(Writer().value(1).str(), "1");
	EXPECT_EQ(Writer().value("x").str(), R"("x")");	// not a bool
	EXPECT_EQ(Writer().value(std::string("y")).str(), R"("y")");
	EXPECT_EQ(Writer().value(true).str(), "true");
	EXPECT_EQ(Writer().value(false).str(), "false");
	EXPECT_EQ(Writer().value(nullptr).str(), "null");
}

TEST(JsonWriter, Integers)
{
	EXPECT_EQ(Writer().value(std::numeric_limits<std::int64_t>::min()).str(),
		  "-9223372036854775808");
	EXPECT_EQ(Writer().value(std::numeric_limits<std::uint64_t>::max()).str(),
		  "18446744073709551615");
	EXPECT_EQ(Writer().value(std::int8_t{-5}).str(), "-5");
	EXPECT_EQ(Writer().value(std::uint8_t{200}).str(), "200");
	EXPECT_EQ(Writer().value(std::uint16_t{7}).str(), "7");
	EXPECT_EQ(Writer().value(0u).str(), "0");
}

TEST(JsonWriter, Doubles)
{
	EXPECT_EQ(Writer().value(0.5).str(), "0.5");
	EXPECT_EQ(Writer().value(-2.0).str(), "-2");
	EXPECT_DOUBLE_EQ(JsonValue::parse(Writer().value(1e300).str())
				 .as_double(), 1e300);
	EXPECT_DOUBLE_EQ(JsonValue::parse(Writer().value(0.1).str())
				 .as_double(), 0.1);
	EXPECT_EQ(Writer().value(std::nan("")).str(), "null");
	EXPECT_EQ(Writer().value(-HUGE_VAL).str(), "null");
	EXPECT_EQ(Writer().value(std::numeric_limits<double>::infinity()).str(),
		  "null");
}

TEST(JsonWriter, EmptyContainers)
{
	EXPECT_EQ(Writer().begin_object().end_object().str(), "{}");
	EXPECT_EQ(Writer().begin_array().end_array().str(), "[]");
	EXPECT_EQ(Writer(2).begin_object().end_object().str(), "{}");
	EXPECT_EQ(Writer(2).begin_array().end_array().str(), "[]");
}

TEST(JsonWriter, Nesting)
{
	Writer w;

	w.begin_object()
		.member("device", "/dev/rv")
		.key("abi").begin_object()
			.member("major", 1).member("minor", 7)
		.end_object()
		.member("capability", std::uint64_t{2})
		.key("capabilities").begin_array()
			.value("evict")
			.begin_array().end_array()
			.begin_object().member("k", nullptr).end_object()
			.begin_array().value(1).value(2).end_array()
		.end_array()
		.key("empty").begin_object().end_object()
		.member("flag", true)
		.end_object();

	ASSERT_TRUE(w.complete());
	EXPECT_EQ(w.str(),
		  R"({"device":"/dev/rv","abi":{"major":1,"minor":7},)"
		  R"("capability":2,"capabilities":["evict",[],{"k":null},)"
		  R"([1,2]],"empty":{},"flag":true})");

	JsonValue v = JsonValue::parse(w.str());
	EXPECT_EQ(v.at("device").as_string(), "/dev/rv");
	EXPECT_EQ(v.at("abi").at("minor").as_int(), 7);
	EXPECT_EQ(v.at("capabilities").size(), 4u);
	EXPECT_EQ(v.at("capabilities").at(3).at(1).as_int(), 2);
	EXPECT_TRUE(v.at("capabilities").at(2).at("k").is_null());
	EXPECT_EQ(v.at("empty").size(), 0u);
	EXPECT_TRUE(v.at("flag").as_bool());
}

TEST(JsonWriter, KeysAreEscaped)
{
	Writer w;

	w.begin_object().member("a\"b\n", 1).end_object();
	EXPECT_EQ(w.str(), R"({"a\"b\n":1})");
	EXPECT_EQ(JsonValue::parse(w.str()).at("a\"b\n").as_int(), 1);
}

TEST(JsonWriter, Indented)
{
	Writer w(2);

	w.begin_object()
		.member("a", 1)
		.key("b").begin_array().value("x").begin_object()
			.member("c", false).end_object().end_array()
		.key("d").begin_object().end_object()
		.end_object();
	EXPECT_EQ(w.str(), "{\n"
			   "  \"a\": 1,\n"
			   "  \"b\": [\n"
			   "    \"x\",\n"
			   "    {\n"
			   "      \"c\": false\n"
			   "    }\n"
			   "  ],\n"
			   "  \"d\": {}\n"
			   "}");
	EXPECT_NO_THROW(JsonValue::parse(w.str()));
}

TEST(JsonWriter, MisuseThrows)
{
	// A value in an object without a key.
	EXPECT_THROW(Writer().begin_object().value(1), std::logic_error);
	EXPECT_THROW(Writer().begin_object().begin_array(), std::logic_error);
	// A key outside an object.
	EXPECT_THROW(Writer().key("k"), std::logic_error);
	EXPECT_THROW(Writer().begin_array().key("k"), std::logic_error);
	// Two keys in a row.
	EXPECT_THROW(Writer().begin_object().key("a").key("b"),
		     std::logic_error);
	// Unbalanced or mismatched ends.
	EXPECT_THROW(Writer().end_object(), std::logic_error);
	EXPECT_THROW(Writer().end_array(), std::logic_error);
	EXPECT_THROW(Writer().begin_array().end_object(), std::logic_error);
	EXPECT_THROW(Writer().begin_object().end_array(), std::logic_error);
	EXPECT_THROW(Writer().begin_object().key("a").end_object(),
		     std::logic_error);
	// A second top-level value.
	EXPECT_THROW(Writer().value(1).value(2), std::logic_error);
	EXPECT_THROW(Writer().begin_object().end_object().begin_object(),
		     std::logic_error);
	EXPECT_THROW(Writer().begin_array().end_array().end_array(),
		     std::logic_error);
}

TEST(JsonWriter, IncompleteDocument)
{
	Writer w;

	EXPECT_FALSE(w.complete());
	EXPECT_THROW((void)w.str(), std::logic_error);
	w.begin_object().key("a");
	EXPECT_FALSE(w.complete());
	EXPECT_THROW((void)w.str(), std::logic_error);
	EXPECT_EQ(w.buffer(), R"({"a":)");
	w.value(1);
	EXPECT_THROW((void)w.str(), std::logic_error);
	w.end_object();
	EXPECT_TRUE(w.complete());
	EXPECT_EQ(w.str(), R"({"a":1})");
}

// The test reader must itself be strict, or the checks above prove little.
TEST(JsonReader, RejectsMalformed)
{
	for (const char *bad : {"", "{", "[1,]", "{\"a\":1,}", "{a:1}", "'x'",
				"01", "1.", ".5", "-", "1e", "tru", "nul",
				"\"\\x\"", "\"\x01\"", "\"\\ud800\"",
				"\"\\udc00\"", "\"\xff\"", "[1] 2",
				"{\"a\":1,\"a\":2}", "\"abc"}) {
		SCOPED_TRACE(bad);
		EXPECT_THROW(JsonValue::parse(bad), std::runtime_error);
	}
	EXPECT_EQ(JsonValue::parse(R"("\ud83d\ude00")").as_string(),
		  "\xf0\x9f\x98\x80");
	EXPECT_EQ(JsonValue::parse(" [ 1 , -0.5e+1 ] ").at(1).as_double(), -5.0);
}
