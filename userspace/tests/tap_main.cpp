// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// main() for GoogleTest programs that report in TAP. All GoogleTest flags
// work; --pretty keeps GoogleTest's own printer instead.
#include <cstring>

#include <gtest/gtest.h>

#include "tap_listener.hpp"

int main(int argc, char **argv)
{
	bool pretty = false;
	int n = 1;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--pretty"))
			pretty = true;
		else
			argv[n++] = argv[i];
	}
	argc = n;
	argv[argc] = nullptr;

	::testing::InitGoogleTest(&argc, argv);
	if (!pretty)
		rv::test::TapListener::install();
	return RUN_ALL_TESTS();
}
