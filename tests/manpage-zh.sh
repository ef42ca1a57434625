#!/bin/sh
# doc/zh_CN/evtop.1 against doc/evtop.1: the translation keeps every long option, every key of
# the KEYS section (under the view of the same context name), the same number of sections and
# subsections, formats without a groff warning (line breaking aside), and every doc/zh_CN/ path
# it names exists.
# Needs no database and no binary.
set -u
src=${EVTOP_SRCDIR:?}
en=$src/doc/evtop.1
zh=$src/doc/zh_CN/evtop.1
. "$src/tests/lib/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/evtmanzh.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

[ -r "$en" ] || { echo "no $en"; exit 99; }
[ -r "$zh" ] || { echo "no $zh"; exit 99; }

# One section of a page, by its .SH name (quotes around the name dropped).
section() { # section PAGE NAME
	awk -v s="$2" '/^\.SH/ { t = $0; sub(/^\.SH[ \t]*/, "", t); gsub(/"/, "", t); on = (t == s); next } on' "$1"
}

# Long options: the \-\-name tokens of each page, unescaped.
longopts() {
	grep -o '\\-\\-[a-z][a-z0-9]*\(\\-[a-z0-9][a-z0-9]*\)*' "$1" | sed 's/\\-/-/g' | sort -u
}
longopts "$en" >"$tmp/en.opts"
longopts "$zh" >"$tmp/zh.opts"
if [ -s "$tmp/en.opts" ]; then ok "doc/evtop.1 has long options"; else not_ok "doc/evtop.1 has no long option"; fi
while read -r o; do
	if grep -qxF -- "$o" "$tmp/zh.opts"; then ok "option $o"; else not_ok "option $o is missing from doc/zh_CN/evtop.1"; fi
done <"$tmp/en.opts"

# Keys: the tag line after each .TP of KEYS (按键), as "context<TAB>key" lines. The context is
# the parenthesised name of the .SS heading ("" when it has none); a tag is unquoted and
# unescaped and split at its commas; a ':' command counts by its first word (":show").
keys() {
	awk '
	/^\.SS/ { ctx = ""; if (match($0, /\([^()]*\)"?[ \t]*$/)) { ctx = substr($0, RSTART + 1, RLENGTH - 1); sub(/\)"?[ \t]*$/, "", ctx) } ; tag = 0; next }
	/^\.TP/ { tag = 1; next }
	tag && /^\./ {
		tag = 0
		t = $0
		sub(/^\.[A-Z]+[ \t]*/, "", t)
		gsub(/\\f[BIRP]/, "", t); gsub(/\\-/, "-", t); gsub(/"/, "", t)
		n = split(t, part, ",")
		for (i = 1; i <= n; i++) {
			k = part[i]
			sub(/^[ \t]+/, "", k); sub(/[ \t]+$/, "", k)
			if (k ~ /^:/) sub(/[ \t].*/, "", k)
			if (k != "") print ctx "\t" k
		}
		next
	}
	{ tag = 0 }' | sort -u
}
section "$en" KEYS >"$tmp/en.keys.sec"
section "$zh" 按键 >"$tmp/zh.keys.sec"
keys <"$tmp/en.keys.sec" >"$tmp/en.keys"
keys <"$tmp/zh.keys.sec" >"$tmp/zh.keys"
if [ -s "$tmp/en.keys" ]; then ok "doc/evtop.1 KEYS lists keys"; else not_ok "doc/evtop.1 KEYS lists no key"; fi
if [ -s "$tmp/zh.keys.sec" ]; then ok "doc/zh_CN/evtop.1 has the section 按键"; else not_ok "doc/zh_CN/evtop.1 has no section 按键"; fi
while IFS= read -r line; do
	ctx=${line%%"	"*}
	key=${line#*"	"}
	if grep -qxF -- "$line" "$tmp/zh.keys"; then
		ok "按键 ($ctx) has $key"
	else
		not_ok "按键 ($ctx) lacks the key $key of KEYS ($ctx)"
	fi
done <"$tmp/en.keys"
# The .B lines of KEYS name keys and literal values in the prose too (".B x", ".B PAUSED"):
# each stays as it is, but for a \c at its end (Chinese text joins on without a space).
grep '^\.B ' "$tmp/en.keys.sec" | sort -u >"$tmp/en.b"
sed 's/\\c$//' "$tmp/zh.keys.sec" >"$tmp/zh.keys.noc"
missing=$(grep -vxF -f "$tmp/zh.keys.noc" "$tmp/en.b")
if [ -z "$missing" ]; then ok "按键 keeps every .B line of KEYS"; else
	not_ok "按键 lacks .B lines of KEYS: $(echo "$missing" | tr '\n' ' ')"
fi

# The same outline.
for m in SH SS; do
	a=$(grep -c "^\.$m\([ \t]\|\$\)" "$en")
	b=$(grep -c "^\.$m\([ \t]\|\$\)" "$zh")
	if [ "$a" -eq "$b" ]; then ok "$b .$m lines, as doc/evtop.1"; else
		not_ok "doc/zh_CN/evtop.1 has $b .$m lines, doc/evtop.1 $a"
	fi
done

# groff finds nothing to complain about in the page as installed (scripts/man-breaks.pl: break
# points between Chinese characters, which groff does not break by itself; preconv: UTF-8), and
# at 80 columns its lines fit as the English page's do (only examples run past the edge, as
# many as in the English page).
cells() { perl -CSD -ne 'chomp; my $n = 0; for my $c (split //) { $n += /\p{Ea=W}|\p{Ea=F}/ ? 2 : 1 for $c } print "$n\n"'; }
if command -v groff >/dev/null 2>&1 && command -v preconv >/dev/null 2>&1; then
	perl "$src/scripts/man-breaks.pl" <"$zh" >"$tmp/zh.1"
	warn=$(preconv "$tmp/zh.1" 2>&1 | groff -man -Tutf8 -ww -z 2>&1)
	if [ -z "$warn" ]; then ok "preconv | groff -ww: no warnings"; else
		not_ok "preconv | groff -ww: $warn"
	fi
	long_zh=$(preconv "$tmp/zh.1" | groff -man -Tutf8 -rLL=78n -P-cbou 2>/dev/null | cells | awk '$1 > 80' | wc -l)
	long_en=$(groff -man -Tutf8 -rLL=78n -P-cbou "$src/doc/evtop.1" 2>/dev/null | cells | awk '$1 > 80' | wc -l)
	if [ "$long_zh" -le "$long_en" ]; then ok "at 80 columns $long_zh lines run past the edge, the English page $long_en"; else
		not_ok "at 80 columns $long_zh lines run past the edge, the English page only $long_en"
	fi
elif [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then
	not_ok "groff or preconv missing (Debian: groff-base)"
else
	n=$((n + 1))
	echo "ok $n # SKIP groff or preconv missing (Debian: groff-base)"
fi

# The doc/zh_CN/ paths the page names exist.
paths=$(sed 's/\\-/-/g' "$zh" | grep -o 'doc/zh_CN/[A-Za-z0-9._/-]*' | sed 's/[.]*$//' | sort -u)
if [ -n "$paths" ]; then
	for p in $paths; do
		if [ -e "$src/$p" ]; then ok "$p exists"; else not_ok "the page names $p, which does not exist"; fi
	done
fi

tap_done
