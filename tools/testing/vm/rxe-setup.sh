#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Create soft-RoCE (rdma_rxe) nodes.  Meant to run as root inside a vm-run VM
# (it changes the network configuration of init_net).
#
#   rxe-setup.sh N
#       N local nodes (1..8): netdevs va, vb, ... with 10.77.1.1, .2, ...
#       and rxe devices rxe0, rxe1, ...  N=2 uses a veth pair va<->vb; N>2
#       connects veth ends pa, pb, ... to a bridge rvbr0; N=1 is va<->pa.
#   rxe-setup.sh --netdev DEV --addr IP/PREFIX
#       one node: address DEV, create rxe0 on it (used by vm-run --two-vm).
#
# Prints sourceable "export VAR=..." lines on stdout: RV_NODES (rxe devices,
# node order), RV_NETDEVS, RV_NODE_IPS, RV_NODE_GID_INDEXES (GID index of
# each node's RoCE v2 IPv4 GID, for perftest -x).  Progress goes to stderr.
#
# Why the policy routing: rdma_rxe (6.1) routes in init_net only, and between
# two local addresses the kernel would deliver every packet through lo, so
# rxe would hand it back to the *sending* device and the two nodes would
# silently be one.  For every ordered pair of nodes (i, j) a rule sends
# locally generated traffic "from IPi to IPj" through a table that routes
# IPj out of node i's netdev; the local table is moved after those rules and
# accept_local/rp_filter let the receiving netdev accept the packet.

set -euo pipefail

NAMES=(a b c d e f g h)
SUBNET=10.77.1
WAIT_TENTHS=100   # 10 s bound for ports/GIDs

log() {
	echo "rxe-setup: $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

usage() {
	sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# Everything below avoids forking where it can: under TCG every exec of a
# dynamically linked program from the 9p root costs ~0.1 s.

sysctl_set() {
	local f=/proc/sys/${1//.//}
	echo "$2" >"$f" || die "cannot set $1=$2"
}

# load_modules MODULE...: soft-RoCE's modules (RV_RXE_MODULES, from
# vm-guest) plus the given ones.
load_modules() {
	local m missing=0
	# shellcheck disable=SC2086 # a list of modules
	for m in ${RV_RXE_MODULES:?} "$@"; do
		[ -d "/sys/module/$m" ] || missing=1
	done
	# shellcheck disable=SC2086
	[ "$missing" = 0 ] || modprobe -a $RV_RXE_MODULES "$@" ||
		die "modprobe -a $RV_RXE_MODULES $* failed"
}

port_state() {
	local s=
	read -r s <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || true
	echo "$s"
}

wait_active() {
	local dev=$1 i s
	for ((i = 0; i < WAIT_TENTHS; i++)); do
		s=
		read -r s <"/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null || true
		case "$s" in *ACTIVE*) return 0 ;; esac
		sleep 0.1
	done
	die "$dev port 1 not ACTIVE after $((WAIT_TENTHS / 10)) s (state: $(port_state "$dev"))"
}

# gid_index DEV IP: prints the index of the RoCE v2 GID ::ffff:IP, waiting
# for it to appear.
gid_index() {
	local dev=$1 ip=$2 want i f idx gid type a b c d
	IFS=. read -r a b c d <<<"$ip"
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
	for ((i = 0; i < WAIT_TENTHS; i++)); do
		for f in "/sys/class/infiniband/$dev/ports/1/gids/"*; do
			idx=${f##*/}
			gid='' type=''
			read -r gid <"$f" 2>/dev/null || continue
			[ "$gid" = "$want" ] || continue
			read -r type <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null || continue
			case "$type" in *v2*) echo "$idx"; return 0 ;; esac
		done
		sleep 0.1
	done
	die "$dev has no RoCE v2 GID for $ip"
}

emit() {
	printf 'export RV_NODES=%q\n' "$1"
	printf 'export RV_NETDEVS=%q\n' "$2"
	printf 'export RV_NODE_IPS=%q\n' "$3"
	printf 'export RV_NODE_GID_INDEXES=%q\n' "$4"
}

setup_netdev() {
	local dev=$1 addr=$2 ip=${2%/*}
	[ -e "/sys/class/net/$dev" ] || die "no netdev $dev"
	load_modules
	ip -batch - <<-EOF || die "ip configuration of $dev failed"
		link set lo up
		link set $dev up
		addr add $addr dev $dev
	EOF
	rdma link add rxe0 type rxe netdev "$dev" || die "rdma link add rxe0 on $dev failed"
	wait_active rxe0
	emit rxe0 "$dev" "$ip" "$(gid_index rxe0 "$ip")"
	log "rxe0 on $dev ($addr) ACTIVE"
}

# A veth hands each packet to the backlog of the CPU that sent it. rxe
# sends a QP's packets from whichever CPU runs its task at the time, so
# two CPUs' backlogs can deliver one QP's packets out of order: the
# responder NAKs, the requester goes back N and, on a lost NAK, waits
# for its ACK timeout. A NIC keeps a flow on one queue; RPS to one CPU
# gives the veth the same order. (Seen: 64 KiB writes on 4 QPs, 10% of
# the packets resent and 20 timeouts per 16 MiB without it, none with.)
in_order() {
	local f=/sys/class/net/$1/queues/rx-0/rps_cpus
	[ -w "$f" ] && echo 1 >"$f" || log "warning: cannot set $f"
}

setup_local() {
	local n=$1 i j c dev ip table batch rbatch
	local -a devs=() peers=() ips=() macs=() rxes=() gidx=()
	if [ "$n" -le 2 ]; then load_modules veth; else load_modules veth bridge; fi

	for c in all default; do
		sysctl_set "net.ipv4.conf.$c.accept_local" 1
		sysctl_set "net.ipv4.conf.$c.rp_filter" 0
		sysctl_set "net.ipv4.conf.$c.arp_ignore" 1
	done

	for ((i = 0; i < n; i++)); do
		devs+=("v${NAMES[i]}")
		peers+=("p${NAMES[i]}")
		ips+=("$SUBNET.$((i + 1))")
		printf -v c '02:00:0a:4d:01:%02x' "$((i + 1))"
		macs+=("$c")
		rxes+=("rxe$i")
	done

	batch="link set lo up"$'\n'
	if [ "$n" = 2 ]; then
		batch+="link add va address ${macs[0]} type veth peer name vb address ${macs[1]}"$'\n'
	else
		[ "$n" = 1 ] || batch+="link add rvbr0 type bridge forward_delay 0 stp_state 0"$'\n'
		[ "$n" = 1 ] || batch+="link set rvbr0 up"$'\n'
		for ((i = 0; i < n; i++)); do
			batch+="link add name ${devs[i]} address ${macs[i]} type veth peer name ${peers[i]}"$'\n'
			[ "$n" = 1 ] || batch+="link set dev ${peers[i]} master rvbr0"$'\n'
			batch+="link set dev ${peers[i]} up"$'\n'
		done
	fi
	for ((i = 0; i < n; i++)); do
		batch+="addr add ${ips[i]}/24 dev ${devs[i]}"$'\n'
		batch+="link set dev ${devs[i]} up"$'\n'
	done
	# Per ordered pair (i -> j): locally generated packets from IPi to IPj
	# leave through devs[i]; static neighbours avoid ARP between local
	# addresses.
	for ((i = 0; i < n; i++)); do
		for ((j = 0; j < n; j++)); do
			[ "$i" != "$j" ] || continue
			table=$((101 + i * 8 + j))
			batch+="route add ${ips[j]} dev ${devs[i]} src ${ips[i]} table $table"$'\n'
			batch+="rule add pref 10 iif lo from ${ips[i]} to ${ips[j]} lookup $table"$'\n'
			batch+="neigh replace ${ips[j]} lladdr ${macs[j]} dev ${devs[i]} nud permanent"$'\n'
		done
	done
	if [ "$n" -gt 1 ]; then
		batch+="rule add pref 100 lookup local"$'\n'
		batch+="rule del pref 0 lookup local"$'\n'
	fi

	# The per-device sysctls exist only once the devices do, so the batch is
	# split after the link creation.
	local first=${batch%%addr add*} rest=addr\ add${batch#*addr add}
	ip -batch - <<<"$first" || die "creating the netdevs failed"
	for dev in "${devs[@]}"; do
		sysctl_set "net.ipv4.conf.$dev.accept_local" 1
		sysctl_set "net.ipv4.conf.$dev.rp_filter" 0
		sysctl_set "net.ipv4.conf.$dev.arp_ignore" 1
		in_order "$dev"
	done
	if [ "$n" -gt 2 ]; then
		for dev in "${peers[@]}"; do in_order "$dev"; done
	fi
	ip -batch - <<<"$rest" || die "configuring addresses and routes failed"

	rbatch=
	for ((i = 0; i < n; i++)); do
		rbatch+="link add ${rxes[i]} type rxe netdev ${devs[i]}"$'\n'
	done
	rdma -b - <<<"$rbatch" || die "rdma link add failed"
	for ((i = 0; i < n; i++)); do
		wait_active "${rxes[i]}"
		gidx+=("$(gid_index "${rxes[i]}" "${ips[i]}")")
	done
	emit "${rxes[*]}" "${devs[*]}" "${ips[*]}" "${gidx[*]}"
	log "$n node(s) ACTIVE: ${rxes[*]} on ${devs[*]} (${ips[*]})"
}

[ "$EUID" = 0 ] || die "must run as root"

case "${1:-}" in
--netdev)
	if [ "$#" != 4 ] || [ "$3" != --addr ]; then usage; fi
	setup_netdev "$2" "$4"
	;;
[1-8])
	[ "$#" = 1 ] || usage
	setup_local "$1"
	;;
*) usage ;;
esac
