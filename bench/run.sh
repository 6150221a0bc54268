#!/usr/bin/env bash
#
# bench/run.sh
#	Side-by-side benchmark: btree vs fastbtree on identical tables in one
#	throwaway cluster.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh.  The
# script builds the extension from a private copy of the source tree and
# installs it under its work directory, never into the system (the
# cluster loads it through Debian's extension_destdir setting); it creates
# the unprivileged OS user $BENCH_USER and runs a throwaway cluster in a
# temporary directory (unix socket only, a free port in 55000-55999);
# existing clusters are never touched.
#
# Without --suite it runs the point-select benchmark: pgbench_accounts from
# "pgbench -i -s SCALE" (btree primary key) and a copy with a unique
# fastbtree index, the pgbench -S statement against each, interleaved
# A B B A A B ... (the pairs take turns at which side runs first) so that
# machine drift and any advantage of running first or second hit both
# sides alike, for each client count; it prints a markdown table whose
# figures agree with each other:
# the two runs of the median pair (the pair with the median ratio
# fastbtree/btree), that ratio, the range of all pairs' ratios, and under
# it one line with the run-to-run noise of each client count and whether
# the difference is beyond it (noise_verdict in lib.sh).
#
# With --suite it runs the named workloads (workloads/NAME.sql, see
# there), the index build benchmark, the in-server probe benchmark
# (fastbtree_probe) and the callgrind measurement (callgrind.sh), and
# writes bench/results/DATE-HOST.md, the raw runs (.tsv) and PNG charts (gnuplot).
# Every pgbench workload is checked with EXPLAIN first, with literal keys
# and as the generic plan of a prepared statement: a plan that does not use
# the intended index with the intended scan type fails the run.  Write
# workloads rebuild their table from a base copy before every run, so each
# run of either side starts from the same tree, just after a checkpoint.
#
# The cluster runs with fsync and synchronous_commit off (see lib.sh).  It
# is stopped and its directory removed on exit, even on failure, unless
# --keep is given.

set -uo pipefail
# The script's own number formatting; the server tools get C.UTF-8 (as_user).
export LC_ALL=C

LOG_TAG=bench
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CLIENTS="1 2"
DURATION=10
PAIRS=3
WARMUP_SECONDS=2
# fastbtree_probe() loops over the PROBE_KEYS keys per timed call
PROBE_LOOPS=10
SUITE=
CALLGRIND=no
RESULTS_DIR="$BENCH_DIR/results"

READ_WORKLOADS=(select range range_desc ios join text_c text_default twocol parallel)
# the scan machinery of PostgreSQL 17 and 18 (skip scan, = ANY advancement)
SCAN_WORKLOADS=(skip any_near any_spread ios_count range1000 order_limit)
WRITE_WORKLOADS=(insert_random insert_asc mixed update_churn)

WORKLOADS=()
DO_BUILD=no
DO_PROBE=no
DO_CALLGRIND=no
SAVE=no
COMMAND_LINE="bash bench/run.sh${*:+ $*}"

usage()
{
	cat <<-EOF
	Usage: bash bench/run.sh [options]

	Benchmark btree against fastbtree on identical tables in a throwaway
	cluster.  Run as root after scripts/install-deps.sh.  Without --suite:
	point selects (pgbench -S statement) only, printed, nothing saved.

	Options:
	  --suite LIST      comma-separated workloads or groups to run, and save
	                    bench/results/DATE-HOST.md with charts:
	                      all     = read, scan, write, build, probe, callgrind
	                      read    = ${READ_WORKLOADS[*]}
	                      scan    = ${SCAN_WORKLOADS[*]}
	                      write   = ${WRITE_WORKLOADS[*]}
	                      build   index build time and size
	                      probe   in-server probes (fastbtree_probe), ns/probe
	                      callgrind  instructions per probe (see callgrind.sh)
	  --callgrind       add callgrind to the suite (implies --suite select if
	                    no suite is given)
	  --scale N         pgbench scale factor; every table has 100000 * N rows;
	                    default $SCALE
	  --clients "A B"   client counts to measure; default "$CLIENTS"
	  --time SECONDS    duration of each pgbench run; default $DURATION
	  --pairs N         btree/fastbtree run pairs per workload and client
	                    count (also rounds of probes and builds); default $PAIRS
	  --shared-buffers SIZE  server shared_buffers; default $SHARED_BUFFERS
	  --results-dir DIR where --suite saves its files; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --full-page-writes on|off  the server's full_page_writes; default on
	                    (off: WAL bytes per transaction are the records alone)
	  --keep            keep the cluster running and its directory for inspection
	  --help            show this help

	Each pgbench workload takes about 2 * pairs * clients-counts * time
	seconds, plus set-up.  --suite all with the defaults takes 30-45 minutes
	on 2 cores; "--time 5 --pairs 3" roughly halves the pgbench part.
	Packages installed when needed: wamerican (text keys), gnuplot-nox
	(charts), valgrind (callgrind).
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--scale|--clients|--time|--pairs|--suite|--shared-buffers|--results-dir|--pg|--wal-mode|--full-page-writes)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--scale=*) SCALE=${1#*=} ;;
			--clients=*) CLIENTS=${1#*=} ;;
			--time=*) DURATION=${1#*=} ;;
			--pairs=*) PAIRS=${1#*=} ;;
			--suite=*) SUITE=${1#*=} ;;
			--shared-buffers=*) SHARED_BUFFERS=${1#*=} ;;
			--results-dir=*) RESULTS_DIR=${1#*=} ;;
			--pg=*) select_major "${1#*=}" ;;
			--wal-mode=*) select_wal_mode "${1#*=}" ;;
			--full-page-writes=on|--full-page-writes=off) FULL_PAGE_WRITES=${1#*=} ;;
			--full-page-writes=*) die "--full-page-writes must be on or off" ;;
			--callgrind) CALLGRIND=yes ;;
			--keep) KEEP=yes ;;
			-h|--help) usage; exit 0 ;;
			*) die "unknown argument: $1 (see --help)" ;;
		esac
		shift
	done

	check_scale_buffers
	is_posint "$DURATION" || die "--time must be a positive integer, got '$DURATION'"
	is_posint "$PAIRS" || die "--pairs must be a positive integer, got '$PAIRS'"
	[ "$PAIRS" -ge 3 ] || warn "--pairs $PAIRS: with fewer than 3 pairs a median is no better than a single run"
	check_clients "$CLIENTS"
	[ "$CALLGRIND" = no ] || SUITE="${SUITE:-select},callgrind"
	[ -z "$SUITE" ] || expand_suite
	[ -n "$SUITE" ] || WORKLOADS=(select)
}

# expand_suite: SUITE -> WORKLOADS, DO_BUILD, DO_PROBE, DO_CALLGRIND
expand_suite()
{
	local item w
	local -A seen=()

	SAVE=yes
	for item in ${SUITE//,/ }; do
		case "$item" in
			all) WORKLOADS+=("${READ_WORKLOADS[@]}" "${SCAN_WORKLOADS[@]}" "${WRITE_WORKLOADS[@]}")
				DO_BUILD=yes; DO_PROBE=yes; DO_CALLGRIND=yes ;;
			read) WORKLOADS+=("${READ_WORKLOADS[@]}") ;;
			scan) WORKLOADS+=("${SCAN_WORKLOADS[@]}") ;;
			write) WORKLOADS+=("${WRITE_WORKLOADS[@]}") ;;
			build) DO_BUILD=yes ;;
			probe) DO_PROBE=yes ;;
			callgrind) DO_CALLGRIND=yes ;;
			*)
				[ -f "$BENCH_DIR/workloads/$item.sql" ] ||
					die "unknown workload or group '$item' (see --help)"
				WORKLOADS+=("$item")
				;;
		esac
	done
	# keep the first occurrence of each workload, in the documented order
	local ordered=()
	for w in "${READ_WORKLOADS[@]}" "${SCAN_WORKLOADS[@]}" "${WRITE_WORKLOADS[@]}"; do
		for item in "${WORKLOADS[@]}"; do
			if [ "$item" = "$w" ] && [ -z "${seen[$w]:-}" ]; then
				ordered+=("$w")
				seen[$w]=yes
			fi
		done
	done
	WORKLOADS=("${ordered[@]}")
}

declare -A TPS=() TXNS=() WALB=()
RUN_NO=0
RUN_TOTAL=0

# run_workload NAME: set it up (workload_setup) and run the interleaved
# pairs for every client count; odd pairs run btree first, even pairs
# fastbtree first
run_workload()
{
	local name=$1 reset c p side order

	workload_setup "$name"
	reset=$WL_RESET

	for c in $CLIENTS; do
		for p in $(seq 1 "$PAIRS"); do
			order="bt fbt"
			[ $((p % 2)) -eq 1 ] || order="fbt bt"
			for side in $order; do
				[ -z "$reset" ] || reset_data "$reset" "$side"
				RUN_NO=$((RUN_NO + 1))
				run_pgbench "${WL_SCRIPT[$side]}" "$c" "$DURATION"
				TPS[$name:$c:$p:$side]=$RUN_TPS
				TXNS[$name:$c:$p:$side]=$RUN_TXNS
				WALB[$name:$c:$p:$side]=$RUN_WAL
				printf '%s: [%3d/%d] %-13s clients=%-3s pair %d/%d  %-9s %11.1f tps' \
					"$LOG_TAG" "$RUN_NO" "$RUN_TOTAL" "$name" "$c" "$p" "$PAIRS" "$(side_am "$side")" "$RUN_TPS"
				[ -z "$reset" ] || printf '  %6.0f WAL bytes/txn' "$(awk -v w="$RUN_WAL" -v n="$RUN_TXNS" 'BEGIN { print w / n }')"
				echo
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$p" "$(side_am "$side")" \
					"$RUN_TPS" "$RUN_TXNS" "$RUN_WAL" >>"$WORK/runs.tsv"
			done
		done
	done
	BENCH_PGOPTIONS=
}

# --- build and probe benchmarks -------------------------------------------

declare -A BUILD_MS=() BUILD_BYTES=() PROBE_NS=() PROBE_FOUND=()

# BUILD_MODES: max_parallel_maintenance_workers of each build, as
# "label:workers": PostgreSQL's default, and workers off
BUILD_MODES=(default:2 serial:0)
declare -A BUILD_WORKERS=()

# build_phase: CREATE INDEX time and size for each key type, both access
# methods interleaved, on the same table, with PostgreSQL's default
# parallel build settings and with workers off.  The order alternates
# from pair to pair (btree first in odd pairs, fastbtree first in even
# ones), so that whatever the first build of a pair leaves behind (dirty
# WAL, a file to unlink at the checkpoint) falls on both sides.
build_phase()
{
	local type target p am out ms bytes workers mode i=0 n order

	load_data accounts int8 ts text two
	n=$((${#KEY_TYPES[@]} * ${#BUILD_MODES[@]} * PAIRS * 2))
	echo
	log "index builds: CREATE INDEX on the same table with each access method, $PAIRS pairs per key type and parallel setting"
	for type in "${KEY_TYPES[@]}"; do
		target=$(probe_build_target "$type")
		for mode in "${BUILD_MODES[@]}"; do
			for p in $(seq 1 "$PAIRS"); do
				order="btree $FBT_AM"
				[ $((p % 2)) -eq 1 ] || order="$FBT_AM btree"
				for am in $order; do
					i=$((i + 1))
					psql_q "CHECKPOINT" || die "CHECKPOINT failed"
					# the DEBUG1 line of index_build() (or of fbtbuild() on
					# 15) tells how many workers the build asked for
					out=$(printf '%s\n' "SET max_parallel_maintenance_workers = ${mode#*:};" \
						'SET client_min_messages = debug1;' '\timing on' \
						"CREATE INDEX bench_build_tmp ON ${target% (*} USING $am (${target#* (};" \
						'\timing off' 'RESET client_min_messages;' \
						"SELECT pg_relation_size('bench_build_tmp');" \
						"DROP INDEX bench_build_tmp;" | as_user psql -X -q -A -t -v ON_ERROR_STOP=1 2>&1) ||
						{ echo "$out" >&2; die "index build failed ($type, $am)"; }
					ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*$/\1/p' <<<"$out" | head -n 1)
					bytes=$(grep -x '[0-9][0-9]*' <<<"$out" | tail -n 1)
					workers=$(sed -n 's/.*building index "bench_build_tmp" on table .* with request for \([0-9]*\) parallel workers.*/\1/p' <<<"$out" | tail -n 1)
					if [ -z "$ms" ] || [ -z "$bytes" ]; then
						echo "$out" >&2
						die "no timing or size from the index build"
					fi
					BUILD_MS[$type:${mode%%:*}:$p:$am]=$ms
					BUILD_BYTES[$type:$am]=$bytes
					BUILD_WORKERS[$type:${mode%%:*}:$am]=${workers:-0}
					printf '%s: [%2d/%d] build %-13s %-7s pair %d/%d  %-9s %10.1f ms %12s bytes, %s workers asked for\n' \
						"$LOG_TAG" "$i" "$n" "$type" "${mode%%:*}" "$p" "$PAIRS" "$am" "$ms" "$bytes" "${workers:-0}"
					printf 'build\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$type" "${mode%%:*}" "$p" "$am" "$ms" "$bytes" "${workers:-0}" >>"$WORK/runs.tsv"
				done
			done
		done
	done
}

# probe_phase: fastbtree_probe() ns/probe for each key type, btree and
# fastbtree with fast_compare off and on, interleaved
probe_phase()
{
	local type config r index keys out i=0 n

	load_data probekeys
	n=$((${#KEY_TYPES[@]} * PAIRS * 3))
	echo
	log "in-server probes: fastbtree_probe() over $PROBE_KEYS keys x $PROBE_LOOPS loops per call, $PAIRS rounds"
	for type in "${KEY_TYPES[@]}"; do
		keys=$(probe_keys_table "$type")
		prewarm "$(probe_index "$type" bt)" "$(probe_index "$type" fbt)" "$keys"
		for config in btree fbt_off fbt_on; do
			psql_q "SET fastbtree.fast_compare = $(config_fast_compare "$config")" \
				"SELECT fastbtree_probe('$(probe_index "$type" "$(config_side "$config")")', (SELECT keys FROM $keys), 1)" \
				>/dev/null || die "fastbtree_probe failed ($type, $config)"
		done
		for r in $(seq 1 "$PAIRS"); do
			for config in btree fbt_off fbt_on; do
				i=$((i + 1))
				index=$(probe_index "$type" "$(config_side "$config")")
				out=$(psql_q "SET fastbtree.fast_compare = $(config_fast_compare "$config")" \
					"SELECT ns_per_probe, found FROM fastbtree_probe('$index', (SELECT keys FROM $keys), $PROBE_LOOPS)") ||
					die "fastbtree_probe failed ($type, $config)"
				PROBE_NS[$type:$r:$config]=${out%%|*}
				PROBE_FOUND[$type:$config]=${out#*|}
				printf '%s: [%2d/%d] probe %-13s round %d/%d  %-28s %9.1f ns/probe\n' \
					"$LOG_TAG" "$i" "$n" "$type" "$r" "$PAIRS" "$(config_label "$config")" "${out%%|*}"
				printf 'probe\t%s\t%s\t%s\t%s\t%s\n' "$type" "$r" "$config" "${out%%|*}" "${out#*|}" >>"$WORK/runs.tsv"
			done
		done
		if [ "${PROBE_FOUND[$type:btree]}" != "${PROBE_FOUND[$type:fbt_on]}" ] ||
			[ "${PROBE_FOUND[$type:btree]}" != "${PROBE_FOUND[$type:fbt_off]}" ]; then
			die "probe $type: btree found ${PROBE_FOUND[$type:btree]} TIDs, fastbtree ${PROBE_FOUND[$type:fbt_off]} (off) ${PROBE_FOUND[$type:fbt_on]} (on)"
		fi
	done
}

# --- report ---------------------------------------------------------------

pretty_bytes()
{
	awk -v b="$1" 'BEGIN { printf "%.1f MB\n", b / 1048576 }'
}

report_header()
{
	echo "# fastbtree benchmark: btree vs $FBT_AM"
	echo
	echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
	echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
	echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores; $(uname -sr)"
	echo "- scale $SCALE: $(nrows) rows per table; $PAIRS pairs of ${DURATION}s runs per client count; clients: $CLIENTS"
	echo "- pgbench -n -M prepared -c CLIENTS -j min(CLIENTS, cores); runs interleaved btree, $FBT_AM, $FBT_AM, btree, btree, ... (odd pairs run btree first, even pairs $FBT_AM)"
	echo "- shared_buffers = $SHARED_BUFFERS; fsync and synchronous_commit off, full_page_writes ${FULL_PAGE_WRITES:-on}; autovacuum, JIT and"
	echo "  parallel query off except in the parallel workload, parallel builds off except in the build benchmark; database locale C.UTF-8"
	echo "- $(wal_mode_label)"
	echo "- A pair is a btree run and a $FBT_AM run made back to back.  btree tps and $FBT_AM tps are the two runs of the"
	echo "  median pair: the pair whose ratio $FBT_AM/btree is the median of the pairs' ratios (with an even number"
	echo "  of pairs, of the two middle ones the one nearer 1); ratio = $FBT_AM tps / btree tps of that pair, so they agree;"
	echo "  ratio min–max = the range of the ratios of all pairs."
	echo "- Noise = the larger over the two indexes of (max − min) / median of one index's repeat runs.  A difference is"
	echo "  \"beyond noise\" when every pair points the same way and the ratio is further from 1 than the noise, else"
	echo "  \"within noise\".  The machine is shared: trust the ratios and their range more than the absolute figures."
}

# workload_table NAME: the markdown table of one workload, and one line
# under it on the run-to-run noise.  Every figure of a row but the WAL
# columns comes from the same runs: the tps columns are the two runs of the
# median pair (the pair whose ratio fastbtree/btree is the median of the
# pairs' ratios, see median_pick), so the ratio column is exactly their
# quotient; min-max is the range of the ratios of all pairs.
workload_table()
{
	local name=$1 c p reset r m noise verdict line=""
	local -a bts fbs ratios wbt wfb

	reset=$(wl_meta "$name" reset)
	if [ -n "$reset" ]; then
		echo "| clients | btree tps | $FBT_AM tps | ratio $FBT_AM/btree | ratio min–max | WAL bytes/txn btree | WAL bytes/txn $FBT_AM |"
		echo "|--:|--:|--:|--:|--:|--:|--:|"
	else
		echo "| clients | btree tps | $FBT_AM tps | ratio $FBT_AM/btree | ratio min–max |"
		echo "|--:|--:|--:|--:|--:|"
	fi
	for c in $CLIENTS; do
		bts=(); fbs=(); ratios=(); wbt=(); wfb=()
		for p in $(seq 1 "$PAIRS"); do
			bts+=("${TPS[$name:$c:$p:bt]}")
			fbs+=("${TPS[$name:$c:$p:fbt]}")
			ratios+=("$(ratio "${TPS[$name:$c:$p:fbt]}" "${TPS[$name:$c:$p:bt]}")")
			wbt+=("$(ratio "${WALB[$name:$c:$p:bt]}" "${TXNS[$name:$c:$p:bt]}")")
			wfb+=("$(ratio "${WALB[$name:$c:$p:fbt]}" "${TXNS[$name:$c:$p:fbt]}")")
		done
		m=$(median_pick "${ratios[@]}")
		r=${ratios[m - 1]}
		RATIO[$name:$c]=$r
		RATIO_MIN[$name:$c]=$(minimum "${ratios[@]}")
		RATIO_MAX[$name:$c]=$(maximum "${ratios[@]}")
		noise=$(maximum "$(rel_spread "${bts[@]}")" "$(rel_spread "${fbs[@]}")")
		verdict=$(noise_verdict "$r" "${RATIO_MIN[$name:$c]}" "${RATIO_MAX[$name:$c]}" "$noise" "$PAIRS")
		VERDICT[$name:$c]=$verdict
		printf '| %s | %.1f | %.1f | %.3f | %.3f–%.3f |' "$c" "${bts[m - 1]}" "${fbs[m - 1]}" \
			"$r" "${RATIO_MIN[$name:$c]}" "${RATIO_MAX[$name:$c]}"
		[ -z "$reset" ] || printf ' %.0f | %.0f |' "$(median "${wbt[@]}")" "$(median "${wfb[@]}")"
		echo
		if [ "$PAIRS" -lt 2 ]; then
			line+="${line:+; }$c client$([ "$c" = 1 ] || echo s): $(tps_difference "$r")"
		else
			line+="${line:+; }$c client$([ "$c" = 1 ] || echo s): noise $(pct "$noise"), $(tps_difference "$r"), $verdict"
		fi
		# the charts show each access method's own runs: median and range
		TPS_MED[$name:$c:bt]=$(median "${bts[@]}")
		TPS_MED[$name:$c:fbt]=$(median "${fbs[@]}")
		TPS_MIN[$name:$c:bt]=$(minimum "${bts[@]}")
		TPS_MIN[$name:$c:fbt]=$(minimum "${fbs[@]}")
		TPS_MAX[$name:$c:bt]=$(maximum "${bts[@]}")
		TPS_MAX[$name:$c:fbt]=$(maximum "${fbs[@]}")
	done
	echo
	if [ "$PAIRS" -lt 2 ]; then
		echo "Difference (one pair: run-to-run noise not measured): $line."
	else
		echo "Run-to-run noise (the larger (max − min) / median of one index's $PAIRS runs) and verdict: $line."
	fi
}

declare -A RATIO=() RATIO_MIN=() RATIO_MAX=() VERDICT=() TPS_MED=() TPS_MIN=() TPS_MAX=()
CHARTS=()
CALLGRIND_ANNOTATE=

report_workloads()
{
	local name c stmt

	for name in "${WORKLOADS[@]}"; do
		workload_heading "$name"
		if [ -n "$(wl_meta "$name" reset)" ]; then
			echo "Before every run the table is rebuilt from its base copy (CREATE TABLE AS, CREATE INDEX, VACUUM ANALYZE, CHECKPOINT, pg_prewarm)."
		fi
		echo
		workload_table "$name"
	done
}

# summary of ratios, one row per workload
report_summary()
{
	local name c

	echo
	echo "## Summary: throughput ratio $FBT_AM/btree (median pair; above 1 means $FBT_AM is faster)"
	echo
	echo "In parentheses the range over all pairs; in bold the ratios beyond noise (see each workload's table)."
	echo
	printf '| workload |'
	for c in $CLIENTS; do printf ' %s client%s |' "$c" "$([ "$c" = 1 ] || echo s)"; done
	echo
	printf '|---|'
	for c in $CLIENTS; do printf -- '--:|'; done
	echo
	for name in "${WORKLOADS[@]}"; do
		printf '| %s |' "$name"
		for c in $CLIENTS; do
			if [ "${VERDICT[$name:$c]}" = "beyond noise" ]; then
				printf ' **%.3f** (%.2f–%.2f) |' "${RATIO[$name:$c]}" "${RATIO_MIN[$name:$c]}" "${RATIO_MAX[$name:$c]}"
			else
				printf ' %.3f (%.2f–%.2f) |' "${RATIO[$name:$c]}" "${RATIO_MIN[$name:$c]}" "${RATIO_MAX[$name:$c]}"
			fi
		done
		echo
	done
}

report_builds()
{
	local type p m noise mode

	echo
	echo "## Index build: CREATE INDEX time and size"
	echo
	echo "Each key type is indexed on the same table (the btree copy) by each access method in turn,"
	echo "$PAIRS pairs (btree first in odd pairs, $FBT_AM first in even ones), with a CHECKPOINT before each"
	echo "build; maintenance_work_mem = 512MB.  Parallel setting"
	echo "\"default\" is PostgreSQL's max_parallel_maintenance_workers = 2, \"serial\" is 0; workers is the"
	echo "count each build asked for (btree/$FBT_AM; a worker may fail to start on a busy machine)."
	echo "The two times are those of the median pair (the pair whose time ratio is the median of the pairs'),"
	echo "the time ratio is their quotient, min–max the range over all pairs; noise and verdict as for pgbench."
	echo "Time ratio below 1 means $FBT_AM builds faster."
	echo
	echo "| key type | table (columns) | parallel | workers | btree ms | $FBT_AM ms | time ratio $FBT_AM/btree | min–max | noise | verdict | btree size | $FBT_AM size | size ratio |"
	echo "|---|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|"
	for type in "${KEY_TYPES[@]}"; do
		for mode in "${BUILD_MODES[@]}"; do
			mode=${mode%%:*}
			local -a bts=() fbs=() ratios=()
			for p in $(seq 1 "$PAIRS"); do
				bts+=("${BUILD_MS[$type:$mode:$p:btree]}")
				fbs+=("${BUILD_MS[$type:$mode:$p:$FBT_AM]}")
				ratios+=("$(ratio "${BUILD_MS[$type:$mode:$p:$FBT_AM]}" "${BUILD_MS[$type:$mode:$p:btree]}")")
			done
			m=$(median_pick "${ratios[@]}")
			noise=$(maximum "$(rel_spread "${bts[@]}")" "$(rel_spread "${fbs[@]}")")
			printf '| %s | %s | %s | %s/%s | %.0f | %.0f | %.3f | %.3f–%.3f | %s | %s | %s | %s | %.3f |\n' "$(type_label "$type")" \
				"$(probe_build_target "$type")" "$mode" "${BUILD_WORKERS[$type:$mode:btree]}" "${BUILD_WORKERS[$type:$mode:$FBT_AM]}" \
				"${bts[m - 1]}" "${fbs[m - 1]}" \
				"${ratios[m - 1]}" "$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")" "$(pct "$noise")" \
				"$(noise_verdict "${ratios[m - 1]}" "$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")" "$noise" "$PAIRS")" \
				"$(pretty_bytes "${BUILD_BYTES[$type:btree]}")" "$(pretty_bytes "${BUILD_BYTES[$type:$FBT_AM]}")" \
				"$(ratio "${BUILD_BYTES[$type:$FBT_AM]}" "${BUILD_BYTES[$type:btree]}")"
		done
	done
}

report_probes()
{
	local type r m noise

	echo
	echo "## In-server probes: fastbtree_probe() ns per probe"
	echo
	echo "Index probes through index_rescan/index_getnext_tid without parser, planner or executor (the heap"
	echo "is not visited): $PROBE_KEYS random existing keys in random order, $PROBE_LOOPS loops per call, $PAIRS rounds of"
	echo "btree, fastbtree with fastbtree.fast_compare off, and on.  Wall-clock time, so machine noise shows;"
	echo "ratios below 1 mean $FBT_AM is faster.  Both access methods found the same number of TIDs."
	echo "The three ns columns and both ratios come from the median round (the round whose on/btree ratio is"
	echo "the median of the rounds'); min–max is the range of on/btree over all rounds; noise = the largest"
	echo "(max − min) / median of one configuration's rounds; the verdict is on/btree's, as for pgbench."
	echo
	echo "| key type | btree ns | fbt (off) ns | fbt (on) ns | on/btree | on/btree min–max | off/btree | noise | verdict |"
	echo "|---|--:|--:|--:|--:|--:|--:|--:|---|"
	for type in "${KEY_TYPES[@]}"; do
		local -a b=() f0=() f1=() on=() off=()
		for r in $(seq 1 "$PAIRS"); do
			b+=("${PROBE_NS[$type:$r:btree]}")
			f0+=("${PROBE_NS[$type:$r:fbt_off]}")
			f1+=("${PROBE_NS[$type:$r:fbt_on]}")
			on+=("$(ratio "${PROBE_NS[$type:$r:fbt_on]}" "${PROBE_NS[$type:$r:btree]}")")
			off+=("$(ratio "${PROBE_NS[$type:$r:fbt_off]}" "${PROBE_NS[$type:$r:btree]}")")
		done
		m=$(median_pick "${on[@]}")
		noise=$(maximum "$(rel_spread "${b[@]}")" "$(rel_spread "${f0[@]}")" "$(rel_spread "${f1[@]}")")
		printf '| %s | %.0f | %.0f | %.0f | %.3f | %.3f–%.3f | %.3f | %s | %s |\n' "$(type_label "$type")" \
			"${b[m - 1]}" "${f0[m - 1]}" "${f1[m - 1]}" \
			"${on[m - 1]}" "$(minimum "${on[@]}")" "$(maximum "${on[@]}")" "${off[m - 1]}" "$(pct "$noise")" \
			"$(noise_verdict "${on[m - 1]}" "$(minimum "${on[@]}")" "$(maximum "${on[@]}")" "$noise" "$PAIRS")"
		# the chart shows each configuration's median
		printf '%s\t%s\t%s\t%s\n' "$type" "$(median "${b[@]}")" "$(median "${f0[@]}")" "$(median "${f1[@]}")" \
			>>"$WORK/probe.tsv"
	done
}

report_sizes()
{
	echo
	echo "## Relation sizes"
	echo
	echo "Tables of the read workloads and of the probe and build benchmarks (write workloads rebuild theirs)."
	echo
	echo "| relation | access method | size |"
	echo "|---|---|--:|"
	psql_q "SELECT format('| %s | %s | %s |', c.relname, coalesce(a.amname, 'heap'), pg_size_pretty(pg_relation_size(c.oid)))
		FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam AND c.relkind = 'i'
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
			AND c.relname !~ '^(pgbench_(branches|tellers|history)|pk_|word_list|ins_|mixed_)'
		ORDER BY c.relname" || die "size query failed"
}

# --- charts -------------------------------------------------------------

# write_charts STEM: PNG charts next to the results file, with gnuplot
write_charts()
{
	local stem=$1 name c names="" clients_list="" dat

	ensure_packages "charts" gnuplot-nox
	dat="$WORK/charts"
	mkdir -p "$dat"
	: >"$dat/tps.dat"
	: >"$dat/ratio.dat"
	for name in "${WORKLOADS[@]}"; do
		names+="${names:+ }$name"
		{
			echo "# clients btree min max fastbtree min max ($name)"
			for c in $CLIENTS; do
				echo "$c ${TPS_MED[$name:$c:bt]} ${TPS_MIN[$name:$c:bt]} ${TPS_MAX[$name:$c:bt]} ${TPS_MED[$name:$c:fbt]} ${TPS_MIN[$name:$c:fbt]} ${TPS_MAX[$name:$c:fbt]}"
			done
			printf '\n\n'
		} >>"$dat/tps.dat"
		{
			printf '%s' "$name"
			for c in $CLIENTS; do
				printf ' %s %s %s' "${RATIO[$name:$c]}" "${RATIO_MIN[$name:$c]}" "${RATIO_MAX[$name:$c]}"
			done
			echo
		} >>"$dat/ratio.dat"
	done
	clients_list=$CLIENTS
	CHARTS=()
	if [ "${#WORKLOADS[@]}" -gt 0 ]; then
		draw_chart "$stem-tps.png" tps "$names" "$clients_list"
		draw_chart "$stem-ratio.png" ratio "$names" "$clients_list"
	fi
	if [ -s "$WORK/probe.tsv" ] || [ -s "$WORK/callgrind.tsv" ]; then
		cp "$WORK/probe.tsv" "$dat/probe.dat" 2>/dev/null || : >"$dat/probe.dat"
		cp "$WORK/callgrind.tsv" "$dat/callgrind.dat" 2>/dev/null || : >"$dat/callgrind.dat"
		draw_chart "$stem-probe.png" probe "" ""
	fi
}

# draw_chart PNG KIND NAMES CLIENTS: run charts.gp; a failure only warns
draw_chart()
{
	if gnuplot -e "datadir='$WORK/charts'; out='$1'; chart='$2'; names='$3'; clients='$4'" \
		"$BENCH_DIR/charts.gp" 2>"$WORK/charts/gnuplot.log"; then
		CHARTS+=("$1")
	else
		warn "gnuplot failed for the $2 chart: $(cat "$WORK/charts/gnuplot.log")"
	fi
}

main()
{
	local name started stem report md

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	[ "$SAVE" = no ] || { mkdir -p "$RESULTS_DIR" && [ -w "$RESULTS_DIR" ]; } ||
		die "cannot write to $RESULTS_DIR"
	[ "$SAVE" = no ] || RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
	build_extension
	setup_cluster
	load_data accounts

	RUN_TOTAL=$((${#WORKLOADS[@]} * $(wc -w <<<"$CLIENTS") * PAIRS * 2))
	log "plan: ${#WORKLOADS[@]} pgbench workload(s) (${WORKLOADS[*]:-none}), $RUN_TOTAL runs of ${DURATION}s$(
		[ "$DO_BUILD" = no ] || echo ", index builds")$([ "$DO_PROBE" = no ] || echo ", in-server probes")$(
		[ "$DO_CALLGRIND" = no ] || echo ", callgrind")"
	for name in "${WORKLOADS[@]}"; do
		run_workload "$name"
	done
	[ "$DO_BUILD" = no ] || build_phase
	[ "$DO_PROBE" = no ] || probe_phase

	report="$WORK/report.md"
	# the workload tables compute the ratios that the summary shows first
	report_workloads >"$WORK/workloads.md"
	{
		report_header
		[ "${#WORKLOADS[@]}" -eq 0 ] || report_summary
		[ "$SAVE" = no ] || echo "CHARTS_PLACEHOLDER"
		if [ "${#WORKLOADS[@]}" -gt 0 ]; then
			echo
			echo "## pgbench workloads"
			cat "$WORK/workloads.md"
		fi
		[ "$DO_BUILD" = no ] || report_builds
		[ "$DO_PROBE" = no ] || report_probes
		report_sizes
	} >"$report"

	if [ "$DO_CALLGRIND" = yes ]; then
		stem=$(results_stem "$RESULTS_DIR" "")
		CALLGRIND_ANNOTATE="$stem-callgrind-int4-$FBT_AM.txt"
		echo
		callgrind_phase "$WORK/callgrind.md" "$CALLGRIND_ANNOTATE"
		callgrind_section "$WORK/callgrind.md" "$CALLGRIND_ANNOTATE" >>"$report"
	fi

	{
		echo
		echo "Total time: $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s."
	} >>"$report"

	if [ "$SAVE" = no ]; then
		echo
		cat "$report"
		return 0
	fi
	stem=${stem:-$(results_stem "$RESULTS_DIR" "")}
	cp "$WORK/runs.tsv" "$stem.tsv" 2>/dev/null || : >"$stem.tsv"
	write_charts "$stem"
	md="$stem.md"
	{
		local line png
		while IFS= read -r line; do
			if [ "$line" = CHARTS_PLACEHOLDER ]; then
				if [ "${#CHARTS[@]}" -gt 0 ]; then
					echo
					for png in "${CHARTS[@]}"; do
						echo "![$(basename "$png" .png)]($(basename "$png"))"
					done
				fi
				echo
				echo "Raw runs (one line per run): [$(basename "$stem.tsv")]($(basename "$stem.tsv"))"
			else
				printf '%s\n' "$line"
			fi
		done <"$report"
	} >"$md"
	echo
	cat "$md"
	echo
	log "results: $md"
	for png in "${CHARTS[@]}"; do
		log "chart:   $png"
	done
	[ "$DO_CALLGRIND" = no ] || log "callgrind_annotate: $CALLGRIND_ANNOTATE"
}

main "$@"
