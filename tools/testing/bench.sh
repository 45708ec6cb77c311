#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, inside the test VM (vm-run --rxe 2): load rv and run
#
#   bench.sh [RVBENCH_ARGS...]   rvbench with these arguments (default: reg)
#   bench.sh breakdown [--size B] [--iters N]
#       the step-by-step account of one write with immediate
#       (latency-breakdown.sh)
#   bench.sh compare [--sizes LIST] [--bytes B] [--qps Q] [--window N]
#                    [--lat-sizes LIST] [--lat-iters N] [--variants V]
#       rv against perftest on the two rxe nodes: rvbench bw and lat
#       (client on the first node, server on the second), then ib_write_bw
#       and ib_write_lat (and ib_send_lat, the floor with a receive
#       completion) the same way round (server on the second node,
#       RC, TCP out of band, no rdma_cm), one run per size; prints each
#       tool's numbers and the ratios rvbench/perftest per size.
#       bw runs twice per size: as it is (the receiver checks every byte
#       and returns credits) and with --no-verify (no payload check, as
#       ib_write_bw); both at rv num_conn Q against ib_write_bw -q Q, with
#       the same writes in flight: rvbench's window counts the
#       connection's writes, perftest's -t each QP's, so ib_write_bw gets
#       -t W/Q (rounded up) where W is the window rvbench used (N, or less
#       where its buffer has fewer slots: the table's "win"), and the same
#       messages in total (perftest's -n is per QP: n/Q, n a multiple of
#       Q, at least 5 Q). perftest's own defaults would be -q 1 -t 128.
#       --variants 'V1|V2|...': rv runs once per variant, each a list of
#       rv module parameters (e.g. 'cq_poll=workqueue|cq_poll=softirq'),
#       rv reloaded with them, and of rvbench options (words starting
#       with --, e.g. '--poll=yield'), in the same boot as one perftest run.
#       A word ko=PATH loads that rv.ko instead of RV_KO: two builds of rv
#       in one boot, e.g. 'ko=OLD|ko=NEW|ko=OLD|ko=NEW' with OLD from
#       tools/build-module.sh -o build/old-modules (absolute paths; the
#       tables name each by its directory above KVER: ko=old-modules).
#       Each run also gives the VM's CPU time per write (/proc/stat: user,
#       and kernel = system + irq + softirq, both nodes together, as both
#       are this one kernel; the tools' setup included).
#       Defaults: bw sizes 64K,256K,1M with 16M per size, Q 4 (rv's
#       default num_conn), N 32 (rvbench's default window, a multiple of
#       Q), lat sizes 8,4K with 1000 iterations, one variant: rv's
#       defaults.
#       rvbench registers its buffers as MRs of C bytes, C = ATTACH's
#       max_fmr_size rounded down to a power of two (1M on rxe, whose
#       fast-registration page list is 512 pages), and skips the sizes
#       above C. A size that rvbench skips in every variant is skipped
#       for perftest too, and the table says so; hence the default bw
#       sizes stop at 1M (4M would be skipped on rxe).
#
# Prints numbers; asserts nothing about them (a wrong message or a failed
# tool still makes the exit status non-zero).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
rvbench=$build/userspace/tools/rvbench

# load_rv [PARAM=VALUE...]: (re)load rv with these module parameters.
load_rv() {
	local deps
	# insmod does not load what rv needs (ib_core, ib_cm).
	IFS=, read -ra deps <<<"$(modinfo -F depends "$ko")"
	[ ${#deps[@]} -eq 0 ] || modprobe -a "${deps[@]}"
	[ ! -d /sys/module/rv ] || rmmod rv
	insmod "${rv_ko:-$ko}" "$@"
	trap 'rmmod rv' EXIT
}

if [ "${1:-}" = breakdown ]; then
	shift
	exec "$top/tools/testing/latency-breakdown.sh" "$@"
fi
if [ "${1:-}" != compare ]; then
	load_rv
	"$rvbench" "${@:-reg}"
	exit
fi
shift

bw_sizes=64K,256K,1M
bw_bytes=16M
qps=4
window=32
lat_sizes=8,4K
lat_iters=1000
variants=
while [ $# -gt 0 ]; do
	case "$1" in
	--sizes) bw_sizes=$2; shift 2 ;;
	--bytes) bw_bytes=$2; shift 2 ;;
	--qps) qps=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--lat-sizes) lat_sizes=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	--variants) variants=$2; shift 2 ;;
	*) echo "bench.sh compare: unknown option $1" >&2; exit 2 ;;
	esac
done
if ! [[ $qps =~ ^[0-9]+$ ]] || [ "$qps" -lt 1 ] || [ "$qps" -gt 16 ]; then
	echo "bench.sh compare: --qps $qps: 1..16 (rv's RV_MAX_NUM_CONN)" >&2
	exit 2
fi
if ! [[ $window =~ ^[0-9]+$ ]] || [ "$window" -lt 1 ] || [ "$window" -gt 4096 ] ||
	[ $((window % qps)) -ne 0 ]; then
	echo "bench.sh compare: --window $window: 1..4096, a multiple of --qps $qps" >&2
	exit 2
fi

read -ra nodes <<<"${RV_NODES:-}"
read -ra ips <<<"${RV_NODE_IPS:-}"
read -ra gidx <<<"${RV_NODE_GID_INDEXES:-}"
if [ ${#nodes[@]} -lt 2 ] || [ ${#ips[@]} -lt 2 ] || [ ${#gidx[@]} -lt 2 ]; then
	echo "bench.sh compare: needs two rxe nodes (vm-run --rxe 2)" >&2
	exit 2
fi
command -v ib_write_bw >/dev/null || { echo "bench.sh compare: no perftest" >&2; exit 2; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# "64K" -> 65536, as both tools take bytes
bytes() {
	local v=${1^^} m=1
	case "$v" in
	*K) m=1024; v=${v%K} ;;
	*M) m=$((1024 * 1024)); v=${v%M} ;;
	*G) m=$((1024 * 1024 * 1024)); v=${v%G} ;;
	esac
	echo $((v * m))
}

out=$(mktemp -d /tmp/bench-compare.XXXXXX)
client=${nodes[0]} server=${nodes[1]}
. "$top/tools/testing/vm/lib.sh"

# perftest: the server on the second node, bound to its address for the
# TCP exchange; the client on the first. -u 17: an ACK timeout of ~0.5 s,
# as TCG is slow (rv's path records ask for the same). Without -R: no
# rdma_cm. perftest reports MiB/s (2^20); converted to 10^6 below.
port=18600
perftest() {
	local tool=$1 size=$2 iters=$3 log=$4 spid rc=0 src=0 i
	local common=(-F -s "$size" -n "$iters" -m 1024 -u 17 "${@:5}")
	port=$((port + 1))
	timeout 300 "$tool" -d "$server" -x "${gidx[1]}" "${common[@]}" -p "$port" \
		--source_ip "${ips[1]}" >"$log.server" 2>&1 &
	spid=$!
	for ((i = 0; i < 100; i++)); do
		rc=0
		timeout 300 "$tool" -d "$client" -x "${gidx[0]}" "${common[@]}" \
			-p "$port" "${ips[1]}" >"$log" 2>&1 || rc=$?
		if [ $rc -eq 0 ] ||
			! grep -qiE "couldn't connect|connection refused|unable to" "$log"; then
			break
		fi
		sleep 0.2
	done
	wait "$spid" || src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "$tool -s $size failed (client $rc, server $src):" >&2
		tail -n 20 "$log" "$log.server" >&2
		return 1
	fi
}

# The VM's CPU ticks so far: user (with nice) and kernel (system, irq,
# softirq), summed over its CPUs.
cpu_ticks() {
	local _c u n sy _id _io irq sirq
	read -r _c u n sy _id _io irq sirq _ </proc/stat
	echo $((u + n)) $((sy + irq + sirq))
}

# cpu_run FILE CMD...: run CMD; FILE gets the user and kernel ticks it took.
cpu_run() {
	local f=$1 u0 k0 u1 k1 rc=0
	shift
	read -r u0 k0 < <(cpu_ticks)
	"$@" || rc=$?
	read -r u1 k1 < <(cpu_ticks)
	echo $((u1 - u0)) $((k1 - k0)) "$(getconf CLK_TCK)" >"$f"
	return $rc
}

# The variants: rv's module parameters, one line each.
IFS='|' read -ra vars <<<"$variants"
[ ${#vars[@]} -gt 0 ] || vars=("")
printf '%s\n' "${vars[@]}" >"$out/variants"

# One size at a time, rv (each variant) then perftest, so that all see the
# same load.
load_rv
IFS=, read -ra bws <<<"$bw_sizes"
IFS=, read -ra lats <<<"$lat_sizes"
# The first result's field of an rvbench --json file.
rv_field() {
	"$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0][sys.argv[2]])' "$1" "$2"
}
# ran_variant PREFIX SIZE: the first variant whose rvbench run of SIZE
# ($out/PREFIX-SIZE-i.json) did not skip it; nothing (and SIZE.skipped
# holding the reason) if every variant skipped it.
ran_variant() {
	local i why
	for i in "${!vars[@]}"; do
		why=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0].get("skipped", ""))' \
			"$out/$1-$2-$i.json")
		if [ -z "$why" ]; then
			echo "$i"
			return
		fi
	done
	echo "$why" >"$out/$1-$2.skipped"
}
# run_variants: for each variant i, rv reloaded (from its ko=PATH, else
# RV_KO) with its module parameters and rv_args set to its rvbench options
# (its words that start with --), run CMD with %v in its arguments
# replaced by i.
rv_args=() rv_ko=
run_variants() {
	local i a args params
	for i in "${!vars[@]}"; do
		params=() rv_args=() rv_ko=
		for a in ${vars[$i]}; do
			case $a in
			--*) rv_args+=("$a") ;;
			ko=*) rv_ko=${a#ko=} ;;
			*) params+=("$a") ;;
			esac
		done
		load_rv "${params[@]}"
		args=()
		for a in "$@"; do args+=("${a//%v/$i}"); done
		"${args[@]}"
	done
}

echo "== bw, $client -> $server, $qps QPs, window $window: rvbench bw (every" \
	"message checked), rvbench bw --no-verify, ib_write_bw -q $qps"
for s in "${bws[@]}"; do
	b=$(bytes "$s")
	n=$(($(bytes "$bw_bytes") / b))
	# perftest wants at least 5 per QP
	[ "$n" -ge $((5 * qps)) ] || n=$((5 * qps))
	n=$(((n + qps - 1) / qps * qps))
	rv=("$rvbench" bw --loopback-nodes "$client,$server" --sizes "$b" --iters "$n"
		--num-conn "$qps" --window "$window" --json)
	rv_bw() {
		cpu_run "$out/cpu-rv-bw-$b-$1" "${rv[@]}" "${rv_args[@]}" \
			>"$out/rv-bw-$b-$1.json"
		cpu_run "$out/cpu-rvnv-bw-$b-$1" "${rv[@]}" "${rv_args[@]}" \
			--no-verify >"$out/rvnv-bw-$b-$1.json"
	}
	run_variants rv_bw %v
	ran=$(ran_variant rvnv-bw "$b")
	if [ -z "$ran" ]; then
		echo "$b B skipped: rvbench $(cat "$out/rvnv-bw-$b.skipped"), so no ib_write_bw"
		continue
	fi
	# The window rvbench used; perftest's -t is per QP (and it takes at
	# most -n of it).
	win=$(rv_field "$out/rvnv-bw-$b-$ran.json" window)
	depth=$(((win + qps - 1) / qps))
	echo "$n $win $depth" >"$out/bw-$b.params"
	r0=$(rxe_rcvd_pkts "$server")
	cpu_run "$out/cpu-pt-bw-$b" \
		perftest ib_write_bw "$b" $((n / qps)) "$out/pt-bw-$b" -q "$qps" -t "$depth"
	echo "$b B x $n done (window $win; ib_write_bw -q $qps -t $depth -n $((n / qps)):" \
		"peer rcvd_pkts +$(($(rxe_rcvd_pkts "$server") - r0)))"
done
echo "== lat, $client -> $server: rvbench lat, ib_write_lat"
for s in "${lats[@]}"; do
	b=$(bytes "$s")
	rv_lat() {
		cpu_run "$out/cpu-rv-lat-$b-$1" "$rvbench" lat \
			--loopback-nodes "$client,$server" --sizes "$b" \
			--iters "$lat_iters" --json "${rv_args[@]}" >"$out/rv-lat-$b-$1.json"
	}
	run_variants rv_lat %v
	if [ -z "$(ran_variant rv-lat "$b")" ]; then
		echo "$b B skipped: rvbench $(cat "$out/rv-lat-$b.skipped"), so no ib_write_lat"
		continue
	fi
	cpu_run "$out/cpu-pt-lat-$b" perftest ib_write_lat "$b" "$lat_iters" "$out/pt-lat-$b"
	# The floor with a receive completion, which a write with immediate
	# has and ib_write_lat's (the receiver polls the buffer) has not.
	perftest ib_send_lat "$b" "$lat_iters" "$out/pt-slat-$b"
	echo "$b B x $lat_iters done"
done

echo "== rvbench / perftest"
"$py" - "$out" "$bw_sizes" "$lat_sizes" "$qps" <<-'EOF'
	import json, os, sys
	out = sys.argv[1]
	qps = int(sys.argv[4])
	variants = open(os.path.join(out, "variants")).read().split("\n")[:-1]

	def size(s):
	    m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
	    return int(s[:-1] if m > 1 else s) * m

	def rows(path):
	    # perftest's result lines: the first field is the size in bytes
	    for line in open(path):
	        f = line.split()
	        if len(f) > 4 and f[0].isdigit() and f[1].isdigit():
	            yield [float(x) for x in f]

	def ratio(a, b):
	    return "%.3f" % (a / b) if b else "-"

	def result(name):
	    return json.load(open(os.path.join(out, name)))["results"][0]

	def cpu(name, per):
	    # user and kernel CPU microseconds per unit of work
	    u, k, hz = (int(x) for x in open(os.path.join(out, "cpu-" + name)).read().split())
	    return "%7.1f %7.1f" % (u * 1e6 / hz / per, k * 1e6 / hz / per)

	def vname(i):
	    # ko=PATH shown by the directory above the kernel's: ko=old-modules
	    w = [("ko=" + p.split("/")[-3] if p.startswith("ko=") and p.count("/") > 2 else p)
	         for p in variants[i].split()]
	    return " ".join(w) or "rv defaults"

	def skipped(name):
	    # why rvbench skipped the size in every variant (and perftest
	    # did not run), or None
	    path = os.path.join(out, name + ".skipped")
	    return open(path).read().strip() if os.path.exists(path) else None

	print("%9s %6s %3s %4s %4s %-22s %8s %8s %8s %6s %6s %5s %11s" % ("size",
	      "msgs", "QPs", "win", "pt t", "rv parameters", "rv MB/s", "nv MB/s",
	      "pt MB/s", "rv/pt", "nv/pt", "wrong", "rx pkts"))
	cpu_rows = []
	for s in sys.argv[2].split(","):
	    b = size(s)
	    why = skipped("rvnv-bw-%d" % b)
	    if why:
	        print("%9d skipped: rvbench %s (so no ib_write_bw)" % (b, why))
	        continue
	    n, w, t = open(os.path.join(out, "bw-%d.params" % b)).read().split()
	    # bytes, iterations (of all QPs), BW peak, BW average [MiB/s], MsgRate
	    pt = next(rows(os.path.join(out, "pt-bw-%d" % b)))
	    mb = pt[3] * 1048576 / 1e6
	    for i in range(len(variants)):
	        r = result("rv-bw-%d-%d.json" % (b, i))
	        nv = result("rvnv-bw-%d-%d.json" % (b, i))
	        if "skipped" in r or "skipped" in nv:
	            print("%9d %6s %3d %4s %4s %-22s skipped: rvbench %s" % (b, "-", qps,
	                  w, t, vname(i), r.get("skipped") or nv["skipped"]))
	            continue
	        print("%9d %6d %3d %4s %4s %-22s %8.1f %8.1f %8.1f %6s %6s %5d %5s/%-5s" % (b,
	              r["messages"], qps, w, t, vname(i), r["mb_per_s"],
	              nv["mb_per_s"], mb, ratio(r["mb_per_s"], mb),
	              ratio(nv["mb_per_s"], mb), r["mismatches"] + nv["mismatches"],
	              r["receiver_rcvd_pkts"], nv["receiver_rcvd_pkts"]))
	        cpu_rows.append("%9d %-22s rv    %s   nv %s" % (b, vname(i),
	                        cpu("rv-bw-%d-%d" % (b, i), int(n)),
	                        cpu("rvnv-bw-%d-%d" % (b, i), int(n))))
	    cpu_rows.append("%9d %-22s pt    %s" % (b, "ib_write_bw", cpu("pt-bw-%d" % b, int(n))))
	    if int(pt[1]) != int(n):
	        print("  (but ib_write_bw wrote %d messages)" % int(pt[1]))
	print()
	print("%9s %6s %-22s %9s %9s %6s %9s %9s %6s %5s %9s %6s" % ("size", "iters",
	      "rv parameters", "rv med us", "pt med us", "ratio", "rv p99 us",
	      "pt p99 us", "ratio", "wrong", "send med", "ratio"))
	for s in sys.argv[3].split(","):
	    b = size(s)
	    why = skipped("rv-lat-%d" % b)
	    if why:
	        print("%9d skipped: rvbench %s (so no ib_write_lat)" % (b, why))
	        continue
	    # bytes, iterations, t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9%
	    pt = next(rows(os.path.join(out, "pt-lat-%d" % b)))
	    st = next(rows(os.path.join(out, "pt-slat-%d" % b)))
	    for i in range(len(variants)):
	        r = result("rv-lat-%d-%d.json" % (b, i))
	        if "skipped" in r:
	            print("%9d %6s %-22s skipped: rvbench %s" % (b, "-", vname(i),
	                  r["skipped"]))
	            continue
	        print("%9d %6d %-22s %9.2f %9.2f %6s %9.2f %9.2f %6s %5d %9.2f %6s" % (b,
	              r["iters"], vname(i), r["median_ns"] / 1e3, pt[4],
	              ratio(r["median_ns"] / 1e3, pt[4]), r["p99_ns"] / 1e3, pt[7],
	              ratio(r["p99_ns"] / 1e3, pt[7]), r["mismatches"], st[4],
	              ratio(r["median_ns"] / 1e3, st[4])))
	        cpu_rows.append("%9d %-22s lat   %s" % (b, vname(i),
	                        cpu("rv-lat-%d-%d" % (b, i), r["iters"])))
	    cpu_rows.append("%9d %-22s lat   %s" % (b, "ib_write_lat",
	                    cpu("pt-lat-%d" % b, int(pt[1]))))
	print()
	print("CPU per write (bw) or per round trip (lat), us: user, kernel")
	print("%9s %-22s %s" % ("size", "run", "tool   user  kernel"))
	for row in cpu_rows:
	    print(row)
	print("(ratios rvbench/perftest. bw: above 1 rv is faster; lat: above 1 rv is")
	print(" slower. MB = 10^6 bytes (perftest's MiB/s converted); latencies are half")
	print(" round trips, medians (perftest's t_typical) and 99th percentiles.")
	print(" bw: rv = rvbench bw, whose receiver checks every byte; nv = rvbench")
	print(" bw --no-verify, whose receiver checks each write's completion, length")
	print(" and sequence number only; both return credits. perftest's receiver")
	print(" checks nothing. win: writes in flight over the connection (rvbench")
	print(" --window, less where the buffer has fewer slots); pt t: ib_write_bw -t,")
	print(" per QP, = win / QPs. rx pkts: the receiver's rcvd_pkts, rv / nv.")
	print(" lat: pt = ib_write_lat, whose receiver polls the buffer; send med =")
	print(" ib_send_lat's median, whose receiver polls a receive completion, as")
	print(" rv's does for a write with immediate.")
	print(" CPU: the VM's /proc/stat over each whole run, both nodes, setup")
	print(" included; kernel = system + irq + softirq)")
	EOF
rm -rf "$out"
