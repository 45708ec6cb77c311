#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Module tier: boot the test VM with two rxe nodes and run every test that
# needs rv.ko (tools/testing/selftests/rv/vm-suite.sh); then boot two VMs
# joined by a virtual Ethernet and run the connection test between the two
# kernels (tools/testing/selftests/rv/conn.sh in both). One TAP stream;
# progress ("# check-vm: [+N s] ...", the total at the end) on stderr,
# each VM run's start and end from tap-run, vm-run's boot and setup lines.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top"

t0=$SECONDS
step() { echo "# check-vm: [+$((SECONDS - t0)) s] $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; echo "# check-vm: total $((SECONDS - t0)) s" >&2' EXIT

step "building rv.ko"
make -s modules >/dev/null

# tap-run runs programs without arguments: one small script per VM run.
cat >"$tmp/one-vm-two-rxe-nodes" <<EOF
#!/bin/sh
exec "$top/tools/testing/vm/vm-run" --rxe 2 --timeout 900 --out "$build/vm/suite" \\
	-- "$top/tools/testing/selftests/rv/vm-suite.sh"
EOF

# Both VMs print TAP, each line prefixed "[a] " or "[b] ": their results
# are numbered into one stream, named after the VM; the rest become
# comments.
cat >"$tmp/two-vms" <<EOF
#!/bin/bash
set -o pipefail
"$top/tools/testing/vm/vm-run" --two-vm --timeout 600 --out "$build/vm/two-vm" \\
	-- "$top/tools/testing/selftests/rv/conn.sh" |
awk '
{ sub(/\r\$/, "") }
/^\[[ab]\] (not )?ok/ {
	role = substr(\$0, 2, 1)
	rest = substr(\$0, 5)
	not = rest ~ /^not / ? "not " : ""
	sub(/^(not )?ok *[0-9]* *-? */, "", rest)
	print not "ok " ++n " - [" role "] " rest
	next
}
{ print "# " \$0 }
END { print "1.." n }'
EOF
chmod +x "$tmp/one-vm-two-rxe-nodes" "$tmp/two-vms"

rc=0
step "one VM, two rxe nodes: the suite; then two VMs: conn.sh"
tools/testing/vm/tap-run "$tmp/one-vm-two-rxe-nodes" "$tmp/two-vms" || rc=$?
exit "$rc"
