// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "conn_util.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "support/subprocess.hpp"

namespace rv::test {

namespace {

using clock = std::chrono::steady_clock;

std::uint64_t ms_since(clock::time_point t0)
{
	return static_cast<std::uint64_t>(
		std::chrono::duration_cast<milliseconds>(clock::now() - t0).count());
}

void copy_text(char *dst, std::size_t cap, const std::string &s)
{
	std::size_t n = std::min(cap - 1, s.size());
	std::memcpy(dst, s.data(), n);
	dst[n] = '\0';
}

std::string read_line(const std::filesystem::path &p)
{
	std::ifstream in(p);
	std::string s;
	if (!in || !std::getline(in, s))
		throw std::system_error(errno ? errno : ENOENT,
					std::generic_category(), p.string());
	return s;
}

} // namespace

// ------------------------------------------------------------ environment

std::uint64_t hw_counter(const std::string &dev, const std::string &name)
{
	if (auto v = rv::RdmaSysfs().hw_counter(dev, 1, name))
		return *v;
	throw std::system_error(ENOENT, std::generic_category(),
				dev + " hw_counters/" + name);
}

std::optional<std::uint64_t> module_param(const std::string &name)
{
	try {
		return std::stoull(read_line(
			std::filesystem::path("/sys/module/rv/parameters") / name));
	} catch (...) {
		return std::nullopt;
	}
}

unsigned effective_num_conn(std::uint8_t num_conn)
{
	if (num_conn)
		return num_conn;
	return static_cast<unsigned>(module_param("num_conn").value_or(4));
}

rv::Remote remote_of(const Node &local, const Node &remote)
{
	return rv::Remote::roce(remote.gid, remote.ip, local.gid_index, 1);
}

rv::PathRecord path_of(const Node &local, const Node &remote)
{
	return rv::PathRecord::roce(local.gid, remote.gid, 3);
}

bool listens(const Node &local, const Node &remote)
{
	return std::memcmp(local.gid.data(), remote.gid.data(),
			   local.gid.size()) < 0;
}

std::optional<unsigned> rv_rdma_res(const std::string &type, const std::string &dev)
{
	const std::string rdma = which("rdma");
	if (rdma.empty())
		return std::nullopt;
	const ProcessResult r = run_process({rdma, "-j", "resource", "show", type});
	if (!r.ok())
		return std::nullopt;
	// A flat array of flat objects: one per {...}; the owner of a
	// kernel object is "comm":"rv" (the plain output shows [rv]).
	unsigned n = 0;
	for (std::size_t open = r.out.find('{'); open != std::string::npos;
	     open = r.out.find('{', open + 1)) {
		const std::size_t close = r.out.find('}', open);
		if (close == std::string::npos)
			return std::nullopt;
		const std::string obj = r.out.substr(open, close - open);
		if (obj.find("\"ifname\":\"" + dev + "\"") != std::string::npos &&
		    obj.find("\"comm\":\"rv\"") != std::string::npos)
			n++;
	}
	return n;
}

std::optional<unsigned> rv_rc_qps(const std::string &dev)
{
	// rv creates RC QPs only.
	return rv_rdma_res("qp", dev);
}

bool wait_until(const std::function<bool()> &pred, milliseconds timeout)
{
	auto end = clock::now() + timeout;
	for (;;) {
		if (pred())
			return true;
		if (clock::now() >= end)
			return false;
		std::this_thread::sleep_for(milliseconds(10));
	}
}

bool wait_quiet(const std::vector<std::string> &devs, milliseconds quiet,
		milliseconds timeout)
{
	auto sample = [&] {
		std::vector<std::uint64_t> v;
		for (const auto &d : devs)
			v.push_back(rcvd_pkts(d));
		return v;
	};
	const auto end = clock::now() + timeout;
	auto last = sample();
	auto since = clock::now();
	for (;;) {
		std::this_thread::sleep_for(milliseconds(50));
		auto now = sample();
		if (now != last) {
			last = now;
			since = clock::now();
		} else if (clock::now() - since >= quiet) {
			return true;
		}
		if (clock::now() >= end)
			return false;
	}
}

void close_inherited_rv_files()
{
	std::vector<int> fds;
	std::error_code ec;
	const std::string dev = device_path();
	for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
		auto target = std::filesystem::read_symlink(e.path(), ec);
		if (ec || target != dev)
			continue;
		fds.push_back(std::stoi(e.path().filename().string()));
	}
	for (int fd : fds)
		::close(fd);
}

namespace {

// Every descriptor above 2 except keep (the child's channel).
void close_other_fds(int keep)
{
	std::vector<int> fds;
	std::error_code ec;
	for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
		int fd = std::atoi(e.path().filename().c_str());
		if (fd > 2 && fd != keep)
			fds.push_back(fd);
	}
	for (int fd : fds)
		::close(fd);	// includes the directory's own: harmless
}

} // namespace

// ------------------------------------------------------------ raw ioctls

int conn_create_errno(int fd, rv_conn_create_params &p)
{
	return ioctl_errno(fd, RV_IOCTL_CONN_CREATE, &p);
}

int conn_connect_errno(int fd, std::uint64_t handle, const ib_user_path_rec &path)
{
	rv_conn_connect_params_in p{};
	p.handle = handle;
	p.path = path;
	return ioctl_errno(fd, RV_IOCTL_CONN_CONNECT, &p);
}

int conn_connected_errno(int fd, std::uint64_t handle, int *value)
{
	rv_conn_connected_params_in p{};
	p.handle = handle;
	errno = 0;
	int ret = ::ioctl(fd, RV_IOCTL_CONN_CONNECTED, &p);
	if (ret < 0)
		return errno ? errno : -1;
	if (value)
		*value = ret;
	return 0;
}

int conn_count_errno(int fd, std::uint64_t handle, std::uint8_t index,
		     std::uint32_t *count)
{
	rv_conn_get_conn_count_params p{};
	p.in.handle = handle;
	p.in.index = index;
	int err = ioctl_errno(fd, RV_IOCTL_CONN_GET_CONN_COUNT, &p);
	if (!err && count)
		*count = p.out.count;
	return err;
}

int conn_stats_errno(int fd, std::uint64_t handle, std::uint8_t index,
		     rv_conn_get_stats_params_out *out)
{
	rv_conn_get_stats_params p{};
	p.in.handle = handle;
	p.in.index = index;
	int err = ioctl_errno(fd, RV_IOCTL_CONN_GET_STATS, &p);
	if (!err && out)
		*out = p.out;
	return err;
}

int post_write_errno(int fd, const rv_post_write_params_in &in,
		     rv_post_write_params_out *out)
{
	rv_post_write_params p{};
	p.in = in;
	int err = ioctl_errno(fd, RV_IOCTL_POST_RDMA_WR_IMMED, &p);
	if (!err && out)
		*out = p.out;
	return err;
}

// ------------------------------------------------------------ one side

Side::Side(const Node &local, const Node &remote, const rv::JobKey &key,
	   const SideConfig &cfg)
	: local_(local), remote_(remote), cfg_(cfg), dev_(device_path())
{
	(void)dev_.capability();
	rv::AttachParams p = params_for(local, key);
	p.num_conn = cfg.num_conn;
	p.index_bits = cfg.index_bits;
	p.reconnect_timeout = cfg.reconnect_timeout;
	p.hb_interval = cfg.hb_interval;
	p.cq_entries = cfg.cq_entries;
	p.q_depth = cfg.q_depth;
	attach_ = dev_.attach(p);
	if (cfg.cq_entries)
		ring_ = rv::EventRing::map(dev_);
	num_conn_ = effective_num_conn(cfg.num_conn);
}

rv::Connection &Side::create()
{
	if (!created_) {
		conn_ = rv::Connection::create(dev_, remote_of(local_, remote_));
		created_ = true;
	}
	return conn_;
}

void Side::connect()
{
	create().connect(path_of(local_, remote_));
}

void Side::create_and_connect(milliseconds timeout)
{
	connect();
	wait_connected(timeout);
}

void Side::wait_connected(milliseconds timeout)
{
	if (!conn_.wait_connected(timeout))
		throw std::system_error(ETIMEDOUT, std::generic_category(),
					"not connected in time");
}

void connect_and_tell(Side &s, Channel &ch, milliseconds timeout)
{
	s.connect();
	ch.send(msg_connecting);
	s.wait_connected(timeout);
}

void connect_after(Side &s, std::initializer_list<Peer *> peers, milliseconds timeout)
{
	for (Peer *p : peers)
		(void)p->chan().expect(msg_connecting, timeout);
	s.create_and_connect(timeout);
}

std::uint32_t Side::immed(std::uint32_t rv_index, std::uint32_t low) const noexcept
{
	const unsigned bits = cfg_.index_bits;
	if (!bits)
		return low;
	if (bits >= 32)
		return rv_index;
	const std::uint32_t mask = (1u << (32 - bits)) - 1;
	return (rv_index << (32 - bits)) | (low & mask);
}

std::uint64_t Side::conn_count_sum()
{
	std::uint64_t sum = 0;
	for (unsigned i = 0; i < num_conn_; i++) {
		std::uint32_t c = 0;
		if (!conn_count_errno(fd(), conn_.handle(),
				      static_cast<std::uint8_t>(i), &c))
			sum += c;
	}
	return sum;
}

std::vector<rv::Event> Side::drain()
{
	std::vector<rv::Event> out;
	ring_.drain([&](const rv::Event &e) { out.push_back(e); });
	return out;
}

std::vector<rv::Event> Side::wait_events(std::size_t n, milliseconds timeout,
					 milliseconds linger)
{
	std::vector<rv::Event> out;
	auto push = [&](const rv::Event &e) { out.push_back(e); };
	auto end = clock::now() + timeout;
	for (;;) {
		ring_.drain(push);
		if (out.size() >= n || clock::now() >= end)
			break;
		std::this_thread::sleep_for(milliseconds(1));
	}
	if (linger.count() > 0) {
		std::this_thread::sleep_for(linger);
		ring_.drain(push);
	}
	return out;
}

std::string to_string(const rv::ConnStats &s)
{
	std::ostringstream o;
	o << "index " << unsigned{s.index} << " flags 0x" << std::hex
	  << unsigned{s.flags} << std::dec << " num_conn " << s.num_conn
	  << " req_sent " << s.req_sent << " req_recv " << s.req_recv
	  << " rep_sent " << s.rep_sent << " rep_recv " << s.rep_recv
	  << " rtu_sent " << s.rtu_sent << " rtu_recv " << s.rtu_recv
	  << " rej_sent " << s.rej_sent << " rej_recv " << s.rej_recv
	  << " established " << s.established << " dreq_sent " << s.dreq_sent
	  << " dreq_recv " << s.dreq_recv << " conn_recovery "
	  << s.conn_recovery << " post_write " << s.post_write
	  << " post_write_fail " << s.post_write_fail << " post_write_bytes "
	  << s.post_write_bytes << " outstand " << s.outstand_send_write
	  << " send_write_cqe " << s.send_write_cqe << " send_write_cqe_fail "
	  << s.send_write_cqe_fail << " recv_write_cqe " << s.recv_write_cqe
	  << " recv_write_bytes " << s.recv_write_bytes << " recv_cqe_fail "
	  << s.recv_cqe_fail << " post_hb " << s.post_hb << " recv_hb_cqe "
	  << s.recv_hb_cqe << " resolve " << s.resolve << " resolve_fail "
	  << s.resolve_fail << " reresolve " << s.reresolve
	  << " reresolve_fail " << s.reresolve_fail;
	return o.str();
}

std::string to_string(const rv::Event &e)
{
	std::ostringstream o;
	o << "type " << unsigned{e.event_type} << " status " << unsigned{e.status}
	  << " imm 0x" << std::hex << e.imm_data << std::dec << " wr_id "
	  << e.wr_id << " conn_handle 0x" << std::hex << e.conn_handle
	  << std::dec << " byte_len " << e.byte_len;
	return o.str();
}

// ------------------------------------------------------------ messages

void Channel::send(const Msg &m)
{
	const auto *p = reinterpret_cast<const char *>(&m);
	std::size_t done = 0;
	while (done < sizeof(m)) {
		ssize_t n = ::send(fd_.get(), p + done, sizeof(m) - done,
				   MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rv::throw_errno(n < 0 ? errno : EPIPE, "channel send");
		done += static_cast<std::size_t>(n);
	}
}

void Channel::send_text(const std::string &text)
{
	Msg m;
	m.type = msg_text;
	m.len = static_cast<std::uint32_t>(std::min(text.size(), m.body.size() - 1));
	std::memcpy(m.body.data(), text.data(), m.len);
	send(m);
}

std::optional<Msg> Channel::recv(milliseconds timeout)
{
	auto end = clock::now() + timeout;
	for (;;) {
		if (partial_.size() == sizeof(Msg)) {
			Msg m;
			std::memcpy(&m, partial_.data(), sizeof(m));
			partial_.clear();
			return m;
		}
		int wait_ms = -1;
		if (timeout.count() >= 0) {
			auto left = std::chrono::duration_cast<milliseconds>(
				end - clock::now()).count();
			wait_ms = static_cast<int>(std::max<long long>(0, left));
		}
		pollfd pfd{fd_.get(), POLLIN, 0};
		int r = ::poll(&pfd, 1, wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rv::throw_errno("channel poll");
		if (r == 0)
			return std::nullopt;
		std::byte buf[sizeof(Msg)];
		ssize_t n = ::recv(fd_.get(), buf, sizeof(Msg) - partial_.size(), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			rv::throw_errno("channel recv");
		if (n == 0)
			throw std::system_error(EPIPE, std::generic_category(),
						"channel: peer closed");
		partial_.insert(partial_.end(), buf, buf + n);
	}
}

Msg Channel::expect(std::uint32_t type, milliseconds timeout)
{
	std::optional<Msg> m = recv(timeout);
	if (!m)
		throw std::system_error(ETIMEDOUT, std::generic_category(),
					"channel: no message of type " +
						std::to_string(type));
	if (m->type == msg_text && type != msg_text)
		throw std::runtime_error(
			"peer: " + std::string(reinterpret_cast<const char *>(
						       m->body.data()),
					       m->len));
	if (m->type != type)
		throw std::system_error(EBADMSG, std::generic_category(),
					"channel: got type " +
						std::to_string(m->type) +
						", want " + std::to_string(type));
	return *m;
}

std::pair<Channel, Channel> Channel::pair()
{
	int sv[2];
	if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		rv::throw_errno("socketpair");
	return {Channel(rv::UniqueFd(sv[0])), Channel(rv::UniqueFd(sv[1]))};
}

// ------------------------------------------------------------ processes

Peer::Peer(const std::function<int(Channel &)> &f)
{
	auto [mine, theirs] = Channel::pair();
	std::fflush(nullptr);
	pid_t pid = ::fork();
	if (pid < 0)
		rv::throw_errno("fork");
	if (pid == 0) {
		mine.close();
		close_other_fds(theirs.fd());
		int code = 0;
		try {
			code = f(theirs);
		} catch (const std::exception &e) {
			try {
				theirs.send_text(e.what());
			} catch (...) {
			}
			code = 2;
		} catch (...) {
			code = 2;
		}
		std::fflush(nullptr);
		::_exit(code);
	}
	pid_ = pid;
	chan_ = std::move(mine);
}

Peer::~Peer()
{
	if (pid_ > 0) {
		::kill(pid_, SIGKILL);
		int st;
		while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
		}
	}
}

Peer::Peer(Peer &&other) noexcept
	: pid_(other.pid_), chan_(std::move(other.chan_))
{
	other.pid_ = -1;
}

Peer &Peer::operator=(Peer &&other) noexcept
{
	if (this != &other) {
		this->~Peer();
		pid_ = other.pid_;
		chan_ = std::move(other.chan_);
		other.pid_ = -1;
	}
	return *this;
}

void Peer::kill(int sig) const
{
	if (pid_ > 0)
		::kill(pid_, sig);
}

std::string Peer::Status::str() const
{
	if (timed_out)
		return "timed out (killed)";
	if (exited)
		return "exit " + std::to_string(exit_code);
	return "signal " + std::to_string(signal);
}

Peer::Status Peer::wait(milliseconds timeout)
{
	if (pid_ <= 0)
		return {};
	bool timed_out = false;
	auto end = clock::now() + timeout;
	int st = 0;
	for (;;) {
		pid_t r = ::waitpid(pid_, &st, WNOHANG);
		if (r == pid_)
			break;
		if (r < 0 && errno != EINTR)
			rv::throw_errno("waitpid");
		if (clock::now() >= end) {
			timed_out = true;
			::kill(pid_, SIGKILL);
			while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
			}
			break;
		}
		std::this_thread::sleep_for(milliseconds(5));
	}
	pid_ = -1;
	return {ExitStatus::of(st), timed_out};
}

// ------------------------------------------------------------ data

namespace {

inline std::uint64_t mix(std::uint64_t k, std::uint64_t w) noexcept
{
	std::uint64_t z = k + (w + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

} // namespace

void fill_pattern(std::byte *dst, std::uint64_t len, std::uint64_t key)
{
	const std::uint64_t words = len / 8;
	for (std::uint64_t w = 0; w < words; w++) {
		std::uint64_t v = mix(key, w);
		std::memcpy(dst + w * 8, &v, 8);
	}
	if (len % 8) {
		std::uint64_t v = mix(key, words);
		std::memcpy(dst + words * 8, &v, len % 8);
	}
}

std::optional<std::uint64_t> check_pattern(const std::byte *p, std::uint64_t len,
					   std::uint64_t key)
{
	const std::uint64_t words = (len + 7) / 8;
	for (std::uint64_t w = 0; w < words; w++) {
		std::uint64_t v = mix(key, w);
		std::uint64_t n = std::min<std::uint64_t>(8, len - w * 8);
		if (std::memcmp(p + w * 8, &v, n) == 0)
			continue;
		const auto *vb = reinterpret_cast<const std::byte *>(&v);
		for (std::uint64_t i = 0; i < n; i++)
			if (p[w * 8 + i] != vb[i])
				return w * 8 + i;
	}
	return std::nullopt;
}

MsgPlan plan_message(const TransferSpec &s, std::uint64_t seq)
{
	const std::uint64_t base = s.seed ^ 0x5a17c0de00000000ULL;
	const std::uint64_t r1 = mix(base, seq * 4);
	const std::uint64_t r2 = mix(base, seq * 4 + 1);
	const std::uint64_t r3 = mix(base, seq * 4 + 2);
	const std::uint64_t r4 = mix(base, seq * 4 + 3);
	const std::uint64_t max_len = std::max<std::uint64_t>(
		1, std::min(s.max_len, s.slot_size));
	MsgPlan m;

	switch (r1 % 4) {
	case 0:
		m.len = 1 + r2 % 4096;
		break;
	case 1:
		m.len = 4096 + r2 % (256 * 1024 - 4096);
		break;
	default:
		m.len = max_len > 256 * 1024
				? 256 * 1024 + r2 % (max_len - 256 * 1024 + 1)
				: 1 + r2 % max_len;
		break;
	}
	m.len = std::min(m.len, max_len);
	m.src_off = r3 % (s.slot_size - m.len + 1);
	m.dst_off = r4 % (s.slot_size - m.len + 1);
	m.key = mix(s.seed, seq);
	return m;
}

std::uint64_t message_count(const TransferSpec &s)
{
	std::uint64_t n = 0;
	std::uint64_t sum = 0;
	while (sum < s.bytes)
		sum += plan_message(s, n++).len;
	return n;
}

std::string to_string(const SendReport &r)
{
	std::ostringstream o;
	o << "result " << r.result << " messages " << r.messages << " bytes "
	  << r.bytes << " posts " << r.posts << " eagain " << r.post_eagain
	  << " nocredit " << r.post_nocredit << " eio " << r.post_eio
	  << " other " << r.post_other << " (errno " << r.last_other_errno
	  << ") cqe_ok " << r.cqe_ok << " cqe_err " << r.cqe_err;
	if (r.cqe_err)
		o << " (status " << r.first_err_status << " first, "
		  << r.last_err_status << " last)";
	o << " cqe_unknown " << r.cqe_unknown << " cqe_bad " << r.cqe_bad
	  << " reposts " << r.reposts << " outstanding_end "
	  << r.outstanding_end << " sconn_mask 0x" << std::hex << r.sconn_mask
	  << std::dec << " conn_count " << r.conn_count_first << "->"
	  << r.conn_count_last << " max_post_conn_count "
	  << r.max_post_conn_count << " overflow " << r.overflow << " "
	  << r.elapsed_ms << " ms";
	if (r.error[0])
		o << ": " << r.error;
	return o.str();
}

std::string to_string(const RecvReport &r)
{
	std::ostringstream o;
	o << "result " << r.result << " events " << r.events << " verified "
	  << r.verified << " bytes " << r.bytes << " duplicates "
	  << r.duplicates << " bad_type " << r.bad_type << " bad_status "
	  << r.bad_status << " bad_index " << r.bad_index << " bad_seq "
	  << r.bad_seq << " bad_len " << r.bad_len << " bad_conn_handle "
	  << r.bad_conn_handle << " mismatches " << r.mismatches;
	if (r.mismatches)
		o << " (first: seq " << r.first_bad_seq << " offset "
		  << r.first_bad_offset << ")";
	o << " overflow " << r.overflow << " " << r.elapsed_ms << " ms";
	if (r.error[0])
		o << ": " << r.error;
	return o.str();
}

namespace {

// Slots of spec that one MR of at most max_fmr bytes holds (at least
// one, at most all); throws std::invalid_argument if a slot does not fit.
std::uint64_t slots_per_mr(const TransferSpec &spec, std::uint64_t max_fmr)
{
	if (!spec.slots || !spec.slot_size)
		throw std::invalid_argument("a transfer needs slots");
	if (spec.slot_size > max_fmr)
		throw std::invalid_argument(
			"transfer slots of " + std::to_string(spec.slot_size) +
			" bytes: more than max_fmr_size " + std::to_string(max_fmr) +
			" (an MR holds at most that; use smaller slots)");
	return std::min<std::uint64_t>(max_fmr / spec.slot_size, spec.slots);
}

// Bytes of MR k of the slots in MRs of per slots each.
std::uint64_t group_len(const TransferSpec &spec, std::uint64_t per, std::uint64_t k)
{
	return std::min<std::uint64_t>(per, spec.slots - k * per) * spec.slot_size;
}

std::uint64_t group_count(const TransferSpec &spec, std::uint64_t per)
{
	return (spec.slots + per - 1) / per;
}

// See slot_bytes(): no MR of the transfer, of one slot or of per slots
// (the last of fewer), may be whole MiB.
void require_rxe_safe_slots(const TransferSpec &spec, std::uint64_t per)
{
	constexpr std::uint64_t mib = 1ULL << 20;

	bool bad = spec.slot_size % mib == 0;
	for (std::uint64_t k = 0; k < group_count(spec, per); k++)
		bad |= group_len(spec, per, k) % mib == 0;
	if (bad)
		throw std::invalid_argument("transfer slots of whole MiB trip a soft-RoCE bug: use slot_bytes()");
}

// Message seq of the transfer, byte_len bytes at its place in buf:
// counted in r as verified or as wrong.
void check_message(RecvReport &r, const TransferSpec &spec, const rv::Mapping &buf,
		   std::uint64_t seq, std::uint32_t byte_len)
{
	const MsgPlan p = plan_message(spec, seq);
	if (byte_len != p.len) {
		r.bad_len++;
		return;
	}
	const std::byte *at = buf.bytes() + (seq % spec.slots) * spec.slot_size +
			      p.dst_off;
	if (auto bad = check_pattern(at, p.len, p.key)) {
		if (!r.mismatches) {
			r.first_bad_seq = seq;
			r.first_bad_offset = *bad;
		}
		r.mismatches++;
	} else {
		r.verified++;
		r.bytes += p.len;
	}
}

// The receiver's events into on_event until the sender's FIN, then for
// a while the strays (duplicates, a late event). A stall of
// spec.stall_s since last (which on_event updates) or the transfer's
// timeout since t0 throws.
template <typename F>
void receive_until_fin(Side &side, Channel &chan, const TransferSpec &spec,
		       F &&on_event, const clock::time_point &last,
		       clock::time_point t0)
{
	for (;;) {
		side.ring().drain(on_event);
		if (auto m = chan.recv(milliseconds(1)); m && m->type == msg_fin)
			break;
		if (ms_since(last) > spec.stall_s * 1000ULL)
			throw std::runtime_error("receiver: no event for " +
						 std::to_string(spec.stall_s) + " s");
		if (ms_since(t0) > spec.timeout_s * 1000ULL)
			throw std::runtime_error("receiver: transfer timeout");
	}
	auto end = clock::now() + milliseconds(300);
	while (clock::now() < end) {
		side.ring().drain(on_event);
		std::this_thread::sleep_for(milliseconds(5));
	}
}

} // namespace

RecvReport recv_transfer(Side &side, Channel &chan, const TransferSpec &spec)
{
	const std::uint64_t per = slots_per_mr(spec, side.attach().max_fmr_size);
	const std::uint64_t groups = group_count(spec, per);
	if (groups > max_transfer_mrs)
		throw std::invalid_argument("a transfer of " + std::to_string(groups) +
					    " receive MRs: at most " +
					    std::to_string(max_transfer_mrs));
	require_rxe_safe_slots(spec, per);
	RecvReport r;
	const auto t0 = clock::now();
	const std::uint64_t len = std::uint64_t{spec.slots} * spec.slot_size;
	rv::Mapping buf = rv::Mapping::map(len, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	RecvInfo info{.rv_index = side.attach().rv_index,
		      .index_bits = side.config().index_bits,
		      .addr = buf.addr(),
		      .length = len,
		      .slots_per_mr = static_cast<std::uint32_t>(per),
		      .conn_handle = side.conn().conn_handle(),
		      .spec = spec};
	// The slots in MRs of per slots each, as PSM3 registers a buffer
	// larger than max_fmr_size.
	std::vector<rv::MemoryRegion> mrs;
	for (std::uint64_t k = 0; k < groups; k++) {
		mrs.push_back(side.dev().reg_mem(buf.addr() + k * per * spec.slot_size,
						 group_len(spec, per, k),
						 rv::access::psm3_recv));
		info.rkeys[k] = mrs.back().rkey();
	}
	info.rkey = info.rkeys[0];
	const unsigned bits = side.config().index_bits;
	const std::uint64_t seq_mask =
		bits ? (std::uint64_t{1} << (32 - bits)) - 1 : 0xffffffffULL;
	const std::uint64_t count = message_count(spec);
	const std::uint64_t conn_handle = side.conn().conn_handle();

	chan.send(msg_recv_info, info);

	if (count > seq_mask + 1) {
		r.result = EINVAL;
		copy_text(r.error, sizeof(r.error),
			  "more messages than the immediate data can number");
		chan.send(msg_recv_report, r);
		return r;
	}

	std::vector<bool> done(count);
	auto last = clock::now();
	auto on_event = [&](const rv::Event &e) {
		r.events++;
		last = clock::now();
		if (e.event_type != RV_WC_RECV_RDMA_WITH_IMM) {
			r.bad_type++;
			return;
		}
		if (e.status) {
			r.bad_status++;
			return;
		}
		const std::uint32_t idx = bits ? e.imm_data >> (32 - bits) : 0;
		if (idx != side.attach().rv_index)
			r.bad_index++;
		if (e.conn_handle != conn_handle)
			r.bad_conn_handle++;
		const std::uint64_t seq = e.imm_data & seq_mask;
		if (seq >= count) {
			r.bad_seq++;
			return;
		}
		if (done[seq]) {
			r.duplicates++;
			return;
		}
		check_message(r, spec, buf, seq, e.byte_len);
		// Answer even a bad message, so that the transfer ends and
		// the report tells what went wrong.
		done[seq] = true;
		chan.send(msg_done, seq);
	};

	try {
		receive_until_fin(side, chan, spec, on_event, last, t0);
	} catch (const std::exception &e) {
		r.result = EIO;
		copy_text(r.error, sizeof(r.error), e.what());
	}
	r.overflow = side.ring().overflow_count();
	r.elapsed_ms = ms_since(t0);
	try {
		chan.send(msg_recv_report, r);
	} catch (...) {
	}
	return r;
}

namespace {

// The sending side of one transfer (send_transfer()): its buffer and MRs,
// the slots of the messages in flight, the writes not yet completed.
class Sender {
public:
	Sender(Side &side, Channel &chan, TransferResult &out,
	       const std::function<void(std::uint64_t)> &progress,
	       clock::time_point t0);

	// Until every message is verified by the receiver, or a failure.
	void run();
	// Every post gets its completion, also after a failure.
	void drain_completions();
	// Tells the receiver, and waits for its report.
	void finish();

private:
	struct Slot {
		std::uint64_t seq = 0;
		MsgPlan plan;
		bool active = false;
		bool peer_done = false;
		bool need_post = false;
		std::uint32_t outstanding = 0;
	};

	void fill_free_slots();
	// Posts the slots that need it, oldest first; true if one was.
	bool post_pending(std::uint64_t first);
	// One post: true if it went, else its error counted (and fatal ones
	// failed).
	bool post(std::uint64_t seq, Slot &s);
	void on_event(const rv::Event &e);
	// The receiver's verdicts: true if there was one.
	bool read_verdicts(bool busy);
	// Slots verified by the receiver with nothing outstanding are free.
	void retire(std::uint64_t first);
	void check_time();
	void fail(int err, const std::string &what);

	Side &side_;
	Channel &chan_;
	TransferResult &out_;
	SendReport &r_;
	const RecvInfo &info_;
	const TransferSpec &spec_;
	const std::function<void(std::uint64_t)> &progress_;
	const clock::time_point t0_;
	const std::uint64_t count_;
	const std::uint64_t slots_;
	const std::uint64_t conn_handle_;
	const std::uint64_t per_;	// slots of one of group_mr_
	rv::Mapping buf_;
	std::vector<rv::MemoryRegion> slot_mr_;
	std::vector<rv::MemoryRegion> group_mr_;
	std::vector<Slot> st_;
	std::unordered_map<std::uint64_t, std::uint64_t> wr_seq_;
	std::uint64_t next_ = 0;
	std::uint64_t post_id_ = 0;
	clock::time_point last_;
};

Sender::Sender(Side &side, Channel &chan, TransferResult &out,
	       const std::function<void(std::uint64_t)> &progress,
	       clock::time_point t0)
	: side_(side), chan_(chan), out_(out), r_(out.send), info_(out.info),
	  spec_(out.info.spec), progress_(progress), t0_(t0),
	  count_(message_count(spec_)), slots_(spec_.slots),
	  conn_handle_(side.conn().conn_handle()),
	  per_(slots_per_mr(spec_, side.attach().max_fmr_size)),
	  buf_(rv::Mapping::map(slots_ * spec_.slot_size, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE)),
	  st_(slots_)
{
	require_rxe_safe_slots(spec_, per_);
	if (!info_.slots_per_mr ||
	    group_count(spec_, info_.slots_per_mr) > max_transfer_mrs)
		throw std::invalid_argument("the receiver's MRs: " +
					    std::to_string(info_.slots_per_mr) +
					    " slots each");
	// One MR per slot, then MRs of per_ slots each (registered last,
	// so that they are misses of their own, unless per_ is 1): writes
	// alternate between them.
	for (std::uint64_t k = 0; k < slots_; k++)
		slot_mr_.push_back(side_.dev().reg_mem(buf_.addr() + k * spec_.slot_size,
						       spec_.slot_size,
						       rv::access::psm3_send));
	for (std::uint64_t k = 0; k < group_count(spec_, per_); k++)
		group_mr_.push_back(side_.dev().reg_mem(
			buf_.addr() + k * per_ * spec_.slot_size,
			group_len(spec_, per_, k), rv::access::psm3_send));
	last_ = clock::now();
	r_.conn_count_first = side_.conn_count_sum();
}

void Sender::fail(int err, const std::string &what)
{
	if (!r_.result) {
		r_.result = err;
		copy_text(r_.error, sizeof(r_.error), what);
	}
}

void Sender::on_event(const rv::Event &e)
{
	last_ = clock::now();
	if (e.event_type != RV_WC_RDMA_WRITE) {
		r_.cqe_bad++;
		return;
	}
	auto it = wr_seq_.find(e.wr_id);
	if (it == wr_seq_.end()) {
		r_.cqe_unknown++;
		return;
	}
	const std::uint64_t seq = it->second;
	wr_seq_.erase(it);
	Slot &s = st_[seq % slots_];
	s.outstanding--;
	if (e.conn_handle != conn_handle_)
		r_.cqe_bad++;
	if (e.status == 0) {
		r_.cqe_ok++;
		if (e.byte_len != s.plan.len)
			r_.cqe_bad++;
		return;
	}
	if (!r_.cqe_err++)
		r_.first_err_status = e.status;
	r_.last_err_status = e.status;
	if (!spec_.tolerate_errors) {
		fail(EIO, "write seq " + std::to_string(seq) +
				  " completed with status " +
				  std::to_string(e.status));
		return;
	}
	if (!s.peer_done && !s.outstanding && !s.need_post) {
		s.need_post = true;
		r_.reposts++;
	}
}

void Sender::fill_free_slots()
{
	while (next_ < count_ && !st_[next_ % slots_].active) {
		Slot &s = st_[next_ % slots_];
		s = Slot{};
		s.seq = next_;
		s.plan = plan_message(spec_, next_);
		s.active = true;
		s.need_post = true;
		fill_pattern(buf_.bytes() + (next_ % slots_) * spec_.slot_size +
				     s.plan.src_off,
			     s.plan.len, s.plan.key);
		next_++;
	}
}

bool Sender::post(std::uint64_t seq, Slot &s)
{
	const std::uint64_t k = seq % slots_;
	rv::WriteRequest w;
	w.loc_addr = buf_.addr() + k * spec_.slot_size + s.plan.src_off;
	w.mr = seq % 2 ? &slot_mr_[k].info() : &group_mr_[k / per_].info();
	w.rem_addr = info_.addr + k * spec_.slot_size + s.plan.dst_off;
	w.rkey = info_.rkeys[k / info_.slots_per_mr];
	w.length = s.plan.len;
	w.wr_id = ++post_id_;
	w.immed = side_.immed(info_.rv_index, static_cast<std::uint32_t>(seq));
	rv::PostResult pr;
	int err = side_.conn().try_post_write(w, pr);
	if (!err) {
		r_.posts++;
		wr_seq_[w.wr_id] = seq;
		s.outstanding++;
		s.need_post = false;
		if (pr.sconn_index < 32)
			r_.sconn_mask |= 1u << pr.sconn_index;
		r_.max_post_conn_count = std::max<std::uint64_t>(
			r_.max_post_conn_count, pr.conn_count);
		last_ = clock::now();
		return true;
	}
	if (err == EAGAIN) {
		r_.post_eagain++;
	} else if (err == ENOMEM || err == EBUSY) {
		r_.post_nocredit++;
	} else if (err == EIO) {
		r_.post_eio++;
		fail(EIO, "post: EIO (connection failed for good)");
	} else {
		r_.post_other++;
		r_.last_other_errno = err;
		fail(err, std::string("post: ") + std::strerror(err));
	}
	return false;
}

bool Sender::post_pending(std::uint64_t first)
{
	bool busy = false;

	for (std::uint64_t seq = first; seq < next_ && !r_.result; seq++) {
		Slot &s = st_[seq % slots_];
		if (!s.active || !s.need_post || s.seq != seq)
			continue;
		if (!post(seq, s))
			break;
		busy = true;
	}
	return busy;
}

bool Sender::read_verdicts(bool busy)
{
	for (;;) {
		std::optional<Msg> m;
		try {
			m = chan_.recv(milliseconds(busy ? 0 : 1));
		} catch (const std::exception &e) {
			fail(EPIPE, std::string("receiver gone: ") + e.what());
			break;
		}
		if (!m)
			break;
		if (m->type == msg_text) {
			fail(EPROTO, "receiver: " +
					     std::string(reinterpret_cast<const char *>(
								 m->body.data()),
							 m->len));
			break;
		}
		if (m->type == msg_recv_report) {
			out_.recv = body_of<RecvReport>(*m);
			fail(EPROTO, "receiver ended early");
			break;
		}
		if (m->type != msg_done)
			continue;
		const auto seq = body_of<std::uint64_t>(*m);
		Slot &s = st_[seq % slots_];
		if (s.active && s.seq == seq)
			s.peer_done = true;
		last_ = clock::now();
		busy = true;
	}
	return busy;
}

void Sender::retire(std::uint64_t first)
{
	for (std::uint64_t seq = first; seq < next_; seq++) {
		Slot &s = st_[seq % slots_];
		if (!s.active || s.seq != seq || !s.peer_done || s.outstanding)
			continue;
		s.active = false;
		s.need_post = false;
		r_.messages++;
		r_.bytes += s.plan.len;
		if (progress_)
			progress_(r_.bytes);
	}
}

void Sender::check_time()
{
	if (ms_since(last_) > spec_.stall_s * 1000ULL)
		fail(ETIMEDOUT, "sender: no progress for " +
					std::to_string(spec_.stall_s) + " s (" +
					std::to_string(wr_seq_.size()) +
					" writes outstanding)");
	if (ms_since(t0_) > spec_.timeout_s * 1000ULL)
		fail(ETIMEDOUT, "sender: transfer timeout");
}

void Sender::run()
{
	auto on_event = [this](const rv::Event &e) { this->on_event(e); };

	while (!r_.result && r_.messages < count_) {
		fill_free_slots();
		const std::uint64_t first = next_ > slots_ ? next_ - slots_ : 0;
		bool busy = post_pending(first);
		if (side_.ring().drain(on_event))
			busy = true;
		// read_verdicts() after the others: it waits 1 ms when idle.
		busy = read_verdicts(busy);
		retire(first);
		check_time();
	}
}

void Sender::drain_completions()
{
	auto on_event = [this](const rv::Event &e) { this->on_event(e); };
	auto end = clock::now() + seconds(r_.result ? 60 : 10);

	while (!wr_seq_.empty() && clock::now() < end) {
		if (!side_.ring().drain(on_event))
			std::this_thread::sleep_for(milliseconds(2));
	}
	r_.outstanding_end = wr_seq_.size();
	r_.overflow = side_.ring().overflow_count();
	r_.conn_count_last = side_.conn_count_sum();
	r_.elapsed_ms = ms_since(t0_);
}

void Sender::finish()
{
	try {
		chan_.send(msg_fin);
		auto until = clock::now() + seconds(60);
		while (!out_.recv && clock::now() < until) {
			std::optional<Msg> m = chan_.recv(milliseconds(100));
			if (m && m->type == msg_recv_report)
				out_.recv = body_of<RecvReport>(*m);
		}
	} catch (const std::exception &e) {
		fail(EPIPE, e.what());
	}
}

} // namespace

TransferResult send_transfer(Side &side, Channel &chan,
			     const std::function<void(std::uint64_t)> &progress)
{
	TransferResult out;
	const auto t0 = clock::now();
	out.info = chan.expect_body<RecvInfo>(msg_recv_info, seconds(120));

	Sender sender(side, chan, out, progress, t0);
	sender.run();
	sender.drain_completions();
	sender.finish();
	return out;
}

// ------------------------------------------------------------ peer loss

std::string LossLog::str() const
{
	std::ostringstream o;
	o << "posts " << posts << " eagain " << post_eagain << " nocredit "
	  << post_nocredit << " eio " << post_eio << " other " << post_other;
	if (post_other)
		o << " (" << std::strerror(last_other) << ")";
	o << " last post errno " << last_post_err << " cqe_ok " << cqe_ok
	  << " cqe_err " << cqe_err << " cqe_unknown " << cqe_unknown
	  << " outstanding_end " << outstanding_end << " final_connected "
	  << final_connected << " conn_count errno " << final_count_err;
	if (failed_for_good_s)
		o << " EIO " << *failed_for_good_s << " s after the loss";
	return o.str();
}

namespace {

// One write of watch_loss() to the peer, counted in log by its outcome;
// its errno.
int post_probe(Side &me, const WriteTarget &peer, const rv::Mapping &src,
	       const rv::MemoryRegion &mr, std::uint64_t wr_id, LossLog &log)
{
	rv::WriteRequest w;
	w.loc_addr = src.addr() + 64;
	w.mr = &mr.info();
	w.rem_addr = peer.addr + 128;
	w.rkey = peer.rkey;
	w.length = 4096;
	w.wr_id = wr_id;
	w.immed = me.immed(peer.rv_index, 7);
	rv::PostResult pr;
	const int err = me.conn().try_post_write(w, pr);
	log.last_post_err = err;
	if (!err) {
		log.posts++;
	} else if (err == EAGAIN) {
		log.post_eagain++;
	} else if (err == ENOMEM || err == EBUSY) {
		log.post_nocredit++;
	} else if (err == EIO) {
		log.post_eio++;
	} else {
		log.post_other++;
		log.last_other = err;
	}
	return err;
}

} // namespace

LossLog watch_loss(Side &me, const WriteTarget &peer,
		   const std::function<void()> &lose, milliseconds lose_after,
		   milliseconds deadline)
{
	LossLog log;
	rv::Mapping src = rv::Mapping::map(1 << 20, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	rv::MemoryRegion mr = me.dev().reg_mem(src.data(), src.size(),
					       rv::access::psm3_send);
	std::unordered_map<std::uint64_t, bool> outstanding;
	std::uint64_t wr_id = 0;
	bool lost = false;
	const auto t0 = clock::now();
	clock::time_point t_lost = t0;
	auto last_post = t0 - seconds(1);
	auto last_check = t0;
	auto on_event = [&](const rv::Event &e) {
		if (!outstanding.erase(e.wr_id)) {
			log.cqe_unknown++;
			return;
		}
		if (e.status)
			log.cqe_err++;
		else
			log.cqe_ok++;
	};
	for (;;) {
		const auto now = clock::now();
		if (!lost && now - t0 >= lose_after) {
			if (lose)
				lose();
			lost = true;
			t_lost = clock::now();
		}
		if (now - last_post >= milliseconds(20)) {
			last_post = now;
			if (!post_probe(me, peer, src, mr, ++wr_id, log))
				outstanding[wr_id] = true;
		}
		me.ring().drain(on_event);
		if (now - last_check >= milliseconds(100)) {
			last_check = now;
			int v = -1;
			int err = conn_connected_errno(me.fd(), me.conn().handle(), &v);
			if (err == EIO && !log.failed_for_good_s)
				log.failed_for_good_s =
					std::chrono::duration<double>(now - t_lost).count();
			else if (err && err != EIO)
				log.connected_other_err++;
		}
		if (lost && log.failed_for_good_s && log.last_post_err == EIO)
			break;
		if (now - t0 >= deadline)
			break;
		std::this_thread::sleep_for(milliseconds(2));
	}
	// Every post completes, also on a connection that failed.
	wait_until([&] {
		me.ring().drain(on_event);
		return outstanding.empty();
	}, seconds(60));
	log.outstanding_end = outstanding.size();
	int v = -1;
	int err = conn_connected_errno(me.fd(), me.conn().handle(), &v);
	log.final_connected = err == EIO ? -1 : err ? -3 : v;
	log.final_count_err = conn_count_errno(me.fd(), me.conn().handle(), 0);
	return log;
}

// ------------------------------------------------------------ link

std::string run_checked(const std::vector<std::string> &argv)
{
	std::vector<std::string> a = argv;
	if (!a.empty() && a[0].find('/') == std::string::npos) {
		std::string p = which(a[0]);
		if (p.empty())
			throw std::runtime_error(a[0] + ": not found in PATH");
		a[0] = p;
	}
	ProcessResult r = run_process(a);
	if (!r.exited || r.exit_code) {
		std::string cmd;
		for (const auto &w : argv)
			cmd += w + " ";
		throw std::runtime_error(cmd + "failed: " + r.err + r.out);
	}
	return r.out;
}

std::vector<std::string> split_words(const std::string &text)
{
	std::istringstream in(text);
	std::vector<std::string> w;
	std::string s;
	while (in >> s)
		w.push_back(s);
	return w;
}

LinkState::LinkState(std::string netdev) : netdev_(std::move(netdev))
{
	std::istringstream routes(run_checked(
		{"ip", "-o", "-4", "route", "show", "table", "all", "dev", netdev_}));
	std::string line;
	while (std::getline(routes, line)) {
		if (line.rfind("local ", 0) == 0 || line.rfind("broadcast ", 0) == 0 ||
		    line.find("proto kernel") != std::string::npos ||
		    line.find("table local") != std::string::npos)
			continue;
		if (!split_words(line).empty())
			routes_.push_back(line);
	}
	std::istringstream neighs(run_checked(
		{"ip", "-4", "neigh", "show", "dev", netdev_, "nud", "permanent"}));
	while (std::getline(neighs, line))
		if (!split_words(line).empty())
			neighs_.push_back(line);
}

void LinkState::restore() const
{
	for (const auto &line : routes_) {
		std::vector<std::string> a{"ip", "route", "replace"};
		for (const auto &w : split_words(line))
			if (w != "linkdown" && w != "dead")
				a.push_back(w);
		a.push_back("dev");
		a.push_back(netdev_);
		run_checked(a);
	}
	for (const auto &line : neighs_) {
		std::vector<std::string> w = split_words(line);
		auto ll = std::find(w.begin(), w.end(), "lladdr");
		if (ll == w.end() || ll + 1 == w.end())
			continue;
		run_checked({"ip", "neigh", "replace", w[0], "lladdr", *(ll + 1),
			     "dev", netdev_, "nud", "permanent"});
	}
}

void link_flap(const Node &n, milliseconds down_for)
{
	if (n.netdev.empty())
		throw std::runtime_error("node " + n.dev + " has no netdev");
	std::vector<LinkState> saved;
	for (const Node &x : nodes())
		if (!x.netdev.empty())
			saved.emplace_back(x.netdev);
	run_checked({"ip", "link", "set", n.netdev, "down"});
	std::this_thread::sleep_for(down_for);
	run_checked({"ip", "link", "set", n.netdev, "up"});
	for (const auto &s : saved)
		s.restore();
	rv::RdmaSysfs sysfs;
	for (const Node &x : nodes()) {
		bool up = wait_until(
			[&] {
				try {
					return sysfs.port_state(x.dev, 1).active();
				} catch (...) {
					return false;
				}
			},
			seconds(30));
		if (!up)
			throw std::runtime_error(x.dev + " not ACTIVE after link up");
	}
}

} // namespace rv::test
