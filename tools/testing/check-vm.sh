#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Module tier: boot the test VM with two rxe nodes and run every test that
# needs rv.ko (tools/testing/selftests/rv/vm-suite.sh); then boot two VMs
# joined by a virtual Ethernet and run the connection test between the two
# kernels (tools/testing/selftests/rv/conn.sh in both). One TAP stream.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top"

make -s modules >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
tools/testing/vm/tap-run "$tmp/one-vm-two-rxe-nodes" "$tmp/two-vms" || rc=$?
exit "$rc"
