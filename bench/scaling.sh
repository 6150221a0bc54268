#!/usr/bin/env bash
#
# bench/scaling.sh
#	Throughput against the number of clients: btree and fastbtree with
#	each of its switches (issue 9), on the same data in one throwaway
#	cluster.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh.  Like
# bench/run.sh (and with its helpers, bench/lib.sh) it builds the extension
# into a private directory, loads pgbench_accounts and its fastbtree copy,
# and runs pgbench workloads from bench/workloads/ (default: select, the
# statement of pgbench -S, and join, a nested loop of 2000 index probes per
# statement) at 1, 2, 4, ... clients up to twice the machine's cores
# (nproc), the largest count included even if not a power of two.  Every
# workload's plans are checked with EXPLAIN first (its "-- expect:" lines).
#
# Configurations: btree, and fastbtree with fastbtree.recent_buffers,
# fastbtree.scan_pins, fastbtree.optimistic_reads and
# fastbtree.atomic_pins all off, each alone on, all on.  The switches
# reach the server per run through PGOPTIONS
# ("-c fastbtree.NAME=on ..."), with the workload's "-- gucs:" settings;
# before the runs of each configuration a session with the same PGOPTIONS
# reads them back and must see the configuration's values (a switch that
# this build lacks only draws a warning).  A round runs every
# configuration once; odd rounds go btree first, even rounds in reverse
# order, so that drift of the machine hits all configurations alike.
# Reported per workload, client count and configuration: the median tps
# of the rounds and its range, and the median ratio to btree of the same
# round and its range.  Writes bench/results/DATE-HOST-scaling.md, the raw
# runs (.tsv) and a tps-vs-clients chart (.png, gnuplot).

set -uo pipefail
export LC_ALL=C

LOG_TAG=scaling
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

MAX_CLIENTS=$((2 * $(nproc)))
DURATION=10
RUNS=3
WORKLOADS=(select join)
RESULTS_DIR="$BENCH_DIR/results"
COMMAND_LINE="bash bench/scaling.sh${*:+ $*}"
CLIENTS=

usage()
{
	cat <<-EOF
	Usage: bash bench/scaling.sh [options]

	pgbench tps against the number of clients, btree against fastbtree with
	each of its switches, on the same data.  Run as root.

	Options:
	  --max-clients N   client counts 1, 2, 4, ... up to N; default 2 x cores
	                    = $MAX_CLIENTS
	  --duration S      seconds per pgbench run; default $DURATION
	  --runs R          rounds (runs of each configuration) per client count;
	                    default $RUNS
	  --workloads "W ..."  read workloads of bench/workloads/; default "${WORKLOADS[*]}"
	  --switches "C ..." fastbtree configurations, of: $ALL_SWITCH_CONFIGS
	                    (btree is always run); default all of them
	  --scale N         pgbench scale factor; default $SCALE
	  --shared-buffers SIZE  server shared_buffers; default $SHARED_BUFFERS
	  --results-dir DIR where to save the results; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --keep            keep the cluster running and its directory
	  --help            show this help

	Takes about workloads x client counts x runs x (configurations + 1) x
	duration seconds plus 2 minutes of set-up: with the defaults on 2 cores
	(1 2 4 clients) 2 x 3 x 3 x 7 x 10 s = 21 minutes.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--max-clients|--duration|--runs|--workloads|--switches|--scale|--shared-buffers|--results-dir|--pg|--wal-mode)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--max-clients=*) MAX_CLIENTS=${1#*=} ;;
			--duration=*) DURATION=${1#*=} ;;
			--runs=*) RUNS=${1#*=} ;;
			--workloads=*) read -r -a WORKLOADS <<<"${1#*=}" ;;
			--switches=*) SWITCH_CONFIGS=${1#*=} ;;
			--scale=*) SCALE=${1#*=} ;;
			--shared-buffers=*) SHARED_BUFFERS=${1#*=} ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	is_posint "$MAX_CLIENTS" || die "--max-clients must be a positive integer, got '$MAX_CLIENTS'"
	[ "$MAX_CLIENTS" -le 1000 ] || die "at most 1000 clients"
	is_posint "$DURATION" || die "--duration must be a positive integer, got '$DURATION'"
	is_posint "$RUNS" || die "--runs must be a positive integer, got '$RUNS'"
	[ "$RUNS" -ge 3 ] || warn "--runs $RUNS: with fewer than 3 runs a median is no better than a single run"
	check_scale_buffers
	check_switch_configs "$SWITCH_CONFIGS"
	[ "${#WORKLOADS[@]}" -gt 0 ] || die "--workloads must name at least one workload"
	local w c=1
	for w in "${WORKLOADS[@]}"; do
		[ -f "$BENCH_DIR/workloads/$w.sql" ] || die "no workload bench/workloads/$w.sql"
		[ -z "$(wl_meta "$w" reset)" ] ||
			die "workload $w writes (it rebuilds its table before every run): scaling.sh runs read workloads only"
	done
	while [ "$c" -lt "$MAX_CLIENTS" ]; do
		CLIENTS+="${CLIENTS:+ }$c"
		c=$((c * 2))
	done
	CLIENTS+="${CLIENTS:+ }$MAX_CLIENTS"
	[ $((MAX_CLIENTS + 10)) -le "$MAX_CONNECTIONS" ] || MAX_CONNECTIONS=$((MAX_CLIENTS + 10))
}

# round_order ROUND: the configurations in the order of that round
round_order()
{
	local configs="btree $SWITCH_CONFIGS"

	if [ $(($1 % 2)) -eq 1 ]; then
		echo "$configs"
	else
		tr ' ' '\n' <<<"$configs" | tac | tr '\n' ' ' | sed 's/ $//'
	fi
}

# verify_switches WORKLOAD_OPTIONS CONFIG: in a session with the PGOPTIONS
# of the configuration's runs, open the fastbtree table (which loads the
# library) and read the switches back
verify_switches()
{
	local shown

	[ "$2" != btree ] || return 0
	shown=$(BENCH_PGOPTIONS="$1" psql_q "SELECT count(*) FROM $(accounts_table fbt) WHERE aid = 1" \
		"$(switch_show_sql)" 2>/dev/null | tail -n 1) || die "could not read the switch settings back ($2)"
	check_switches_shown "$2" "${shown//|/ }"
}

declare -A TPS=()
RUN_NO=0
RUN_TOTAL=0

# scale_workload NAME: set it up and run every round of every client count
scale_workload()
{
	local name=$1 wl_opts c r config side

	workload_setup "$name"
	wl_opts=$BENCH_PGOPTIONS
	for config in btree $SWITCH_CONFIGS; do
		verify_switches "$wl_opts${wl_opts:+ }$(gucs_to_pgoptions "$(switch_gucs "$config")")" "$config"
	done
	for c in $CLIENTS; do
		for r in $(seq 1 "$RUNS"); do
			for config in $(round_order "$r"); do
				side=$(config_side "$config")
				BENCH_PGOPTIONS="$wl_opts${wl_opts:+ }$(gucs_to_pgoptions "$(switch_gucs "$config")")"
				RUN_NO=$((RUN_NO + 1))
				run_pgbench "${WL_SCRIPT[$side]}" "$c" "$DURATION"
				TPS[$name:$c:$r:$config]=$RUN_TPS
				printf '%s: [%3d/%d] %-7s clients=%-3s round %d/%d  %-16s %11.1f tps\n' \
					"$LOG_TAG" "$RUN_NO" "$RUN_TOTAL" "$name" "$c" "$r" "$RUNS" "$config" "$RUN_TPS"
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$r" "$config" "$RUN_TPS" "$RUN_TXNS" >>"$WORK/runs.tsv"
			done
		done
	done
	BENCH_PGOPTIONS=
}

# scaling_tables: per workload, a row per client count and configuration;
# writes the chart data (WORK/charts/scaling.dat) on the way
scaling_tables()
{
	local name c r config t ratios
	local -a tps rs

	mkdir -p "$WORK/charts"
	: >"$WORK/charts/scaling.dat"
	for name in "${WORKLOADS[@]}"; do
		workload_heading "$name"
		echo
		echo "| clients | configuration | tps (median) | tps min–max | ratio to btree (median) | ratio min–max |"
		echo "|--:|---|--:|--:|--:|--:|"
		echo "# $name: clients, then per configuration (btree $SWITCH_CONFIGS) tps median min max" >>"$WORK/charts/scaling.dat"
		for c in $CLIENTS; do
			printf '%s' "$c" >>"$WORK/charts/scaling.dat"
			for config in btree $SWITCH_CONFIGS; do
				tps=(); rs=()
				for r in $(seq 1 "$RUNS"); do
					t=${TPS[$name:$c:$r:$config]}
					tps+=("$t")
					rs+=("$(ratio "$t" "${TPS[$name:$c:$r:btree]}")")
				done
				printf '| %s | %s | %.1f | %.1f–%.1f |' "$c" "$(switch_label "$config")" \
					"$(median "${tps[@]}")" "$(minimum "${tps[@]}")" "$(maximum "${tps[@]}")"
				if [ "$config" = btree ]; then
					echo ' 1 | |'
				else
					printf ' %.3f | %.3f–%.3f |\n' "$(median "${rs[@]}")" "$(minimum "${rs[@]}")" "$(maximum "${rs[@]}")"
				fi
				printf ' %s %s %s' "$(median "${tps[@]}")" "$(minimum "${tps[@]}")" "$(maximum "${tps[@]}")" >>"$WORK/charts/scaling.dat"
			done
			echo >>"$WORK/charts/scaling.dat"
		done
		printf '\n\n' >>"$WORK/charts/scaling.dat"
	done
}


report_header()
{
	local cores

	cores=$(nproc)
	echo "# fastbtree scaling: tps against clients, btree vs $FBT_AM switch by switch"
	echo
	echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
	echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
	echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $cores cores; $(uname -sr)"
	echo "- scale $SCALE: $(nrows) rows per table; clients: $CLIENTS; $RUNS rounds of ${DURATION}s runs"
	echo "- pgbench -n -M prepared -c CLIENTS -j min(CLIENTS, cores); shared_buffers = $SHARED_BUFFERS; settings as bench/run.sh"
	echo "- $(wal_mode_label)"
	echo "- A round runs btree and every $FBT_AM configuration once (odd rounds btree first, even rounds reversed);"
	echo "  ratio = the configuration's tps / btree's tps in the same round; medians and ranges over the rounds."
	echo "- Switches passed per run with PGOPTIONS and read back in a session with the same PGOPTIONS."
	if [ "$cores" -lt 16 ]; then
		echo "- **$cores cores.** What issue 9 removes (buffer-mapping partition locks, pin and content-lock"
		echo "  atomics on the root and upper-level buffer headers) costs instructions here, which these runs can"
		echo "  show, but it becomes a bottleneck only when many cores hit the same cache lines at once: beyond"
		echo "  $cores clients the extra clients only queue for the same $cores CPUs (and pgbench's own threads share"
		echo "  them), so the curves flatten for every configuration and say nothing about contention."
		echo "  Run this script unchanged on a many-core machine for that."
	fi
	local note
	note=$(switches_absent_note)
	[ -z "$note" ] || echo "- $note"
}

main()
{
	local name started stem md

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	prepare_results_dir
	ensure_packages "the chart" gnuplot-nox
	build_extension
	setup_cluster
	load_data accounts
	RUN_TOTAL=$((${#WORKLOADS[@]} * $(wc -w <<<"$CLIENTS") * RUNS * ($(wc -w <<<"$SWITCH_CONFIGS") + 1)))
	log "plan: workloads ${WORKLOADS[*]}, clients $CLIENTS, $RUN_TOTAL runs of ${DURATION}s"
	for name in "${WORKLOADS[@]}"; do
		scale_workload "$name"
	done

	stem=$(results_stem "$RESULTS_DIR" -scaling)
	md="$stem.md"
	scaling_tables >"$WORK/tables.md"
	cp "$WORK/runs.tsv" "$stem.tsv"
	if gnuplot -e "datadir='$WORK/charts'; out='$stem.png'; chart='scaling'; names='${WORKLOADS[*]}'; clients='$CLIENTS'; configs='btree $SWITCH_CONFIGS'" \
		"$BENCH_DIR/charts.gp" 2>"$WORK/gnuplot.log"; then
		CHART="$stem.png"
	else
		warn "gnuplot failed: $(cat "$WORK/gnuplot.log")"
		CHART=
	fi
	{
		report_header
		echo
		[ -z "$CHART" ] || { echo "![tps against clients]($(basename "$CHART"))"; echo; }
		echo "Raw runs (workload, clients, round, configuration, tps, transactions): [$(basename "$stem.tsv")]($(basename "$stem.tsv"))"
		cat "$WORK/tables.md"
		echo
		total_time "$started"
	} >"$md"
	show_results "$md"
	[ -z "$CHART" ] || log "chart:   $CHART"
}

main "$@"
