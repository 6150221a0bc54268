#!/usr/bin/env bash
#
# scripts/install-deps.sh
#	Install what building, testing and benchmarking fastbtree needs on
#	Debian 12: PostgreSQL 15 server and headers, the TAP test modules
#	and a C toolchain.
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

# perl provides prove and Test::More for the TAP tests; passwd (useradd) and
# util-linux (runuser) are used by scripts/test.sh and bench/run.sh to run
# the servers as an unprivileged user.  Most images have them already.
PACKAGES=(
	postgresql-15
	postgresql-server-dev-15
	libipc-run-perl
	build-essential
	perl
	passwd
	util-linux
)

die()
{
	echo "install-deps: $*" >&2
	exit 1
}

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

missing=()
for pkg in "${PACKAGES[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all packages already installed: ${PACKAGES[*]}"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"

export DEBIAN_FRONTEND=noninteractive
apt_install()
{
	apt-get install -y -q --no-install-recommends "${missing[@]}"
}

updated=no
if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
	apt-get update -q
	updated=yes
fi

if ! apt_install; then
	[ "$updated" = no ] || die "apt-get install failed"
	echo "install-deps: install failed with the current package lists; refreshing them"
	apt-get update -q
	apt_install || die "apt-get install failed"
fi

for pkg in "${PACKAGES[@]}"; do
	is_installed "$pkg" || die "package $pkg is still not installed"
done
[ -x /usr/lib/postgresql/15/bin/pg_config ] || die "/usr/lib/postgresql/15/bin/pg_config missing"

echo "install-deps: done"
