#!/bin/sh
# The RPM of evtop.spec, as `make rpm` builds it (a stage of scripts/test, not in TESTS: it
# builds the whole package, %check included, in about a minute):
#
#   tests/packages/rpm.sh [BUILD_DIR]      (default $EVTOP_BUILD; a configured build tree)
#
# make rpm into a temporary RPM_TOPDIR (removed on exit), then: the binary RPM holds exactly
# the files make install installs, nothing from the build root or /usr/local; it requires the
# shared libraries evtop links (by soname) and nothing of Debian's; its name, version and
# license; its scriptlets never enable or start the unit; the source RPM holds the spec and
# the tarball; rpmlint finds nothing on the spec and both packages beyond the filters of
# rpmlintrc (each explained there).
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
. "$here/../lib/tap.sh"

build=${1:-${EVTOP_BUILD:-}}
if [ -z "$build" ] || [ ! -f "$build/Makefile" ]; then
	echo "usage: $0 BUILD_DIR (or EVTOP_BUILD): a configured build tree of evtop" >&2
	not_ok "a build tree"
	tap_done
	exit 1
fi
build=$(cd "$build" && pwd)
for tool in rpmbuild rpm rpm2cpio cpio rpmlint; do
	command -v $tool >/dev/null || { not_ok "$tool is installed (apt-get install rpm rpmlint)"; tap_done; exit 1; }
done
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")

top=$(mktemp -d "${TMPDIR:-/tmp}/evtop-rpm.XXXXXX") || exit 1
trap 'rm -rf "$top"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir "$top/rpmbuild"

if make -C "$build" rpm RPM_TOPDIR="$top/rpmbuild" >"$top/make-rpm.log" 2>&1; then
	ok "make rpm"
else
	tail -n 60 "$top/make-rpm.log"
	not_ok "make rpm"
fi
srpm=$(ls "$top"/rpmbuild/SRPMS/evtop-"$version"-*.src.rpm 2>/dev/null | head -n 1)
bin=$(ls "$top"/rpmbuild/RPMS/*/evtop-"$version"-*.rpm 2>/dev/null | head -n 1)
check "make rpm printed where the packages are" \
	grep -q "^source RPM: ${srpm:-none}\$" "$top/make-rpm.log"
if [ -z "$srpm" ] || [ -z "$bin" ]; then
	not_ok "make rpm wrote evtop-$version's source and binary RPMs"
	tap_done
	exit 1
fi
ok "make rpm wrote $(basename "$srpm") and $(basename "$bin")"

# --- the files ---
rpm -qlp "$bin" >"$top/files" 2>&1
man='(\.(gz|bz2|xz|zst))?'
for f in /usr/bin/evtop "/usr/share/man/man1/evtop\.1$man" "/usr/share/man/zh_CN/man1/evtop\.1$man" \
	/usr/share/evtop/sql/schema.sql /usr/share/evtop/sql/audit.sql /usr/share/evtop/sql/grants.sql \
	/usr/share/evtop/sql/recommended-indexes.sql /usr/share/doc/evtop/metrics.md \
	/usr/share/doc/evtop/alerts.yml /usr/share/doc/evtop/metrics.cnf.example \
	/usr/share/doc/evtop/evtop.conf.example /usr/share/doc/evtop/runbook.md \
	/usr/share/doc/evtop/README /usr/share/doc/evtop/zh_CN/runbook.md /usr/share/locale/zh_CN/LC_MESSAGES/evtop.mo \
	/usr/lib/systemd/system/evtop-metrics.service '/usr/share/licenses/evtop[^/]*/COPYING' \
	/usr/share/bash-completion/completions/evtop /usr/share/zsh/site-functions/_evtop; do
	check "the RPM holds $(echo "$f" | sed 's/(\\.(gz.*$/[.gz]/; s/\\//g')" grep -Eq "^$f\$" "$top/files"
done
# Everything else is one of their directories, or a build-id link of the binary.
stray=$(grep -Ev "^(/usr/bin/evtop|/usr/share/man/(zh_CN/)?man1/evtop\.1$man|/usr/share/evtop(/sql(/[a-z-]+\.sql)?)?|/usr/share/doc/evtop(/zh_CN)?(/(metrics\.md|alerts\.yml|metrics\.cnf\.example|evtop\.conf\.example|README|NEWS|[a-z]+\.md))?|/usr/share/locale/zh_CN/LC_MESSAGES/evtop\.mo|/usr/lib/systemd/system/evtop-metrics\.service|/usr/share/bash-completion/completions/evtop|/usr/share/zsh/site-functions/_evtop|/usr/share/licenses/evtop[^/]*(/COPYING)?|/usr/lib/\.build-id(/[0-9a-f]+(/[0-9a-f]+)?)?)\$" "$top/files")
check "nothing else in the RPM${stray:+: $(echo $stray)}" test -z "$stray"
check "nothing under /usr/local, the build root or the build tree" \
	sh -c "! grep -Eq '^/usr/local|BUILDROOT|^$top|^$build' '$top/files'"
check "the .mo and the Chinese man page are marked with their language" sh -c \
	"rpm -qp --qf '[%{FILELANGS} %{FILENAMES}\n]' '$bin' | grep -Eq '^zh[^ ]* /usr/share/locale/zh_CN/LC_MESSAGES/evtop\.mo\$'"
(cd "$top" && rpm2cpio "$bin" | cpio -idu --quiet ./usr/lib/systemd/system/evtop-metrics.service) 2>/dev/null
check "the unit runs /usr/bin/evtop" \
	grep -q '^ExecStart=/usr/bin/evtop ' "$top/usr/lib/systemd/system/evtop-metrics.service"
rpm -qp --scripts "$bin" >"$top/scripts" 2>&1
check "the scriptlets never enable or start the unit" \
	sh -c "grep -q evtop-metrics.service '$top/scripts' && ! grep -Eq 'systemctl .*(enable|start|restart)' '$top/scripts'"

# --- the requirements: by soname, nothing Debian's ---
rpm -qRp "$bin" >"$top/requires" 2>&1
for lib in libncursesw libmariadb libjansson libmicrohttpd libcrypt; do
	check "it requires $lib" grep -Eq "^$lib\\.so\\.[0-9]+\\(\\)" "$top/requires"
done
# Only glibc's, ncurses' and the five libraries' sonames, the dynamic linker's hash style,
# rpm's own features and the scriptlets' shell; no path of Debian's, no Debian package name.
odd=$(grep -Ev '^((libc|libm|libpthread|libdl|libtinfo|libncursesw|libmariadb|libjansson|libmicrohttpd|libcrypt)\.so\.[0-9]+\(([A-Za-z0-9_.]*)\)(\(64bit\))?|ld-linux[^ ]*\.so\.[0-9]+(\(.*\))?|rtld\(GNU_HASH\)|rpmlib\([A-Za-z]+\) <= [0-9.-]+|/bin/sh)$' "$top/requires")
check "nothing else required${odd:+: $(echo $odd)}" test -z "$odd"
check "nothing Debian-specific required" sh -c "! grep -Eiq 'debian|dpkg|x86_64-linux-gnu|libc6|-dev\\b' '$top/requires'"

# --- name, version, license; the source RPM ---
check "Name: evtop" test "$(rpm -qp --qf '%{NAME}' "$bin")" = evtop
check "Version: $version (AC_INIT's)" test "$(rpm -qp --qf '%{VERSION}' "$bin")" = "$version"
check "License: MIT" test "$(rpm -qp --qf '%{LICENSE}' "$bin")" = MIT
check "the source RPM's License: MIT" test "$(rpm -qp --qf '%{LICENSE}' "$srpm")" = MIT
rpm -qlp "$srpm" >"$top/srcfiles" 2>&1
check "the source RPM holds evtop.spec" grep -qx evtop.spec "$top/srcfiles"
check "the source RPM holds evtop-$version.tar.gz" grep -qx "evtop-$version.tar.gz" "$top/srcfiles"
check "the source RPM holds nothing else" test "$(wc -l <"$top/srcfiles")" -eq 2

# --- rpmlint: the spec as shipped (out of the source RPM) and both packages ---
mkdir "$top/spec"
(cd "$top/spec" && rpm2cpio "$srpm" | cpio -idu --quiet evtop.spec) 2>/dev/null
rpmlint -r "$srcdir/rpmlintrc" "$top/spec/evtop.spec" "$srpm" "$bin" >"$top/rpmlint.out" 2>&1
rc=$?
summary=$(grep -E '[0-9]+ errors?, [0-9]+ warnings?' "$top/rpmlint.out" | tail -n 1)
echo "# rpmlint: $summary"
if [ $rc -eq 0 ] && echo "$summary" | grep -Eq ' 0 errors, 0 warnings'; then
	ok "rpmlint: no errors, no warnings (rpmlintrc's filters aside)"
else
	sed 's/^/# /' "$top/rpmlint.out"
	not_ok "rpmlint: no errors, no warnings (rpmlintrc's filters aside)"
fi

tap_done
