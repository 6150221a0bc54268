#!/usr/bin/env bash
#
# bench/interleave.sh
#	btree against fastbtree in many short runs that take turns, one side
#	at a time: the ratio of their throughputs summed over each round.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh.  Like
# bench/run.sh (and with its helpers, bench/lib.sh) it builds the extension
# into a private directory, starts a throwaway cluster, sets up the named
# workloads of bench/workloads/ (default: insert_random and insert_asc),
# checks their plans with EXPLAIN, and warms both sides up.
#
# Why: on a shared machine the speed of back-to-back 10-second runs drifts
# by 10-50% (bench/run.sh's noise line), so separate runs cannot resolve a
# difference of a few percent.  Here a round is --slices pairs of pgbench
# runs of --slice seconds each (default 20 pairs of 1 s), the two sides
# taking turns (A B B A A B ...), so that drift slower than a second or
# two hits both sides alike and averages out over the round.  Each run is
# one side alone, as in bench/run.sh: every transaction follows one of its
# own kind, except the first ones of each run, on both sides alike.  (Mixing
# both sides' transactions at random in one run, which an earlier version
# of this script did, is not the same: a transaction that follows some of
# the other side's takes longer, 10-15% after nine of them in trials, and
# the two sides need not pay that alike.)
#
# Per round: each side's throughput = its transactions / its time, summed
# over its runs (time = transactions / pgbench's tps without the initial
# connection time), and their ratio fastbtree / btree.  Write workloads
# rebuild both sides' tables before each round (bench/run.sh's reset,
# ending with a checkpoint; the order alternates from round to round), so
# each round starts from the same trees; within a round both tables grow.
# Reported per workload and client count: the throughputs of the median
# round (the round whose ratio is the median of the rounds' ratios), that
# ratio, its range, the mean of the rounds' ratios with its standard
# error, and each round's ratio in the order they ran.  WAL per
# transaction: bench/run.sh.
#
# Writes bench/results/DATE-HOST-interleave.md and the raw runs (.tsv).

set -uo pipefail
export LC_ALL=C

LOG_TAG=interleave
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CLIENTS="1 2"
SLICE=1
SLICES=20
ROUNDS=6
WORKLOADS=(insert_random insert_asc)
RESULTS_DIR="$BENCH_DIR/results"
COMMAND_LINE="bash bench/interleave.sh${*:+ $*}"

usage()
{
	cat <<-EOF
	Usage: bash bench/interleave.sh [options]

	btree against fastbtree in many short pgbench runs that take turns,
	one side at a time; throughput ratio per round.  Run as root.

	Options:
	  --workloads "W ..."  workloads of bench/workloads/; default "${WORKLOADS[*]}"
	  --clients "A B"   client counts; default "$CLIENTS"
	  --slice S         seconds per run; default $SLICE
	  --slices N        runs of each side per round; default $SLICES
	  --rounds R        rounds per workload and client count; default $ROUNDS
	  --scale N         every table has 100000 * N rows; default $SCALE
	  --shared-buffers SIZE  server shared_buffers; default $SHARED_BUFFERS
	  --results-dir DIR where to save the results; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --keep            keep the cluster running and its directory
	  --help            show this help

	Takes about workloads x client counts x rounds x (2 x slices x (slice
	+ 0.1 s) + the table rebuild of write workloads) plus a minute of
	set-up: with the defaults on 2 cores about 2 x 2 x 6 x 57 s + 1 min =
	24 minutes.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--workloads|--clients|--slice|--slices|--rounds|--scale|--shared-buffers|--results-dir|--pg|--wal-mode)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--workloads=*) read -r -a WORKLOADS <<<"${1#*=}" ;;
			--clients=*) CLIENTS=${1#*=} ;;
			--slice=*) SLICE=${1#*=} ;;
			--slices=*) SLICES=${1#*=} ;;
			--rounds=*) ROUNDS=${1#*=} ;;
			--scale=*) SCALE=${1#*=} ;;
			--shared-buffers=*) SHARED_BUFFERS=${1#*=} ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	is_posint "$SLICE" || die "--slice must be a positive integer, got '$SLICE'"
	is_posint "$SLICES" || die "--slices must be a positive integer, got '$SLICES'"
	is_posint "$ROUNDS" || die "--rounds must be a positive integer, got '$ROUNDS'"
	[ "$ROUNDS" -ge 3 ] || warn "--rounds $ROUNDS: with fewer than 3 rounds a median is no better than a single round"
	check_scale_buffers
	[ "${#WORKLOADS[@]}" -gt 0 ] || die "--workloads must name at least one workload"
	local w
	for w in "${WORKLOADS[@]}"; do
		[ -f "$BENCH_DIR/workloads/$w.sql" ] || die "no workload bench/workloads/$w.sql"
	done
	check_clients "$CLIENTS"
}

declare -A TXNS=() SECS=() R_TPS=() R_TXNS=()
RUN_NO=0
RUN_TOTAL=0

# interleave_round NAME CLIENTS ROUND: one round (SLICES runs of each side,
# taking turns: A B B A ..., btree first in odd rounds); sets TXNS[SIDE]
# and SECS[SIDE], each side's transactions and their time (seconds, from
# pgbench's tps without the initial connection time) summed over its runs
interleave_round()
{
	local name=$1 c=$2 r=$3 i side order

	TXNS[bt]=0; TXNS[fbt]=0; SECS[bt]=0; SECS[fbt]=0
	for i in $(seq 1 "$SLICES"); do
		if [ $(((i + r) % 2)) -eq 0 ]; then order="bt fbt"; else order="fbt bt"; fi
		for side in $order; do
			run_pgbench "${WL_SCRIPT[$side]}" "$c" "$SLICE"
			TXNS[$side]=$((TXNS[$side] + RUN_TXNS))
			SECS[$side]=$(awk -v s="${SECS[$side]}" -v n="$RUN_TXNS" -v t="$RUN_TPS" 'BEGIN { printf "%.6f\n", s + n / t }')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$r" "$i" "$(side_am "$side")" "$RUN_TPS" "$RUN_TXNS" >>"$WORK/runs.tsv"
		done
	done
}

# interleave_workload NAME: set it up and run every round of every client
# count; write workloads rebuild btree's table first in odd rounds,
# fastbtree's in even rounds
interleave_workload()
{
	local name=$1 reset c r side

	workload_setup "$name"
	reset=$WL_RESET
	for c in $CLIENTS; do
		for r in $(seq 1 "$ROUNDS"); do
			if [ -n "$reset" ] && [ $((r % 2)) -eq 1 ]; then
				reset_data "$reset" bt
				reset_data "$reset" fbt
			elif [ -n "$reset" ]; then
				reset_data "$reset" fbt
				reset_data "$reset" bt
			fi
			RUN_NO=$((RUN_NO + 1))
			interleave_round "$name" "$c" "$r"
			for side in bt fbt; do
				R_TXNS[$name:$c:$r:$side]=${TXNS[$side]}
				R_TPS[$name:$c:$r:$side]=$(ratio "${TXNS[$side]}" "${SECS[$side]}")
			done
			printf '%s: [%3d/%d] %-13s clients=%-3s round %d/%d  btree %9.1f tps  %s %9.1f tps  ratio %.4f\n' \
				"$LOG_TAG" "$RUN_NO" "$RUN_TOTAL" "$name" "$c" "$r" "$ROUNDS" \
				"${R_TPS[$name:$c:$r:bt]}" "$FBT_AM" "${R_TPS[$name:$c:$r:fbt]}" \
				"$(ratio "${R_TPS[$name:$c:$r:fbt]}" "${R_TPS[$name:$c:$r:bt]}")"
		done
	done
	BENCH_PGOPTIONS=
}

# rounds_verdict MIN MAX: how the rounds agree
rounds_verdict()
{
	awk -v lo="$1" -v hi="$2" 'BEGIN {
		if (lo > 1) print "faster in every round"
		else if (hi < 1) print "slower in every round"
		else print "rounds on both sides of 1"
	}'
}

# interleave_tables: per workload, a row per client count
interleave_tables()
{
	local name c r m each
	local -a ratios

	for name in "${WORKLOADS[@]}"; do
		workload_heading "$name"
		[ -z "$(wl_meta "$name" reset)" ] ||
			echo "Before every round both tables are rebuilt from their base copy (ending with a CHECKPOINT)."
		echo
		echo "| clients | btree tps | $FBT_AM tps | ratio $FBT_AM/btree | ratio min–max | rounds | mean of the rounds' ratios ± standard error | transactions btree / $FBT_AM | each round in the order run |"
		echo "|--:|--:|--:|--:|--:|---|--:|--:|---|"
		for c in $CLIENTS; do
			ratios=()
			each=
			for r in $(seq 1 "$ROUNDS"); do
				ratios+=("$(ratio "${R_TPS[$name:$c:$r:fbt]}" "${R_TPS[$name:$c:$r:bt]}")")
				each+="${each:+, }$(printf '%.4f' "${ratios[r - 1]}")"
			done
			m=$(median_pick "${ratios[@]}")
			printf '| %s | %.1f | %.1f | %.4f | %.4f–%.4f | %s | %s | %s / %s | %s |\n' "$c" \
				"${R_TPS[$name:$c:$m:bt]}" "${R_TPS[$name:$c:$m:fbt]}" "${ratios[m - 1]}" \
				"$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")" \
				"$(rounds_verdict "$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")")" \
				"$(mean_se "${ratios[@]}")" \
				"${R_TXNS[$name:$c:$m:bt]}" "${R_TXNS[$name:$c:$m:fbt]}" "$each"
		done
	done
}


report_header()
{
	echo "# fastbtree interleaved benchmark: btree and $FBT_AM in short runs taking turns"
	echo
	echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
	echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
	echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores; $(uname -sr)"
	echo "- scale $SCALE: $(nrows) rows per table; clients: $CLIENTS; $ROUNDS rounds of $SLICES runs of each side, ${SLICE}s each"
	echo "- pgbench -n -M prepared -c CLIENTS -j min(CLIENTS, cores) -T $SLICE per run, one side at a time, the sides"
	echo "  taking turns (A B B A ...; btree first in odd rounds); shared_buffers = $SHARED_BUFFERS; settings as bench/run.sh"
	echo "- $(wal_mode_label)"
	echo "- tps = a side's transactions / their time (transactions / pgbench's tps without the initial connection"
	echo "  time), summed over its runs of the round, in the median round (the round whose ratio is the median of"
	echo "  the rounds' ratios); ratio = $FBT_AM tps / btree tps, above 1 when $FBT_AM is faster.  Drift slower"
	echo "  than the runs hits both sides alike.  WAL per transaction: bench/run.sh."
}

main()
{
	local name started stem md

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	prepare_results_dir
	build_extension
	setup_cluster
	load_data accounts

	RUN_TOTAL=$((${#WORKLOADS[@]} * $(wc -w <<<"$CLIENTS") * ROUNDS))
	log "plan: workloads ${WORKLOADS[*]}, clients $CLIENTS, $RUN_TOTAL rounds of $SLICES runs of each side, ${SLICE}s each"
	for name in "${WORKLOADS[@]}"; do
		interleave_workload "$name"
	done

	stem=$(results_stem "$RESULTS_DIR" -interleave)
	md="$stem.md"
	{
		printf 'workload\tclients\tround\trun\taccess_method\ttps\ttransactions\n'
		cat "$WORK/runs.tsv"
	} >"$stem.tsv"
	{
		report_header
		echo
		echo "## Workloads"
		interleave_tables
		echo
		echo "Raw runs: [$(basename "$stem.tsv")]($(basename "$stem.tsv"))"
		echo
		total_time "$started"
	} >"$md"
	show_results "$md"
}

main "$@"
