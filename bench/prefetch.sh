#!/usr/bin/env bash
#
# bench/prefetch.sh
#	Heap prefetch (issue 30): index scans of 100, 1,000 and 10,000 rows
#	whose heap tuples are not in key order, btree against fastbtree, cold
#	(the server restarted and the kernel's page cache dropped before every
#	query), in the page cache only (restarted, the tables read into the
#	page cache) and warm (the same query again, its blocks in shared buffers).
#
# Run as root after scripts/install-deps.sh: dropping the page cache
# (/proc/sys/vm/drop_caches) needs root; without it the script says so and
# stops.  Builds the extension into its work directory and runs a
# throwaway cluster, as bench/run.sh (see lib.sh), with
# effective_io_concurrency = 64 (fastbtree's prefetch distance bound; btree
# does not read it in index scans).  Two tables with the same rows, one
# indexed USING btree and one USING fastbtree, the rows inserted in random
# order, so a range of keys lands on unrelated heap blocks.  Each cold
# query runs after a restart, a pg_prewarm of a filler table the size of
# shared buffers (so that the query finds every buffer in use, as on a
# server that has been running, not fresh memory to fault in) and a drop
# of the page cache.  Each pair runs one random range on both sides, the
# side that goes first alternating; the statement is planned (EXPLAIN) in
# the same session before it is timed, so that catalog reads are not
# timed.  Reports the
# median time of each side and the ratio btree / fastbtree (above 1:
# fastbtree faster) with its range over the pairs.  With --save it writes
# bench/results/DATE-HOST-prefetch.md.

set -uo pipefail
export LC_ALL=C

LOG_TAG=prefetch
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RESULTS_DIR="$BENCH_DIR/results"
ROWS=1000000
PAIRS=5
SAVE=no
COMMAND_LINE="bash bench/prefetch.sh${*:+ $*}"
SHARED_BUFFERS=128MB
SIZES=(100 1000 10000)
FBT_SET=""

usage()
{
	cat <<-EOF
	Usage: bash bench/prefetch.sh [options]

	Cold and warm index scans of uncorrelated rows, btree against
	fastbtree.  Run as root (drops the kernel's page cache).

	Options:
	  --rows N          rows of each table (default $ROWS, about 240 bytes each)
	  --pairs N         cold pairs per scan size (default $PAIRS; warm: 3 times as many)
	  --fbt-set "NAME=VALUE ..."  settings for $FBT_AM's queries only, e.g.
	                    "fastbtree.prefetch_read_ahead=on" or "fastbtree.prefetch=off"
	  --save            write the report to the results directory
	  --results-dir DIR where --save writes; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --keep            keep the cluster (running) and its work directory
	  --help            show this help

	Takes about 5 minutes with the defaults on 2 cores.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--rows|--pairs|--results-dir|--pg|--fbt-set)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--rows=*) ROWS=${1#*=} ;;
			--pairs=*) PAIRS=${1#*=} ;;
			--fbt-set=*) FBT_SET=${1#*=} ;;
			--save) SAVE=yes ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	is_posint "$ROWS" || die "--rows must be a positive integer, got '$ROWS'"
	[ "$ROWS" -ge 100000 ] || die "--rows must be at least 100000"
	is_posint "$PAIRS" || die "--pairs must be a positive integer, got '$PAIRS'"
}

# drop_caches: empty the kernel's page cache (root only)
drop_caches()
{
	sync
	echo 3 >/proc/sys/vm/drop_caches || die "cannot write /proc/sys/vm/drop_caches"
}

# timed_query AM N LOW [warm]: run the N-row scan from key LOW on AM's
# table in a new session, planned first (with warm: run once first, then
# five times, in the same session); print its time in ms (warm: the median
# of the five)
timed_query()
{
	local am=$1 n=$2 low=$3 warm=${4:-} t q out ms first=

	local sets=() kv
	if [ "$am" = btree ]; then t=pf_bt; else t=pf_fbt; fi
	if [ "$am" != btree ]; then
		for kv in $FBT_SET; do
			[[ $kv == fastbtree.*=* ]] || die "--fbt-set takes fastbtree.NAME=VALUE, got '$kv'"
			sets+=("SET ${kv%%=*} = '${kv#*=}';")
		done
	fi
	q="SELECT sum(length(pad)) FROM $t WHERE k BETWEEN $low AND $((low + n - 1))"
	local timed=("$q;")
	[ -z "$warm" ] || { first="$q;"; timed=("$q;" "$q;" "$q;" "$q;" "$q;"); }
	out=$(printf '%s\n' 'SET enable_seqscan = off;' 'SET enable_bitmapscan = off;' ${sets[@]+"${sets[@]}"} \
		"EXPLAIN $q;" "$first" '\timing on' "${timed[@]}" | as_user psql -X -q -A -t -v ON_ERROR_STOP=1 2>&1) ||
		{ echo "$out" >&2; die "query failed: $q"; }
	grep -q "Index Scan using ${t}_k" <<<"$out" ||
		{ echo "$out" >&2; die "not an index scan of ${t}_k: $q"; }
	# (warm: the median of five runs)
	ms=$(median $(sed -n 's/^Time: \([0-9.]*\) ms.*$/\1/p' <<<"$out"))
	[ -n "$ms" ] || { echo "$out" >&2; die "no timing: $q"; }
	echo "$ms"
}

declare -A MS=()

# run_cold KIND: PAIRS pairs per size, each query after a restart and
# shared buffers filled with another table; KIND cold: the page cache
# dropped too; KIND pagecache: both tables read into the page cache
# (pg_prewarm's read mode: not into shared buffers), the state of a table
# larger than shared buffers on a server with memory to spare
run_cold()
{
	local kind=$1 n p am first low ms i=0 total=$((${#SIZES[@]} * PAIRS * 2))

	for n in "${SIZES[@]}"; do
		for p in $(seq 1 "$PAIRS"); do
			low=$(( (RANDOM * 32768 + RANDOM) % (ROWS - n) ))
			if [ $((p % 2)) -eq 1 ]; then first=btree; else first=$FBT_AM; fi
			for am in "$first" "$([ "$first" = btree ] && echo "$FBT_AM" || echo btree)"; do
				i=$((i + 1))
				stop_cluster
				CLUSTER_STARTED=yes
				as_user pg_ctl start -D "$WORK/data" -l "$WORK/server.log" -w -t 120 >/dev/null ||
					die "the cluster did not restart"
				# every shared buffer in use (as on a server that has run
				# for a while: a freshly started one pays a page fault per
				# buffer it first uses), none holding the tables measured
				psql_q "SELECT pg_prewarm('pf_filler')" >/dev/null ||
					die "pg_prewarm of pf_filler failed"
				if [ "$kind" = cold ]; then
					drop_caches
				else
					psql_q "SELECT pg_prewarm(c, 'read') FROM unnest(ARRAY['pf_bt', 'pf_bt_k', 'pf_fbt', 'pf_fbt_k']) c" >/dev/null ||
						die "pg_prewarm (read) of the tables failed"
				fi
				ms=$(timed_query "$am" "$n" "$low")
				MS[$kind:$n:$p:$am]=$ms
				printf '%s: [%2d/%d] %-9s %5d rows pair %d/%d %-9s %10.1f ms\n' \
					"$LOG_TAG" "$i" "$total" "$kind" "$n" "$p" "$PAIRS" "$am" "$ms"
			done
		done
	done
}

# run_warm: 3 * PAIRS pairs per size, each query run once to warm it, then
# timed in the same session (before the other side's could evict its
# blocks)
run_warm()
{
	local n p am low ms npairs=$((PAIRS * 3))

	for n in "${SIZES[@]}"; do
		for p in $(seq 1 "$npairs"); do
			low=$(( (RANDOM * 32768 + RANDOM) % (ROWS - n) ))
			for am in btree "$FBT_AM"; do
				MS[warm:$n:$p:$am]=$(timed_query "$am" "$n" "$low" warm)
			done
		done
		log "warm $n rows: $npairs pairs done"
	done
}

# report_row KIND N NPAIRS: one table row
report_row()
{
	local kind=$1 n=$2 npairs=$3 p b=() f=() r=() m

	for p in $(seq 1 "$npairs"); do
		b+=("${MS[$kind:$n:$p:btree]}")
		f+=("${MS[$kind:$n:$p:$FBT_AM]}")
		r+=("$(ratio "${MS[$kind:$n:$p:btree]}" "${MS[$kind:$n:$p:$FBT_AM]}")")
	done
	m=$(median_pick "${r[@]}")
	printf '| %s | %s | %.2f | %.2f | %.2f | %.2f–%.2f |\n' "$kind" "$n" \
		"$(median "${b[@]}")" "$(median "${f[@]}")" "${r[m - 1]}" \
		"$(minimum "${r[@]}")" "$(maximum "${r[@]}")"
}

main()
{
	local started md stem n

	parse_args "$@"
	if [ "$(id -u)" -ne 0 ] || [ ! -w /proc/sys/vm/drop_caches ]; then
		echo "bench/prefetch.sh: needs root to drop the kernel's page cache; skipped" >&2
		exit 0
	fi
	started=$(date +%s)
	bench_prepare
	build_extension
	setup_cluster
	echo "effective_io_concurrency = 64" >>"$WORK/data/postgresql.conf"
	log "loading two tables of $ROWS rows, keys a permutation of the rows"
	psql_q "CREATE TABLE pf_bt (k int4, pad text) WITH (autovacuum_enabled = off)" \
		"INSERT INTO pf_bt SELECT g, repeat(md5(g::text), 7) FROM generate_series(0, $ROWS - 1) g ORDER BY random()" \
		"CREATE TABLE pf_fbt (LIKE pf_bt) WITH (autovacuum_enabled = off)" \
		"INSERT INTO pf_fbt SELECT * FROM pf_bt" \
		"CREATE INDEX pf_bt_k ON pf_bt USING btree (k)" \
		"CREATE INDEX pf_fbt_k ON pf_fbt USING $FBT_AM (k)" \
		"VACUUM ANALYZE pf_bt" "VACUUM ANALYZE pf_fbt" \
		"CREATE TABLE pf_filler AS SELECT repeat('f', 1000) AS f FROM generate_series(1, 150000)" \
		"CHECKPOINT" >/dev/null ||
		die "loading the tables failed"
	run_cold cold
	run_cold pagecache
	run_warm
	md="$WORK/prefetch.md"
	{
		echo "# Heap prefetch: cold and warm index scans, btree vs $FBT_AM"
		echo
		echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
		echo "- $(as_user postgres --version); fastbtree source $(source_revision)"
		echo "- $ROWS rows per table (about 240 bytes each), inserted in random key order; \`SELECT sum(length(pad)) ... WHERE k BETWEEN :low AND :low + N - 1\`, plain index scan"
		echo "- cold: server restarted, shared buffers filled with another table (pg_prewarm) and page cache dropped before each query, $PAIRS pairs; pagecache: the same but both tables read into the page cache (pg_prewarm, read mode) instead of dropping it; warm: the query run once, then timed five times in the same session (their median), $((PAIRS * 3)) pairs"
		[ -z "$FBT_SET" ] || echo "- $FBT_AM's queries run after: $FBT_SET"
		echo "- shared_buffers = $SHARED_BUFFERS, effective_io_concurrency = 64; times in ms are medians; ratio = btree / $FBT_AM (above 1: $FBT_AM faster), of the median pair, min–max over the pairs"
		echo
		echo "| cache | rows | btree ms | $FBT_AM ms | ratio | min–max |"
		echo "|---|--:|--:|--:|--:|--:|"
		for n in "${SIZES[@]}"; do report_row cold "$n" "$PAIRS"; done
		for n in "${SIZES[@]}"; do report_row pagecache "$n" "$PAIRS"; done
		for n in "${SIZES[@]}"; do report_row warm "$n" $((PAIRS * 3)); done
		echo
		total_time "$started"
	} >"$md"
	if [ "$SAVE" = yes ]; then
		prepare_results_dir
		stem=$(results_stem "$RESULTS_DIR" -prefetch)
		cp "$md" "$stem.md"
		show_results "$stem.md"
	else
		echo
		cat "$md"
	fi
}

main "$@"
