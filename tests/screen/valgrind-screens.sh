#!/bin/sh
# A few of the screen scripts, for `make check-valgrind` (not part of `make check`): the
# dashboard, a list, the detail pane (and its re-reads), a list's widths and the protected
# prompt, the 1 MB payload, small terminals and the config's keys
# (tests/screen/scripts/), each compared with its expected screens exactly as screens.sh does,
# with EVTOP running evtop under valgrind. VALGRIND_SCREENS="a b" picks other scripts.
set -u
src=${EVTOP_SRCDIR:?}
dir=${EVTOP_TEST_DIR:?}
fake=$dir/src
mkdir -p "$fake/tests/screen/scripts" || exit 99
for s in ${VALGRIND_SCREENS:-dashboard list detail detail-refresh list-widths megabyte small keys}; do
	ln -s "$src/tests/screen/scripts/$s.keys" "$fake/tests/screen/scripts/" || exit 99
done
for conf in "$src"/tests/screen/scripts/*.conf; do
	ln -s "$conf" "$fake/tests/screen/scripts/" || exit 99
done
ln -s "$src/tests/screen/expected" "$fake/tests/screen/expected"
ln -s "$src/tests/screen/fault-scripts" "$fake/tests/screen/fault-scripts" # the scripts' helpers
ln -s "$src/tests/data" "$fake/tests/data"
EVTOP_SRCDIR=$fake exec ${SHELL:-/bin/sh} "$src/tests/screen/screens.sh"
