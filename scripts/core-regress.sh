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
# each other).  About 2.5 minutes on 2 cores, plus the source download
# (23 MB) the first time.
#
# How: Debian's source package postgresql-15 (a deb-src line for Debian 12
# is added under /etc/apt/sources.list.d/; downloads are kept in
# /var/cache/fastbtree-core-regress/VERSION) supplies the tests, their data,
# regress.c and contrib/spi's autoinc.c and refint.c; the installed server's
# version when the mirror has it, else the newest it has (a warning says
# so: then some tests fail in both runs).  The testing-only module
# scripts/core-regress/fbswap.c, preloaded, rewrites each CREATE INDEX that
# would build btree to build fastbtree (--constraints: also the indexes of
# PRIMARY KEY and UNIQUE constraints declared in CREATE TABLE; ALTER TABLE
# ... ADD builds its index without passing the hook, so those stay btree).
# Both runs preload the same libraries and load the extension into the
# test database (pg_regress --load-extension, so into public); only
# fbswap.enabled differs.  The standby checks every record it replays
# (wal_consistency_checking 'all', plus 'fastbtree' in compact mode): the
# primary is shut down first, and the standby must replay up to its
# shutdown checkpoint.
#
# --wal-mode compact (the default) preloads fastbtree (its own WAL
# records); generic runs without it (generic WAL).
#
# Fails (exit 1) if pg_regress could not run the whole schedule (or took
# over 30 minutes); a server process crashed (a crash restart, or the
# startup process failing) or failed an assertion (fastbtree's own: Debian's
# server is built without core's); a server logged a resource leak warning
# or the swapped run an internal error (SQLSTATE XX000-XX002) that the
# baseline did not, other than core's refusals of a non-btree index as an ON
# CONFLICT arbiter and for a foreign key; the standby found an inconsistent
# page or did not replay everything; or fastbtree_check(index, true) failed
# on any fastbtree index left in the test database, on the primary or the
# standby (the swapped run must leave some, the baseline none).
# Differences in the test outputs do not fail it: most are PostgreSQL 15
# refusing non-btree indexes (foreign keys, ON CONFLICT, ADD CONSTRAINT ...
# USING INDEX, unique indexes on partitioned tables, REFRESH MATERIALIZED
# VIEW CONCURRENTLY) and a btree operator class the suite defines, which
# fastbtree has no twin of (README, "Differences from btree and
# limitations").  The
# report lists the baseline's own failures, each test whose output
# changed with the swap, with its number of changed lines (after writing
# "fastbtree" as "btree"), and each error message that the swapped run
# raised more often than the baseline (quoted names replaced by "X"), for a
# reader to check against that list.  DIR (default: a new directory under
# /tmp) keeps both runs' outputs, diffs and server logs.

set -uo pipefail

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=/var/cache/fastbtree-core-regress
SRC_LIST=/etc/apt/sources.list.d/fastbtree-pg15-src.sources
WAL_MODE=compact
CONSTRAINTS=off
OUT=
WORK=
NTESTS=0
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

# TEST_USER, TEST_CFLAGS, LOCK_FILE, as_user, ensure_test_user,
# take_test_lock: shared with scripts/test.sh
# shellcheck source=scripts/testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

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

# fetch_source: unpack src/test/regress and contrib/spi's two trigger
# modules (the "triggers" test loads them) of PostgreSQL 15's source package
# into $WORK; the installed server's version if it can be had (each version
# cached in its own directory), else the newest that downloads
fetch_source()
{
	local want tarball v dir tests_version

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
	fi
	want=$(dpkg-query -W -f '${Version}' postgresql-15 2>/dev/null)
	[ -n "$want" ] || die "package postgresql-15 is not installed; run: bash scripts/install-deps.sh"
	mkdir -p "$CACHE"
	# (an earlier layout kept one tarball at the top)
	find "$CACHE" -maxdepth 1 -type f -name 'postgresql-15_*' -delete
	tarball=$(find "$CACHE/$want" -maxdepth 1 -name 'postgresql-15_*.orig.tar.*' 2>/dev/null | head -1)
	if [ -z "$tarball" ]; then
		if ! apt-get update -q >"$WORK/apt-update.log" 2>&1; then
			# A sources file that apt cannot read (say, one that conflicts
			# with the machine's own entries) would break every later apt
			# call: if apt works without ours, remove ours.
			mv "$SRC_LIST" "$SRC_LIST.off"
			if apt-get update -q >>"$WORK/apt-update.log" 2>&1; then
				rm -f "$SRC_LIST.off"
				log "warning: apt-get update failed with $SRC_LIST, worked without it; removed it"
			else
				mv "$SRC_LIST.off" "$SRC_LIST"
				log "warning: apt-get update failed; trying the package lists apt has"
			fi
		fi
		# the installed version first, then every other version apt knows
		# of, newest first (a mirror may lack some versions' files)
		for v in "$want" $(apt-cache showsrc postgresql-15 2>/dev/null |
			awk -v w="$want" '/^Version:/ && $2 != w { print $2 }' | sort -urV); do
			dir="$CACHE/$v"
			tarball=$(find "$dir" -maxdepth 1 -name 'postgresql-15_*.orig.tar.*' 2>/dev/null | head -1)
			[ -z "$tarball" ] || break
			log "downloading Debian's source package postgresql-15 $v"
			mkdir -p "$dir"
			if (cd "$dir" && apt-get source --download-only -q "postgresql-15=$v") \
				>>"$CACHE/download.log" 2>&1; then
				tarball=$(find "$dir" -maxdepth 1 -name 'postgresql-15_*.orig.tar.*' | head -1)
				[ -z "$tarball" ] || break
			fi
			rm -rf "$dir"
		done
		# nothing downloaded: the newest version downloaded before
		if [ -z "$tarball" ]; then
			tarball=$(find "$CACHE" -mindepth 2 -maxdepth 2 -name 'postgresql-15_*.orig.tar.*' | sort -V | tail -1)
			[ -n "$tarball" ] || { tail -5 "$CACHE/download.log" >&2; die "could not download postgresql-15's source package"; }
			log "warning: no download; using the cached $(basename "$tarball")"
		fi
	fi
	tests_version=$(basename "$(dirname "$tarball")")
	log "tests from postgresql-15 $tests_version, server $want"
	[ "$tests_version" = "$want" ] ||
		log "warning: the tests are not the server's version: some of them fail in both runs (the baseline's failures are listed at the end)"
	mkdir "$WORK/pgsrc"
	tar -C "$WORK/pgsrc" -xf "$tarball" --wildcards '*/src/test/regress/*' \
		'*/contrib/spi/autoinc.c' '*/contrib/spi/refint.c' ||
		die "unpacking $tarball failed"
	mv "$WORK"/pgsrc/postgresql-15*/src/test/regress "$WORK/regress"
	mkdir "$WORK/mod"
	mv "$WORK"/pgsrc/postgresql-15*/contrib/spi/autoinc.c \
		"$WORK"/pgsrc/postgresql-15*/contrib/spi/refint.c "$WORK/mod/"
	rm -rf "$WORK/pgsrc"
}

# build: the suite's C modules (regress.so, autoinc.so, refint.so; built as
# PostgreSQL builds them), fbswap.so, and fastbtree (with assertions,
# installed); as the test user in $WORK
build()
{
	local d flags

	mkdir "$WORK/swap" "$WORK/ext"
	cp "$WORK/regress/regress.c" "$WORK/mod/"
	# contrib/spi builds refint with REFINT_VERBOSE (the triggers test's
	# expected NOTICEs); regress.c and autoinc.c ignore it
	cat >"$WORK/mod/Makefile" <<-'EOF'
	MODULES = regress autoinc refint
	PG_CPPFLAGS = -DREFINT_VERBOSE
	PGXS := $(shell $(PG_CONFIG) --pgxs)
	include $(PGXS)
	EOF
	cp "$SRC_DIR/scripts/core-regress/fbswap.c" "$SRC_DIR/scripts/core-regress/Makefile" "$WORK/swap/"
	tar -C "$SRC_DIR" -cf - --exclude=./.git --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude=./results --exclude=./tmp_check . |
		tar -C "$WORK/ext" -xf - || die "copying the source tree failed"
	chown -R "$TEST_USER:" "$WORK"
	for d in mod swap ext; do
		flags=$TEST_CFLAGS
		[ "$d" != mod ] || flags=
		(cd "$WORK/$d" && as_user make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" \
			PG_CFLAGS="$flags" >"$WORK/build-$d.log" 2>&1) ||
			{ tail -20 "$WORK/build-$d.log" >&2; die "building $d failed"; }
	done
	(cd "$WORK/ext" && make -s install PG_CONFIG="$PG_CONFIG" >/dev/null) ||
		die "make install failed"
	log "built and installed fastbtree (assertions on); built regress.so, autoinc.so, refint.so and fbswap.so"
}

# sql PORT DB QUERY: one value, as the test user
sql()
{
	as_user psql -X -q -At -h "$WORK/sock" -p "$1" -d "$2" -c "$3"
}

# check_indexes NAME ROLE PORT: fastbtree_check(index, true) on every
# valid permanent fastbtree index of the test database; the swapped run
# must have some, the baseline none
check_indexes()
{
	local name=$1 role=$2 port=$3 n bad
	local q="SELECT c.oid FROM pg_class c JOIN pg_am am ON am.oid = c.relam
		JOIN pg_index i ON i.indexrelid = c.oid
		WHERE am.amname = 'fastbtree' AND c.relkind = 'i' AND i.indisvalid
		AND c.relpersistence = 'p'"

	n=$(sql "$port" regression "SELECT count(*) FROM ($q) s" 2>&1)
	bad=$(sql "$port" regression "SELECT count(*) FROM ($q) s, LATERAL fastbtree_check(s.oid, true)" 2>&1)
	if [ "$name" = baseline ]; then
		[ "$n" = 0 ] || problem "$name: $n fastbtree indexes on the $role, expected none: $bad"
		return
	fi
	if [ "$bad" = "$n" ] && [ "$n" -gt 0 ] 2>/dev/null; then
		log "$name: fastbtree_check(index, true) passed on $n indexes on the $role"
	else
		problem "$name: fastbtree_check on the $role: $n indexes, result: $bad"
	fi
}

# stop_server DIR: fast shutdown (status 0), or, if that does not finish,
# an immediate one (status 1); the run stops if the server is still up.
# Forgotten by cleanup only once stopped.
stop_server()
{
	local i rc=0

	if ! as_user pg_ctl stop -D "$1" -m fast -w -t 300 >/dev/null; then
		rc=1
		as_user pg_ctl stop -D "$1" -m immediate -w -t 60 >/dev/null ||
			die "could not stop the server in $1"
	fi
	for i in "${!RUNNING[@]}"; do
		[ "${RUNNING[$i]}" != "$1" ] || unset 'RUNNING[i]'
	done
	return $rc
}

# run NAME SWAP: the schedule on a fresh primary + standby, with
# fbswap.enabled = SWAP; outputs in $WORK/NAME
run()
{
	local name=$1 swap=$2 d="$WORK/$1" pport sport lsn caught n ok failed ignored rc
	local preload="$WORK/swap/fbswap" wcc=all role

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
		log_line_prefix = '%m [%p] %e '
		# every record carries full-page images for the checks: a run writes
		# ~9 GB of WAL; the standby's slot keeps only what it has not
		# received yet (at most 2 GB), checkpoints recycle the rest
		max_wal_size = 1GB
		max_slot_wal_keep_size = 2GB
		shared_preload_libraries = '$preload'
		fbswap.enabled = $swap
		fbswap.constraints = $CONSTRAINTS
		wal_consistency_checking = '$wcc'
		# the suite's expected outputs assume these (as "make installcheck")
		max_prepared_transactions = 10
	CONF
	RUNNING+=("$d/primary")
	as_user pg_ctl start -D "$d/primary" -l "$d/primary.log" -w -t 120 >/dev/null ||
		{ tail -20 "$d/primary.log"; die "starting the primary failed"; }
	as_user pg_basebackup -h "$WORK/sock" -p "$pport" -D "$d/standby" -R -X stream -C -S standby \
		>"$d/basebackup.log" 2>&1 || { cat "$d/basebackup.log"; die "pg_basebackup failed"; }
	sed -i "s/^port = $pport\$/port = $sport/" "$d/standby/postgresql.conf"
	RUNNING+=("$d/standby")
	as_user pg_ctl start -D "$d/standby" -l "$d/standby.log" -w -t 120 >/dev/null ||
		{ tail -20 "$d/standby.log"; die "starting the standby failed"; }

	log "$name: regression suite (fbswap.enabled = $swap, fbswap.constraints = $CONSTRAINTS, $WAL_MODE WAL) on port $pport, standby $sport"
	# a hang (a lock never released, a wait never woken) fails the run
	(cd "$WORK/regress" && as_user timeout 1800 "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
		--host="$WORK/sock" --port="$pport" --bindir="$PG_BINDIR" \
		--inputdir="$WORK/regress" --outputdir="$d" --dlpath="$WORK/mod" \
		--schedule="$WORK/regress/parallel_schedule" --max-connections=8 \
		--load-extension=fastbtree >"$d/schedule.out" 2>&1)
	rc=$?
	ok=$(grep -c ' \.\.\. ok' "$d/schedule.out")
	failed=$(grep -c ' \.\.\. FAILED' "$d/schedule.out")
	# ("ignore:" tests in the schedule: "failed (ignored)")
	ignored=$(grep -c ' \.\.\. failed (ignored)' "$d/schedule.out")
	if [ "$ignored" -eq 0 ]; then
		log "$name: $ok tests matched the expected output, $failed did not"
	else
		log "$name: $ok tests matched the expected output, $failed did not, $ignored did not and are ignored"
	fi
	# pg_regress: 0 all matched, 1 some did not, 2 it could not run them;
	# timeout: 124
	[ "$rc" -le 1 ] || problem "$name: pg_regress exited with $rc: $(tail -3 "$d/schedule.out" | tr '\n' ' ')"
	[ $((ok + failed + ignored)) -eq "$NTESTS" ] ||
		problem "$name: $((ok + failed + ignored)) tests ran, the schedule has $NTESTS"

	check_indexes "$name" primary "$pport"
	# A fast shutdown sends the primary's WAL to the end (its shutdown
	# checkpoint) to the standby before it exits; the standby must replay all
	# of it, checking every record, autovacuum's last ones included.
	stop_server "$d/primary" || problem "$name: the primary did not stop in 5 minutes (stopped with -m immediate)"
	lsn=$(as_user pg_controldata -D "$d/primary" | awk -F': *' '/^Latest checkpoint location/ { print $2 }')
	[ -n "$lsn" ] || die "pg_controldata did not give the primary's last checkpoint"
	caught=no
	as_user pg_controldata -D "$d/primary" | grep -q '^Database cluster state: *shut down$' ||
		problem "$name: the primary did not shut down cleanly: the standby's replay is not checked to its end"
	for _ in $(seq 1 600); do
		if [ "$(sql "$sport" postgres "SELECT pg_last_wal_replay_lsn() > '$lsn'" 2>/dev/null)" = t ]; then
			caught=yes
			break
		fi
		as_user pg_ctl status -D "$d/standby" >/dev/null 2>&1 || break
		sleep 1
	done
	if [ "$caught" = yes ]; then
		check_indexes "$name" standby "$sport"
	else
		problem "$name: the standby did not replay the primary's WAL up to its shutdown checkpoint ($lsn)"
	fi
	stop_server "$d/standby" || problem "$name: the standby did not stop in 5 minutes (stopped with -m immediate)"

	for role in primary standby; do
		# crashes and failed assertions (a crash restart, the startup
		# process failing), inconsistent pages, resource leaks
		if grep -E 'was terminated by signal|startup process .* exited with exit code|terminating any other active server processes|shutting down due to startup process failure|TRAP:|PANIC:|inconsistent page found|WARNING: .*(leak|still active|not closed)' \
			"$d/$role.log" >"$d/$role.problems"; then
			problem "$name: the $role's log: $(head -3 "$d/$role.problems" | tr '\n' ' ')"
		fi
	done
	# internal errors (SQLSTATE XX000-XX002) the baseline did not raise, but
	# two of PostgreSQL 15's refusals of non-btree indexes, raised as such:
	# as an ON CONFLICT arbiter, and for a foreign key
	sed -n 's/^.* XX00[012] \(ERROR\|FATAL\): *//p' "$d/primary.log" | LC_ALL=C sort -u >"$d/internal-errors"
	if [ "$name" = swapped ]; then
		n=$(LC_ALL=C comm -13 "$WORK/baseline/internal-errors" "$d/internal-errors" |
			grep -v -e '^unexpected non-btree speculative unique index$' \
				-e '^only b-tree indexes are supported for foreign keys$' | tee "$d/new-internal-errors" | wc -l)
		[ "$n" -eq 0 ] || problem "$name: internal errors the baseline did not raise: $(head -3 "$d/new-internal-errors" | tr '\n' ' ')"
	fi
	rm -rf "$d/primary" "$d/standby"
}

# report: what the swap changed
report()
{
	local f b n changed=0

	echo
	echo "Tests that did not match their expected output in the baseline run:"
	grep ' \.\.\. FAILED' "$OUT/baseline/schedule.out" |
		awk '{ printf "%s ", ($1 == "test" ? $2 : $1) } END { print "" }' | fold -s -w 76 | sed 's/^/  /'
	echo
	echo "Tests whose output changed with the swap (changed lines, \"fastbtree\" written as \"btree\"):"
	: >"$OUT/swap.diffs"
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
	echo "Errors and warnings the swapped run raised more often (how many more, message with quoted names as X):"
	# messages of each run, one per line, counted over all tests
	for b in baseline swapped; do
		cat "$OUT/$b"/results/*.out | sed 's/fastbtree/btree/g' | grep '^ERROR:\|^WARNING:' |
			sed 's/"[^"]*"/"X"/g' | sort | uniq -c >"$OUT/$b/messages"
	done
	awk 'NR == FNR { n = $1; $1 = ""; base[$0] = n; next }
		{ n = $1; $1 = ""; if (n > base[$0]) printf "  %6d %s\n", n - base[$0], substr($0, 2) }' \
		"$OUT/baseline/messages" "$OUT/swapped/messages" | sort -rn
}

main()
{
	parse_args "$@"
	[ "$(id -u)" -eq 0 ] || die "must be run as root (it creates the user $TEST_USER and installs the extension)"
	[ -x "$PG_CONFIG" ] || die "$PG_CONFIG not found; run: bash scripts/install-deps.sh"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	ensure_test_user
	[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/fastbtree-core-regress.XXXXXX)
	mkdir -p "$OUT" || die "cannot create $OUT"
	OUT=$(cd "$OUT" && pwd)

	take_test_lock
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
	NTESTS=$(sed -n 's/^test: *//p' "$WORK/regress/parallel_schedule" | wc -w)
	run baseline off
	run swapped on
	for n in baseline swapped; do
		rm -rf "${OUT:?}/$n"
		cp -r "$WORK/$n" "$OUT/$n"
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
