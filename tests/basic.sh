#!/bin/sh
# The program starts, and --help / --version / a bad option behave as a Unix tool's do.
set -u
evtop=${EVTOP:-./evtop}
fail=0
out=$("$evtop" --version) || { echo "--version failed"; fail=1; }
echo "$out" | grep -q '^evtop [0-9]' || { echo "--version: no 'evtop N' line: $out"; fail=1; }
# The client library it was built with (name and version), and the servers it supports.
echo "$out" | grep -Eq '^client library: (libmariadb|mysqlclient) [0-9]+\.[0-9]+' ||
	{ echo "--version: no client library line: $out"; fail=1; }
echo "$out" | grep -q '^servers: MySQL 8\.0+, MariaDB 10\.6+ (tested on MariaDB 10\.11)$' ||
	{ echo "--version: no servers line: $out"; fail=1; }
[ "$("$evtop" -V)" = "$out" ] || { echo "-V differs from --version"; fail=1; }
"$evtop" --help | grep -q '^Usage: evtop' || { echo "--help: no usage line"; fail=1; }
"$evtop" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || { echo "an unknown option must exit 2"; fail=1; }
[ $fail -eq 0 ] && echo "basic: ok"
exit $fail
