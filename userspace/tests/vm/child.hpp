// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Running a piece of a test in a forked child and getting a report back.
#ifndef RV_TEST_VM_CHILD_HPP
#define RV_TEST_VM_CHILD_HPP

#include <cerrno>
#include <cstdio>
#include <exception>
#include <optional>
#include <type_traits>

#include <fcntl.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

#include "../support/subprocess.hpp"

namespace rv::test {

template <typename Report>
struct ChildOutcome : ExitStatus {
	std::optional<Report> report;	// what the child sent, if it did

	[[nodiscard]] bool ok() const { return ExitStatus::ok() && report; }
};

enum : int {
	child_exit_ok = 0,
	child_exit_threw = 2,
	child_exit_pipe = 3,
};

// Forks; the child runs f() -> Report (trivially copyable), writes the
// report to a pipe and _exits (0; 2 if f threw; 3 if the write failed).
// The parent collects the report and the child's status. The child never
// returns into the test framework.
template <typename Report, typename F>
ChildOutcome<Report> run_in_child(F &&f)
{
	static_assert(std::is_trivially_copyable_v<Report>);

	int fds[2];
	if (::pipe2(fds, O_CLOEXEC) < 0)
		rv::throw_errno("pipe2");
	rv::UniqueFd rd(fds[0]);
	rv::UniqueFd wr(fds[1]);

	std::fflush(nullptr);
	pid_t pid = ::fork();
	if (pid < 0)
		rv::throw_errno("fork");
	if (pid == 0) {
		int code = child_exit_ok;
		try {
			Report r = f();
			if (::write(wr.get(), &r, sizeof(r)) !=
			    static_cast<ssize_t>(sizeof(r)))
				code = child_exit_pipe;
		} catch (const std::exception &e) {
			// The test sees only the exit status: say why.
			std::fprintf(stderr, "# child %d: %s\n",
				     static_cast<int>(::getpid()), e.what());
			code = child_exit_threw;
		} catch (...) {
			code = child_exit_threw;
		}
		::_exit(code);
	}
	wr.reset();

	std::optional<Report> report;
	Report r{};
	std::size_t got = 0;
	while (got < sizeof(r)) {
		ssize_t n = ::read(rd.get(), reinterpret_cast<char *>(&r) + got,
				   sizeof(r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += static_cast<std::size_t>(n);
	}
	if (got == sizeof(r))
		report = r;
	return {wait_exit(pid), report};
}

} // namespace rv::test

#endif // RV_TEST_VM_CHILD_HPP
