#!/usr/bin/env bash
#
# scripts/install-deps.sh [--pg N [--release]]
#	Install what building, testing and benchmarking fastbtree needs on
#	Debian 12.
#
# Without --pg (or with --pg 15): Debian's PostgreSQL 15 server and
# headers, the TAP test modules and a C toolchain, from the distribution's
# packages.
#
# --pg N (another major, e.g. 18): Debian 12 packages only PostgreSQL 15, so
# build major N from Debian's source package (a deb-src line for Debian's
# "sid" is added under /etc/apt/sources.list.d/), with assertions, TAP
# support and ICU, and install it under /opt/fastbtree-pg/N: the server,
# the contrib modules the tests use (amcheck, pageinspect, pg_buffercache,
# pg_prewarm, pg_walinspect), the isolation tester and the TAP modules.  A
# finished build made with the same options is reused: delete
# /opt/fastbtree-pg/N to force a new one.  Takes 3 to 5 minutes on 2
# cores; the build log is /opt/fastbtree-pg/N.build/build.log, and the
# progress of each step is printed.  The pg_config of the result is
# /opt/fastbtree-pg/N/bin/pg_config.
#
# --release (with --pg N): the same build without assertions, under
# /opt/fastbtree-pg/N-release, for bench/run.sh --pg N (benchmarks refuse
# an assertion-enabled server).
#
# Run as root.  Idempotent: when everything is already installed it does
# not touch apt at all, and it refreshes the package lists only when they
# are missing or an install from the current lists fails.
#
# Installing postgresql-15 lets Debian create (and, where the init system
# allows, start) its default "main" cluster on port 5432.  This script
# leaves that cluster alone; scripts/test.sh and bench/run.sh never use it
# and run their own throwaway clusters instead.

set -euo pipefail

PG_MAJOR=15
PG_PREFIX_BASE=/opt/fastbtree-pg
SRC_LIST=/etc/apt/sources.list.d/fastbtree-pg-src.sources

# perl provides prove and Test::More for the TAP tests; passwd (useradd) and
# util-linux (runuser) are used by scripts/test.sh and bench/run.sh to run
# the servers as an unprivileged user.  Most images have them already.
COMMON_PACKAGES=(
	libipc-run-perl
	build-essential
	perl
	passwd
	util-linux
)
PG15_PACKAGES=(
	postgresql-15
	postgresql-server-dev-15
)
# what building PostgreSQL from its release tarball needs (the tarballs
# of recent majors carry no generated parser: bison and flex)
SOURCE_BUILD_PACKAGES=(
	dpkg-dev
	bison
	flex
	pkg-config
	libicu-dev
	libreadline-dev
	zlib1g-dev
	libssl-dev
	xz-utils
	bzip2
)

# configure's options for a source build (ICU: the tests use ICU and
# nondeterministic collations, as Debian's PostgreSQL 15 has them).  With
# the contrib list, kept in the finished build's marker file: a build made
# with other options is rebuilt.
CONFIGURE_FLAGS="--enable-cassert --enable-debug --enable-tap-tests --with-icu"
# the contrib modules the tests use, installed with the server
CONTRIB_MODULES="amcheck pageinspect pg_buffercache pg_prewarm pg_walinspect"
BUILD_ID="configure $CONFIGURE_FLAGS; contrib $CONTRIB_MODULES"

die()
{
	echo "install-deps: $*" >&2
	exit 1
}

log()
{
	echo "install-deps: $*"
}

RELEASE=no
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || die "--pg needs a major version"; PG_MAJOR=$2; shift 2 ;;
		--release) RELEASE=yes; shift ;;
		--pg=*) PG_MAJOR=${1#*=}; shift ;;
		-h|--help)
			sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
			exit 0 ;;
		*) die "unknown option $1 (see --help)" ;;
	esac
done
case $PG_MAJOR in
	''|*[!0-9]*) die "--pg: '$PG_MAJOR' is not a major version number" ;;
esac
[ "$RELEASE" = no ] || [ "$PG_MAJOR" != 15 ] ||
	die "--release is for source builds (--pg N, N other than 15): Debian's PostgreSQL 15 has no assertions already"
if [ "$RELEASE" = yes ]; then
	# benchmarks need a server without assertions (bench/run.sh --pg N)
	CONFIGURE_FLAGS=${CONFIGURE_FLAGS/--enable-cassert /}
	BUILD_ID="configure $CONFIGURE_FLAGS; contrib $CONTRIB_MODULES"
fi

[ "$(id -u)" -eq 0 ] || die "must be run as root"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script targets Debian 12"

if [ -r /etc/os-release ]; then
	# shellcheck disable=SC1091
	. /etc/os-release
	if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
		echo "install-deps: warning: written for Debian 12, found ${PRETTY_NAME:-unknown}" >&2
	fi
fi

is_installed()
{
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

export DEBIAN_FRONTEND=noninteractive
UPDATED=no

# install_packages PKG...: install those not installed yet
install_packages()
{
	local missing=() pkg

	for pkg in "$@"; do
		is_installed "$pkg" || missing+=("$pkg")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		log "all packages already installed: $*"
		return 0
	fi
	log "installing ${missing[*]}"
	if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
		apt-get update -q
		UPDATED=yes
	fi
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
		[ "$UPDATED" = no ] || die "apt-get install failed"
		log "install failed with the current package lists; refreshing them"
		apt-get update -q
		UPDATED=yes
		apt-get install -y -q --no-install-recommends "${missing[@]}" ||
			die "apt-get install failed"
	fi
	for pkg in "$@"; do
		is_installed "$pkg" || die "package $pkg is still not installed"
	done
}

# build_major N: PostgreSQL N from Debian's source package into
# $PG_PREFIX_BASE/N (see the file header)
build_major()
{
	local major=$1
	local flavour=$major
	[ "$RELEASE" = no ] || flavour=$major-release
	local prefix="$PG_PREFIX_BASE/$flavour"
	local build="$PG_PREFIX_BASE/$flavour.build"
	local blog="$build/build.log"
	local tarball srcdir started

	if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.fastbtree-complete" ] &&
		[ "$(cat "$prefix/.fastbtree-complete")" = "$BUILD_ID" ]; then
		log "PostgreSQL $major already built: $prefix ($("$prefix/bin/pg_config" --version)); delete $prefix to rebuild"
		return 0
	fi
	install_packages "${COMMON_PACKAGES[@]}" "${SOURCE_BUILD_PACKAGES[@]}"

	if [ ! -f "$SRC_LIST" ]; then
		log "adding Debian sid's source packages to apt ($SRC_LIST)"
		cat >"$SRC_LIST" <<-EOF
		# added by fastbtree's scripts/install-deps.sh --pg N: source
		# packages only (deb-src), to build PostgreSQL majors that Debian 12
		# does not package
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: sid
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get update -q
	fi

	started=$(date +%s)
	rm -rf "$build"
	mkdir -p "$build"
	log "[1/5] downloading Debian's source package postgresql-$major"
	(cd "$build" && apt-get source --download-only -q "postgresql-$major") >"$blog" 2>&1 || {
		log "apt-get source failed; refreshing the package lists once"
		apt-get update -q >>"$blog" 2>&1
		(cd "$build" && apt-get source --download-only -q "postgresql-$major") >>"$blog" 2>&1 ||
			{ tail -20 "$blog" >&2; die "could not download postgresql-$major's source package"; }
	}
	tarball=$(ls "$build"/postgresql-"$major"_*.orig.tar.* 2>/dev/null | head -1)
	[ -n "$tarball" ] || die "no release tarball in the source package of postgresql-$major"
	log "[2/5] unpacking $(basename "$tarball")"
	tar -C "$build" -xf "$tarball"
	srcdir=$(find "$build" -maxdepth 1 -type d -name "postgresql-$major*" | head -1)
	[ -n "$srcdir" ] && [ -x "$srcdir/configure" ] || die "no configure script in $tarball"

	log "[3/5] configure $CONFIGURE_FLAGS, for $prefix"
	# shellcheck disable=SC2086 # CONFIGURE_FLAGS is a list of words
	(cd "$srcdir" && ./configure --prefix="$prefix" $CONFIGURE_FLAGS) >>"$blog" 2>&1 ||
		{ tail -30 "$blog" >&2; die "configure failed (log: $blog)"; }
	log "[4/5] make -j$(nproc) (several minutes)"
	(cd "$srcdir" && make -s -j"$(nproc)") >>"$blog" 2>&1 ||
		{ tail -30 "$blog" >&2; die "make failed (log: $blog)"; }
	log "[5/5] make install: server, contrib ($CONTRIB_MODULES), isolation tester, TAP modules"
	(cd "$srcdir" && make -s install &&
		for m in $CONTRIB_MODULES; do
			make -s -C "contrib/$m" install || exit 1
		done &&
		make -s -C src/test/isolation install) >>"$blog" 2>&1 ||
		{ tail -30 "$blog" >&2; die "make install failed (log: $blog)"; }
	[ -x "$prefix/bin/pg_config" ] || die "$prefix/bin/pg_config missing after the install"
	# the TAP modules PGXS's prove_installcheck uses
	[ -f "$("$prefix/bin/pg_config" --pkglibdir)/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm" ] ||
		die "the TAP modules were not installed under $("$prefix/bin/pg_config" --pkglibdir)/pgxs"
	echo "$BUILD_ID" >"$prefix/.fastbtree-complete"
	log "PostgreSQL $major built in $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s: $("$prefix/bin/pg_config" --version), pg_config $prefix/bin/pg_config"
}

if [ "$PG_MAJOR" = 15 ]; then
	install_packages "${COMMON_PACKAGES[@]}" "${PG15_PACKAGES[@]}"
	[ -x /usr/lib/postgresql/15/bin/pg_config ] || die "/usr/lib/postgresql/15/bin/pg_config missing"
else
	build_major "$PG_MAJOR"
fi

log "done"
