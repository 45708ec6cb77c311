// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "tap_listener.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string_view>

namespace rv::test {

namespace {

// "file:line: " prefix of a part result, if it has a location.
std::string location(const ::testing::TestPartResult &r)
{
	if (!r.file_name())
		return {};
	std::string s = r.file_name();
	if (r.line_number() >= 0)
		s += ":" + std::to_string(r.line_number());
	return s + ": ";
}

// A TAP description may not contain '#' (it starts a directive) or a
// newline.
std::string description(std::string s)
{
	std::string out;

	for (char c : s) {
		if (c == '#')
			out += "\\#";
		else if (c == '\n' || c == '\r')
			out += ' ';
		else
			out += c;
	}
	return out;
}

} // namespace

void TapListener::install(std::FILE *out)
{
	auto &listeners = ::testing::UnitTest::GetInstance()->listeners();

	std::unique_ptr<::testing::TestEventListener> printer(
		listeners.Release(listeners.default_result_printer()));
	// GoogleTest takes ownership of appended listeners.
	listeners.Append(std::make_unique<TapListener>(out).release());
}

void TapListener::diag(const std::string &text)
{
	std::string_view rest = text;

	while (!rest.empty() && rest.back() == '\n')
		rest.remove_suffix(1);
	// One "# " line per line of text.
	for (;;) {
		auto nl = rest.find('\n');
		auto line = rest.substr(0, nl);
		if (line.empty())
			std::fputs("#\n", out_);
		else
			std::fprintf(out_, "# %.*s\n",
				     static_cast<int>(line.size()), line.data());
		if (nl == std::string_view::npos)
			break;
		rest.remove_prefix(nl + 1);
	}
}

void TapListener::OnTestProgramStart(const ::testing::UnitTest &unit)
{
	number_ = 0;
	slow_.clear();
	std::fprintf(out_, "1..%d\n", unit.test_to_run_count());
	std::fflush(out_);
}

void TapListener::OnTestStart(const ::testing::TestInfo &)
{
	messages_.clear();
	skip_reason_.clear();
}

void TapListener::OnTestPartResult(const ::testing::TestPartResult &r)
{
	if (r.skipped()) {
		skip_reason_ = r.message();
		return;
	}
	if (r.failed())
		messages_.push_back(location(r) + (r.fatally_failed()
			? "Failure (fatal)\n" : "Failure\n") + r.message());
}

void TapListener::OnTestEnd(const ::testing::TestInfo &info)
{
	const ::testing::TestResult *result = info.result();
	std::string name = description(std::string(info.test_suite_name()) +
				       "." + info.name());

	number_++;
	if (result->Failed()) {
		std::fprintf(out_, "not ok %d - %s\n", number_, name.c_str());
		for (const auto &m : messages_)
			diag(m);
	} else if (result->Skipped()) {
		std::string reason = description(skip_reason_);
		while (!reason.empty() && reason.back() == ' ')
			reason.pop_back();
		std::fprintf(out_, "ok %d - %s # SKIP%s%s\n", number_,
			     name.c_str(), reason.empty() ? "" : " ",
			     reason.c_str());
	} else {
		std::fprintf(out_, "ok %d - %s\n", number_, name.c_str());
	}
	if (result->elapsed_time() >= 1000)
		slow_.emplace_back(result->elapsed_time(), name);
	std::fflush(out_);
}

void TapListener::report_ad_hoc(const ::testing::TestResult &result,
				const std::string &where)
{
	for (int i = 0; i < result.total_part_count(); i++) {
		const auto &r = result.GetTestPartResult(i);
		if (r.failed())
			diag(where + ": " + location(r) + r.message());
	}
}

void TapListener::OnTestSuiteEnd(const ::testing::TestSuite &suite)
{
	report_ad_hoc(suite.ad_hoc_test_result(),
		      std::string("failure outside a test in ") + suite.name());
	std::fflush(out_);
}

void TapListener::OnTestProgramEnd(const ::testing::UnitTest &unit)
{
	report_ad_hoc(unit.ad_hoc_test_result(), "failure outside any test");
	if (number_ != unit.test_to_run_count())
		diag("ran " + std::to_string(number_) + " of " +
		     std::to_string(unit.test_to_run_count()) + " tests");
	// Where the time went: the ten slowest, slowest first.
	std::sort(slow_.begin(), slow_.end(), std::greater<>());
	std::string line;
	for (std::size_t i = 0; i < slow_.size() && i < 10; i++) {
		char t[32];
		std::snprintf(t, sizeof(t), " %.1f s", static_cast<double>(slow_[i].first) / 1000);
		line += (i ? ", " : "slowest: ") + slow_[i].second + t;
	}
	if (!line.empty())
		diag(line);
	std::fflush(out_);
}

} // namespace rv::test
