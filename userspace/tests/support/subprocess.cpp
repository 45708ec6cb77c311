// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "subprocess.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/unique_fd.hpp>

namespace rv::test {

namespace {

struct Pipe {
	UniqueFd read;
	UniqueFd write;
};

Pipe make_pipe()
{
	int fds[2];

	if (::pipe2(fds, O_CLOEXEC) < 0)
		throw_errno("pipe2");
	return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace

ExitStatus ExitStatus::of(int wait_status) noexcept
{
	ExitStatus s;

	if (WIFEXITED(wait_status)) {
		s.exited = true;
		s.exit_code = WEXITSTATUS(wait_status);
	} else if (WIFSIGNALED(wait_status)) {
		s.signal = WTERMSIG(wait_status);
	}
	return s;
}

ExitStatus wait_exit(pid_t pid)
{
	int status;

	while (::waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			throw_errno("waitpid");
	return ExitStatus::of(status);
}

ProcessResult run_process(const std::vector<std::string> &argv,
			  const std::vector<std::string> &extra_env)
{
	if (argv.empty())
		throw_errno(EINVAL, "run_process");

	std::vector<char *> args;
	for (const auto &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);

	// Inherited variables not overridden by extra_env, then extra_env.
	std::vector<char *> env;
	for (char **e = environ; *e; e++) {
		std::string_view var(*e);
		bool overridden = false;
		for (const auto &x : extra_env) {
			auto eq = x.find('=');
			if (var.substr(0, var.find('=')) == x.substr(0, eq))
				overridden = true;
		}
		if (!overridden)
			env.push_back(*e);
	}
	for (const auto &x : extra_env)
		env.push_back(const_cast<char *>(x.c_str()));
	env.push_back(nullptr);

	Pipe out = make_pipe();
	Pipe err = make_pipe();

	std::fflush(nullptr);
	pid_t pid = ::fork();
	if (pid < 0)
		throw_errno("fork");
	if (pid == 0) {
		// Child: only async-signal-safe calls from here on.
		int null = ::open("/dev/null", O_RDONLY);
		if (null < 0 || ::dup2(null, 0) < 0 ||
		    ::dup2(out.write.get(), 1) < 0 ||
		    ::dup2(err.write.get(), 2) < 0)
			::_exit(126);
		::execve(args[0], args.data(), env.data());
		::_exit(127);
	}

	out.write.reset();
	err.write.reset();

	std::string out_text, err_text;
	std::array<pollfd, 2> pfds{{{out.read.get(), POLLIN, 0},
				    {err.read.get(), POLLIN, 0}}};
	std::array<std::string *, 2> sinks{&out_text, &err_text};
	int open_count = 2;

	while (open_count > 0) {
		if (::poll(pfds.data(), pfds.size(), -1) < 0) {
			if (errno == EINTR)
				continue;
			throw_errno("poll");
		}
		for (std::size_t i = 0; i < pfds.size(); i++) {
			if (pfds[i].fd < 0 || !pfds[i].revents)
				continue;
			char buf[4096];
			ssize_t n = ::read(pfds[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfds[i].fd = -1;
				open_count--;
				continue;
			}
			sinks[i]->append(buf, static_cast<std::size_t>(n));
		}
	}

	return {wait_exit(pid), std::move(out_text), std::move(err_text)};
}

} // namespace rv::test
