// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Test support: run a program and collect its exit status and output.
#ifndef RV_TEST_SUBPROCESS_HPP
#define RV_TEST_SUBPROCESS_HPP

#include <string>
#include <vector>

#include <sys/types.h>

namespace rv::test {

// How a child process ended.
struct ExitStatus {
	bool exited = false;	// exited normally (else killed by a signal)
	int exit_code = -1;	// valid if exited
	int signal = 0;		// valid if !exited

	// From a waitpid() status.
	[[nodiscard]] static ExitStatus of(int wait_status) noexcept;
	// Exited with 0.
	[[nodiscard]] bool ok() const noexcept { return exited && exit_code == 0; }
};

// Waits for child pid to end (waitpid, EINTR retried); throws
// std::system_error if waitpid fails.
[[nodiscard]] ExitStatus wait_exit(pid_t pid);

struct ProcessResult : ExitStatus {
	std::string out;	// everything written to stdout
	std::string err;	// everything written to stderr
};

// Runs argv[0] (a path, not searched in PATH) with argv, stdin from
// /dev/null, and waits for it. The environment is the caller's plus
// extra_env ("NAME=value" entries, which win over inherited ones).
// Throws std::system_error if it cannot be started; a failed exec shows
// as exit code 127.
ProcessResult run_process(const std::vector<std::string> &argv,
			  const std::vector<std::string> &extra_env = {});

} // namespace rv::test

#endif // RV_TEST_SUBPROCESS_HPP
