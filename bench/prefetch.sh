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
# does not read it in index scans).  One table, its rows inserted in random
# key order, so a range of keys lands on unrelated heap blocks, indexed
# USING btree and with a fastbtree twin; each side's session sets
# fastbtree.prefer to its own, so both read the same heap file (two
# tables with the same rows were 3-5% apart in the page cache whatever
# the index).  Each cold
# query runs after a restart, in a session that has first filled shared
# buffers with a filler table the size of shared buffers (pg_prewarm: every
# buffer in use, none holding the tables measured, and every one already
# touched by the backend, as a pooled connection of a server that has
# been running), then a drop of the page cache.  The same in a new session
# (the filler read by another one) is reported apart: a new backend pays a
# page fault for each shared buffer it first touches, about as much again
# as the read, on both sides.  Each pair runs one random range on both
# sides, the side that goes first alternating; the statement is planned
# (EXPLAIN) in the same session before it is timed, so that catalog reads
# are not timed.  Reports the median time of each side and the ratio
# btree / fastbtree (above 1: fastbtree faster) with its range over the
# pairs, and each side's CPU time and waits over the query (from /proc).
# With --save it writes
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
SERVER_SET=""

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
	  --server-set "NAME=VALUE ..."  server settings for the whole run, e.g.
	                    "io_method=sync" (18) or "effective_io_concurrency=16"
	  --save            write the report to the results directory
	  --results-dir DIR where --save writes; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --keep            keep the cluster (running) and its work directory
	  --help            show this help

	Takes about 4 minutes with the defaults on 2 cores, 5 with --pairs 8.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--rows|--pairs|--results-dir|--pg|--fbt-set|--server-set)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--rows=*) ROWS=${1#*=} ;;
			--pairs=*) PAIRS=${1#*=} ;;
			--fbt-set=*) FBT_SET=${1#*=} ;;
			--server-set=*) SERVER_SET=${1#*=} ;;
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

# timed_query KIND AM N LOW: run the N-row scan from key LOW on AM's side
# in a new session, planned first (EXPLAIN: catalog reads are not timed);
# print "MS CPU WAITS": its time in ms (warm: the median of eleven runs),
# the backend's CPU time over the timed run(s) in ms and the times it
# waited (voluntary context switches: a read not yet done, or a lock), per
# run.  KIND cold: the session first fills shared buffers with the filler
# table (pg_prewarm) itself, reads it (a sequential scan: it reads the
# buffers in place) and runs a cold 10-row scan of its side half the table
# away (the page cache dropped before and after it): the backend has
# touched every shared buffer and run its index's code, cold path and
# all, as a pooled connection of
# a server that has been running has (a new backend pays a page fault for
# every shared buffer it first touches, about as much again as the read
# here, on both sides; and its first scan of an access method runs code
# the process has not touched yet); coldnew: the filler is read by
# another session and the page cache dropped before this new session
# starts (the first query of a new connection); pagecache: as cold, but
# the table and its indexes read into the kernel's page cache
# (pg_prewarm, read mode: not into shared buffers) instead of dropping
# it; warm: the query run five times, then timed eleven times.  The CPU
# and waits come from /proc (schedstat, status) of the backend: "n/a"
# where they cannot be read.
timed_query()
{
	local kind=$1 am=$2 n=$3 low=$4 idx q out= line ms i
	local sets=() kv runs=1 cpu0= cpu1= w0= w1= wq rfd wfd pid usage

	# one table, its btree index and a fastbtree twin: the planner takes the
	# side's (fastbtree.prefer), the heap read is the same file
	if [ "$am" = btree ]; then idx=pf_bt_k; else idx=pf_fbt_k; fi
	sets+=("SET fastbtree.prefer = '$am';")
	if [ "$am" != btree ]; then
		for kv in $FBT_SET; do
			[[ $kv == fastbtree.*=* ]] || die "--fbt-set takes fastbtree.NAME=VALUE, got '$kv'"
			sets+=("SET ${kv%%=*} = '${kv#*=}';")
		done
	fi
	q="SELECT sum(length(pad)) FROM pf WHERE k BETWEEN $low AND $((low + n - 1))"
	[ "$kind" != warm ] || runs=11
	# (a range half the table away, for the warm-up of cold and page cache)
	wq="SELECT sum(length(pad)) FROM pf WHERE k BETWEEN $(( (low + ROWS / 2) % (ROWS - 10) )) AND $(( (low + ROWS / 2) % (ROWS - 10) + 9 ))"

	# one psql session as a coprocess: the page cache is dropped (as root)
	# while it waits between its preparation and the timed query
	# (its fds and pid kept: bash unsets PSQL and PSQL_PID once it exits)
	coproc PSQL { as_user psql -X -q -A -t -v ON_ERROR_STOP=1 2>&1; }
	rfd=${PSQL[0]} wfd=${PSQL[1]} pid=$PSQL_PID
	{
		printf '%s\n' 'SET enable_seqscan = off;' 'SET enable_bitmapscan = off;' ${sets[@]+"${sets[@]}"}
		# (cold and page cache: pg_prewarm fills shared buffers, through
		# the I/O workers on 18; the scan of the filler has the backend
		# read every buffer it holds)
		if [ "$kind" = cold ] || [ "$kind" = pagecache ]; then
			echo "SELECT pg_prewarm('pf_filler') \\g /dev/null"
			echo "SELECT sum(length(f)) FROM pf_filler \\g /dev/null"
		fi
		[ "$kind" != pagecache ] ||
			echo "SELECT pg_prewarm(c, 'read') FROM unnest(ARRAY['pf', 'pf_bt_k', 'pf_fbt_k']) c \\g /dev/null"
		echo "EXPLAIN $q;"
		if [ "$kind" = warm ]; then
			for i in 1 2 3 4 5; do echo "$q \\g /dev/null"; done
		elif [ "$kind" = pagecache ]; then
			echo "$wq \\g /dev/null"
		fi
		echo 'SELECT pg_backend_pid() AS bpid \gset'
		echo '\setenv BPID :bpid'
		echo '\echo @ready'
	} >&"$wfd"
	session_wait @ready || { echo "$out" >&2; die "the session failed before: $q"; }
	if [ "$kind" = cold ]; then
		# the warm-up scan cold too, so that what a cold scan runs the
		# first time in a backend (its code, the tablespace lookup of the
		# prefetch distance) is not timed: the page cache dropped before
		# and after it
		drop_caches
		printf '%s\n' "$wq \\g /dev/null" '\echo @warm' >&"$wfd"
		session_wait @warm || { echo "$out" >&2; die "the warm-up failed: $wq"; }
		drop_caches
	fi
	# (the backend's CPU time in ns and its waits, before and after)
	usage='\! awk '"'"'{ print "@cpu", $1 }'"'"' /proc/$BPID/schedstat; awk '"'"'/^voluntary_ctxt_switches/ { print "@waits", $2 }'"'"' /proc/$BPID/status'
	{
		echo "$usage"
		echo '\timing on'
		for i in $(seq 1 "$runs"); do echo "$q;"; done
		echo '\timing off'
		echo "$usage"
		echo '\echo @done'
	} >&"$wfd"
	while IFS= read -r -t 600 line <&"$rfd"; do
		case "$line" in
			@done) break ;;
			"@cpu "*) if [ -z "$cpu0" ]; then cpu0=${line#@cpu }; else cpu1=${line#@cpu }; fi ;;
			"@waits "*) if [ -z "$w0" ]; then w0=${line#@waits }; else w1=${line#@waits }; fi ;;
			*) out+="$line"$'\n' ;;
		esac
	done
	echo '\q' >&"$wfd" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ "$line" = @done ] || { echo "$out" >&2; die "query failed: $q"; }
	grep -q "Index Scan using $idx on pf" <<<"$out" ||
		{ echo "$out" >&2; die "not an index scan of $idx: $q"; }
	# (warm: the median of eleven runs)
	ms=$(median $(sed -n 's/^Time: \([0-9.]*\) ms.*$/\1/p' <<<"$out"))
	[ -n "$ms" ] || { echo "$out" >&2; die "no timing: $q"; }
	if [ -n "$cpu1" ] && [ -n "$w1" ]; then
		awk -v ms="$ms" -v c0="$cpu0" -v c1="$cpu1" -v w0="$w0" -v w1="$w1" -v r="$runs" \
			'BEGIN { printf "%s %.3f %.1f\n", ms, (c1 - c0) / 1e6 / r, (w1 - w0) / r }'
	else
		echo "$ms n/a n/a"
	fi
}

declare -A MS=() CPU=() WAITS=()

# session_wait MARK: read the session's output (fd rfd, timed_query's) into
# out until a line MARK; false if it ends (or 600 s pass) first
session_wait()
{
	local line
	while IFS= read -r -t 600 line <&"$rfd"; do
		[ "$line" = "$1" ] && return 0
		out+="$line"$'\n'
	done
	return 1
}

# record KIND N P AM "MS CPU WAITS"
record()
{
	local r
	[ -n "$5" ] || die "no measurement of $1, $2 rows, pair $3, $4"
	read -r -a r <<<"$5"
	MS[$1:$2:$3:$4]=${r[0]}
	CPU[$1:$2:$3:$4]=${r[1]}
	WAITS[$1:$2:$3:$4]=${r[2]}
}

# other_am AM: the other side
other_am()
{
	if [ "$1" = btree ]; then echo "$FBT_AM"; else echo btree; fi
}

# run_cold KIND: PAIRS pairs per size, each query after a restart (KIND
# cold, coldnew or pagecache: see timed_query), the side that goes first
# alternating
run_cold()
{
	local kind=$1 n p am first low i=0 total=$((${#SIZES[@]} * PAIRS * 2))

	for n in "${SIZES[@]}"; do
		for p in $(seq 1 "$PAIRS"); do
			low=$(( (RANDOM * 32768 + RANDOM) % (ROWS - n) ))
			if [ $((p % 2)) -eq 1 ]; then first=btree; else first=$FBT_AM; fi
			for am in "$first" "$(other_am "$first")"; do
				i=$((i + 1))
				stop_cluster
				start_cluster
				if [ "$kind" = coldnew ]; then
					# every shared buffer in use (as on a server that has
					# run for a while), none holding the tables measured
					psql_q "SELECT pg_prewarm('pf_filler')" >/dev/null ||
						die "pg_prewarm of pf_filler failed"
					drop_caches
				fi
				record "$kind" "$n" "$p" "$am" "$(timed_query "$kind" "$am" "$n" "$low")"
				printf '%s: [%2d/%d] %-9s %5d rows pair %d/%d %-9s %10.1f ms, CPU %s ms, %s waits\n' \
					"$LOG_TAG" "$i" "$total" "$kind" "$n" "$p" "$PAIRS" "$am" \
					"${MS[$kind:$n:$p:$am]}" "${CPU[$kind:$n:$p:$am]}" "${WAITS[$kind:$n:$p:$am]}"
			done
		done
	done
}

# run_warm: 3 * PAIRS pairs per size, each query run five times to warm
# it, then timed in the same session (before the other side's could evict its
# blocks), the side that goes first alternating
run_warm()
{
	local n p am first low npairs=$((PAIRS * 3))

	for n in "${SIZES[@]}"; do
		for p in $(seq 1 "$npairs"); do
			low=$(( (RANDOM * 32768 + RANDOM) % (ROWS - n) ))
			if [ $((p % 2)) -eq 1 ]; then first=btree; else first=$FBT_AM; fi
			for am in "$first" "$(other_am "$first")"; do
				record warm "$n" "$p" "$am" "$(timed_query warm "$am" "$n" "$low")"
			done
		done
		log "warm $n rows: $npairs pairs done"
	done
}

# median_or_na FORMAT VALUE...: their median printed with FORMAT, or n/a
# if any is n/a
median_or_na()
{
	local fmt=$1 v
	shift
	for v in "$@"; do
		[ "$v" != n/a ] || { echo n/a; return; }
	done
	printf "$fmt" "$(median "$@")"
}

# report_row KIND LABEL N NPAIRS: one table row
report_row()
{
	local kind=$1 label=$2 n=$3 npairs=$4 p b=() f=() r=() bc=() fc=() bw=() fw=() m

	for p in $(seq 1 "$npairs"); do
		b+=("${MS[$kind:$n:$p:btree]}")
		f+=("${MS[$kind:$n:$p:$FBT_AM]}")
		r+=("$(ratio "${MS[$kind:$n:$p:btree]}" "${MS[$kind:$n:$p:$FBT_AM]}")")
		bc+=("${CPU[$kind:$n:$p:btree]}")
		fc+=("${CPU[$kind:$n:$p:$FBT_AM]}")
		bw+=("${WAITS[$kind:$n:$p:btree]}")
		fw+=("${WAITS[$kind:$n:$p:$FBT_AM]}")
	done
	m=$(median_pick "${r[@]}")
	printf '| %s | %s | %.2f | %.2f | %.2f | %.2f–%.2f | %s / %s | %s / %s |\n' "$label" "$n" \
		"$(median "${b[@]}")" "$(median "${f[@]}")" "${r[m - 1]}" \
		"$(minimum "${r[@]}")" "$(maximum "${r[@]}")" \
		"$(median_or_na %.2f "${bc[@]}")" "$(median_or_na %.2f "${fc[@]}")" \
		"$(median_or_na %.0f "${bw[@]}")" "$(median_or_na %.0f "${fw[@]}")"
}

main()
{
	local started md stem n kv

	parse_args "$@"
	if [ "$(id -u)" -ne 0 ] || [ ! -w /proc/sys/vm/drop_caches ]; then
		echo "bench/prefetch.sh: needs root to drop the kernel's page cache; skipped" >&2
		exit 0
	fi
	started=$(date +%s)
	bench_prepare
	build_extension
	EXTRA_CONF="effective_io_concurrency = 64"
	for kv in $SERVER_SET; do
		[[ $kv == [a-z_]*=* ]] || die "--server-set takes NAME=VALUE, got '$kv'"
		EXTRA_CONF+=$'\n'"${kv%%=*} = '${kv#*=}'"
	done
	setup_cluster
	log "loading a table of $ROWS rows, keys a permutation of the rows"
	psql_q "CREATE TABLE pf (k int4, pad text) WITH (autovacuum_enabled = off)" \
		"INSERT INTO pf SELECT g, repeat(md5(g::text), 7) FROM generate_series(0, $ROWS - 1) g ORDER BY random()" \
		"CREATE INDEX pf_bt_k ON pf USING btree (k)" \
		"CREATE INDEX pf_fbt_k ON pf USING $FBT_AM (k)" \
		"CREATE TABLE pf_filler AS SELECT repeat('f', 1000) AS f FROM generate_series(1, 150000)" \
		"CHECKPOINT" \
		"VACUUM (FREEZE, ANALYZE) pf" "VACUUM (FREEZE) pf_filler" \
		"CHECKPOINT" >/dev/null ||
		die "loading the tables failed"
	# Every tuple frozen, so that no scan sets hint bits: the commits must
	# be flushed first (the cluster runs with synchronous_commit off, and
	# a hint bit waits for its commit's flush), hence the CHECKPOINT before
	# VACUUM (lib.sh's vacuum_analyze, a synchronous commit first, left
	# every page of pf not all-visible here).  Unhinted, the first scan of
	# a range set them, dirtied its blocks and (with checksums, 18's
	# default) logged a full page image of each, on whichever side went
	# first, and evicting the dirtied filler buffers wrote them in the
	# timed scans.
	[ "$(psql_q "SELECT relallvisible = relpages FROM pg_class WHERE relname = 'pf'")" = t ] ||
		die "VACUUM left pages of pf not all-visible"
	run_cold cold
	run_cold coldnew
	run_cold pagecache
	run_warm
	md="$WORK/prefetch.md"
	{
		echo "# Heap prefetch: cold and warm index scans, btree vs $FBT_AM"
		echo
		echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
		echo "- $(as_user postgres --version); fastbtree source $(source_revision)"
		echo "- one table of $ROWS rows (about 240 bytes each), inserted in random key order, indexed USING btree and with a $FBT_AM twin (each side sets fastbtree.prefer to itself); \`SELECT sum(length(pad)) FROM pf WHERE k BETWEEN :low AND :low + N - 1\`, plain index scan"
		echo "- cold: server restarted; the session that runs the query first fills shared buffers with another table (pg_prewarm), reads it (sequential scan), drops the page cache and scans 10 rows elsewhere through its side's index, then the page cache is dropped again (the backend has touched every shared buffer and run the index's code cold, as a pooled connection of a server that has been running); cold, new session: the filler read by another session, the page cache dropped, then a new session runs the query (it pays a page fault for each shared buffer it first touches); page cache: as cold, but the table and indexes read into the page cache (pg_prewarm, read mode) instead of dropping it; $PAIRS pairs each; warm: the query run five times, then timed eleven times in the same session (their median), $((PAIRS * 3)) pairs"
		[ -z "$FBT_SET" ] || echo "- $FBT_AM's queries run after: $FBT_SET"
		[ -z "$SERVER_SET" ] || echo "- server settings (postgresql.conf, after effective_io_concurrency = 64): $SERVER_SET"
		echo "- shared_buffers = $SHARED_BUFFERS, effective_io_concurrency = 64; times in ms are medians; ratio = btree / $FBT_AM (above 1: $FBT_AM faster), of the median pair, min–max over the pairs"
		echo "- CPU ms: the backend's CPU time (user and system, /proc/PID/schedstat) over the query, median; waits: its voluntary context switches over the query (reads not yet done), median; btree / $FBT_AM.  A side whose CPU time is its whole time no longer waits for the disk: what is left is CPU, most of it the kernel's per block read (system time), which prefetching cannot overlap in one backend"
		echo
		echo "| cache | rows | btree ms | $FBT_AM ms | ratio | min–max | CPU ms | waits |"
		echo "|---|--:|--:|--:|--:|--:|--:|--:|"
		for n in "${SIZES[@]}"; do report_row cold cold "$n" "$PAIRS"; done
		for n in "${SIZES[@]}"; do report_row coldnew "cold, new session" "$n" "$PAIRS"; done
		for n in "${SIZES[@]}"; do report_row pagecache "page cache" "$n" "$PAIRS"; done
		for n in "${SIZES[@]}"; do report_row warm warm "$n" $((PAIRS * 3)); done
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
