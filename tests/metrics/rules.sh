#!/bin/sh
# doc/alerts.yml, the example alerting rules of doc/metrics.md: promtool check rules finds no
# error or warning; tests/metrics/alerts-test.yml has, for every alert of the file, a time
# where it fires and one where it does not, and promtool test rules passes on it — and fails
# on a copy of the rules with the stuck threshold changed, so the test can fail. Needs
# promtool (Debian's prometheus package), no database.
set -u
src=${EVTOP_SRCDIR:-$(dirname "$0")/../..}
. "$(dirname "$0")/../lib/tap.sh"
if ! command -v promtool >/dev/null 2>&1; then
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then
		echo "rules.sh: promtool is missing (scripts/test installs the prometheus package)" >&2
		exit 99
	fi
	echo "rules.sh: promtool is missing: skipping" >&2
	exit 77
fi
rules=$src/doc/alerts.yml
tests=$src/tests/metrics/alerts-test.yml
[ -r "$rules" ] && [ -r "$tests" ] || { echo "rules.sh: no $rules or $tests" >&2; exit 99; }
# promtool test rules finds rule_files beside the test file: both go into one directory.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/evtrules.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cp "$rules" "$tmp/alerts.yml" && cp "$tests" "$tmp/alerts-test.yml" || exit 99

promtool check rules "$tmp/alerts.yml" >"$tmp/out" 2>&1
rc=$?
check "promtool check rules doc/alerts.yml (exit $rc)" [ $rc = 0 ]
check "... finds the six rules" grep -q "SUCCESS: 6 rules found" "$tmp/out"
if grep -Eqi 'warn|error' "$tmp/out"; then
	not_ok "... and says nothing of a warning or an error: $(cat "$tmp/out")"
else
	ok "... and says nothing of a warning or an error"
fi

# Every alert is tested both ways: a time where it fires, and one where it does not.
alerts=$(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\) *$/\1/p' "$tmp/alerts.yml")
cases=$(awk '/^ *alertname:/ { a = $2 }
	/^ *exp_alerts: *\[\] *$/ { print a, "quiet" }
	/^ *exp_alerts: *$/ { print a, "fires" }' "$tmp/alerts-test.yml")
for a in $alerts; do
	check "alerts-test.yml has a time where $a fires" sh -c 'echo "$1" | grep -qx "$2 fires"' - "$cases" "$a"
	check "... and one where it does not" sh -c 'echo "$1" | grep -qx "$2 quiet"' - "$cases" "$a"
done

promtool test rules "$tmp/alerts-test.yml" >"$tmp/out" 2>&1
rc=$?
check "promtool test rules: every alert fires where it should, and only there (exit $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/# /' "$tmp/out"

# The same test on rules with the stuck threshold moved must fail, and say which alert.
sed 's/(evtop_events{state="stuck"}) > 0$/(evtop_events{state="stuck"}) > 5/' "$rules" >"$tmp/alerts.yml"
check "the broken copy differs from doc/alerts.yml" sh -c '! cmp -s "$1" "$2"' - "$rules" "$tmp/alerts.yml"
promtool test rules "$tmp/alerts-test.yml" >"$tmp/out" 2>&1
rc=$?
check "... and promtool test rules fails on it (exit $rc)" [ $rc != 0 ]
check "... naming EvtopStuckEvents" grep -q 'alertname: EvtopStuckEvents' "$tmp/out"
tap_done
