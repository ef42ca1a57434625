#!/bin/sh
# The C sources follow the .clang-format at the root (run `make format` to apply it).
set -u
top=${EVTOP_SRCDIR:-.}
command -v clang-format >/dev/null || {
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then echo "clang-format missing"; exit 99; fi
	echo "clang-format missing: skipping"; exit 77
}
files=$(find "$top/src" "$top/tests" "$top/bench" -name '*.[ch]' 2>/dev/null)
[ -n "$files" ] || { echo "no sources found under $top"; exit 1; }
# shellcheck disable=SC2086
if clang-format --style=file:"$top/.clang-format" --dry-run --Werror $files 2>/dev/null; then
	echo "format: ok"
	exit 0
fi
# Older clang-format has no --style=file:PATH; it finds .clang-format from each file's folder.
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files || { echo "run 'make format'"; exit 1; }
echo "format: ok"
