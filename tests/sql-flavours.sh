#!/bin/sh
# sql/mariadb/*.sql is sql/mysql8/*.sql but for the collation (MariaDB has no
# utf8mb4_0900_ai_ci) and the header comments: the two flavours cannot drift apart.
set -u
sql=${EVTOP_SRCDIR:-.}/sql
fail=0
for f in schema.sql audit.sql; do
	a=$(grep -v '^--' "$sql/mysql8/$f" | sed 's/utf8mb4_0900_ai_ci/COLLATION/g')
	b=$(grep -v '^--' "$sql/mariadb/$f" | sed 's/utf8mb4_unicode_ci/COLLATION/g')
	if [ "$a" != "$b" ]; then
		echo "sql/mysql8/$f and sql/mariadb/$f differ beyond the collation"
		fail=1
	fi
done
grep -v '^--' "$sql/mariadb/schema.sql" | grep -q 'utf8mb4_0900_ai_ci' && { echo "MariaDB schema uses utf8mb4_0900_ai_ci"; fail=1; }
[ $fail -eq 0 ] && echo "sql flavours: ok"
exit $fail
