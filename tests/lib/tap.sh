# evtop's shell tests: numbered TAP lines and the tally. Each test sources it after `set -u`:
#   . "$(dirname "$0")/../lib/tap.sh"
# and ends with tap_done. sql runs the mariadb client on $cnf (the harness's option file),
# found in $client, both set by the test before its first call.
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
sql() { "$client" --defaults-file="$cnf" -N -B "$@"; }
# The last line is the tally; the status says whether every check passed.
tap_done() {
	echo "$((n - fails)) passed, $fails failed"
	[ $fails -eq 0 ]
}
