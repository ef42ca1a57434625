#!/bin/sh
# The layers of STYLE.md: <mysql.h> only in src/db, curses only in src/ui, and core includes
# neither (nor any other layer).
set -u
src=${EVTOP_SRCDIR:-.}/src
fail=0
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"](mysql|mariadb/mysql|errmsg|mysqld_error)\.h' "$src" | grep -v "^$src/db/")
[ -n "$bad" ] && { echo "mysql.h outside src/db: $bad"; fail=1; }
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"](n?curses(w)?/?[a-z]*|term|panel|menu|form)\.h' "$src" | grep -v "^$src/ui/")
[ -n "$bad" ] && { echo "curses outside src/ui: $bad"; fail=1; }
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*"(db|ui|cli)/' "$src/core")
[ -n "$bad" ] && { echo "core reaches up into another layer: $bad"; fail=1; }
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*"(ui|cli)/' "$src/db")
[ -n "$bad" ] && { echo "db reaches up into ui or cli: $bad"; fail=1; }
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*"ui/' "$src/cli")
[ -n "$bad" ] && { echo "cli includes ui: $bad"; fail=1; }
# Autoconf's header is <config.h>; "config.h" in quotes would find src/core/config.h (the
# config-file module) first when included from src/core.
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*"config\.h"' "$src" "$src/../tests" 2>/dev/null)
[ -n "$bad" ] && { echo "include <config.h>, not \"config.h\": $bad"; fail=1; }
# Inside src/ui: app.c is the floor the views stand on and calls into none of them (nor into
# console.c above it); only console.c opens views it does not own.
above=$(cat "$src"/ui/view_*.c "$src"/ui/actions.c "$src"/ui/bulk.c "$src"/ui/console.c |
	grep -v '^static' | sed -n 's/^[a-z][a-z_ ]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' | sort -u)
for f in $above; do
	if grep -qE "(^|[^a-z0-9_>.])$f\(" "$src/ui/app.c"; then
		echo "src/ui/app.c calls $f, defined in a view or the console above it"
		fail=1
	fi
done
# The files of src/ui call each other without a circle (a view opens one above it through
# app_open): the calls between them, file to file, sort topologically.
edges=$(cd "$src/ui" && for f in *.c; do
	defs=$(grep -v '^static' "$f" | sed -n 's/^[a-z][a-z_ ]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p')
	for g in *.c; do
		[ "$f" = "$g" ] && continue
		for d in $defs; do
			if grep -qE "(^|[^a-z0-9_>.])$d\(" "$g"; then echo "$g $f"; break; fi
		done
	done
done)
if ! loop=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loop" ]; then
	echo "the files of src/ui call each other in a circle:"
	echo "$loop"
	fail=1
fi
# A function over 120 lines says why in the comment above it ("long because ..."). The ones
# listed here are known and to be split; a new one fails.
known=""
long=$(cd "$src" && awk '
	/^(\/\*| \*)/ { cmt = cmt $0 " "; next }
	/^[A-Za-z].*\(/ && !/;$/ { sig = $0; why = (cmt ~ /long because/); cmt = "" }
	!/^(\/\*| \*)/ && !/^[A-Za-z]/ { cmt = "" }
	/^\{/ { start = FNR }
	/^\}/ && start {
		if (FNR - start > 120 && !why) {
			name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
			printf "%s:%s:%d\n", FILENAME, name, FNR - start
		}
		start = 0
	}' */*.c)
for l in $long; do
	case " $(echo $known) " in
	*" ${l%:*} "*) ;;
	*) echo "src/${l%:*}: ${l##*:} lines, and no comment saying why it is long"; fail=1 ;;
	esac
done
for k in $known; do
	case " $(echo $long) " in
	*" $k:"*) ;;
	*) echo "tests/layering.sh lists src/$k as long: it is not (any more), take it off"; fail=1 ;;
	esac
done
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
