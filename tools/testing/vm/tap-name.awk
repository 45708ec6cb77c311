# SPDX-License-Identifier: GPL-2.0
#
# tap-name.awk: one TAP stream out of what a vm-run prints, for tap-run.
#   vm-run ... | awk -v p='[6.12] ' -f tap-name.awk
# Every result ("ok ...", "not ok ...", or in two VMs "[a] ok ...") is
# numbered anew and named P, then the VM ("[a] "), then its own name;
# a bail-out stays one; every other line, the guests' plans and summaries
# included, becomes a comment; the plan comes last.
{ sub(/\r$/, "") }
/^(\[[ab]\] )?(not )?ok([^A-Za-z0-9_]|$)/ {
	vm = ""
	rest = $0
	if (rest ~ /^\[[ab]\] /) {
		vm = substr(rest, 1, 4)
		rest = substr(rest, 5)
	}
	not = rest ~ /^not / ? "not " : ""
	sub(/^(not )?ok *[0-9]* *-? */, "", rest)
	print not "ok " ++n " - " p vm rest
	fflush()
	next
}
/^(\[[ab]\] )?Bail out!/ { sub(/^\[[ab]\] /, ""); print; fflush(); next }
{ print "# " $0; fflush() }
END { print "1.." n }
