#!/usr/bin/env bash
#
# bench/interleave.sh
#	btree against fastbtree in the same pgbench runs: each run executes
#	both sides' scripts, every transaction picking one of the two at
#	random, and the ratio comes from each side's mean transaction latency
#	in that run.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh.  Like
# bench/run.sh (and with its helpers, bench/lib.sh) it builds the extension
# into a private directory, starts a throwaway cluster, sets up the named
# workloads of bench/workloads/ (default: insert_random and insert_asc),
# checks their plans with EXPLAIN, and warms both sides up.
#
# Why: on a shared machine the speed of back-to-back runs drifts by 10-50%
# (bench/run.sh's noise line), so separate runs cannot resolve a difference
# of a few percent.  Here both sides run at the same moments, on the same
# connections, in random order (pgbench -f A@1 -f B@1), so whatever slows
# the machine slows both alike, and the ratio of their mean latencies is
# steady to within about 1% from round to round.  pgbench's per-transaction
# log (-l) gives each transaction's latency in microseconds and which
# script it ran.
#
# A round is one run of --duration seconds per client count; write
# workloads rebuild both sides' tables first (bench/run.sh's reset, which
# ends with a checkpoint), the order of the two scripts and of the two
# rebuilds alternating from round to round.  Reported per workload and
# client count: the mean latency of each side in the median round (the
# round whose ratio is the median of the rounds' ratios), that ratio
# (btree's mean latency / fastbtree's: fastbtree's speed relative to
# btree's, above 1 when fastbtree is faster), its range over the rounds,
# and the transactions each side ran.  WAL per transaction cannot be told
# apart in a shared run; bench/run.sh measures it.
#
# What it does not show: both sides share one backend's CPU caches, so an
# effect one side's code has on its own cache residency when it runs alone
# is spread over both here.  bench/run.sh's separate runs include it, with
# their noise.
#
# Writes bench/results/DATE-HOST-interleave.md and the raw rounds (.tsv).

set -uo pipefail
export LC_ALL=C

LOG_TAG=interleave
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CLIENTS="1 2"
DURATION=20
ROUNDS=6
WORKLOADS=(insert_random insert_asc)
RESULTS_DIR="$BENCH_DIR/results"
COMMAND_LINE="bash bench/interleave.sh${*:+ $*}"

usage()
{
	cat <<-EOF
	Usage: bash bench/interleave.sh [options]

	btree against fastbtree in the same pgbench runs (transactions of both
	sides mixed at random), compared by mean transaction latency.  Run as
	root.

	Options:
	  --workloads "W ..."  workloads of bench/workloads/; default "${WORKLOADS[*]}"
	  --clients "A B"   client counts; default "$CLIENTS"
	  --duration S      seconds per run; default $DURATION
	  --rounds R        runs per workload and client count; default $ROUNDS
	  --scale N         every table has 100000 * N rows; default $SCALE
	  --shared-buffers SIZE  server shared_buffers; default $SHARED_BUFFERS
	  --results-dir DIR where to save the results; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --keep            keep the cluster running and its directory
	  --help            show this help

	Takes about workloads x client counts x rounds x (duration + the
	table rebuild of write workloads) plus 2 minutes of set-up: with the
	defaults on 2 cores about 2 x 2 x 6 x 25 s = 10 minutes.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--workloads|--clients|--duration|--rounds|--scale|--shared-buffers|--results-dir|--pg|--wal-mode)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--workloads=*) read -r -a WORKLOADS <<<"${1#*=}" ;;
			--clients=*) CLIENTS=${1#*=} ;;
			--duration=*) DURATION=${1#*=} ;;
			--rounds=*) ROUNDS=${1#*=} ;;
			--scale=*) SCALE=${1#*=} ;;
			--shared-buffers=*) SHARED_BUFFERS=${1#*=} ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	is_posint "$DURATION" || die "--duration must be a positive integer, got '$DURATION'"
	is_posint "$ROUNDS" || die "--rounds must be a positive integer, got '$ROUNDS'"
	[ "$ROUNDS" -ge 3 ] || warn "--rounds $ROUNDS: with fewer than 3 rounds a median is no better than a single run"
	is_posint "$SCALE" || die "--scale must be a positive integer, got '$SCALE'"
	[[ "$SHARED_BUFFERS" =~ ^[1-9][0-9]*(kB|MB|GB|TB)$ ]] ||
		die "--shared-buffers must look like 2GB or 512MB, got '$SHARED_BUFFERS'"
	[ "${#WORKLOADS[@]}" -gt 0 ] || die "--workloads must name at least one workload"
	local w c
	for w in "${WORKLOADS[@]}"; do
		[ -f "$BENCH_DIR/workloads/$w.sql" ] || die "no workload bench/workloads/$w.sql"
	done
	[ -n "${CLIENTS// /}" ] || die "--clients must list at least one client count"
	for c in $CLIENTS; do
		is_posint "$c" || die "--clients must be positive integers, got '$c'"
		[ "$c" -le 1000 ] || die "at most 1000 clients"
		[ $((c + 10)) -le "$MAX_CONNECTIONS" ] || MAX_CONNECTIONS=$((c + 10))
	done
}

# run_interleaved SCRIPT1 SIDE1 SCRIPT2 SIDE2 CLIENTS SECONDS: one pgbench
# run of both scripts, each transaction choosing one at random (equal
# weights); sets LAT[SIDE] (mean transaction latency, microseconds) and
# N[SIDE] (transactions) for both sides from the transaction log
run_interleaved()
{
	local s1=$1 side1=$2 s2=$3 side2=$4 clients=$5 seconds=$6 out rc threads logdir stats

	threads=$clients
	[ "$threads" -le "$(nproc)" ] || threads=$(nproc)
	logdir="$WORK/txlog"
	rm -rf "$logdir" && mkdir -p "$logdir" && chown "$BENCH_USER:" "$logdir" ||
		die "cannot create $logdir"
	out=$(as_user pgbench -n -M prepared -c "$clients" -j "$threads" -T "$seconds" \
		-s "$SCALE" -D nrows="$(nrows)" -D ntext="$TEXT_KEYS" \
		-l --log-prefix="$logdir/tx" -f "$s1@1" -f "$s2@1" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$out" >&2
		die "pgbench exited with status $rc ($(basename "$s1") + $(basename "$s2"), $clients clients)"
	fi
	if ! grep -q '^number of failed transactions: 0 ' <<<"$out"; then
		echo "$out" >&2
		die "pgbench reported failed transactions ($(basename "$s1") + $(basename "$s2"), $clients clients)"
	fi
	# log line: client_id transaction_no time(us) script_no time_epoch time_us ...
	stats=$(cat "$logdir"/tx.* | awk '
		NF >= 4 { n[$4]++; sum[$4] += $3 }
		END {
			if (n[0] == 0 || n[1] == 0) exit 1
			printf "%.3f %d %.3f %d\n", sum[0] / n[0], n[0], sum[1] / n[1], n[1]
		}') || die "pgbench's transaction log lacks one of the two scripts ($clients clients)"
	read -r "LAT[$side1]" "N[$side1]" "LAT[$side2]" "N[$side2]" <<<"$stats"
	rm -rf "$logdir"
}

declare -A LAT=() N=() R_LAT=() R_N=()
RUN_NO=0
RUN_TOTAL=0

# interleave_workload NAME: set it up and run every round of every client
# count; odd rounds list btree's script first and rebuild its table first
interleave_workload()
{
	local name=$1 reset c r first second

	workload_setup "$name"
	reset=$WL_RESET
	for c in $CLIENTS; do
		for r in $(seq 1 "$ROUNDS"); do
			first=bt; second=fbt
			[ $((r % 2)) -eq 1 ] || { first=fbt; second=bt; }
			if [ -n "$reset" ]; then
				reset_data "$reset" "$first"
				reset_data "$reset" "$second"
			fi
			RUN_NO=$((RUN_NO + 1))
			run_interleaved "${WL_SCRIPT[$first]}" "$first" "${WL_SCRIPT[$second]}" "$second" "$c" "$DURATION"
			R_LAT[$name:$c:$r:bt]=${LAT[bt]}
			R_LAT[$name:$c:$r:fbt]=${LAT[fbt]}
			R_N[$name:$c:$r:bt]=${N[bt]}
			R_N[$name:$c:$r:fbt]=${N[fbt]}
			printf '%s: [%3d/%d] %-13s clients=%-3s round %d/%d  btree %8.1f us (%d txns)  %s %8.1f us (%d txns)  ratio %.4f\n' \
				"$LOG_TAG" "$RUN_NO" "$RUN_TOTAL" "$name" "$c" "$r" "$ROUNDS" \
				"${LAT[bt]}" "${N[bt]}" "$FBT_AM" "${LAT[fbt]}" "${N[fbt]}" "$(ratio "${LAT[bt]}" "${LAT[fbt]}")"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$r" \
				"${LAT[bt]}" "${N[bt]}" "${LAT[fbt]}" "${N[fbt]}" >>"$WORK/rounds.tsv"
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
	local name c r m
	local -a ratios

	for name in "${WORKLOADS[@]}"; do
		echo
		echo "### $name: $(wl_meta "$name" title)"
		echo
		echo "btree side (the $FBT_AM side uses the copies with _fbt names):"
		echo
		echo '```sql'
		statements "${WL_SCRIPT_BT[$name]}"
		echo '```'
		echo
		echo "Plans checked with EXPLAIN, btree: ${PLAN_SUMMARY[$name:bt]}; $FBT_AM: ${PLAN_SUMMARY[$name:fbt]}."
		[ -z "$(wl_meta "$name" gucs)" ] || echo "Session settings: \`$(wl_meta "$name" gucs)\`."
		[ -z "$(wl_meta "$name" reset)" ] ||
			echo "Before every round both tables are rebuilt from their base copy (ending with a CHECKPOINT)."
		echo
		echo "| clients | btree mean latency (µs) | $FBT_AM mean latency (µs) | ratio btree/$FBT_AM | ratio min–max | transactions btree / $FBT_AM | rounds |"
		echo "|--:|--:|--:|--:|--:|--:|---|"
		for c in $CLIENTS; do
			ratios=()
			for r in $(seq 1 "$ROUNDS"); do
				ratios+=("$(ratio "${R_LAT[$name:$c:$r:bt]}" "${R_LAT[$name:$c:$r:fbt]}")")
			done
			m=$(median_pick "${ratios[@]}")
			printf '| %s | %.1f | %.1f | %.4f | %.4f–%.4f | %s / %s | %s |\n' "$c" \
				"${R_LAT[$name:$c:$m:bt]}" "${R_LAT[$name:$c:$m:fbt]}" "${ratios[m - 1]}" \
				"$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")" \
				"${R_N[$name:$c:$m:bt]}" "${R_N[$name:$c:$m:fbt]}" \
				"$(rounds_verdict "$(minimum "${ratios[@]}")" "$(maximum "${ratios[@]}")")"
		done
	done
}

declare -A WL_SCRIPT_BT=()

report_header()
{
	echo "# fastbtree interleaved benchmark: btree and $FBT_AM transactions in the same runs"
	echo
	echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
	echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
	echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores; $(uname -sr)"
	echo "- scale $SCALE: $(nrows) rows per table; clients: $CLIENTS; $ROUNDS rounds of ${DURATION}s runs"
	echo "- pgbench -n -M prepared -c CLIENTS -j min(CLIENTS, cores) -l -f BTREE_SCRIPT@1 -f FASTBTREE_SCRIPT@1 (odd rounds"
	echo "  list btree's first, even rounds $FBT_AM's); shared_buffers = $SHARED_BUFFERS; settings as bench/run.sh"
	echo "- $(wal_mode_label)"
	echo "- Mean latency = mean of each side's transaction times in pgbench's transaction log, in the median round"
	echo "  (the round whose ratio is the median of the rounds' ratios); ratio = btree's mean latency / $FBT_AM's,"
	echo "  which is $FBT_AM's throughput relative to btree's: above 1 means $FBT_AM is faster.  Both sides run"
	echo "  at the same moments on the same connections, so the machine's drift cancels; both also share one"
	echo "  backend's CPU caches (see bench/interleave.sh).  WAL per transaction: bench/run.sh."
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
	log "plan: workloads ${WORKLOADS[*]}, clients $CLIENTS, $RUN_TOTAL interleaved runs of ${DURATION}s"
	for name in "${WORKLOADS[@]}"; do
		interleave_workload "$name"
		WL_SCRIPT_BT[$name]=${WL_SCRIPT[bt]}
	done

	stem=$(results_stem "$RESULTS_DIR" -interleave)
	md="$stem.md"
	{
		printf 'workload\tclients\tround\tbtree_mean_us\tbtree_txns\tfastbtree_mean_us\tfastbtree_txns\n'
		cat "$WORK/rounds.tsv"
	} >"$stem.tsv"
	{
		report_header
		echo
		echo "## Workloads"
		interleave_tables
		echo
		echo "Raw rounds: [$(basename "$stem.tsv")]($(basename "$stem.tsv"))"
		echo
		total_time "$started"
	} >"$md"
	show_results "$md"
}

main "$@"
