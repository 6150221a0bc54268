#!/usr/bin/env bash
#
# scripts/core-regress.sh [--wal-mode compact|generic] [--constraints]
#                         [--out DIR]
#	Run PostgreSQL 15's own regression suite (src/test/regress, the
#	parallel schedule) with every btree index it creates built as
#	fastbtree instead, next to a baseline run without the swap, each on a
#	primary with a streaming standby, and report what changed.
#
# Run as root after scripts/install-deps.sh, on a test machine: like
# scripts/test.sh it installs an assertion build of fastbtree into the
# system's PostgreSQL 15 directories (the two share a lock, so they wait for
# each other).  About 5 minutes on 2 cores.
#
# How: Debian's source package postgresql-15 (a deb-src line for Debian 12
# is added under /etc/apt/sources.list.d/; the download is kept in
# /var/cache/fastbtree-core-regress) supplies the tests, their data and
# regress.c.  The testing-only module scripts/core-regress/fbswap.c, preloaded,
# rewrites each CREATE INDEX that would build btree to build fastbtree
# (--constraints: the indexes of PRIMARY KEY and UNIQUE constraints too).
# Both runs load the extension into the test database (pg_regress
# --load-extension) and preload the same libraries; only fbswap.enabled
# differs.  Every record is checked where the standby replays it
# (wal_consistency_checking 'all', plus 'fastbtree' in compact mode).
#
# --wal-mode compact (the default) preloads fastbtree (its own WAL
# records); generic runs without it (generic WAL).
#
# Fails (exit 1) if a server process crashed or failed an assertion, the
# standby found an inconsistent page or did not catch up, or
# fastbtree_check(index, true) failed on any fastbtree index left in the
# test database, on the primary or the standby.  Differences in the test
# outputs do not fail it: most are PostgreSQL 15 refusing non-btree
# indexes (foreign keys, ON CONFLICT, ADD CONSTRAINT ... USING INDEX,
# unique indexes on partitioned tables, REFRESH MATERIALIZED VIEW
# CONCURRENTLY) and the plans of parallel index scans, which fastbtree does
# not offer (README, "Differences from btree and limitations").  The report
# lists each test whose output changed, with its number of changed lines
# (after writing "fastbtree" as "btree"), and each error message that the
# swapped run raised more often than the baseline (quoted names replaced by
# "X"), for a reader to check against that list.  DIR (default: a new
# directory under /tmp) keeps both runs' outputs, diffs and server logs.

set -uo pipefail

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
TEST_USER=fbtest
TEST_CFLAGS="-Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers -Werror -DUSE_ASSERT_CHECKING"
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCK_FILE=/run/lock/fastbtree-test.lock
CACHE=/var/cache/fastbtree-core-regress
SRC_LIST=/etc/apt/sources.list.d/fastbtree-pg15-src.sources
WAL_MODE=compact
CONSTRAINTS=off
OUT=
WORK=
RUNNING=()
PROBLEMS=0

log()
{
	echo "core-regress.sh: $*"
}

die()
{
	echo "core-regress.sh: error: $*" >&2
	exit 1
}

# problem MSG: a finding that fails the run
problem()
{
	echo "core-regress.sh: PROBLEM: $*"
	PROBLEMS=$((PROBLEMS + 1))
}

as_user()
{
	runuser -u "$TEST_USER" -- env \
		HOME="$WORK" \
		PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" \
		LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		"$@"
}

# Runs on exit (trap): stop the servers this script started.
# shellcheck disable=SC2317
cleanup()
{
	local rc=$? d

	trap - EXIT INT TERM
	for d in "${RUNNING[@]}"; do
		as_user pg_ctl stop -D "$d" -m immediate -w >/dev/null 2>&1 ||
			echo "core-regress.sh: warning: could not stop the server in $d" >&2
	done
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		cd /
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# port_in_use, pick_port
# shellcheck source=scripts/pgport.sh
. "$(dirname "${BASH_SOURCE[0]}")/pgport.sh"

parse_args()
{
	while [ $# -gt 0 ]; do
		case $1 in
			--wal-mode)
				case ${2:-} in
					compact|generic) WAL_MODE=$2 ;;
					*) die "--wal-mode takes compact or generic" ;;
				esac
				shift 2 ;;
			--constraints) CONSTRAINTS=on; shift ;;
			--out) [ -n "${2:-}" ] || die "--out needs a directory"; OUT=$2; shift 2 ;;
			-h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
			*) die "unknown option $1 (see --help)" ;;
		esac
	done
}

# fetch_source: unpack src/test/regress of PostgreSQL 15's source package
# into $WORK/regress; prefers the installed server's version
fetch_source()
{
	local want tarball

	if [ ! -f "$SRC_LIST" ]; then
		log "adding Debian 12's source packages to apt ($SRC_LIST)"
		cat >"$SRC_LIST" <<-EOF
		# added by fastbtree's scripts/core-regress.sh: source packages only
		# (deb-src), for PostgreSQL 15's regression suite
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm bookworm-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

		Types: deb-src
		URIs: http://deb.debian.org/debian-security
		Suites: bookworm-security
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get update -q >/dev/null 2>&1 || log "warning: apt-get update failed"
	fi
	mkdir -p "$CACHE"
	want=$(dpkg-query -W -f '${Version}' postgresql-15 2>/dev/null)
	tarball=$(ls "$CACHE"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
	if [ -z "$tarball" ]; then
		# the installed version first, then every other version apt knows
		# of, newest first (a mirror may lack the newest one's files)
		local v
		for v in "$want" $(apt-cache showsrc postgresql-15 2>/dev/null |
			awk '/^Version:/ { print $2 }' | sort -rV); do
			[ -n "$v" ] || continue
			log "downloading Debian's source package postgresql-15 $v"
			if (cd "$CACHE" && apt-get source --download-only -q "postgresql-15=$v") \
				>"$CACHE/download.log" 2>&1; then
				break
			fi
			rm -f "$CACHE"/postgresql-15_*
		done
		tarball=$(ls "$CACHE"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
		[ -n "$tarball" ] || { tail -5 "$CACHE/download.log" >&2; die "could not download postgresql-15's source package"; }
	fi
	log "tests from $(basename "$tarball") (server: $("$PG_BINDIR/postgres" --version))"
	mkdir "$WORK/pgsrc"
	tar -C "$WORK/pgsrc" -xf "$tarball" --wildcards '*/src/test/regress/*' ||
		die "unpacking $tarball failed"
	mv "$WORK"/pgsrc/postgresql-15*/src/test/regress "$WORK/regress"
	rm -rf "$WORK/pgsrc"
}

# build: regress.so (the suite's C functions), fbswap.so, and fastbtree
# (installed); all as the test user in $WORK
build()
{
	local d

	mkdir "$WORK/mod" "$WORK/ext"
	cp "$WORK/regress/regress.c" "$WORK/mod/"
	cp "$SRC_DIR/scripts/core-regress/fbswap.c" "$WORK/mod/"
	cat >"$WORK/mod/Makefile" <<-'EOF'
	MODULES = regress fbswap
	PGXS := $(shell $(PG_CONFIG) --pgxs)
	include $(PGXS)
	EOF
	tar -C "$SRC_DIR" -cf - --exclude=./.git --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude=./results --exclude=./tmp_check . |
		tar -C "$WORK/ext" -xf - || die "copying the source tree failed"
	chown -R "$TEST_USER:" "$WORK"
	for d in mod ext; do
		(cd "$WORK/$d" && as_user make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" \
			PG_CFLAGS="$TEST_CFLAGS" >"$WORK/build-$d.log" 2>&1) ||
			{ tail -20 "$WORK/build-$d.log" >&2; die "building $d failed"; }
	done
	(cd "$WORK/ext" && make -s install PG_CONFIG="$PG_CONFIG" >/dev/null) ||
		die "make install failed"
	log "built and installed fastbtree (assertions on), regress.so and fbswap.so"
}

# sql PORT DB QUERY: one value, as the test user
sql()
{
	as_user psql -X -q -At -h "$WORK/sock" -p "$1" -d "$2" -c "$3"
}

# run NAME SWAP: the schedule on a fresh primary + standby, with
# fbswap.enabled = SWAP; outputs in $OUT/NAME
run()
{
	local name=$1 swap=$2 d="$WORK/$1" pport sport lsn caught n bad
	local preload="$WORK/mod/fbswap" wcc=all

	if [ "$WAL_MODE" = compact ]; then
		preload="fastbtree,$preload"
		wcc="all,fastbtree"
	fi
	pport=$(pick_port) || die "no free port"
	sport=$(pick_port) || die "no free port"
	[ "$sport" != "$pport" ] || sport=$(pick_port) || die "no free port"
	as_user mkdir "$d"
	as_user initdb -D "$d/primary" --auth=trust --no-sync --locale=C.UTF-8 \
		--encoding=UTF8 >"$d/initdb.log" 2>&1 || { cat "$d/initdb.log"; die "initdb failed"; }
	cat >>"$d/primary/postgresql.conf" <<-CONF

		# scripts/core-regress.sh
		port = $pport
		listen_addresses = ''
		unix_socket_directories = '$WORK/sock'
		fsync = off
		# every record carries full-page images for the checks: a run writes
		# ~9 GB of WAL; the standby's slot keeps only what it has not
		# received yet, and frequent checkpoints recycle the rest
		max_wal_size = 1GB
		shared_preload_libraries = '$preload'
		fbswap.enabled = $swap
		fbswap.constraints = $CONSTRAINTS
		wal_consistency_checking = '$wcc'
		# the suite's expected outputs assume these (as "make installcheck")
		max_prepared_transactions = 10
	CONF
	as_user pg_ctl start -D "$d/primary" -l "$d/primary.log" -w -t 120 >/dev/null ||
		{ tail -20 "$d/primary.log"; die "starting the primary failed"; }
	RUNNING+=("$d/primary")
	as_user pg_basebackup -h "$WORK/sock" -p "$pport" -D "$d/standby" -R -X stream -C -S standby \
		>"$d/basebackup.log" 2>&1 || { cat "$d/basebackup.log"; die "pg_basebackup failed"; }
	sed -i "s/^port = $pport\$/port = $sport/" "$d/standby/postgresql.conf"
	as_user pg_ctl start -D "$d/standby" -l "$d/standby.log" -w -t 120 >/dev/null ||
		{ tail -20 "$d/standby.log"; die "starting the standby failed"; }
	RUNNING+=("$d/standby")

	log "$name: regression suite (fbswap.enabled = $swap, fbswap.constraints = $CONSTRAINTS, $WAL_MODE WAL) on port $pport, standby $sport"
	(cd "$WORK/regress" && as_user "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
		--host="$WORK/sock" --port="$pport" --bindir="$PG_BINDIR" \
		--inputdir="$WORK/regress" --outputdir="$d" --dlpath="$WORK/mod" \
		--schedule="$WORK/regress/parallel_schedule" --max-connections=8 \
		--load-extension=fastbtree >"$d/schedule.out" 2>&1)
	log "$name: $(grep -c ' \.\.\. ok' "$d/schedule.out") tests matched the expected output, $(grep -c ' \.\.\. FAILED' "$d/schedule.out") did not"

	# the standby must replay everything, checking every record
	lsn=$(sql "$pport" postgres 'SELECT pg_current_wal_lsn()')
	caught=no
	for _ in $(seq 1 600); do
		if [ "$(sql "$sport" postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = t ]; then
			caught=yes
			break
		fi
		sleep 1
	done
	[ "$caught" = yes ] || problem "$name: the standby did not replay up to $lsn in 10 minutes"

	# every fastbtree index left in the test database, on both servers
	local q="SELECT c.oid FROM pg_class c JOIN pg_am am ON am.oid = c.relam
		JOIN pg_index i ON i.indexrelid = c.oid
		WHERE am.amname = 'fastbtree' AND c.relkind = 'i' AND i.indisvalid
		AND c.relpersistence = 'p'"
	local port role
	for role in primary standby; do
		port=$pport
		[ "$role" = primary ] || port=$sport
		n=$(sql "$port" regression "SELECT count(*) FROM ($q) s")
		bad=$(sql "$port" regression "SELECT count(*) FROM ($q) s, LATERAL fastbtree_check(s.oid, true)" 2>&1)
		if [ "$n" = 0 ] && [ "$bad" = 0 ]; then
			log "$name: no fastbtree indexes on the $role"
		elif [ "$bad" = "$n" ]; then
			log "$name: fastbtree_check(index, true) passed on $n indexes on the $role"
		else
			problem "$name: fastbtree_check on the $role: $bad"
		fi
	done

	as_user pg_ctl stop -D "$d/standby" -m fast -w -t 120 >/dev/null
	as_user pg_ctl stop -D "$d/primary" -m fast -w -t 120 >/dev/null
	RUNNING=()
	for role in primary standby; do
		if grep -E 'was terminated by signal|TRAP:|PANIC:|inconsistent page found' "$d/$role.log" >"$d/$role.problems"; then
			problem "$name: the $role's log: $(head -3 "$d/$role.problems" | tr '\n' ' ')"
		fi
	done
}

# report: what the swap changed
report()
{
	local f b n changed=0

	echo
	echo "Tests whose output changed with the swap (changed lines, \"fastbtree\" written as \"btree\"):"
	for f in "$OUT"/swapped/results/*.out; do
		b=$(basename "$f")
		[ -f "$OUT/baseline/results/$b" ] || continue
		sed 's/fastbtree/btree/g' "$f" >"$OUT/swapped/$b.normalized"
		if ! cmp -s "$OUT/baseline/results/$b" "$OUT/swapped/$b.normalized"; then
			diff -U3 "$OUT/baseline/results/$b" "$OUT/swapped/$b.normalized" >>"$OUT/swap.diffs"
			n=$(diff "$OUT/baseline/results/$b" "$OUT/swapped/$b.normalized" | grep -c '^[<>]')
			printf '  %-28s %6d\n' "${b%.out}" "$n"
			changed=$((changed + 1))
		fi
		rm -f "$OUT/swapped/$b.normalized"
	done
	echo "  ($changed tests; the diffs: $OUT/swap.diffs)"
	echo
	echo "Errors and warnings raised more often with the swap (count, message with quoted names as X):"
	for f in "$OUT"/swapped/results/*.out; do
		b=$(basename "$f")
		diff <(grep -h '^ERROR:\|^WARNING:' "$OUT/baseline/results/$b" 2>/dev/null |
				sed 's/"[^"]*"/"X"/g' | sort | uniq -c) \
			<(sed 's/fastbtree/btree/g' "$f" | grep -h '^ERROR:\|^WARNING:' |
				sed 's/"[^"]*"/"X"/g' | sort | uniq -c) | grep '^>' || true
	done | sed 's/^> *[0-9]* //' | sort | uniq -c | sort -rn | sed 's/^/  /'
}

main()
{
	parse_args "$@"
	[ "$(id -u)" -eq 0 ] || die "must be run as root (it creates the user $TEST_USER and installs the extension)"
	[ -x "$PG_CONFIG" ] || die "$PG_CONFIG not found; run: bash scripts/install-deps.sh"
	command -v runuser >/dev/null 2>&1 || die "runuser not found (package util-linux)"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	if ! id -u "$TEST_USER" >/dev/null 2>&1; then
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$TEST_USER" || id -u "$TEST_USER" >/dev/null 2>&1 ||
			die "useradd $TEST_USER failed"
	fi
	[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/fastbtree-core-regress.XXXXXX)
	mkdir -p "$OUT" || die "cannot create $OUT"
	OUT=$(cd "$OUT" && pwd)

	exec 9>"$LOCK_FILE" || die "cannot open $LOCK_FILE"
	if ! flock -n 9; then
		log "another test run holds $LOCK_FILE; waiting for it"
		flock 9 || die "cannot lock $LOCK_FILE"
	fi
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	WORK=$(mktemp -d /tmp/fastbtree-core-regress-work.XXXXXX) || die "mktemp failed"
	cd "$WORK" || die "cannot enter $WORK"
	mkdir "$WORK/sock"

	fetch_source
	build
	chown "$TEST_USER:" "$WORK/sock"
	chmod -R a+rX "$WORK"
	run baseline off
	run swapped on
	for n in baseline swapped; do
		mkdir -p "$OUT/$n"
		cp -r "$WORK/$n/results" "$WORK/$n"/*.log "$WORK/$n/schedule.out" "$OUT/$n/" 2>/dev/null
		[ -f "$WORK/$n/regression.diffs" ] && cp "$WORK/$n/regression.diffs" "$OUT/$n/"
	done
	report
	echo
	if [ "$PROBLEMS" -eq 0 ]; then
		log "no crash, no failed assertion, the standbys replayed every record consistently, every fastbtree index verified (outputs in $OUT)"
		exit 0
	fi
	log "$PROBLEMS problems (above; outputs in $OUT)"
	exit 1
}

main "$@"
