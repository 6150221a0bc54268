#!/usr/bin/env bash
#
# bench/run.sh
#	Side-by-side point-select benchmark: btree vs fastbtree on identical
#	tables in one cluster.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh.  The
# script builds and installs the extension from a private copy of the
# source tree, creates the unprivileged OS user $BENCH_USER, and runs a
# throwaway cluster in a temporary directory (unix socket only, a free port
# in 55000-55999); existing clusters are never touched.  It then
#
#   1. loads pgbench_accounts with "pgbench -i -s SCALE" (btree primary key)
#      and copies it to pgbench_accounts_fbt with a unique fastbtree index;
#   2. prints table and index sizes and checks with EXPLAIN that each
#      benchmark query runs as an Index Scan on the intended index;
#   3. runs bench/select_btree.sql and bench/select_fastbtree.sql with
#      pgbench -M prepared, interleaved A B A B so that machine drift hits
#      both sides alike, for each client count;
#   4. prints a markdown table per client count: median tps of each, the
#      median of the pairwise ratios fastbtree/btree and their range.
#
# The cluster runs with fsync, full_page_writes and synchronous_commit off.
# That is acceptable here because the measured phase only reads; never use
# these settings for data you care about.
#
# The cluster is stopped and the directory removed on exit, even on failure,
# unless --keep is given.

set -uo pipefail
# The script's own number formatting; the server tools get C.UTF-8 (as_user).
export LC_ALL=C

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BENCH_USER=fbbench
BENCH_DB=fbbench
FBT_AM=fastbtree
BTREE_INDEX=pgbench_accounts_pkey
FBT_TABLE=pgbench_accounts_fbt
FBT_INDEX=pgbench_accounts_fbt_aid_idx
WARMUP_SECONDS=2

SCALE=10
CLIENTS="1 2"
DURATION=10
PAIRS=3
KEEP=no

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=
PORT=
CLUSTER_STARTED=no

usage()
{
	cat <<-EOF
	Usage: bash bench/run.sh [options]

	Benchmark point selects through a btree index and a fastbtree index on
	identical copies of pgbench_accounts, in a throwaway cluster.  Run as
	root after scripts/install-deps.sh.

	Options:
	  --scale N         pgbench scale factor (100000 rows each); default $SCALE
	  --clients "A B"   client counts to measure; default "$CLIENTS"
	  --time SECONDS    duration of each pgbench run; default $DURATION
	  --pairs N         btree/fastbtree run pairs per client count; default $PAIRS
	  --keep            keep the cluster running and its directory for inspection
	  --help            show this help

	Total measured time is about 2 * pairs * time seconds per client count.
	EOF
}

log()
{
	echo "bench: $*"
}

die()
{
	echo "bench: ERROR: $*" >&2
	exit 1
}

as_user()
{
	runuser -u "$BENCH_USER" -- env \
		HOME="$WORK" \
		PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" \
		LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		PGHOST="$WORK/sock" PGPORT="$PORT" PGUSER="$BENCH_USER" PGDATABASE="$BENCH_DB" \
		"$@"
}

# psql_q SQL: run SQL in the benchmark database, print unaligned tuples only
psql_q()
{
	as_user psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"
}

# Runs on exit (trap).
# shellcheck disable=SC2317
cleanup()
{
	local rc=$?

	trap - EXIT INT TERM
	if [ "$KEEP" = yes ] && [ -n "$WORK" ]; then
		echo
		log "--keep: cluster and files left in $WORK"
		if [ "$CLUSTER_STARTED" = yes ]; then
			echo "  connect: runuser -u $BENCH_USER -- $PG_BINDIR/psql -h $WORK/sock -p $PORT $BENCH_DB"
			echo "  remove:  runuser -u $BENCH_USER -- $PG_BINDIR/pg_ctl stop -D $WORK/data && rm -rf $WORK"
		else
			echo "  remove:  rm -rf $WORK"
		fi
		exit "$rc"
	fi
	if [ "$CLUSTER_STARTED" = yes ]; then
		as_user pg_ctl stop -D "$WORK/data" -m fast -w -t 60 >/dev/null 2>&1 ||
			as_user pg_ctl stop -D "$WORK/data" -m immediate -w >/dev/null 2>&1 ||
			echo "bench: warning: could not stop the cluster in $WORK/data" >&2
	fi
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		cd /
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# Succeeds if something listens on TCP port $1 or a PostgreSQL socket for it
# exists in the usual socket directories.
port_in_use()
{
	local hex f

	hex=$(printf '%04X' "$1")
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		# field 2 is local_address as ADDR:PORT in hex, field 4 the state
		# (0A = LISTEN)
		if awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' "$f"; then
			return 0
		fi
	done
	[ -e "/tmp/.s.PGSQL.$1" ] || [ -e "/var/run/postgresql/.s.PGSQL.$1" ]
}

pick_port()
{
	local port

	for _ in $(seq 1 200); do
		port=$((55000 + RANDOM % 1000))
		if ! port_in_use "$port"; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

is_posint()
{
	[[ "$1" =~ ^[1-9][0-9]*$ ]]
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--scale|--clients|--time|--pairs)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--scale=*) SCALE=${1#*=} ;;
			--clients=*) CLIENTS=${1#*=} ;;
			--time=*) DURATION=${1#*=} ;;
			--pairs=*) PAIRS=${1#*=} ;;
			--keep) KEEP=yes ;;
			-h|--help) usage; exit 0 ;;
			*) die "unknown argument: $1 (see --help)" ;;
		esac
		shift
	done

	is_posint "$SCALE" || die "--scale must be a positive integer, got '$SCALE'"
	is_posint "$DURATION" || die "--time must be a positive integer, got '$DURATION'"
	is_posint "$PAIRS" || die "--pairs must be a positive integer, got '$PAIRS'"
	[ -n "${CLIENTS// /}" ] || die "--clients must list at least one client count"
	local c
	for c in $CLIENTS; do
		is_posint "$c" || die "--clients must be positive integers, got '$c'"
		[ "$c" -le 40 ] || die "at most 40 clients (the cluster has max_connections = 50)"
	done
}

# median, min and max of the numbers given as arguments
median()
{
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

minimum()
{
	printf '%s\n' "$@" | sort -g | head -n 1
}

maximum()
{
	printf '%s\n' "$@" | sort -g | tail -n 1
}

# bench_query SCRIPT: the SQL statement of a pgbench script, without the
# meta-commands, comments and trailing semicolon
bench_query()
{
	# shellcheck disable=SC1003
	grep -v -e '^[[:space:]]*\\' -e '^[[:space:]]*--' -e '^[[:space:]]*$' "$1" |
		tr '\n' ' ' | sed -e 's/[[:space:]]*;[[:space:]]*$//'
}

# check_plan SCRIPT TABLE INDEX AM: fail unless the script's query runs as an
# Index Scan using INDEX (whose access method must be AM), both with a
# literal key and as a generic plan of a prepared statement (what pgbench -M
# prepared ends up using)
check_plan()
{
	local script=$1 table=$2 index=$3 am=$4 query expected plan got_am

	got_am=$(psql_q "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '$index'::regclass") ||
		die "cannot look up index $index"
	[ "$got_am" = "$am" ] || die "index $index uses access method '$got_am', expected '$am'"

	query=$(bench_query "$script")
	[ -n "$query" ] || die "no SQL statement found in $script"
	expected="Index Scan using $index on $table"

	plan=$(psql_q "EXPLAIN (COSTS OFF) ${query//:aid/1}") || die "EXPLAIN failed for $script"
	if [ "$(echo "$plan" | head -n 1)" != "$expected" ]; then
		echo "$plan" >&2
		die "$(basename "$script"): expected plan '$expected' (literal key)"
	fi

	plan=$(psql_q "PREPARE p AS ${query//:aid/\$1}; SET plan_cache_mode = force_generic_plan; EXPLAIN (COSTS OFF) EXECUTE p(1)") ||
		die "EXPLAIN EXECUTE failed for $script"
	if [ "$(echo "$plan" | head -n 1)" != "$expected" ]; then
		echo "$plan" >&2
		die "$(basename "$script"): expected plan '$expected' (generic plan)"
	fi
	log "plan ok: $(basename "$script") -> $expected"
}

# run_pgbench SCRIPT CLIENTS SECONDS: run pgbench and set RUN_TPS
run_pgbench()
{
	local script=$1 clients=$2 seconds=$3 out

	out=$(as_user pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" \
		-s "$SCALE" -f "$script" 2>&1)
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$out" >&2
		die "pgbench exited with status $rc ($(basename "$script"), $clients clients)"
	fi
	if ! echo "$out" | grep -q '^number of failed transactions: 0 '; then
		echo "$out" >&2
		die "pgbench reported failed transactions ($(basename "$script"), $clients clients)"
	fi
	RUN_TPS=$(echo "$out" | awk '$1 == "tps" && $2 == "=" { print $3; exit }')
	if [ -z "$RUN_TPS" ]; then
		echo "$out" >&2
		die "no tps figure in pgbench output"
	fi
}

setup_cluster()
{
	PORT=$(pick_port) || die "no free port in 55000-55999"
	log "initdb in $WORK/data, port $PORT, socket directory $WORK/sock"
	mkdir "$WORK/sock" && chown "$BENCH_USER:" "$WORK/sock"
	as_user initdb -D "$WORK/data" --auth=trust --no-sync \
		--locale=C.UTF-8 --encoding=UTF8 >"$WORK/initdb.log" 2>&1 ||
		{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }
	cat >>"$WORK/data/postgresql.conf" <<-CONF

		# bench/run.sh: throwaway benchmark cluster.  Durability is off, which
		# is acceptable only because the measured workload is read-only.
		port = $PORT
		listen_addresses = ''
		unix_socket_directories = '$WORK/sock'
		max_connections = 50
		shared_buffers = 1GB
		fsync = off
		full_page_writes = off
		synchronous_commit = off
		max_wal_size = 4GB
		checkpoint_timeout = 30min
	CONF
	CLUSTER_STARTED=yes
	as_user pg_ctl start -D "$WORK/data" -l "$WORK/server.log" -w -t 120 >/dev/null ||
		{ cat "$WORK/server.log" >&2; die "the benchmark cluster did not start"; }
	as_user createdb "$BENCH_DB" || die "createdb failed"
}

load_data()
{
	log "pgbench -i -s $SCALE ($((SCALE * 100000)) accounts)"
	as_user pgbench -i -q -s "$SCALE" || die "pgbench -i failed"

	log "copying pgbench_accounts to $FBT_TABLE and indexing it USING $FBT_AM"
	psql_q "CREATE EXTENSION $FBT_AM" || die "CREATE EXTENSION $FBT_AM failed"
	psql_q "CREATE TABLE $FBT_TABLE AS SELECT * FROM pgbench_accounts ORDER BY aid" ||
		die "copying pgbench_accounts failed"
	psql_q "CREATE UNIQUE INDEX $FBT_INDEX ON $FBT_TABLE USING $FBT_AM (aid)" ||
		die "CREATE UNIQUE INDEX ... USING $FBT_AM failed"
	psql_q "VACUUM ANALYZE pgbench_accounts" || die "VACUUM ANALYZE failed"
	psql_q "VACUUM ANALYZE $FBT_TABLE" || die "VACUUM ANALYZE failed"
	psql_q "CHECKPOINT" || die "CHECKPOINT failed"
}

print_sizes()
{
	echo
	echo "Relation sizes:"
	echo
	echo "| relation | access method | size | bytes |"
	echo "|---|---|--:|--:|"
	psql_q "SELECT format('| %s | %s | %s | %s |', c.relname, coalesce(a.amname, '-'),
			pg_size_pretty(pg_relation_size(c.oid)), pg_relation_size(c.oid))
		FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
		WHERE c.relname IN ('pgbench_accounts', '$BTREE_INDEX', '$FBT_TABLE', '$FBT_INDEX')
		ORDER BY c.relname" || die "size query failed"
	echo
}

warm_up()
{
	log "warming up: pg_prewarm of both tables and indexes, ${WARMUP_SECONDS}s unrecorded run of each script"
	psql_q "CREATE EXTENSION pg_prewarm" || die "CREATE EXTENSION pg_prewarm failed"
	psql_q "SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('$BTREE_INDEX'),
			pg_prewarm('$FBT_TABLE'), pg_prewarm('$FBT_INDEX')" >/dev/null ||
		die "pg_prewarm failed"
	run_pgbench "$BTREE_SCRIPT" 1 "$WARMUP_SECONDS"
	run_pgbench "$FBT_SCRIPT" 1 "$WARMUP_SECONDS"
}

main()
{
	local c p nruns run

	parse_args "$@"

	[ "$(id -u)" -eq 0 ] || die "must be run as root (it creates the user $BENCH_USER and installs the extension)"
	[ -x "$PG_CONFIG" ] || die "$PG_CONFIG not found; run scripts/install-deps.sh first"
	command -v runuser >/dev/null 2>&1 || die "runuser not found (package util-linux)"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	[ -x "$PG_BINDIR/pgbench" ] || die "$PG_BINDIR/pgbench not found; run scripts/install-deps.sh first"

	if ! id -u "$BENCH_USER" >/dev/null 2>&1; then
		log "creating OS user $BENCH_USER"
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$BENCH_USER" ||
			id -u "$BENCH_USER" >/dev/null 2>&1 ||	# created meanwhile by a concurrent run
			die "useradd $BENCH_USER failed"
	fi

	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/fastbtree-bench.XXXXXX") || die "mktemp failed"
	# The server tools run as another user and may not be able to enter the
	# caller's directory.
	cd "$WORK" || die "cannot enter $WORK"
	mkdir "$WORK/src"
	tar -C "$SRC_DIR" -cf - \
		--exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./results --exclude=./output_iso --exclude=./tmp_check \
		--exclude=./tmp_check_iso --exclude=./log --exclude='./regression.*' \
		. | tar -C "$WORK/src" -xf - || die "copying the source tree failed"
	chown -R "$BENCH_USER:" "$WORK"
	as_user test -w "$WORK" || die "$BENCH_USER cannot write $WORK (check TMPDIR permissions)"
	BTREE_SCRIPT="$WORK/src/bench/select_btree.sql"
	FBT_SCRIPT="$WORK/src/bench/select_fastbtree.sql"

	log "building and installing the extension (make && make install)"
	(cd "$WORK/src" && as_user make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$WORK/build.log" 2>&1) ||
		{ cat "$WORK/build.log" >&2; die "build failed"; }
	(cd "$WORK/src" && make install PG_CONFIG="$PG_CONFIG" >>"$WORK/build.log" 2>&1) ||
		{ cat "$WORK/build.log" >&2; die "make install failed"; }

	setup_cluster
	load_data

	echo
	echo "## fastbtree benchmark: point selects, btree vs $FBT_AM"
	echo
	echo "- $(as_user postgres --version)"
	echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores; $(uname -sr)"
	echo "- scale $SCALE ($((SCALE * 100000)) rows per table), $PAIRS pairs of ${DURATION}s runs per client count, clients: $CLIENTS"
	echo "- pgbench -n -M prepared -j CLIENTS -c CLIENTS; runs interleaved btree, $FBT_AM, btree, $FBT_AM, ..."
	echo "- shared_buffers = 1GB, max_connections = 50; fsync, full_page_writes and synchronous_commit off (read-only workload)"
	print_sizes

	check_plan "$BTREE_SCRIPT" pgbench_accounts "$BTREE_INDEX" btree
	check_plan "$FBT_SCRIPT" "$FBT_TABLE" "$FBT_INDEX" "$FBT_AM"

	warm_up

	declare -A TPS
	nruns=$(($(wc -w <<<"$CLIENTS") * PAIRS * 2))
	run=0
	for c in $CLIENTS; do
		for p in $(seq 1 "$PAIRS"); do
			run=$((run + 1))
			run_pgbench "$BTREE_SCRIPT" "$c" "$DURATION"
			TPS[$c:$p:btree]=$RUN_TPS
			printf 'bench: [%2d/%d] clients=%-3s pair %d/%d  btree      %12.1f tps\n' \
				"$run" "$nruns" "$c" "$p" "$PAIRS" "$RUN_TPS"
			run=$((run + 1))
			run_pgbench "$FBT_SCRIPT" "$c" "$DURATION"
			TPS[$c:$p:fbt]=$RUN_TPS
			printf 'bench: [%2d/%d] clients=%-3s pair %d/%d  %-10s %12.1f tps\n' \
				"$run" "$nruns" "$c" "$p" "$PAIRS" "$FBT_AM" "$RUN_TPS"
		done
	done

	echo
	echo "### Results (scale $SCALE, ${DURATION}s runs, $PAIRS pairs)"
	echo
	echo "| clients | btree tps (median) | $FBT_AM tps (median) | ratio $FBT_AM/btree (median of pairs) | ratio min–max |"
	echo "|--:|--:|--:|--:|--:|"
	for c in $CLIENTS; do
		local bt=() fb=() ratios=()
		for p in $(seq 1 "$PAIRS"); do
			bt+=("${TPS[$c:$p:btree]}")
			fb+=("${TPS[$c:$p:fbt]}")
			ratios+=("$(awk -v a="${TPS[$c:$p:fbt]}" -v b="${TPS[$c:$p:btree]}" 'BEGIN { printf "%.6f", a / b }')")
		done
		printf '| %s | %.1f | %.1f | %.3f | %.3f–%.3f |\n' "$c" \
			"$(median "${bt[@]}")" "$(median "${fb[@]}")" "$(median "${ratios[@]}")" \
			"$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")"
	done
	echo
	echo "Raw tps per pair (btree / $FBT_AM):"
	for c in $CLIENTS; do
		printf '  clients=%s:' "$c"
		for p in $(seq 1 "$PAIRS"); do
			printf ' %.1f/%.1f' "${TPS[$c:$p:btree]}" "${TPS[$c:$p:fbt]}"
		done
		echo
	done
}

main "$@"
