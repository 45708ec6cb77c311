// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// A GoogleTest event listener that reports in TAP (Test Anything
// Protocol):
//
//	1..3
//	ok 1 - Suite.Passes
//	not ok 2 - Suite.Fails
//	# vm/test.cpp:42: Failure
//	# Expected equality of these values: ...
//	ok 3 - Suite.Skipped # SKIP needs root
//
// The plan comes first (the number of tests selected to run), so a
// harness notices tests lost to a crash. Failure messages follow their
// result line as "# " lines; failures outside any test (SetUpTestSuite,
// environments) are reported as "# " lines too. Output is flushed after
// every test. At the end, the slowest tests that took a second or more:
//
//	# slowest: Suite.Long 12.3 s, Suite.Other 1.0 s

#ifndef RV_TEST_TAP_LISTENER_HPP
#define RV_TEST_TAP_LISTENER_HPP

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace rv::test {

class TapListener : public ::testing::EmptyTestEventListener {
public:
	// Writes to out (stdout by default), which it does not own.
	explicit TapListener(std::FILE *out = stdout) : out_(out) {}

	void OnTestProgramStart(const ::testing::UnitTest &unit) override;
	void OnTestStart(const ::testing::TestInfo &info) override;
	void OnTestPartResult(const ::testing::TestPartResult &result) override;
	void OnTestEnd(const ::testing::TestInfo &info) override;
	void OnTestSuiteEnd(const ::testing::TestSuite &suite) override;
	void OnTestProgramEnd(const ::testing::UnitTest &unit) override;

	// Replaces GoogleTest's default printer with a TapListener.
	static void install(std::FILE *out = stdout);

private:
	void diag(const std::string &text);
	void report_ad_hoc(const ::testing::TestResult &result,
			   const std::string &where);

	std::FILE *out_;
	int number_ = 0;
	std::vector<std::string> messages_;	// of the running test
	std::string skip_reason_;
	std::vector<std::pair<std::int64_t, std::string>> slow_;	// ms, name
};

} // namespace rv::test

#endif // RV_TEST_TAP_LISTENER_HPP
