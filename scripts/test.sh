#!/usr/bin/env bash
#
# scripts/test.sh
#	Build fastbtree with warnings as errors and assertions, install it,
#	and run every test suite: pg_regress (sql/), isolation (specs/) and
#	TAP (t/).
#
# Run as root (after scripts/install-deps.sh).  PostgreSQL refuses to run as
# root, so the tests run as the unprivileged OS user $TEST_USER, created if
# missing, in a private copy of the source tree under a temporary directory:
# the repository gets no build products or test outputs.  pg_regress and
# pg_isolation_regress need a running server; this script starts a throwaway
# cluster for them (unix socket in the temporary directory only, a free port
# in 55000-55999, fsync and autovacuum off) and always stops it and removes
# the directory on exit.  The TAP tests start their own clusters
# (PostgreSQL::Test::Cluster).
#
# Each suite runs through PGXS's "make installcheck", one suite per make
# invocation (the other two switched off on the command line), so that a
# failure in one suite does not keep the others from running.
#
# Options select a subset, for development: --regress "NAME ...",
# --isolation "NAME ...", --tap "t/NNN_name.pl ...".  When any of them is
# given, only the named tests run (the other suites are skipped).  Runs on
# one machine are serialized through a lock file, since each installs its
# build into the same PostgreSQL directories.
#
# --pg N runs against PostgreSQL N: 15 is Debian's (the default), another
# major the build of scripts/install-deps.sh --pg N under /opt/fastbtree-pg/N
# (which must exist).  The PG_CONFIG environment variable, if set, names
# another pg_config.
#
# --set "NAME=VALUE ..." adds server settings (no spaces inside a value) to
# every cluster the tests use: the throwaway cluster of pg_regress and
# isolation, and, through PostgreSQL::Test::Cluster's TEMP_CONFIG, each TAP
# test's clusters.  .ci/run uses it to run the suites with fastbtree's
# lock-free descent switched off (fastbtree.recent_buffers, scan_pins,
# optimistic_reads); a test that sets one of them itself wins.
#
# --save-results DIR copies pg_regress's outputs (results/*.out) to DIR and
# the isolation tests' to DIR/isolation, to update an expected file after a
# deliberate change (review the diff).
#
# Each run builds the library with a build id of its own (make
# FBT_BUILD_ID=..., reported by the read-only setting fastbtree.build_id)
# and sets fastbtree.expect_build_id to it in every cluster: another build
# installed over this one during the run (a "make install" elsewhere) makes
# each backend that loads it warn, and the check before each suite and
# after the last prints one line naming the cause and counts one failure.
#
# The last line of output is "N passed, N failed", counting pg_regress and
# isolation tests, TAP test files and (in a full run) one check that every
# shell script parses; a suite that could not run counts all
# its tests as failed.  Exit status is 0 only if everything passed.

set -uo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
# TAP logs can be long (stress tests); print at most this many lines of each.
LOG_TAIL_LINES=2000

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ONLY=no
ONLY_REGRESS=
ONLY_ISOLATION=
ONLY_TAP=
SETTINGS=
SAVE_RESULTS=
BUILD_ID="test-$(date -u +%Y%m%dT%H%M%S)-$$"
BUILD_REPLACED=no
WORK=
CLUSTER_STARTED=no
PASSED=0
FAILED=0

log()
{
	echo "test.sh: $*"
}

# die MSG: a precondition failed before any test could run
die()
{
	echo "test.sh: error: $*" >&2
	[ "$FAILED" -gt 0 ] || FAILED=1
	finish
}

# TEST_USER, TEST_CFLAGS, LOCK_FILE, as_user, ensure_test_user, take_test_lock
# shellcheck source=scripts/testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

# Runs on exit (trap).
# shellcheck disable=SC2317
cleanup()
{
	local rc=$?

	trap - EXIT INT TERM
	if [ "$CLUSTER_STARTED" = yes ]; then
		as_user pg_ctl stop -D "$WORK/data" -m fast -w -t 60 >/dev/null 2>&1 ||
			as_user pg_ctl stop -D "$WORK/data" -m immediate -w >/dev/null 2>&1 ||
			echo "test.sh: warning: could not stop the cluster in $WORK/data" >&2
	fi
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		cd /
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# port_in_use, pick_port
# shellcheck source=scripts/pgport.sh
. "$(dirname "${BASH_SOURCE[0]}")/pgport.sh"

# count_files GLOB: number of files matching GLOB in the work copy
count_files()
{
	compgen -G "$WORK/src/$1" | wc -l
}

# print_file FILE: print FILE with a header, truncated to its last lines
print_file()
{
	local n

	n=$(wc -l <"$1")
	echo "===== $1 ($n lines) ====="
	if [ "$n" -gt "$LOG_TAIL_LINES" ]; then
		echo "[... showing the last $LOG_TAIL_LINES lines ...]"
		tail -n "$LOG_TAIL_LINES" "$1"
	else
		cat "$1"
	fi
	echo "===== end of $1 ====="
}

# finish: print the summary line and exit accordingly
finish()
{
	echo
	echo "$PASSED passed, $FAILED failed"
	if [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]; then
		exit 0
	fi
	exit 1
}

# abort_all WHAT: a step before the suites failed; every test counts as failed
abort_all()
{
	local total

	echo "test.sh: $1 failed; no tests were run" >&2
	total=0
	if [ -d "$WORK/src" ]; then
		total=$(($(count_files 'sql/*.sql') + $(count_files 'specs/*.spec') + $(count_files 't/*.pl')))
	fi
	[ "$total" -gt 0 ] || total=1
	FAILED=$total
	finish
}

# run_pg_regress_suite NAME NTESTS DIFFS MAKEVARS...: run one pg_regress-style
# suite through "make installcheck" and count its results
run_pg_regress_suite()
{
	local name=$1 ntests=$2 diffs=$3 out rc ok
	shift 3

	out="$WORK/$name.out"
	log "running $name tests ($ntests)"
	(cd "$WORK/src" && as_user make installcheck PG_CONFIG="$PG_CONFIG" "$@") 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}

	# "test NAME ... ok" until 15, "ok N - NAME" (TAP style) since 16
	ok=$(grep -cE '\.\.\. ok( |$)|^ok +[0-9]+ ' "$out")
	[ "$ok" -le "$ntests" ] || ok=$ntests
	if [ "$rc" -ne 0 ] && [ "$ok" -eq "$ntests" ]; then
		# make failed although every test reported ok: count it
		ok=$((ntests - 1))
	fi
	PASSED=$((PASSED + ok))
	FAILED=$((FAILED + ntests - ok))

	if [ "$rc" -ne 0 ] || [ "$ok" -ne "$ntests" ]; then
		log "$name tests FAILED (make exit status $rc)"
		if [ -f "$diffs" ]; then
			print_file "$diffs"
		fi
		if [ -f "$WORK/server.log" ]; then
			echo "===== last 200 lines of the test server's log ====="
			tail -n 200 "$WORK/server.log"
			echo "===== end of server log ====="
		fi
	fi
}

# check_build WHEN: a backend started now loads this run's build of the
# library; if not, say so once (one line) and count one failure
check_build()
{
	local id

	[ "$BUILD_REPLACED" = no ] || return 0
	id=$(as_user psql -X -q -A -t -d postgres -c "LOAD 'fastbtree'" \
		-c "SHOW fastbtree.build_id" 2>&1 | tail -n 1)
	if [ "$id" != "$BUILD_ID" ]; then
		BUILD_REPLACED=yes
		FAILED=$((FAILED + 1))
		log "FAILED $1: the installed fastbtree library is not this run's build (it reports \"$id\", this run built \"$BUILD_ID\"): another build was installed over it during the run, so the failures may come from that and not from the tests"
	fi
}

# check_shell_syntax: every shell script of the tree parses (bash -n): the
# benchmark scripts are not run by the suite, so a syntax error there would
# otherwise go unnoticed.  Counts as one test.
check_shell_syntax()
{
	local f bad=0

	log "checking the syntax of the shell scripts"
	for f in "$SRC_DIR"/scripts/*.sh "$SRC_DIR"/bench/*.sh "$SRC_DIR"/.ci/run; do
		bash -n "$f" || { log "syntax error in ${f#"$SRC_DIR"/}"; bad=1; }
	done
	if [ "$bad" -eq 0 ]; then
		PASSED=$((PASSED + 1))
	else
		FAILED=$((FAILED + 1))
	fi
}

run_tap_suite()
{
	local ntests=$1 out rc failed
	shift

	out="$WORK/tap.out"
	log "running TAP tests ($ntests files)"
	(cd "$WORK/src" && as_user TEMP_CONFIG="$WORK/settings.conf" make installcheck PG_CONFIG="$PG_CONFIG" REGRESS= ISOLATION= "$@") 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}

	if [ "$rc" -eq 0 ] && grep -q '^All tests successful\.' "$out"; then
		failed=0
	else
		# prove's "Test Summary Report" names each failed file on a line of
		# its own: "t/001_foo.pl (Wstat: ...)"
		failed=$(grep -E '^t/[^ ]+\.pl +\(Wstat:' "$out" | awk '{ print $1 }' | sort -u | wc -l)
		if [ "$failed" -eq 0 ] || [ "$failed" -gt "$ntests" ]; then
			failed=$ntests
		fi
	fi
	PASSED=$((PASSED + ntests - failed))
	FAILED=$((FAILED + failed))

	if [ "$failed" -ne 0 ]; then
		local f

		log "TAP tests FAILED (make exit status $rc)"
		for f in "$WORK"/src/tmp_check/log/*; do
			[ -f "$f" ] && print_file "$f"
		done
	fi
}

# parse_args ARGS...: the subset options (see the file header)
parse_args()
{
	while [ $# -gt 0 ]; do
		case $1 in
			--regress) ONLY=yes; ONLY_REGRESS=$2; shift 2 ;;
			--isolation) ONLY=yes; ONLY_ISOLATION=$2; shift 2 ;;
			--tap) ONLY=yes; ONLY_TAP=$2; shift 2 ;;
			--set) SETTINGS="$SETTINGS $2"; shift 2 ;;
			--save-results) SAVE_RESULTS=$2; shift 2 ;;
			--pg)
				case $2 in
					15) PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config ;;
					''|*[!0-9]*) die "--pg: '$2' is not a major version number" ;;
					*) PG_CONFIG=/opt/fastbtree-pg/$2/bin/pg_config ;;
				esac
				shift 2 ;;
			-h|--help)
				echo "usage: $0 [--regress \"NAME ...\"] [--isolation \"NAME ...\"] [--tap \"t/FILE.pl ...\"] [--set \"NAME=VALUE ...\"] [--pg N] [--save-results DIR]"
				echo
				sed -n '3,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
				exit 0 ;;
			*) die "unknown option $1 (see --help)" ;;
		esac
	done
}

# count_words WORDS: number of words
count_words()
{
	set -f
	# shellcheck disable=SC2086
	set -- $1
	set +f
	echo $#
}

main()
{
	local port nregress nisolation ntap
	local regress_vars=() isolation_vars=() tap_vars=()

	parse_args "$@"

	[ "$(id -u)" -eq 0 ] || die "must be run as root (it creates the user $TEST_USER and installs the extension)"
	if [ ! -x "$PG_CONFIG" ]; then
		case $PG_CONFIG in
			/opt/fastbtree-pg/*)
				major=${PG_CONFIG#/opt/fastbtree-pg/}
				die "$PG_CONFIG not found; run: bash scripts/install-deps.sh --pg ${major%%/*}" ;;
			*) die "$PG_CONFIG not found; run: bash scripts/install-deps.sh" ;;
		esac
	fi
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	ensure_test_user
	take_test_lock

	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/fastbtree-test.XXXXXX") || die "mktemp failed"
	# The server tools run as another user and may not be able to enter the
	# caller's directory.
	cd "$WORK" || die "cannot enter $WORK"
	mkdir "$WORK/src"
	# Copy the tree without VCS data and without build or test products.
	tar -C "$SRC_DIR" -cf - \
		--exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./results --exclude=./output_iso --exclude=./tmp_check \
		--exclude=./tmp_check_iso --exclude=./log --exclude='./regression.*' \
		. | tar -C "$WORK/src" -xf - || die "copying the source tree failed"
	chown -R "$TEST_USER:" "$WORK"
	as_user test -w "$WORK" || die "$TEST_USER cannot write $WORK (check TMPDIR permissions)"

	log "source $SRC_DIR, work directory $WORK, $("$PG_CONFIG" --version)"

	log "building with PG_CFLAGS=\"$TEST_CFLAGS\""
	(cd "$WORK/src" && as_user make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$TEST_CFLAGS" FBT_BUILD_ID="$BUILD_ID") ||
		abort_all "build"
	log "installing build $BUILD_ID into $("$PG_CONFIG" --pkglibdir) and $("$PG_CONFIG" --sharedir)/extension"
	(cd "$WORK/src" && make install PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$TEST_CFLAGS" FBT_BUILD_ID="$BUILD_ID") ||
		abort_all "make install"

	port=$(pick_port) || abort_all "finding a free port"
	log "starting a throwaway cluster on port $port (socket in $WORK/sock)"
	mkdir "$WORK/sock" && chown "$TEST_USER:" "$WORK/sock"
	as_user initdb -D "$WORK/data" --auth=trust --no-sync \
		--locale=C.UTF-8 --encoding=UTF8 >"$WORK/initdb.log" 2>&1 ||
		{ cat "$WORK/initdb.log"; abort_all "initdb"; }
	cat >>"$WORK/data/postgresql.conf" <<-CONF

		# scripts/test.sh: private test cluster
		port = $port
		listen_addresses = ''
		unix_socket_directories = '$WORK/sock'
		fsync = off
		full_page_writes = off
		# on: a commit not yet flushed keeps VACUUM from setting hint bits
		# and all-visible bits on the rows it inserted (lazy_scan_prune()),
		# so the two twins of a plan comparison could end up with
		# different relallvisible, and index-only scans priced apart,
		# depending on when the WAL writer ran (cheap with fsync off)
		synchronous_commit = on
		max_prepared_transactions = 10
		# the tests VACUUM and ANALYZE what they need; an autovacuum ANALYZE
		# (of a catalog, say) holds a snapshot, which decides which dead
		# entries a scan may mark, and so the counts of two indexes that
		# tests compare after scanning them one after the other
		autovacuum = off
	CONF
	# --set: the same lines for the throwaway cluster and the TAP clusters
	: >"$WORK/settings.conf"
	local setting
	for setting in $SETTINGS; do
		case $setting in
			*=*) echo "${setting%%=*} = '${setting#*=}'" >>"$WORK/settings.conf" ;;
			*) abort_all "--set: '$setting' is not NAME=VALUE" ;;
		esac
	done
	if [ -s "$WORK/settings.conf" ]; then
		log "extra settings: $(tr '\n' ' ' <"$WORK/settings.conf")"
	fi
	echo "fastbtree.expect_build_id = '$BUILD_ID'" >>"$WORK/settings.conf"
	chmod a+r "$WORK/settings.conf"
	cat "$WORK/settings.conf" >>"$WORK/data/postgresql.conf"
	CLUSTER_STARTED=yes
	as_user pg_ctl start -D "$WORK/data" -l "$WORK/server.log" -w -t 120 >/dev/null ||
		{ cat "$WORK/server.log"; abort_all "starting the test cluster"; }

	export PGHOST="$WORK/sock" PGPORT="$port" PGUSER="$TEST_USER"
	nregress=$(count_files 'sql/*.sql')
	nisolation=$(count_files 'specs/*.spec')
	ntap=$(count_files 't/*.pl')
	if [ "$ONLY" = yes ]; then
		nregress=$(count_words "$ONLY_REGRESS")
		nisolation=$(count_words "$ONLY_ISOLATION")
		ntap=$(count_words "$ONLY_TAP")
		regress_vars=("REGRESS=$ONLY_REGRESS")
		isolation_vars=("ISOLATION=$ONLY_ISOLATION")
		tap_vars=("PROVE_TESTS=$ONLY_TAP")
	fi

	check_build "before the suites"
	if [ "$nregress" -gt 0 ]; then
		run_pg_regress_suite regress "$nregress" "$WORK/src/regression.diffs" ISOLATION= TAP_TESTS= "${regress_vars[@]}"
	else
		log "no pg_regress tests (sql/*.sql)"
	fi
	if [ -n "$SAVE_RESULTS" ] && [ -d "$WORK/src/results" ]; then
		mkdir -p "$SAVE_RESULTS" && cp "$WORK"/src/results/*.out "$SAVE_RESULTS"/ &&
			log "pg_regress outputs copied to $SAVE_RESULTS"
	fi
	if [ "$nisolation" -gt 0 ]; then
		check_build "before the isolation tests"
		run_pg_regress_suite isolation "$nisolation" "$WORK/src/output_iso/regression.diffs" REGRESS= TAP_TESTS= "${isolation_vars[@]}"
		if [ -n "$SAVE_RESULTS" ] && [ -d "$WORK/src/output_iso/results" ]; then
			mkdir -p "$SAVE_RESULTS/isolation" &&
				cp "$WORK"/src/output_iso/results/*.out "$SAVE_RESULTS"/isolation/ &&
				log "isolation outputs copied to $SAVE_RESULTS/isolation"
		fi
	else
		log "no isolation tests (specs/*.spec)"
	fi
	if [ "$ntap" -gt 0 ]; then
		check_build "before the TAP tests"
		run_tap_suite "$ntap" "${tap_vars[@]}"
	else
		log "no TAP tests (t/*.pl)"
	fi
	check_build "after the suites"
	[ "$ONLY" = yes ] || check_shell_syntax

	finish
}

main "$@"
