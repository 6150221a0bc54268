#!/usr/bin/env bash
#
# bench/callgrind.sh
#	Instructions, LWLock acquisitions, buffer-mapping lookups and a census
#	of serializing operations on shared cache lines per index probe,
#	btree vs fastbtree with each of its switches, counted by callgrind:
#	deterministic, whatever else the machine is doing.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh (valgrind
# is installed if missing).  Like bench/run.sh, it builds the extension
# with PGXS's default flags (the server's: optimized, without assertions)
# into a private directory, creates the benchmark tables in a throwaway
# cluster and stops it.  Then, for each key type (--types; default int4)
# and each configuration (btree; fastbtree with its switches,
# fastbtree.recent_buffers, fastbtree.scan_pins and
# fastbtree.optimistic_reads of issue 9 and fastbtree.atomic_pins of
# issue 27, all off, each alone on, all on: --switches),
# it measures two probe kinds in single-user backends
# (postgres --single -D DATA DB) under valgrind --tool=callgrind, run as the
# unprivileged user:
#
#   - the nested-loop probe: one fastbtree_probe() call (fbtbench.c: one
#     index scan rescanned per key, the heap not visited), collected only
#     inside fastbtree_probe, with loops => 1 and loops => 3 over the same
#     key array;
#   - the SQL point probe: whole statements, one probe each
#     ("SELECT abalance FROM pgbench_accounts WHERE aid = K" for int4, the
#     like on the other key types), first SQL_KEYS keys once, then the same
#     keys three times; everything the backend executes is collected, and
#     a second pair of runs collects only inside index_beginscan,
#     index_rescan, index_getnext_tid and index_endscan.
#
# The difference of the two runs of a pair cancels fixed costs (backend
# start, relcache loads, cold buffer reads), so
#
#	X/probe = (X3 - X1) / (probes3 - probes1)
#
# for X = instructions, calls of LWLockAcquire + LWLockConditionalAcquire
# (LWLock acquisitions) and calls of BufTableLookup (buffer-mapping
# lookups), as bench/cgsum.pl sums them.  The "index layer" is everything
# under those four index AM entry points, buffer manager included.
# Callgrind counts calls whether or not it is collecting (see
# bench/cgsum.pl), so the LWLocks and mapping lookups of the index-layer
# run also count the calls made outside the index layer through the same
# call arcs: the heap fetch's, for one.
#
# The census, per probe of the nested-loop run and of the SQL run that
# collects everything (exact counts): buffer-header spinlocks (calls of
# LockBufHdr), LWLock acquisitions split into buffer-mapping (calls of
# BufTableLookup), content (acquisitions by LockBuffer and its kin or by
# fastbtree's own code) and other, pins (ReadBufferExtended,
# ReadRecentBuffer, fbt_atomic_pin), unpins (ReleaseBuffer and its kin,
# fbt_atomic_unpin) and their sum, each pin or unpin at most one atomic on
# the buffer header; bench/cgsum.pl says exactly what counts.  Every run
# ends with a query of the switch settings, which must be the
# configuration's (a switch this build lacks only draws a warning).
#
# It writes results/DATE-HOST-callgrind.md with the tables and
# results/DATE-HOST-callgrind-int4-fastbtree.txt, the callgrind_annotate
# output of the last fastbtree configuration's SQL probe, index layer.
# --fast-compare runs the earlier measurement instead (six key types;
# btree, fastbtree with fastbtree.fast_compare off and on; nested-loop
# probe only), which bench/run.sh --suite callgrind runs too.
#
# --inserts measures the write path instead: the insert workloads of
# bench/run.sh (insert_random: random int4 keys into a table of 100000 *
# scale rows; insert_asc: ascending int8 keys from a sequence), each side's
# table rebuilt, indexed and checkpointed at the start of each run, then
# one INSERT ... SELECT of INSERT_ROWS rows (--insert-rows) and, in a second
# run, of 3 * INSERT_ROWS (the same keys first).  Collected only inside
# index_insert (the AM's aminsert, its WAL and buffer work included), so
# the figures are instructions, LWLock acquisitions and mapping lookups per
# index insert, plus WAL bytes per row (heap and index) and the index size.
# A second pair of runs per workload and side executes INSERT_TXNS
# (--insert-txns) and 3 * INSERT_TXNS single-row transactions, a prepared
# INSERT ... VALUES each as pgbench -M prepared runs the workload, and
# collects everything the backend executes: the whole transaction's cost,
# parse to commit.  With --cache-sim, every insert run also simulates the
# L1 caches (valgrind --cache-sim=yes, the host's cache geometry) and the
# tables add L1 instruction, data-read and data-write misses per insert
# and per transaction: fewer instructions that miss more can still take
# longer.
#
# --builds measures index builds instead: per key type (--types; default
# int4 and int8), one CREATE INDEX on the table bench/run.sh's build
# benchmark indexes, by btree and by fastbtree, serial
# (max_parallel_maintenance_workers = 0: a single-user backend has no
# workers), collected inside index_build (heap scan, sort, page loading
# and WAL); per row of the table.
#
# --workloads "W ..." measures whole statements of read workloads instead
# (bench/workloads/W.sql, as bench/run.sh runs them, plans checked by their
# "-- expect:" lines): each "\set VAR random(LO, HI)" takes a fixed spread
# of values over its range, the same on both sides; --statements
# transactions and the same three times, everything collected, with the
# workload's "-- gucs:" settings; per statement: instructions, the index
# layer's (cgsum.pl's index_layer), LWLocks and mapping lookups, btree and
# fastbtree with its default settings.  The rows the two sides printed must
# be the same.

set -uo pipefail
export LC_ALL=C

LOG_TAG=callgrind
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RESULTS_DIR="$BENCH_DIR/results"
MODE=switches
PROBE_KINDS="nl sql"
TYPES_GIVEN=no
# keys of the SQL point probe: SQL_KEYS statements, then 3 * SQL_KEYS
SQL_KEYS=1000
# rows of the shorter insert run (--inserts): INSERT_ROWS, then 3 * INSERT_ROWS
INSERT_ROWS=20000
# single-row transactions of the shorter per-transaction run (--inserts)
INSERT_TXNS=2000
# --cache-sim: simulate the L1 caches in the insert runs
CACHE_SIM=no
# --workloads: the workloads, and the statements of the shorter run
WORKLOADS=
WL_STATEMENTS=100
COMMAND_LINE="bash bench/callgrind.sh${*:+ $*}"

usage()
{
	cat <<-EOF
	Usage: bash bench/callgrind.sh [options]

	Count instructions, LWLock acquisitions and buffer-mapping lookups per
	index probe with callgrind, btree against fastbtree with each of its
	switches, for the nested-loop probe (fastbtree_probe) and the SQL point
	probe, and a census of the serializing operations on shared cache
	lines per probe: buffer-header spinlocks (LockBufHdr), LWLock
	acquisitions (buffer mapping, buffer content, other), pins and unpins
	(at most one atomic on the buffer header each) and their sum.  Run as
	root.

	Options:
	  --switches "C ..." fastbtree configurations, of: $ALL_SWITCH_CONFIGS
	                    (off = all switches off, all = all on, a switch name =
	                    that one alone on); btree is always measured; default
	                    all of them
	  --probes "K ..."  probe kinds, of: nl (nested-loop probe,
	                    fastbtree_probe) sql (SQL point probe); default "$PROBE_KINDS"
	  --types "T ..."   key types (of: ${KEY_TYPES[*]}); default int4
	  --sql-keys N      statements of the shorter SQL run; default $SQL_KEYS
	  --scale N         rows per table = 100000 * N; default $SCALE
	  --fast-compare    instead, the earlier measurement: btree and fastbtree
	                    with fastbtree.fast_compare off and on, nested-loop
	                    probe only, on all six key types by default
	  --recent-buffers  with --fast-compare: fastbtree.recent_buffers = on
	  --inserts         instead, the write path: per index insert of the
	                    insert_random and insert_asc workloads, btree and
	                    fastbtree with its default settings
	  --insert-rows N   rows of the shorter insert run; default $INSERT_ROWS
	  --insert-txns N   single-row transactions of the shorter
	                    per-transaction run; default $INSERT_TXNS
	  --cache-sim       with --inserts: also count L1 cache misses
	                    (valgrind --cache-sim=yes; its runs about twice as slow)
	  --builds          instead, one serial CREATE INDEX per key type
	                    (--types; default int4 int8), btree and fastbtree,
	                    collected inside index_build: instructions per row
	  --workloads "W ..." instead, whole statements of bench/workloads/W.sql
	                    (read workloads: skip any_near any_spread ios_count
	                    range1000 order_limit ...), btree and fastbtree with
	                    its default settings: per statement, everything and
	                    the index layer
	  --statements N    with --workloads: statements of the shorter run;
	                    default $WL_STATEMENTS
	  --results-dir DIR where to save the results; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --keep            keep the (stopped) cluster and the profiles in the
	                    work directory
	  --help            show this help

	The default run (int4, btree and six fastbtree configurations, both
	probe kinds) takes about 4 minutes on 2 cores; each more key type adds
	about 3, plus loading its table.  --fast-compare takes about 10 minutes,
	--inserts about 5 at scale 1; --workloads 1 to 3 minutes a workload
	(skip on 15, where btree reads the whole table each time: about 15).
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--scale|--results-dir|--types|--switches|--probes|--sql-keys|--insert-rows|--insert-txns|--pg|--wal-mode|--workloads|--statements)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--scale=*) SCALE=${1#*=} ;;
			--types=*) read -r -a KEY_TYPES <<<"${1#*=}"; TYPES_GIVEN=yes ;;
			--switches=*) SWITCH_CONFIGS=${1#*=} ;;
			--probes=*) PROBE_KINDS=${1#*=} ;;
			--sql-keys=*) SQL_KEYS=${1#*=} ;;
			--fast-compare) MODE=fast_compare ;;
			--inserts) MODE=inserts ;;
			--builds) MODE=builds ;;
			--workloads=*) MODE=workloads; WORKLOADS=${1#*=} ;;
			--statements=*) WL_STATEMENTS=${1#*=} ;;
			--insert-rows=*) INSERT_ROWS=${1#*=} ;;
			--insert-txns=*) INSERT_TXNS=${1#*=} ;;
			--cache-sim) CACHE_SIM=yes ;;
			--recent-buffers) CG_RECENT_BUFFERS=on ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	local t k

	is_posint "$SCALE" || die "--scale must be a positive integer, got '$SCALE'"
	is_posint "$SQL_KEYS" || die "--sql-keys must be a positive integer, got '$SQL_KEYS'"
	is_posint "$INSERT_ROWS" || die "--insert-rows must be a positive integer, got '$INSERT_ROWS'"
	is_posint "$INSERT_TXNS" || die "--insert-txns must be a positive integer, got '$INSERT_TXNS'"
	is_posint "$WL_STATEMENTS" || die "--statements must be a positive integer, got '$WL_STATEMENTS'"
	if [ "$MODE" = workloads ]; then
		[ -n "${WORKLOADS// /}" ] || die "--workloads must name at least one workload"
		for k in $WORKLOADS; do
			[ -f "$BENCH_DIR/workloads/$k.sql" ] || die "no workload '$k' (bench/workloads/$k.sql)"
			[ -z "$(wl_meta "$k" reset)" ] || die "workload '$k' writes; --workloads measures read workloads (--inserts measures writes)"
		done
	fi
	[ "$SQL_KEYS" -le "$PROBE_KEYS" ] || die "--sql-keys must be at most $PROBE_KEYS"
	for t in "${KEY_TYPES[@]}"; do
		type_label "$t" >/dev/null
		probe_keys_table "$t" >/dev/null
	done
	[ "${#KEY_TYPES[@]}" -gt 0 ] || die "--types must name at least one key type"
	if [ "$MODE" = builds ]; then
		[ "$TYPES_GIVEN" = yes ] || KEY_TYPES=(int4 int8)
	fi
	if [ "$MODE" = switches ]; then
		[ "$TYPES_GIVEN" = yes ] || KEY_TYPES=(int4)
		check_switch_configs "$SWITCH_CONFIGS"
		[ -n "${PROBE_KINDS// /}" ] || die "--probes must name at least one probe kind"
		for k in $PROBE_KINDS; do
			case "$k" in
				nl|sql) ;;
				*) die "unknown probe kind '$k' (of: nl sql)" ;;
			esac
		done
		[ -z "${CG_RECENT_BUFFERS:-}" ] || die "--recent-buffers goes with --fast-compare (otherwise use --switches)"
	fi
	[ "$CACHE_SIM" = no ] || [ "$MODE" = inserts ] || die "--cache-sim goes with --inserts"
	[ "$WL_STATEMENTS" = 100 ] || [ "$MODE" = workloads ] || die "--statements goes with --workloads"
}

# --- the switch measurement ---------------------------------------------

# sql_probe_template TYPE SIDE: the point-probe statement of a key type,
# with %L where the key goes (format()), as pgbench -S's for int4
sql_probe_template()
{
	case "$1" in
		int4) echo "SELECT abalance FROM $(accounts_table "$2") WHERE aid = %L" ;;
		int8) echo "SELECT v FROM k_int8_$2 WHERE k = %L" ;;
		timestamptz) echo "SELECT v FROM k_ts_$2 WHERE k = %L" ;;
		text_c) echo "SELECT v FROM k_text_$2 WHERE kc = %L" ;;
		text_default) echo "SELECT v FROM k_text_$2 WHERE kd = %L" ;;
		twocol) echo "SELECT v FROM k_two_$2 WHERE a = %L" ;;
		*) die "unknown key type '$1'" ;;
	esac
}

# The session settings of every SQL probe: no bitmap scan, so that every
# statement is one plain index scan (checked below).
SQL_PROBE_GUCS="enable_bitmapscan=off"

# sql_probe_scripts TYPE SIDE: while the cluster runs, write the statements
# of the SQL point probe of one key type and side, WORK/cg/sql-TYPE-SIDE-1.sql
# (SQL_KEYS statements) and -3.sql (the same three times), each followed by
# the query of the switch settings; check the plan of the first statement
sql_probe_scripts()
{
	local type=$1 side=$2 base="$WORK/cg/sql-$1-$2" stmts plan index

	stmts=$(psql_q "SELECT format($(sql_lit "$(sql_probe_template "$type" "$side")"), k)
			FROM unnest((SELECT keys[1:$SQL_KEYS] FROM $(probe_keys_table "$type"))) WITH ORDINALITY AS u(k, n)
			ORDER BY n") || die "generating the SQL probe statements failed ($type, $side)"
	[ "$(wc -l <<<"$stmts")" -eq "$SQL_KEYS" ] || die "expected $SQL_KEYS SQL probe statements ($type, $side)"
	index=$(probe_index "$type" "$side")
	plan=$(psql_q "SET $SQL_PROBE_GUCS" "EXPLAIN (COSTS OFF) $(head -n 1 <<<"$stmts")" 2>&1) ||
		{ echo "$plan" >&2; die "EXPLAIN of the SQL probe failed ($type, $side)"; }
	grep -q "^Index Scan using $index on " <<<"$plan" ||
		{ echo "$plan" >&2; die "the SQL probe of $type ($side) is not an index scan using $index"; }
	{ echo "$stmts"; switch_show_sql; } >"$base-1.sql"
	{ echo "$stmts"; echo "$stmts"; echo "$stmts"; switch_show_sql; } >"$base-3.sql"
}

# the census columns, in bench/cgsum.pl's names (census_NAME)
CENSUS_METRICS="spinlocks lw_mapping lw_content lw_other pins unpins sum"

# cg_counts FILE: "total index_layer lwlocks mapping_lookups" of a profile,
# then its census (CENSUS_METRICS, in order)
cg_counts()
{
	perl "$BENCH_DIR/cgsum.pl" "$1" |
		awk -v census="$CENSUS_METRICS" '{ v[$1] = $2 }
			END {
				printf "%s %s %s %s", v["total"], v["index_layer"], v["lwlocks"], v["mapping_lookups"]
				n = split(census, c, " ")
				for (i = 1; i <= n; i++)
					printf " %s", v["census_" c[i]]
				printf "\n"
			}'
}

# cg_misses FILE: "I1mr D1mr D1mw", the profile's total L1 instruction,
# data-read and data-write misses (a run with --cache-sim=yes)
cg_misses()
{
	awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
		/^(summary|totals):/ { for (i = 2; i <= NF; i++) v[i - 1] = $i }
		END {
			if (!col["I1mr"] || !col["D1mr"] || !col["D1mw"]) exit 1
			print v[col["I1mr"]] + 0, v[col["D1mr"]] + 0, v[col["D1mw"]] + 0
		}' "$1" || die "$1: no cache-miss events (not a --cache-sim=yes profile?)"
}

# cg_check_switches BASE CONFIG: the switch settings the run printed must be
# the configuration's (fastbtree only)
cg_check_switches()
{
	local sw shown=""

	[ "$2" != btree ] || return 0
	for sw in "${FBT_SWITCHES[@]}"; do
		shown+="${shown:+ }$(cg_column "$1" "sw_$sw")"
	done
	check_switches_shown "$2" "$shown"
}

declare -A CG=()	# KIND:TYPE:CONFIG:RUN:LOOPS:METRIC -> count

# cg_record KEY BASE CONFIG: store the counts of the profile just made
# (CG_FILE) under KEY and check the switch settings the run printed
cg_record()
{
	local misses m
	local -a v

	read -r -a v < <(cg_counts "$CG_FILE")
	[ "${#v[@]}" -eq $((4 + $(wc -w <<<"$CENSUS_METRICS"))) ] ||
		die "bench/cgsum.pl gave no complete counts for $CG_FILE"
	CG[$1:total]=${v[0]}; CG[$1:index]=${v[1]}; CG[$1:lwlocks]=${v[2]}; CG[$1:mapping]=${v[3]}
	v=("${v[@]:4}")
	for m in $CENSUS_METRICS; do
		CG[$1:census_$m]=${v[0]}
		v=("${v[@]:1}")
	done
	if [ "$CACHE_SIM" = yes ]; then
		# not in a process substitution: its die would end only the subshell
		misses=$(cg_misses "$CG_FILE") || exit 1
		read -r "CG[$1:I1mr]" "CG[$1:D1mr]" "CG[$1:D1mw]" <<<"$misses"
	fi
	cg_check_switches "$2" "$3"
	CG_DONE=$((CG_DONE + 1))
}
CG_DONE=0
CG_TOTAL=0

# cg_measure KIND TYPE CONFIG: the runs of one probe kind, key type and
# configuration; KIND nl: loops 1 and 3 of fastbtree_probe, metrics from
# the profile collected inside it; KIND sql: SQL_KEYS and 3 * SQL_KEYS
# statements, run "all" collecting everything, run "index" collecting
# only in the index layer
cg_measure()
{
	local kind=$1 type=$2 config=$3 side loops run base toggles gucs k

	side=$(config_side "$config")
	gucs=$(switch_gucs "$config")
	for loops in 1 3; do
		if [ "$kind" = nl ]; then
			base="$WORK/cg/nl-$type-$config-$loops"
			echo "SELECT probes, found FROM fastbtree_probe('$(probe_index "$type" "$side")', (SELECT keys FROM $(probe_keys_table "$type")), $loops)" >"$base.sql"
			switch_show_sql >>"$base.sql"
			cg_single "$base" fastbtree_probe "$gucs"
			k="$kind:$type:$config:all:$loops"
			CG[$k:probes]=$(cg_column "$base" probes)
			CG[$k:found]=$(cg_column "$base" found)
			[ -n "${CG[$k:probes]}" ] && [ -n "${CG[$k:found]}" ] ||
				{ cat "$base.stdout" >&2; die "no result from fastbtree_probe ($type, $config, loops $loops)"; }
			cg_record "$k" "$base" "$config"
			printf '%s: [%2d/%d] nl  %-12s %-16s loops=%d %14s instructions, %s probes\n' \
				"$LOG_TAG" "$CG_DONE" "$CG_TOTAL" "$type" "$config" "$loops" "${CG[$k:total]}" "${CG[$k:probes]}"
			continue
		fi
		for run in all index; do
			base="$WORK/cg/sql-$type-$config-$run-$loops"
			cp "$WORK/cg/sql-$type-$side-$loops.sql" "$base.sql"
			toggles=
			[ "$run" = all ] || toggles="index_beginscan index_rescan index_getnext_tid index_endscan"
			cg_single "$base" "$toggles" "$SQL_PROBE_GUCS $gucs"
			k="$kind:$type:$config:$run:$loops"
			CG[$k:probes]=$((loops * SQL_KEYS))
			# result lines of the probes, not of the switch query
			CG[$k:found]=$(grep '^[[:space:]]*1: ' "$base.stdout" | grep -vc ' sw_')
			cg_record "$k" "$base" "$config"
			printf '%s: [%2d/%d] sql %-12s %-16s %-5s statements=%-5d %14s instructions\n' \
				"$LOG_TAG" "$CG_DONE" "$CG_TOTAL" "$type" "$config" "$run" "${CG[$k:probes]}" "${CG[$k:total]}"
		done
	done
}

# per_probe KIND:TYPE:CONFIG:RUN METRIC [DECIMALS]: (X3 - X1) / (probes3 -
# probes1)
per_probe()
{
	awk -v a="${CG[$1:3:$2]}" -v b="${CG[$1:1:$2]}" -v p="${CG[$1:3:probes]}" -v q="${CG[$1:1:probes]}" \
		-v d="${3:-0}" 'BEGIN { printf "%.*f\n", d, (a - b) / (p - q) }'
}

# switch_tables MDFILE: the result tables, one per probe kind
switch_tables()
{
	local type config kind b bi w wi lw mp lwi mpi
	local configs="btree $SWITCH_CONFIGS"

	for kind in $PROBE_KINDS; do
		echo
		if [ "$kind" = nl ]; then
			echo "### Nested-loop probe: fastbtree_probe(), one index scan rescanned per key (heap not visited)"
			echo
			echo "Per probe; whole = everything under fastbtree_probe, which per probe calls only index_rescan and"
			echo "index_getnext_tid, so its LWLocks and mapping lookups are all in the index layer."
			echo
			echo "| key type | configuration | instructions | ratio to btree | index layer | ratio to btree | LWLocks | mapping lookups |"
			echo "|---|---|--:|--:|--:|--:|--:|--:|"
		else
			echo "### SQL point probe: one whole statement per key (parse, plan, execute with its heap fetch, commit)"
			echo
			echo "Per statement; whole = everything the single-user backend executed; index layer = the run that"
			echo "collected only under index_beginscan, index_rescan, index_getnext_tid and index_endscan."
			echo
			echo "| key type | configuration | instructions | ratio to btree | index layer | ratio to btree | LWLocks | LWLocks, index layer | mapping lookups | mapping lookups, index layer |"
			echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
		fi
		for type in "${KEY_TYPES[@]}"; do
			for config in $configs; do
				if [ "$kind" = nl ]; then
					w=$(per_probe "nl:$type:$config:all" total)
					wi=$(per_probe "nl:$type:$config:all" index)
					lw=$(per_probe "nl:$type:$config:all" lwlocks 2)
					mp=$(per_probe "nl:$type:$config:all" mapping 2)
				else
					w=$(per_probe "sql:$type:$config:all" total)
					wi=$(per_probe "sql:$type:$config:index" total)
					lw=$(per_probe "sql:$type:$config:all" lwlocks 2)
					mp=$(per_probe "sql:$type:$config:all" mapping 2)
					lwi=$(per_probe "sql:$type:$config:index" lwlocks 2)
					mpi=$(per_probe "sql:$type:$config:index" mapping 2)
				fi
				[ "$config" != btree ] || { b=$w; bi=$wi; }
				RATIO_INDEX[$kind:$type:$config]=$(ratio "$wi" "$bi")
				LWLOCKS[$kind:$type:$config]=$lw
				printf '| %s | %s | %s | %.3f | %s | %.3f | %s |' "$(type_label "$type")" "$(switch_label "$config")" \
					"$w" "$(ratio "$w" "$b")" "$wi" "$(ratio "$wi" "$bi")" "$lw"
				if [ "$kind" = nl ]; then
					printf ' %s |\n' "$mp"
				else
					printf ' %s | %s | %s |\n' "$lwi" "$mp" "$mpi"
				fi
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$type" "$config" "$w" "$wi" "$lw" "$mp" >>"$WORK/callgrind.tsv"
			done
		done
	done
}

declare -A RATIO_INDEX=() LWLOCKS=()
# the cluster's data_checksums setting (switch_phase)
DATA_CHECKSUMS=unknown

# census_tables: the census of serializing operations on shared cache
# lines, a table per probe kind: per probe, from the nested-loop run and
# from the SQL run that collected everything
census_tables()
{
	local kind type config m b sum
	local configs="btree $SWITCH_CONFIGS"

	echo
	echo "### Contention census: serializing operations on shared cache lines, per probe"
	echo
	echo "From the call arcs of the profiles above (bench/cgsum.pl): the nested-loop probe's, collected"
	echo "under fastbtree_probe, and the SQL point probe's whole statement, from the run that collected"
	echo "everything (heap fetch, snapshot and lock manager included; callgrind counts calls whether or"
	echo "not it collects, so the index-layer run cannot split them off).  Spinlocks = calls of LockBufHdr,"
	echo "the buffer-header spinlock (ReadRecentBuffer takes it for a buffer the backend has not pinned"
	echo "yet).  LWLocks: mapping = calls of BufTableLookup, each under one buffer-mapping partition lock;"
	echo "content = calls of LWLockAcquire and LWLockConditionalAcquire by LockBuffer,"
	echo "ConditionalLockBuffer, LockBufferForCleanup, ConditionalLockBufferForCleanup or fastbtree's own"
	echo "code; other = every other LWLock acquisition (snapshots, the lock manager, a buffer miss's"
	echo "exclusive mapping lock).  Pins = calls of ReadBufferExtended (through which ReadBuffer and"
	echo "ReleaseAndReadBuffer read), ReadRecentBuffer and fbt_atomic_pin; unpins = calls of ReleaseBuffer,"
	echo "UnlockReleaseBuffer, UnpinBuffer by ReleaseAndReadBuffer and fbt_atomic_unpin, less the calls"
	echo "of IncrBufferRefCount (a second, backend-local reference that one more release drops).  Each"
	echo "pin or unpin is at most one atomic operation on the buffer header: none when the backend"
	echo "already holds a pin on that buffer.  Sum = spinlocks + all LWLock acquisitions + pins + unpins."
	echo "Data checksums are $DATA_CHECKSUMS in this cluster (initdb's default: off on 15, on since 18); with"
	echo "them, or wal_log_hints, BufferGetLSNAtomic takes the buffer-header spinlock, and btree and"
	echo "$FBT_AM call it once per leaf read (the page LSN that kill_prior_tuple marking checks later)."
	for kind in $PROBE_KINDS; do
		echo
		if [ "$kind" = nl ]; then
			echo "Nested-loop probe (fastbtree_probe(), heap not visited):"
		else
			echo "SQL point probe (whole statement):"
		fi
		echo
		echo "| key type | configuration | spinlocks | LWLocks: mapping | LWLocks: content | LWLocks: other | pins | unpins | sum | sum / btree's |"
		echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
		for type in "${KEY_TYPES[@]}"; do
			b=$(per_probe "$kind:$type:btree:all" census_sum 2)
			for config in $configs; do
				printf '| %s | %s |' "$(type_label "$type")" "$(switch_label "$config")"
				for m in $CENSUS_METRICS; do
					printf ' %s |' "$(per_probe "$kind:$type:$config:all" "census_$m" 2 | sed 's/^-\(0\.00\)$/\1/')"
				done
				sum=$(per_probe "$kind:$type:$config:all" census_sum 2)
				printf ' %.3f |\n' "$(ratio "$sum" "$b")"
			done
		done
	done
}

# targets_section: issue 9's targets for the all-switches configuration
targets_section()
{
	local type verdict

	case " $SWITCH_CONFIGS " in *" all "*) ;; *) return 0 ;; esac
	echo
	echo "### Issue 9's targets, all switches on"
	echo
	echo "| key type | target | measured | met |"
	echo "|---|---|--:|---|"
	for type in "${KEY_TYPES[@]}"; do
		if [ -n "${RATIO_INDEX[sql:$type:all]:-}" ]; then
			verdict=$(awk -v r="${RATIO_INDEX[sql:$type:all]}" 'BEGIN { print (r <= 0.60) ? "yes" : "no" }')
			printf '| %s | SQL point probe, index layer ≤ 0.60x btree | %.3f | %s |\n' "$(type_label "$type")" "${RATIO_INDEX[sql:$type:all]}" "$verdict"
		fi
		if [ -n "${RATIO_INDEX[nl:$type:all]:-}" ]; then
			verdict=$(awk -v r="${RATIO_INDEX[nl:$type:all]}" 'BEGIN { print (r <= 0.35) ? "yes" : "no" }')
			printf '| %s | nested-loop probe, index layer ≤ 0.35x btree | %.3f | %s |\n' "$(type_label "$type")" "${RATIO_INDEX[nl:$type:all]}" "$verdict"
			verdict=$(awk -v r="${LWLOCKS[nl:$type:all]}" 'BEGIN { print (r <= 4) ? "yes" : "no" }')
			printf '| %s | nested-loop probe, LWLock acquisitions ≤ 4 | %s | %s |\n' "$(type_label "$type")" "${LWLOCKS[nl:$type:all]}" "$verdict"
		fi
	done
	echo
	echo "The issue counts the nested-loop probe's LWLocks with the heap (btree: 8 = 3 levels × (mapping +"
	echo "content) + heap 2); fastbtree_probe() does not visit the heap, so its btree figure is the index's 6."
}

# switch_phase MDFILE ANNOTATEFILE: every probe kind, key type and
# configuration; writes the markdown section and the annotation of the
# last fastbtree configuration's SQL probe (index layer), or of its
# nested-loop probe without --probes sql.  Stops the cluster.
switch_phase()
{
	local md=$1 annotate=$2 kind type config side last nk=0 target
	local configs="btree $SWITCH_CONFIGS"

	ensure_packages "the callgrind measurement" valgrind
	command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate not found (package valgrind)"
	for type in "${KEY_TYPES[@]}"; do
		load_data "$(probe_keys_table "$type")"
	done
	mkdir -p "$WORK/cg" && chown "$BENCH_USER:" "$WORK/cg"
	case " $PROBE_KINDS " in
		*" sql "*)
			for type in "${KEY_TYPES[@]}"; do
				for side in bt fbt; do
					sql_probe_scripts "$type" "$side"
				done
			done
			;;
	esac
	DATA_CHECKSUMS=$(psql_q "SHOW data_checksums") || die "SHOW data_checksums failed"
	log "stopping the cluster for the callgrind runs (each one a single-user backend under valgrind)"
	stop_cluster

	for kind in $PROBE_KINDS; do
		if [ "$kind" = nl ]; then nk=$((nk + 2)); else nk=$((nk + 4)); fi
	done
	CG_TOTAL=$((nk * ${#KEY_TYPES[@]} * $(wc -w <<<"$configs")))
	for kind in $PROBE_KINDS; do
		for type in "${KEY_TYPES[@]}"; do
			for config in $configs; do
				cg_measure "$kind" "$type" "$config"
			done
			for config in $configs; do
				[ "${CG[$kind:$type:$config:all:3:found]}" = "${CG[$kind:$type:btree:all:3:found]}" ] ||
					die "$kind probe $type: btree found ${CG[$kind:$type:btree:all:3:found]}, $config ${CG[$kind:$type:$config:all:3:found]}"
			done
		done
	done

	last=${SWITCH_CONFIGS##* }
	type=${KEY_TYPES[0]}
	case " $PROBE_KINDS " in
		*" sql "*) target="sql-$type-$last-index" ;;
		*) target="nl-$type-$last" ;;
	esac
	write_annotation "$WORK/cg/$target-3.callgrind" "$annotate"

	{
		switch_tables
		census_tables
		targets_section
		echo
		switches_absent_note
		echo
		echo "Where $(type_label "$type") $(sed 's/-.*//' <<<"$target") probes spend their instructions on $(switch_label "$last")$(
			[ "${target##*-}" = index ] && echo ", index layer"), per probe (self cost of each"
		echo "function in the longer run minus the shorter, over the extra probes; static functions of the stripped"
		echo "postgres binary appear as addresses):"
		echo
		echo "| function | self instructions/probe | inclusive |"
		echo "|---|--:|--:|"
		kind=${target%%-*}
		perl "$BENCH_DIR/cgsum.pl" --per-probe "$((CG[$kind:$type:$last:${target##*-}:3:probes] - CG[$kind:$type:$last:${target##*-}:1:probes]))" \
			"$WORK/cg/$target-1.callgrind" "$WORK/cg/$target-3.callgrind" | head -n 25
	} >"$md"
}

# --- the insert measurement ----------------------------------------------

INSERT_SETS="ins_random ins_asc"

# insert_title SET: the workload a data set stands for
insert_title()
{
	case "$1" in
		ins_random) echo "insert_random: random int4 keys into $(nrows) rows" ;;
		ins_asc) echo "insert_asc: ascending int8 keys from a sequence, after $(nrows) rows" ;;
		*) die "unknown insert data set '$1'" ;;
	esac
}

# insert_script SET SIDE ROWS FILE [txns]: the statements of one insert
# run.  The side's table is rebuilt from the base table as bench/run.sh's
# reset does (copy, index, VACUUM ANALYZE, CHECKPOINT: the first change of
# each page logs a full-page image, as in a pgbench run), then ROWS rows are
# inserted by one statement, or with "txns" by ROWS single-row
# transactions: EXECUTE of a prepared INSERT ... VALUES, as pgbench -M
# prepared runs the workload (each statement of a single-user backend is
# its own transaction; the random keys are cg_insert_keys' first ROWS, in
# order).  The last query prints WAL bytes since just before the insert and
# the index size.
insert_script()
{
	local set=$1 side=$2 rows=$3 table="${1}_$2" insert

	case "$set:${5:-}" in
		ins_random:) insert="INSERT INTO $table (k, v) SELECT k, 1 FROM cg_insert_keys WHERE n <= $rows ORDER BY n" ;;
		ins_asc:) insert="INSERT INTO $table (k, v) SELECT nextval('${table}_seq'), 1 FROM generate_series(1, $rows)" ;;
		ins_random:txns)
			insert="PREPARE cg_ins(int4) AS INSERT INTO $table (k, v) VALUES (\$1, 1)"$'\n'
			insert+=$(head -n "$rows" "$WORK/cg/insert_keys.txt" | sed 's/^/EXECUTE cg_ins(/; s/$/)/')
			;;
		ins_asc:txns)
			insert="PREPARE cg_ins AS INSERT INTO $table (k, v) VALUES (nextval('${table}_seq'), 1)"$'\n'
			insert+=$(yes 'EXECUTE cg_ins' | head -n "$rows")
			;;
	esac
	{
		echo "DROP TABLE IF EXISTS $table"
		echo "CREATE TABLE $table AS SELECT * FROM ${set}_base"
		echo "CREATE INDEX ${table}_idx ON $table USING $(side_am "$side") (k)"
		echo "VACUUM ANALYZE $table"
		if [ "$set" = ins_asc ]; then
			echo "DROP SEQUENCE IF EXISTS ${table}_seq"
			echo "CREATE SEQUENCE ${table}_seq START $(($(nrows) + 1))"
		fi
		echo "CHECKPOINT"
		echo "CREATE TEMP TABLE cg_lsn AS SELECT pg_current_wal_insert_lsn() AS l"
		echo "$insert"
		echo "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), l) AS wal_bytes, pg_relation_size('${table}_idx') / current_setting('block_size')::int AS index_blocks, (SELECT count(*) FROM $table) AS table_rows FROM cg_lsn"
	} >"$4"
}

# insert_run RUN SET SIDE LOOPS: one profiled insert run, its counts stored
# under CG[ins:SET:SIDE:RUN:LOOPS:*]; RUN stmt: LOOPS * INSERT_ROWS rows by
# one statement, collected inside index_insert; RUN txn: LOOPS *
# INSERT_TXNS single-row transactions, everything collected.  The cluster
# must be stopped.
insert_run()
{
	local run=$1 set=$2 side=$3 loops=$4 base rows k

	base="$WORK/cg/$set-$side-$run-$loops"
	if [ "$run" = stmt ]; then
		rows=$((loops * INSERT_ROWS))
		insert_script "$set" "$side" "$rows" "$base.sql"
		cg_single "$base" index_insert ""
	else
		rows=$((loops * INSERT_TXNS))
		insert_script "$set" "$side" "$rows" "$base.sql" txns
		cg_single "$base" "" ""
	fi
	k="ins:$set:$side:$run:$loops"
	CG[$k:probes]=$rows
	CG[$k:wal]=$(cg_column "$base" wal_bytes)
	CG[$k:blocks]=$(cg_column "$base" index_blocks)
	[ "$(cg_column "$base" table_rows)" = "$(($(nrows) + rows))" ] ||
		{ cat "$base.stdout" >&2; die "$set ($side): expected $(($(nrows) + rows)) rows after the insert"; }
	cg_record "$k" "$base" btree
	printf '%s: [%2d/%d] %-4s %-10s %-9s rows=%-6d %14s instructions\n' \
		"$LOG_TAG" "$CG_DONE" "$CG_TOTAL" "$run" "$set" "$(side_am "$side")" "$rows" "${CG[$k:total]}"
}

# insert_table_rows RUN: the markdown rows of RUN's table (stmt or txn),
# per insert or transaction: instructions, ratio to btree, LWLocks,
# mapping lookups, WAL bytes, and for stmt the index size after the longer
# run
insert_table_rows()
{
	local run=$1 set side k b w blocks misses ev

	for set in $INSERT_SETS; do
		for side in bt fbt; do
			k="ins:$set:$side:$run"
			w=$(per_probe "$k" total)
			[ "$side" != bt ] || b=$w
			blocks=
			[ "$run" != stmt ] || blocks=" ${CG[$k:3:blocks]} |"
			misses=
			if [ "$CACHE_SIM" = yes ]; then
				for ev in I1mr D1mr D1mw; do
					misses+=" $(per_probe "$k" "$ev" 1) |"
				done
			fi
			printf '| %s | %s | %s | %.3f | %s | %s | %s |%s%s\n' "$(insert_title "$set")" "$(side_am "$side")" \
				"$w" "$(ratio "$w" "$b")" "$(per_probe "$k" lwlocks 2)" "$(per_probe "$k" mapping 2)" \
				"$(per_probe "$k" wal 1)" "$blocks" "$misses"
		done
	done
}

# miss_columns HEADER|RULE: the header cells, or the alignment row's, of
# the cache-miss columns (none without --cache-sim)
miss_columns()
{
	[ "$CACHE_SIM" = yes ] || return 0
	if [ "$1" = HEADER ]; then
		printf ' L1 instruction misses | L1 data read misses | L1 data write misses |'
	else
		printf -- '--:|--:|--:|'
	fi
}

# insert_phase MDFILE ANNOTATEFILE: both insert workloads, btree and
# fastbtree: runs of INSERT_ROWS and 3 * INSERT_ROWS rows by one statement,
# collected inside index_insert, and runs of INSERT_TXNS and 3 *
# INSERT_TXNS single-row transactions, everything collected; writes the
# markdown section and the annotation of fastbtree's random inserts.  Stops
# the cluster.
insert_phase()
{
	local md=$1 annotate=$2 set side run keys

	ensure_packages "the callgrind measurement" valgrind
	command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate not found (package valgrind)"
	load_data ins_random ins_asc
	keys=$((3 * (INSERT_ROWS > INSERT_TXNS ? INSERT_ROWS : INSERT_TXNS)))
	psql_q "SELECT setseed(0.37)" \
		"CREATE TABLE cg_insert_keys AS SELECT n, (1 + floor(random() * 2147483646))::int4 AS k
			FROM generate_series(1, $keys) n" >/dev/null ||
		die "creating cg_insert_keys failed"
	mkdir -p "$WORK/cg" && chown "$BENCH_USER:" "$WORK/cg"
	psql_q "SELECT k FROM cg_insert_keys ORDER BY n" >"$WORK/cg/insert_keys.txt" ||
		die "reading cg_insert_keys failed"
	log "stopping the cluster for the callgrind runs (each one a single-user backend under valgrind)"
	stop_cluster

	CG_TOTAL=16
	[ "$CACHE_SIM" = no ] || CG_VALGRIND_OPTS=(--cache-sim=yes)
	for run in stmt txn; do
		for set in $INSERT_SETS; do
			for side in bt fbt; do
				insert_run "$run" "$set" "$side" 1
				insert_run "$run" "$set" "$side" 3
			done
		done
	done
	write_annotation "$WORK/cg/ins_random-fbt-stmt-3.callgrind" "$annotate"

	{
		echo
		echo "Per index insert (index_insert, inclusive: the AM, its WAL records and buffer work); WAL per row"
		echo "(heap, index and commit records, full-page images included); index size after the longer run."
		echo
		echo "| workload | access method | instructions | ratio to btree | LWLocks | mapping lookups | WAL bytes/row | index blocks |$(miss_columns HEADER)"
		echo "|---|---|--:|--:|--:|--:|--:|--:|$(miss_columns RULE)"
		insert_table_rows stmt
		echo
		echo "Per single-row transaction (EXECUTE of a prepared INSERT ... VALUES, as pgbench -M prepared runs the"
		echo "workloads; everything the backend executes: parse, executor, heap, index, WAL, commit):"
		echo
		echo "| workload | access method | instructions | ratio to btree | LWLocks | mapping lookups | WAL bytes/transaction |$(miss_columns HEADER)"
		echo "|---|---|--:|--:|--:|--:|--:|$(miss_columns RULE)"
		insert_table_rows txn
		echo
		echo "Where fastbtree's random inserts spend their instructions, per insert (self cost of each function in"
		echo "the longer run minus the shorter, over the extra rows):"
		echo
		echo "| function | self instructions/insert | inclusive |"
		echo "|---|--:|--:|"
		perl "$BENCH_DIR/cgsum.pl" --per-probe "$((2 * INSERT_ROWS))" \
			"$WORK/cg/ins_random-fbt-stmt-1.callgrind" "$WORK/cg/ins_random-fbt-stmt-3.callgrind" | head -n 25
	} >"$md"
}

# insert_section MDFILE ANNOTATEFILE: the markdown section of the insert
# measurement
insert_section()
{
	echo
	echo "## Callgrind: per index insert and per insert transaction, btree against $FBT_AM"
	echo
	echo "Deterministic and independent of machine load.  Each figure is (X3 − X1) / (rows3 − rows1) from two"
	echo "single-user backends under callgrind, each into a freshly copied, indexed, vacuumed and checkpointed"
	echo "table of $(nrows) rows, as bench/run.sh resets its write tables: per index insert, collecting only"
	echo "inside index_insert, one INSERT ... SELECT of $INSERT_ROWS rows and one of $((3 * INSERT_ROWS)) (the same"
	echo "keys first); per transaction, collecting everything, $INSERT_TXNS and $((3 * INSERT_TXNS)) single-row transactions."
	echo "$FBT_AM runs with its default settings.  Where the instructions go: [\`$(basename "$2")\`]($(basename "$2"))."
	if [ "$CACHE_SIM" = yes ]; then
		echo "L1 misses from valgrind's cache simulation (--cache-sim=yes), of the host's geometry:"
		echo "$(sed -n 's/^desc: \(I1\|D1\) cache: */\1 /p' "$WORK/cg/ins_random-fbt-txn-3.callgrind" | paste -sd ';' | sed 's/;/; /g')."
	fi
	cat "$1"
}

# --- the build measurement (--builds) -------------------------------------

# build_data_set TYPE: the data set holding the build target of a key type
build_data_set()
{
	case "$1" in
		int4) echo accounts ;;
		int8) echo int8 ;;
		timestamptz) echo ts ;;
		text_c|text_default) echo text ;;
		twocol) echo two ;;
		*) die "unknown key type '$1'" ;;
	esac
}

# builds_phase MDFILE ANNOTATEFILE: one serial CREATE INDEX per key type and
# access method, collected inside index_build; the two indexes must have
# the same size.  Writes the markdown section and the annotation of the
# first key type's fastbtree build.  Stops the cluster.
builds_phase()
{
	local md=$1 annotate=$2 type side base target k rows b w
	declare -A ROWS=()

	ensure_packages "the callgrind measurement" valgrind
	command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate not found (package valgrind)"
	mkdir -p "$WORK/cg" && chown "$BENCH_USER:" "$WORK/cg"
	for type in "${KEY_TYPES[@]}"; do
		load_data "$(build_data_set "$type")"
		target=$(probe_build_target "$type")
		ROWS[$type]=$(psql_q "SELECT count(*) FROM ${target% (*}") || die "cannot count the rows of ${target% (*}"
		for side in bt fbt; do
			{
				echo "CREATE INDEX cg_build_tmp ON ${target% (*} USING $(side_am "$side") (${target#* (}"
				echo "SELECT pg_relation_size('cg_build_tmp') AS index_bytes"
				echo "DROP INDEX cg_build_tmp"
			} >"$WORK/cg/build-$type-$side.sql"
		done
	done
	psql_q "CHECKPOINT" >/dev/null || die "CHECKPOINT failed"
	log "stopping the cluster for the callgrind runs (each one a single-user backend under valgrind)"
	stop_cluster

	CG_TOTAL=$((2 * ${#KEY_TYPES[@]}))
	for type in "${KEY_TYPES[@]}"; do
		for side in bt fbt; do
			base="$WORK/cg/build-$type-$side"
			cg_single "$base" index_build "max_parallel_maintenance_workers=0 maintenance_work_mem=512MB"
			k="build:$type:$side"
			cg_record "$k" "$base" btree
			CG[$k:bytes]=$(cg_column "$base" index_bytes)
			printf '%s: [%2d/%d] build %-13s %-9s %14s instructions, %s index bytes\n' \
				"$LOG_TAG" "$CG_DONE" "$CG_TOTAL" "$type" "$(side_am "$side")" "${CG[$k:total]}" "${CG[$k:bytes]}"
		done
		[ "${CG[build:$type:bt:bytes]}" = "${CG[build:$type:fbt:bytes]}" ] ||
			die "build $type: btree's index has ${CG[build:$type:bt:bytes]} bytes, $FBT_AM's ${CG[build:$type:fbt:bytes]}"
	done
	write_annotation "$WORK/cg/build-${KEY_TYPES[0]}-fbt.callgrind" "$annotate"

	{
		echo
		echo "| key type | table (columns) | rows | instructions per row, btree | $FBT_AM | ratio | LWLocks per 1000 rows, btree | $FBT_AM | index bytes |"
		echo "|---|---|--:|--:|--:|--:|--:|--:|--:|"
		for type in "${KEY_TYPES[@]}"; do
			rows=${ROWS[$type]}
			b=${CG[build:$type:bt:total]}
			w=${CG[build:$type:fbt:total]}
			printf '| %s | %s | %s | %.1f | %.1f | %.4f | %.1f | %.1f | %s |\n' "$(type_label "$type")" \
				"$(probe_build_target "$type")" "$rows" "$(awk -v a="$b" -v n="$rows" 'BEGIN { print a / n }')" \
				"$(awk -v a="$w" -v n="$rows" 'BEGIN { print a / n }')" "$(ratio "$w" "$b")" \
				"$(awk -v a="${CG[build:$type:bt:lwlocks]}" -v n="$rows" 'BEGIN { print 1000 * a / n }')" \
				"$(awk -v a="${CG[build:$type:fbt:lwlocks]}" -v n="$rows" 'BEGIN { print 1000 * a / n }')" \
				"${CG[build:$type:fbt:bytes]}"
		done
	} >"$md"
}

# builds_section MDFILE ANNOTATEFILE: the markdown section of the build
# measurement
builds_section()
{
	echo
	echo "## Callgrind: per row of a serial CREATE INDEX, btree against $FBT_AM"
	echo
	echo "Deterministic and independent of machine load.  One CREATE INDEX per key type and access method on"
	echo "the table bench/run.sh's build benchmark indexes, in a single-user backend under callgrind"
	echo "(max_parallel_maintenance_workers = 0, maintenance_work_mem = 512MB), collected inside index_build:"
	echo "the heap scan, the sort, loading the pages and their WAL.  Instructions per row of the table; the"
	echo "two indexes had the same size.  Ratios below 1 mean $FBT_AM executes fewer instructions.  Where"
	echo "the instructions go: [\`$(basename "$2")\`]($(basename "$2"))."
	cat "$1"
}

# --- the per-statement measurement (--workloads) --------------------------

# wl_write_statements NAME SIDE FILE1 FILE3: while the cluster runs, write
# the statements of WL_STATEMENTS transactions of workload NAME's script
# for SIDE to FILE1, one a line, and the same three times to FILE3.  Each
# "\set VAR random(LO, HI)" of the script takes, in transaction i (0, 1,
# ...), the value LO + (i * 7919 + 104729 * v) mod (HI - LO + 1), v the
# variable's number in the script: spread over its range and the same on
# both sides.  LO and HI may use :scale and :nrows, evaluated by the
# server as pgbench does (integer arithmetic).  Dies on any other
# meta-command.
wl_write_statements()
{
	local name=$1 side=$2 script line var expr lo hi bounds stmts
	local -a defs=()

	script=$(render_script "$name" "$side")
	while IFS= read -r line; do
		case "$line" in
			'\set '*) ;;
			'\'*) die "workloads/$name.sql: --workloads cannot run '$line'" ;;
			*) continue ;;
		esac
		read -r _ var expr <<<"$line"
		[[ $expr =~ ^random\((.*),(.*)\)$ ]] ||
			die "workloads/$name.sql: --workloads understands '\\set VAR random(LO, HI)' only, not '$line'"
		lo=${BASH_REMATCH[1]//:scale/$SCALE}
		hi=${BASH_REMATCH[2]//:scale/$SCALE}
		lo=${lo//:nrows/$(nrows)}
		hi=${hi//:nrows/$(nrows)}
		[[ "$lo$hi" != *:* ]] || die "workloads/$name.sql: a bound of '$line' uses a variable other than :scale and :nrows"
		bounds=$(psql_q "SELECT ($lo)::bigint, ($hi)::bigint - ($lo)::bigint + 1") ||
			die "workloads/$name.sql: cannot evaluate the bounds of '$line'"
		[[ $bounds =~ ^-?[0-9]+\|[1-9][0-9]*$ ]] || die "workloads/$name.sql: empty range in '$line' ($bounds)"
		defs+=("$var=${bounds%|*}:${bounds#*|}")
	done <"$script"
	stmts=$(statements "$script" |
		perl -e 'my ($count, $scale, $nrows, @defs) = @ARGV;
			my @stmts = <STDIN>;
			chomp @stmts;
			for my $i (0 .. $count - 1) {
				my %val = (scale => $scale, nrows => $nrows);
				my $v = 0;
				for my $d (@defs) {
					my ($n, $lo, $span) = $d =~ /^(\w+)=(-?\d+):(\d+)$/ or die "bad definition $d\n";
					$v++;
					$val{$n} = $lo + ($i * 7919 + 104729 * $v) % $span;
				}
				for my $s (@stmts) {
					(my $t = $s) =~ s/(?<![:\w]):([A-Za-z_]\w*)/exists $val{$1} ? $val{$1} : die "unknown variable :$1\n"/ge;
					print "$t\n";
				}
			}' "$WL_STATEMENTS" "$SCALE" "$(nrows)" "${defs[@]}") ||
		die "workloads/$name.sql: writing its statements failed"
	[ -n "$stmts" ] || die "workloads/$name.sql: no statements"
	echo "$stmts" >"$3"
	{ echo "$stmts"; echo "$stmts"; echo "$stmts"; } >"$4"
}

# workload_phase MDFILE ANNOTATEFILE: every workload of WORKLOADS, btree
# and fastbtree with its default settings, WL_STATEMENTS transactions and
# the same three times, everything collected (the index layer is summed
# from the same profiles); the rows each side printed must be the same.
# Writes the markdown section and the annotation of the last workload's
# fastbtree run.  Stops the cluster.
workload_phase()
{
	local md=$1 annotate=$2 name side loops base k gucs w b wi bi last
	declare -A WL_GUCS=()

	ensure_packages "the callgrind measurement" valgrind
	command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate not found (package valgrind)"
	mkdir -p "$WORK/cg" "$WORK/scripts" && chown "$BENCH_USER:" "$WORK/cg" "$WORK/scripts"
	for name in $WORKLOADS; do
		# shellcheck disable=SC2046
		load_data $(wl_meta "$name" data)
		WL_GUCS[$name]=$(wl_meta "$name" gucs)
		BENCH_PGOPTIONS=$(gucs_to_pgoptions "${WL_GUCS[$name]}")
		for side in bt fbt; do
			check_plans "$name" "$side" "$(render_script "$name" "$side")"
			log "plan ok: $name ($side): ${PLAN_SUMMARY[$name:$side]}"
			wl_write_statements "$name" "$side" "$WORK/cg/wl-$name-$side-1.sql" "$WORK/cg/wl-$name-$side-3.sql"
		done
		BENCH_PGOPTIONS=
	done
	log "stopping the cluster for the callgrind runs (each one a single-user backend under valgrind)"
	stop_cluster

	CG_TOTAL=$((4 * $(wc -w <<<"$WORKLOADS")))
	for name in $WORKLOADS; do
		for side in bt fbt; do
			for loops in 1 3; do
				base="$WORK/cg/wl-$name-$side-$loops"
				cg_single "$base" "" "${WL_GUCS[$name]}"
				k="wl:$name:$side:all:$loops"
				CG[$k:probes]=$((loops * WL_STATEMENTS))
				cg_record "$k" "$base" btree
				printf '%s: [%2d/%d] %-12s %-9s statements=%-5d %14s instructions\n' \
					"$LOG_TAG" "$CG_DONE" "$CG_TOTAL" "$name" "$(side_am "$side")" "${CG[$k:probes]}" "${CG[$k:total]}"
			done
		done
		# the rows printed (not the plans' names): the same on both sides
		if ! diff <(grep '^[[:space:]]*[0-9]*: ' "$WORK/cg/wl-$name-bt-3.stdout") \
			<(grep '^[[:space:]]*[0-9]*: ' "$WORK/cg/wl-$name-fbt-3.stdout") >"$WORK/cg/wl-$name.diff"; then
			head -n 20 "$WORK/cg/wl-$name.diff" >&2
			die "$name: btree and $FBT_AM returned different rows"
		fi
		grep -q '^[[:space:]]*[0-9]*: ' "$WORK/cg/wl-$name-bt-3.stdout" || die "$name: the statements returned no rows"
		last=$name
	done
	write_annotation "$WORK/cg/wl-$last-fbt-3.callgrind" "$annotate"

	{
		echo
		echo "| workload | plan, btree | plan, $FBT_AM | instructions, btree | $FBT_AM | ratio | index layer, btree | $FBT_AM | ratio | LWLocks, btree | $FBT_AM | mapping lookups, btree | $FBT_AM |"
		echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
		for name in $WORKLOADS; do
			b=$(per_probe "wl:$name:bt:all" total)
			w=$(per_probe "wl:$name:fbt:all" total)
			bi=$(per_probe "wl:$name:bt:all" index)
			wi=$(per_probe "wl:$name:fbt:all" index)
			printf '| %s | %s | %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s |\n' "$name" \
				"${PLAN_SUMMARY[$name:bt]}" "${PLAN_SUMMARY[$name:fbt]}" "$b" "$w" "$(ratio "$w" "$b")" \
				"$bi" "$wi" "$(ratio "$wi" "$bi" | awk '$1 == "nan" { print "–"; next } { printf "%.3f\n", $1 }')" \
				"$(per_probe "wl:$name:bt:all" lwlocks 2)" "$(per_probe "wl:$name:fbt:all" lwlocks 2)" \
				"$(per_probe "wl:$name:bt:all" mapping 2)" "$(per_probe "wl:$name:fbt:all" mapping 2)"
			printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$b" "$w" "$bi" "$wi" >>"$WORK/callgrind.tsv"
		done
		echo
		echo "Where $FBT_AM's $last statements spend their instructions, per statement (self cost of each function"
		echo "in the longer run minus the shorter, over the extra statements):"
		echo
		echo "| function | self instructions/statement | inclusive |"
		echo "|---|--:|--:|"
		perl "$BENCH_DIR/cgsum.pl" --per-probe "$((2 * WL_STATEMENTS))" \
			"$WORK/cg/wl-$last-fbt-1.callgrind" "$WORK/cg/wl-$last-fbt-3.callgrind" | head -n 25
	} >"$md"
}

# workload_section MDFILE ANNOTATEFILE: the markdown section of the
# per-statement measurement
workload_section()
{
	echo
	echo "## Callgrind: per statement of bench/workloads, btree against $FBT_AM"
	echo
	echo "Deterministic and independent of machine load.  Each workload's script (bench/workloads/NAME.sql,"
	echo "as bench/run.sh runs it) with its pgbench variables drawn in a fixed spread over their ranges, the"
	echo "same values on both sides: $WL_STATEMENTS transactions, then the same $WL_STATEMENTS three times, each in a"
	echo "single-user backend under callgrind with the workload's \"-- gucs:\" settings; each figure is"
	echo "(X3 − X1) / (2 × $WL_STATEMENTS), so that fixed costs (backend start, relcache loads, cold buffer reads)"
	echo "cancel.  Instructions = everything the backend executed (parse, plan, execute, heap, commit);"
	echo "index layer = the inclusive cost of the calls of index_beginscan, index_rescan, index_getnext_tid"
	echo "and index_endscan (bench/cgsum.pl), buffer manager included; LWLocks and mapping lookups are the"
	echo "whole statement's.  $FBT_AM runs with its default settings.  The rows the two sides printed were"
	echo "the same.  Plans as checked by the workloads' \"-- expect:\" lines.  Ratios below 1 mean $FBT_AM"
	echo "executes fewer instructions.  Where the instructions go: [\`$(basename "$2")\`]($(basename "$2"))."
	cat "$1"
}

main()
{
	local stem annotate md started

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	prepare_results_dir
	if [ "$MODE" = inserts ]; then
		stem=$(results_stem "$RESULTS_DIR" -callgrind-inserts)
		annotate="$stem-ins_random-$FBT_AM.txt"
	elif [ "$MODE" = builds ]; then
		stem=$(results_stem "$RESULTS_DIR" -callgrind-builds)
		annotate="$stem-${KEY_TYPES[0]}-$FBT_AM.txt"
	elif [ "$MODE" = workloads ]; then
		stem=$(results_stem "$RESULTS_DIR" -callgrind-workloads)
		annotate="$stem-${WORKLOADS##* }-$FBT_AM.txt"
	else
		stem=$(results_stem "$RESULTS_DIR" -callgrind)
		annotate="$stem-${KEY_TYPES[0]}-$FBT_AM.txt"
	fi
	md="$stem.md"

	build_extension
	setup_cluster
	if [ "$MODE" = fast_compare ]; then
		load_data probekeys
		callgrind_phase "$WORK/callgrind.md" "$annotate"
	elif [ "$MODE" = inserts ]; then
		insert_phase "$WORK/callgrind.md" "$annotate"
	elif [ "$MODE" = builds ]; then
		builds_phase "$WORK/callgrind.md" "$annotate"
	elif [ "$MODE" = workloads ]; then
		workload_phase "$WORK/callgrind.md" "$annotate"
	else
		switch_phase "$WORK/callgrind.md" "$annotate"
	fi
	{
		echo "# fastbtree callgrind measurement: btree vs $FBT_AM"
		echo
		echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
		echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
		echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); $(valgrind --version)"
		echo "- scale $SCALE: $(nrows) rows per table; $(wal_mode_label)"
		if [ "$MODE" = fast_compare ]; then
			callgrind_section "$WORK/callgrind.md" "$annotate"
		elif [ "$MODE" = inserts ]; then
			insert_section "$WORK/callgrind.md" "$annotate"
		elif [ "$MODE" = builds ]; then
			builds_section "$WORK/callgrind.md" "$annotate"
		elif [ "$MODE" = workloads ]; then
			workload_section "$WORK/callgrind.md" "$annotate"
		else
			switch_section "$WORK/callgrind.md" "$annotate"
		fi
		echo
		total_time "$started"
	} >"$md"
	show_results "$md"
	log "callgrind_annotate: $annotate"
}

# switch_section MDFILE ANNOTATEFILE: the markdown section of the switch
# measurement
switch_section()
{
	echo
	echo "## Callgrind: per probe, btree against each of $FBT_AM's switches"
	echo
	echo "Deterministic and independent of machine load.  Configurations: btree; $FBT_AM with"
	echo "$(printf 'fastbtree.%s, ' "${FBT_SWITCHES[@]}" | sed 's/, $//; s/\(.*\), /\1 and /') set as named"
	echo "(fast_compare on).  Each figure is (X3 − X1) / (probes3 − probes1) from two single-user backends"
	echo "under callgrind: the nested-loop probe with fastbtree_probe() loops = 1 and 3 over the same"
	echo "$PROBE_KEYS keys, the SQL point probe with $SQL_KEYS statements and the same $SQL_KEYS three times"
	echo "(session setting $SQL_PROBE_GUCS), so that fixed costs (backend start, relcache loads, cold"
	echo "buffer reads) cancel.  \"Index layer\" = everything under index_beginscan, index_rescan,"
	echo "index_getnext_tid and index_endscan, buffer manager included.  LWLocks = calls of LWLockAcquire"
	echo "and LWLockConditionalAcquire; mapping lookups = calls of BufTableLookup (buffer-mapping hash)."
	echo "The SQL probe's LWLocks and mapping lookups \"index layer\" are not the index layer's alone:"
	echo "callgrind counts every call on a call arc it collected anything on, so the heap fetch's calls"
	echo "through the same arcs (ReadBufferExtended → mapping lookup, LockBuffer → LWLockAcquire) count"
	echo "too; the census below splits the whole statement's."
	echo "Ratios below 1 mean $FBT_AM executes fewer instructions.  Each run's switch settings were read"
	echo "back in the same backend and matched the configuration."
	echo "Where the instructions go: [\`$(basename "$2")\`]($(basename "$2"))."
	cat "$1"
}

main "$@"
