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
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
