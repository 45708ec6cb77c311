// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// One worker process of rv_soak (see soak.hpp for the protocol).
#include "soak.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include <poll.h>
#include <sys/mman.h>

#include <rv/error.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

namespace rv::soak {

namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// enum ib_wc_status
constexpr std::uint8_t wc_flush_err = 5;

std::uint64_t now_ns()
{
	return static_cast<std::uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(
			clock::now().time_since_epoch())
			.count());
}

std::string hex(std::uint64_t v)
{
	char buf[24];

	std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
	return buf;
}

void copy_text(char *dst, std::size_t cap, const std::string &s)
{
	const std::size_t n = std::min(cap - 1, s.size());

	std::memcpy(dst, s.data(), n);
	dst[n] = '\0';
}


// A receive buffer: granted to one sender at a time.
struct Slot {
	rv::Mapping map;
	rv::MemoryRegion mr;
	bool granted = false;
};

// A grant not closed yet.
struct Open {
	unsigned slot = 0;
	unsigned sender = 0;
	std::uint32_t events = 0;	// deliveries so far
	std::uint32_t first_len = 0;	// byte_len of the first
	bool released = false;
	Release rel;
	clock::time_point released_at;
};

// A closed grant, to recognize deliveries that come after it closed.
struct Closed {
	std::uint32_t attempts = 0;
	std::uint32_t events = 0;
};

// A message being sent, from source buffer i of message slot i.
struct Outgoing {
	bool active = false;
	Grant grant;
	std::uint64_t seq = 0;
	std::uint64_t len = 0;
	std::uint64_t src_off = 0;
	std::uint64_t dst_off = 0;
	std::uint32_t attempts = 0;
	bool outstanding = false;
	bool need_post = false;
	rv::MemoryRegion own_mr;	// an MR of the message's own range
};

struct SourceBuffer {
	rv::Mapping map;
	rv::MemoryRegion mr;	// over the whole buffer; may be empty
};

enum class Phase { run, stopping, drained, finished };

class Worker {
public:
	Worker(Channel &ch, const WorkerConfig &cfg);
	int run();

private:
	// setup
	void setup_buffers();
	[[nodiscard]] rv::Mapping anonymous(std::size_t len, void *want = nullptr);
	void new_pages(rv::Mapping &map, bool fixed);

	// the loop
	bool read_messages();
	void on_message(const Msg &m);
	void on_event(const rv::Event &e);
	void housekeeping();
	void idle_wait(std::chrono::microseconds d);
	void note(const std::string &text);

	// sending
	bool start_messages();
	bool post_pending();
	int post(unsigned i);
	void on_send_event(const rv::Event &e);
	void finish_message(unsigned i);
	void churn_source(unsigned i);
	void return_grant(const Grant &g);
	void abandon_messages();
	std::string explain_einval(unsigned i);
	[[nodiscard]] bool sender_idle() const;
	std::uint64_t pick_len(std::uint64_t cap);
	std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi);

	// receiving
	bool grant_slots();
	void on_recv_event(const rv::Event &e);
	void on_release(const Release &rel);
	void verify(const Open &o);
	void close_grant(std::unordered_map<std::uint32_t, Open>::iterator it,
			 bool taint);
	void prepare_slot(unsigned j, bool force_churn);
	[[nodiscard]] bool receiver_idle() const { return open_.empty(); }

	// the end
	void finish();

	Channel &ch_;
	WorkerConfig cfg_;
	rv::test::Side side_;
	std::mt19937_64 rng_;
	unsigned node_;
	unsigned bits_;
	std::uint32_t tag_mask_;
	std::uint32_t rv_index_;
	std::uint64_t conn_handle_;

	Phase phase_ = Phase::run;
	bool exit_ = false;
	bool sender_failed_ = false;	// a post failed for good
	bool aborting_ = false;		// the run was called off

	// Nothing is posted again: messages without a write in flight are
	// abandoned.
	[[nodiscard]] bool giving_up() const noexcept
	{
		return sender_failed_ || aborting_;
	}

	std::vector<SourceBuffer> bufs_;
	std::vector<Outgoing> out_;
	std::vector<Grant> grants_;
	std::unordered_map<std::uint64_t, unsigned> inflight_;	// wr_id -> out_
	std::uint64_t wr_id_ = 0;
	std::uint64_t next_seq_ = 0;

	std::vector<Slot> slots_;
	std::unordered_map<std::uint32_t, Open> open_;
	std::unordered_map<std::uint32_t, Closed> closed_;
	std::deque<std::uint32_t> closed_order_;
	std::uint32_t next_tag_ = 0;

	SendReport s_;
	RecvReport r_;
	MiscReport m_;
	clock::time_point last_progress_;
	clock::time_point last_lost_check_;
};

Worker::Worker(Channel &ch, const WorkerConfig &cfg)
	: ch_(ch), cfg_(cfg), side_(cfg.local, cfg.remote, cfg.key, cfg.side),
	  rng_(mix64(cfg.seed ^ (std::uint64_t{cfg.id} << 40))),
	  node_(cfg.id / cfg.procs), bits_(cfg.side.index_bits),
	  tag_mask_(rv::immed_payload_mask(cfg.side.index_bits)),
	  rv_index_(side_.attach().rv_index), conn_handle_(0)
{
	grow_socket_buffers(ch_.fd());
}

void Worker::note(const std::string &text)
{
	if (!m_.result) {
		m_.result = EIO;
		copy_text(m_.error, sizeof(m_.error), text);
	}
	try {
		Msg msg;
		msg.type = sm_note;
		msg.len = static_cast<std::uint32_t>(std::min(text.size(),
							      msg.body.size() - 1));
		std::memcpy(msg.body.data(), text.data(), msg.len);
		ch_.send(msg);
	} catch (...) {
	}
}

std::uint64_t Worker::uniform(std::uint64_t lo, std::uint64_t hi)
{
	return hi <= lo ? lo : lo + rng_() % (hi - lo + 1);
}

// Mixed sizes: a few bytes to cap, with the edges around 8 bytes, a page
// and cap itself now and then.
std::uint64_t Worker::pick_len(std::uint64_t cap)
{
	static constexpr std::uint64_t edges[] = {1, 7, 8, 9, 4095, 4096, 4097,
						  65536, 65537};
	std::uint64_t len;

	switch (rng_() % 16) {
	case 0:
		len = rng_() % 4 ? edges[rng_() % std::size(edges)] : cap;
		break;
	case 1: case 2: case 3: case 4:
		len = uniform(1, 4096);
		break;
	case 5: case 6: case 7: case 8:
		len = uniform(4097, 64 << 10);
		break;
	case 9: case 10: case 11: case 12:
		len = uniform((64 << 10) + 1, 512 << 10);
		break;
	default:
		len = uniform((512 << 10) + 1, cap);
		break;
	}
	return std::clamp<std::uint64_t>(len, 1, cap);
}

// Private anonymous memory of len bytes, populated (at want with
// MAP_FIXED if given); with small_pages in small pages, left for
// khugepaged to merge (MADV_HUGEPAGE; errors ignored: THP may be off)
// and, as an application's buffers are, a few milliseconds old by the
// time it registers them: khugepaged may be collapsing them then.
rv::Mapping Worker::anonymous(std::size_t len, void *want)
{
	const int fixed = want ? MAP_FIXED : 0;
	const int populate = cfg_.small_pages ? 0 : MAP_POPULATE;
	void *p = ::mmap(want, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | fixed | populate, -1, 0);
	if (p == MAP_FAILED)
		rv::throw_errno(want ? "mmap MAP_FIXED" : "mmap");
	if (want && p != want)
		throw std::runtime_error("mmap MAP_FIXED moved the buffer");
	if (cfg_.small_pages) {
		(void)::madvise(p, len, MADV_NOHUGEPAGE);
		std::memset(p, 0, len);
		(void)::madvise(p, len, MADV_HUGEPAGE);
		std::this_thread::sleep_for(milliseconds(rng_() % 4));
	}
	return rv::Mapping::adopt(p, len);
}

// Fresh anonymous pages for map: a new mapping (munmap, mmap: usually at
// the same address), or MAP_FIXED over the old pages in place.
void Worker::new_pages(rv::Mapping &map, bool fixed)
{
	const std::size_t len = map.size();

	if (fixed) {
		// The new mapping replaces the old one: map no longer owns it.
		(void)anonymous(len, map.data()).release();
		return;
	}
	map.unmap();
	map = anonymous(len);
}

void Worker::setup_buffers()
{
	for (unsigned i = 0; i < cfg_.window; i++) {
		SourceBuffer b;
		b.map = anonymous(cfg_.buf_len);
		b.mr = side_.dev().reg_mem(b.map.data(), b.map.size(),
					   rv::access::psm3_send);
		bufs_.push_back(std::move(b));
	}
	out_.resize(cfg_.window);
	for (unsigned j = 0; j < cfg_.slots; j++) {
		Slot sl;
		sl.map = anonymous(cfg_.buf_len);
		sl.mr = side_.dev().reg_mem(sl.map.data(), sl.map.size(),
					    rv::access::psm3_recv);
		slots_.push_back(std::move(sl));
	}
}

int Worker::run()
{
	side_.create_and_connect(seconds(180));
	conn_handle_ = side_.conn().conn_handle();
	setup_buffers();
	Ready ready;
	ready.rv_index = rv_index_;
	ready.num_conn = side_.conn().stats().num_conn;
	ready.conn_handle = conn_handle_;
	ready.max_fmr_size = side_.attach().max_fmr_size;
	ch_.send(sm_ready, ready);
	// sm_exit instead: the run was called off. Grants may come first:
	// the other VM's processes start on its own go, and this VM's
	// controller routes their grants as they arrive, before it passes
	// the go on. They are kept (a grant dropped here would hold its
	// receiver's buffer until the drain times out).
	for (;;) {
		const std::optional<Msg> m = ch_.recv(seconds(600));
		if (!m)
			throw std::runtime_error("no go within 600 s");
		if (m->type == sm_exit)
			return 0;
		if (m->type == sm_go)
			break;
		on_message(*m);
		if (exit_)
			return 0;
	}
	s_.conn_count_first = side_.conn_count_sum();
	last_progress_ = clock::now();
	last_lost_check_ = clock::now();

	auto backoff = std::chrono::microseconds(250);
	while (!exit_) {
		bool busy = false;

		if (side_.ring().drain([&](const rv::Event &e) { on_event(e); }))
			busy = true;
		if (read_messages())
			busy = true;
		if (exit_)
			break;
		if (phase_ != Phase::finished) {
			if (start_messages())
				busy = true;
			if (post_pending())
				busy = true;
			if (grant_slots())
				busy = true;
			housekeeping();
			if (phase_ == Phase::stopping && sender_idle() &&
			    receiver_idle()) {
				ch_.send(sm_drained);
				phase_ = Phase::drained;
			}
		}
		if (busy) {
			backoff = std::chrono::microseconds(250);
			continue;
		}
		idle_wait(backoff);
		backoff = std::min(backoff * 2, std::chrono::microseconds(4000));
	}
	return 0;
}

void Worker::idle_wait(std::chrono::microseconds d)
{
	pollfd pfd{ch_.fd(), POLLIN, 0};
	timespec ts{0, static_cast<long>(d.count()) * 1000};

	(void)::ppoll(&pfd, 1, &ts, nullptr);
}

bool Worker::read_messages()
{
	bool any = false;

	for (;;) {
		std::optional<Msg> m = ch_.recv(milliseconds(0));
		if (!m)
			return any;
		any = true;
		on_message(*m);
		if (exit_)
			return true;
	}
}

void Worker::on_message(const Msg &m)
{
	switch (m.type) {
	case sm_grant: {
		const Grant g = rv::test::body_of<Grant>(m);
		s_.grants++;
		if (phase_ == Phase::run && !giving_up())
			grants_.push_back(g);
		else
			return_grant(g);
		break;
	}
	case sm_release:
		on_release(rv::test::body_of<Release>(m));
		break;
	case sm_abort:
		aborting_ = true;
		abandon_messages();
		[[fallthrough]];
	case sm_stop:
		if (phase_ == Phase::run) {
			phase_ = Phase::stopping;
			for (const Grant &g : grants_)
				return_grant(g);
			grants_.clear();
		}
		break;
	case sm_finish:
		if (phase_ != Phase::finished)
			finish();
		break;
	case sm_exit:
		exit_ = true;
		break;
	default:
		break;
	}
}

void Worker::on_event(const rv::Event &e)
{
	if (e.event_type == RV_WC_RDMA_WRITE) {
		if (e.status)
			m_.seen_send_err++;
		else
			m_.seen_send_ok++;
		on_send_event(e);
	} else if (e.event_type == RV_WC_RECV_RDMA_WITH_IMM) {
		m_.seen_recv++;
		on_recv_event(e);
	} else {
		r_.stray_events++;
	}
}

void Worker::housekeeping()
{
	const auto now = clock::now();

	if (now - last_lost_check_ >= seconds(1)) {
		last_lost_check_ = now;
		for (auto it = open_.begin(); it != open_.end();) {
			auto cur = it++;
			const Open &o = cur->second;
			if (o.released && !o.events &&
			    now - o.released_at >= seconds(cfg_.lost_after_s)) {
				r_.lost++;
				close_grant(cur, true);
			}
		}
	}
	if (now - last_progress_ >= seconds(2)) {
		last_progress_ = now;
		Progress p;
		p.sent = s_.messages;
		p.verified = r_.verified;
		p.bytes_verified = r_.bytes_verified;
		p.cqe_err = s_.cqe_err;
		p.post_eagain = s_.post_eagain;
		ch_.send(sm_progress, p);
	}
}

// ------------------------------------------------------------ sending

void Worker::return_grant(const Grant &g)
{
	Release rel;
	rel.route.src = static_cast<std::uint16_t>(cfg_.id);
	rel.route.dst = g.route.src;
	rel.tag = g.tag;
	rel.used = 0;
	ch_.send(sm_release, rel);
	s_.returned++;
}

// The sender cannot or must not go on: hand back the buffers of the
// messages that have no write in flight, so that their receivers are not
// kept waiting. They stay active (counted as never finished).
void Worker::abandon_messages()
{
	for (Outgoing &o : out_) {
		if (!o.active || o.outstanding || !o.need_post)
			continue;
		Release rel;
		rel.route.src = static_cast<std::uint16_t>(cfg_.id);
		rel.route.dst = o.grant.route.src;
		rel.tag = o.grant.tag;
		rel.attempts = o.attempts;
		rel.seq = o.seq;
		rel.used = 2;
		ch_.send(sm_release, rel);
		o.need_post = false;
	}
}

// Why a post of message i was refused as invalid: is its MR still
// cached (REG_MEM of the same range gives the same handle)?
std::string Worker::explain_einval(unsigned i)
{
	const Outgoing &o = out_[i];
	const rv::MrInfo &mr = o.own_mr.valid() ? o.own_mr.info() : bufs_[i].mr.info();
	std::string why = std::string(o.own_mr.valid() ? "own" : "buffer") +
			  " MR handle " + std::to_string(mr.handle) + " [0x" +
			  hex(mr.addr) + " +" + std::to_string(mr.length) + "), write at +" +
			  std::to_string(o.src_off) + " len " + std::to_string(o.len) +
			  " attempt " + std::to_string(o.attempts + 1);
	try {
		const rv::CacheStats cs = side_.dev().cache_stats();
		rv::MemoryRegion again = side_.dev().reg_mem(mr.addr, mr.length, mr.access);
		why += again.handle() == mr.handle
			       ? "; REG_MEM again: the same MR"
			       : "; REG_MEM again: a new MR (the held one left the cache)";
		why += "; cache remove " + std::to_string(cs.remove) + " evict " +
		       std::to_string(cs.evict) + " miss " + std::to_string(cs.miss);
	} catch (const std::exception &e) {
		why += std::string("; REG_MEM again: ") + e.what();
	}
	return why;
}

bool Worker::start_messages()
{
	if (phase_ != Phase::run || giving_up())
		return false;
	bool any = false;
	for (unsigned i = 0; i < out_.size() && !grants_.empty(); i++) {
		Outgoing &o = out_[i];
		if (o.active)
			continue;
		// A random one of the grants in hand: a random receiver.
		const std::size_t k = rng_() % grants_.size();
		const Grant g = grants_[k];
		grants_[k] = grants_.back();
		grants_.pop_back();

		SourceBuffer &b = bufs_[i];
		o = Outgoing{};
		o.active = true;
		o.grant = g;
		o.seq = next_seq_++;
		o.len = pick_len(std::min(cfg_.max_len, g.length));
		o.src_off = uniform(0, b.map.size() - o.len);
		o.dst_off = uniform(0, g.length - o.len);
		pattern_fill(b.map.bytes() + o.src_off, o.len, cfg_.id, o.seq);
		// Without an MR over the buffer, or now and then anyway,
		// the message gets one of its own range.
		if (!b.mr.valid() || rng_() % 100 < cfg_.sub_mr_pct) {
			o.own_mr = side_.dev().reg_mem(b.map.addr() + o.src_off,
						       o.len, rv::access::psm3_send);
			s_.sub_mr++;
		}
		o.need_post = true;
		s_.started++;
		any = true;
	}
	return any;
}

int Worker::post(unsigned i)
{
	Outgoing &o = out_[i];
	const SourceBuffer &b = bufs_[i];
	rv::WriteRequest w;

	w.loc_addr = b.map.addr() + o.src_off;
	w.mr = o.own_mr.valid() ? &o.own_mr.info() : &b.mr.info();
	w.rem_addr = o.grant.addr + o.dst_off;
	w.rkey = o.grant.rkey;
	w.length = o.len;
	w.wr_id = ++wr_id_;
	w.immed = rv::make_immed(o.grant.rv_index, bits_, o.grant.tag);
	rv::PostResult pr;
	const int err = side_.conn().try_post_write(w, pr);
	if (err)
		return err;
	s_.posts++;
	o.attempts++;
	o.outstanding = true;
	o.need_post = false;
	inflight_[w.wr_id] = i;
	return 0;
}

bool Worker::post_pending()
{
	if (giving_up())
		return false;
	bool any = false;
	for (unsigned i = 0; i < out_.size(); i++) {
		if (!out_[i].active || !out_[i].need_post)
			continue;
		const int err = post(i);
		if (!err) {
			any = true;
			continue;
		}
		if (err == EAGAIN) {
			s_.post_eagain++;
		} else if (err == EBUSY || err == ENOMEM) {
			s_.post_nocredit++;
		} else {
			if (err == EIO)
				s_.post_eio++;
			else
				s_.post_other++;
			s_.last_other_errno = err;
			sender_failed_ = true;
			note(std::string("post: ") + std::strerror(err) +
			     (err == EIO ? " (the connection failed for good)"
					 : err == EINVAL ? ": " + explain_einval(i) : ""));
			abandon_messages();
		}
		// Whatever it was, the other messages would get it too.
		break;
	}
	return any;
}

void Worker::on_send_event(const rv::Event &e)
{
	auto it = inflight_.find(e.wr_id);
	if (it == inflight_.end()) {
		s_.cqe_unknown++;
		return;
	}
	const unsigned i = it->second;
	inflight_.erase(it);
	Outgoing &o = out_[i];
	o.outstanding = false;
	if (e.conn_handle != conn_handle_)
		s_.cqe_bad++;
	if (e.status == 0) {
		s_.cqe_ok++;
		if (e.byte_len != o.len)
			s_.cqe_bad++;
		finish_message(i);
		return;
	}
	s_.cqe_err++;
	if (e.status == wc_flush_err)
		s_.cqe_err_flush++;
	if (!s_.first_err_status)
		s_.first_err_status = e.status;
	// The data may or may not have landed: write it again.
	o.need_post = true;
	if (giving_up()) {
		abandon_messages();
		return;
	}
	s_.reposts++;
}

void Worker::finish_message(unsigned i)
{
	Outgoing &o = out_[i];
	Release rel;

	rel.route.src = static_cast<std::uint16_t>(cfg_.id);
	rel.route.dst = o.grant.route.src;
	rel.tag = o.grant.tag;
	rel.attempts = o.attempts;
	rel.seq = o.seq;
	rel.len = o.len;
	rel.dst_off = o.dst_off;
	rel.used = 1;
	ch_.send(sm_release, rel);
	s_.messages++;
	s_.bytes += o.len;
	s_.last_ok_ns = now_ns();
	o.own_mr.reset();
	o.active = false;
	if (rng_() % 200 < cfg_.churn_pct)
		churn_source(i);
}

// Replace the source buffer's pages; half the time without an MR over
// the whole buffer afterwards (then each message registers its own).
void Worker::churn_source(unsigned i)
{
	SourceBuffer &b = bufs_[i];
	const bool fixed = (rng_() & 1) != 0;

	if (fixed) {
		// Under the MR (if any): it turns stale, then goes.
		new_pages(b.map, true);
		b.mr.reset();
	} else {
		b.mr.reset();
		new_pages(b.map, false);
	}
	if (rng_() & 1)
		b.mr = side_.dev().reg_mem(b.map.data(), b.map.size(),
					   rv::access::psm3_send);
	s_.buf_churn++;
}

bool Worker::sender_idle() const
{
	for (const Outgoing &o : out_)
		if (o.active && (o.outstanding || !giving_up()))
			return false;
	return true;
}

// ------------------------------------------------------------ receiving

bool Worker::grant_slots()
{
	if (phase_ != Phase::run)
		return false;
	bool any = false;
	for (unsigned j = 0; j < slots_.size(); j++) {
		Slot &sl = slots_[j];
		if (sl.granted)
			continue;
		const unsigned other = 1 - node_;
		const auto sender = static_cast<unsigned>(
			other * cfg_.procs + rng_() % cfg_.procs);
		std::uint32_t tag = next_tag_++ & tag_mask_;
		while (open_.count(tag))
			tag = next_tag_++ & tag_mask_;
		closed_.erase(tag);

		Grant g;
		g.route.src = static_cast<std::uint16_t>(cfg_.id);
		g.route.dst = static_cast<std::uint16_t>(sender);
		g.tag = tag;
		g.rv_index = rv_index_;
		g.addr = sl.map.addr();
		g.length = sl.map.size();
		g.rkey = sl.mr.rkey();
		Open o;
		o.slot = j;
		o.sender = sender;
		open_[tag] = o;
		sl.granted = true;
		ch_.send(sm_grant, g);
		r_.grants++;
		any = true;
	}
	return any;
}

void Worker::on_recv_event(const rv::Event &e)
{
	r_.events++;
	if (e.status) {
		r_.bad_status++;
		return;
	}
	if (rv::immed_index(e.imm_data, bits_) != rv_index_)
		r_.bad_index++;
	if (e.conn_handle != conn_handle_)
		r_.bad_conn_handle++;
	const std::uint32_t tag = rv::immed_payload(e.imm_data, bits_);

	auto it = open_.find(tag);
	if (it != open_.end()) {
		Open &o = it->second;
		o.events++;
		if (o.events == 1) {
			o.first_len = e.byte_len;
		} else {
			r_.duplicates++;
			if (e.byte_len != o.first_len)
				r_.bad_len++;
		}
		if (!o.released)
			return;	// checked when the sender is done with it
		// Released before its first delivery: check it now.
		if (e.byte_len != o.rel.len)
			r_.bad_len++;
		if (o.events > o.rel.attempts)
			r_.excess_events++;
		verify(o);
		close_grant(it, false);
		return;
	}
	auto c = closed_.find(tag);
	if (c != closed_.end()) {
		// A delivery after the grant closed: the buffer may hold
		// another message already, so it cannot be checked.
		r_.duplicates++;
		r_.late_duplicates++;
		c->second.events++;
		if (c->second.events > c->second.attempts)
			r_.excess_events++;
		return;
	}
	r_.stray_events++;
}

void Worker::on_release(const Release &rel)
{
	auto it = open_.find(rel.tag);
	if (it == open_.end() || it->second.sender != rel.route.src) {
		r_.stray_releases++;
		return;
	}
	Open &o = it->second;
	if (!rel.used) {
		r_.returns++;
		if (o.events)
			r_.stray_events += o.events;
		close_grant(it, false);
		return;
	}
	if (rel.used == 2) {
		// Abandoned by a sender that failed: whatever landed stays
		// unchecked; the buffer is replaced.
		r_.abandoned++;
		o.released = true;
		o.rel = rel;
		close_grant(it, true);
		return;
	}
	r_.releases++;
	if (!rel.len || rel.dst_off + rel.len > slots_[o.slot].map.size()) {
		r_.stray_releases++;
		close_grant(it, true);
		return;
	}
	o.released = true;
	o.rel = rel;
	o.released_at = clock::now();
	if (!o.events)
		return;	// the delivery is still on its way (or lost)
	if (o.first_len != rel.len)
		r_.bad_len++;
	if (o.events > rel.attempts)
		r_.excess_events++;
	verify(o);
	close_grant(it, false);
}

void Worker::verify(const Open &o)
{
	const Slot &sl = slots_[o.slot];
	const PatternCheck c = pattern_check(sl.map.bytes() + o.rel.dst_off,
					     o.rel.len, o.sender, o.rel.seq);

	if (!c.bad_bytes) {
		r_.verified++;
		r_.bytes_verified += o.rel.len;
		return;
	}
	if (!r_.corrupt_msgs) {
		r_.first_bad_sender = o.sender;
		r_.first_bad_seq = o.rel.seq;
		r_.first_bad_offset = c.first_bad;
		r_.first_bad_want = c.want;
		r_.first_bad_found = c.found;
		std::fprintf(stderr,
			     "rv_soak: worker %u: message %llu of worker %u "
			     "(%llu bytes at offset %llu of its buffer): %llu bytes "
			     "differ, the first at %llu: want 0x%016llx (%s), found "
			     "0x%016llx (%s)\n",
			     cfg_.id, static_cast<unsigned long long>(o.rel.seq), o.sender,
			     static_cast<unsigned long long>(o.rel.len),
			     static_cast<unsigned long long>(o.rel.dst_off),
			     static_cast<unsigned long long>(c.bad_bytes),
			     static_cast<unsigned long long>(c.first_bad),
			     static_cast<unsigned long long>(c.want),
			     pattern_decode(c.want).c_str(),
			     static_cast<unsigned long long>(c.found),
			     pattern_decode(c.found).c_str());
	}
	r_.corrupt_msgs++;
	r_.corrupt_bytes += c.bad_bytes;
}

void Worker::close_grant(std::unordered_map<std::uint32_t, Open>::iterator it,
			 bool taint)
{
	const std::uint32_t tag = it->first;
	const Open o = it->second;

	open_.erase(it);
	closed_[tag] = Closed{o.released ? o.rel.attempts : 0, o.events};
	closed_order_.push_back(tag);
	if (closed_order_.size() > 65536) {
		closed_.erase(closed_order_.front());
		closed_order_.pop_front();
	}
	slots_[o.slot].granted = false;
	if (phase_ != Phase::finished)
		prepare_slot(o.slot, taint);
}

// Before the buffer is granted again: now and then withdraw it (new
// pages, a new MR), else keep it or register it again (a cache hit).
void Worker::prepare_slot(unsigned j, bool force_churn)
{
	Slot &sl = slots_[j];
	const std::uint64_t old = sl.mr.handle();

	if (!force_churn && rng_() % 100 >= cfg_.churn_pct) {
		if (rng_() & 1) {
			sl.mr.reset();
			sl.mr = side_.dev().reg_mem(sl.map.data(), sl.map.size(),
						    rv::access::psm3_recv);
			r_.rereg++;
		}
		return;
	}
	switch (force_churn ? 0 : rng_() % 4) {
	case 0:	// DEREG; munmap; mmap; REG_MEM
		sl.mr.reset();
		new_pages(sl.map, false);
		r_.churn_remap++;
		break;
	case 1:	// new pages under the referenced MR; then DEREG
		new_pages(sl.map, true);
		sl.mr.reset();
		r_.churn_fixed++;
		break;
	case 2:	// the pages dropped under the referenced MR; then DEREG
		if (::madvise(sl.map.data(), sl.map.size(), MADV_DONTNEED) < 0)
			rv::throw_errno("madvise MADV_DONTNEED");
		sl.mr.reset();
		r_.churn_dontneed++;
		break;
	default:	// DEREG; EVICT the cached MR; REG_MEM
		sl.mr.reset();
		(void)side_.dev().evict_range(sl.map.addr(), sl.map.size());
		r_.churn_evict++;
		break;
	}
	sl.mr = side_.dev().reg_mem(sl.map.data(), sl.map.size(),
				    rv::access::psm3_recv);
	// Handles are allocated cyclically: the same one again means the
	// cache handed out the MR of the replaced pages.
	if (sl.mr.handle() == old)
		r_.stale_mr++;
}

// ------------------------------------------------------------ the end

void Worker::finish()
{
	// Deliveries that are still on their way (duplicates), for a while.
	const auto until = clock::now() + milliseconds(500);
	while (clock::now() < until) {
		if (!side_.ring().drain([&](const rv::Event &e) { on_event(e); }))
			std::this_thread::sleep_for(milliseconds(5));
	}
	phase_ = Phase::finished;

	// The kernel's count of this process's events against what the
	// ring delivered: equal once no event comes between two reads.
	for (int k = 0; k < 10; k++) {
		const rv::EventStats a = side_.dev().event_stats();
		side_.ring().drain([&](const rv::Event &e) { on_event(e); });
		const rv::EventStats b = side_.dev().event_stats();
		if (std::memcmp(&a, &b, sizeof(a)))
			continue;
		m_.kernel = b;
		m_.event_stats_agree =
			b.send_write_cqe == m_.seen_send_ok &&
			b.send_write_cqe_fail == m_.seen_send_err &&
			b.recv_write_cqe + b.recv_write_cqe_fail == m_.seen_recv;
		break;
	}
	m_.overflow = side_.ring().overflow_count();

	s_.outstanding_end = inflight_.size();
	for (const Outgoing &o : out_)
		if (o.active)
			s_.active_end++;
	for (const auto &[tag, o] : open_) {
		if (o.released && !o.events)
			r_.lost++;
		else
			r_.open_end++;
	}
	s_.conn_count_last = side_.conn_count_sum();
	const rv::ConnStats cs = side_.conn().stats();

	ch_.send(sm_report_send, s_);
	ch_.send(sm_report_recv, r_);
	ch_.send(sm_report_misc, m_);
	ch_.send(sm_conn_stats, cs);
}

} // namespace

int run_worker(Channel &ch, const WorkerConfig &cfg)
{
	Worker w(ch, cfg);
	return w.run();
}

} // namespace rv::soak
