#!/usr/bin/env bash
#
# bench/space.sh
#	Index size, btree against fastbtree, on the workloads of issue 11
#	(space and maintenance parity): builds and inserts with unique and
#	low-cardinality keys, a 90% range delete with VACUUM and reinsert, a
#	queue, the last two again with a VACUUM cancelled in its index pass
#	(issue 26, item 2), and update churn.
#
# Run as root after scripts/install-deps.sh.  Builds the extension into
# its work directory and runs a throwaway cluster, as bench/run.sh (see
# lib.sh).  Every step runs the same statements on two tables with the
# same contents, one indexed USING btree and one USING fastbtree (btree
# with its defaults: deduplication on), and prints a markdown table of
# both indexes' sizes after each step and their ratio.  For the queue and
# the reinsert it also counts the index blocks a scan touches
# (pg_statio_user_indexes, hits plus reads), the cost of empty pages a
# tree keeps.  Sizes do not depend on timing: the figures are exact, not
# noisy, for a given major and data.  With --save it writes
# bench/results/DATE-HOST-space.md.

set -uo pipefail
export LC_ALL=C

LOG_TAG=space
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RESULTS_DIR="$BENCH_DIR/results"
ROWS=1000000
SAVE=no
COMMAND_LINE="bash bench/space.sh${*:+ $*}"
SHARED_BUFFERS=1GB

usage()
{
	cat <<-EOF
	Usage: bash bench/space.sh [options]

	Index sizes of btree and fastbtree after the same statements.  Run as
	root.

	Options:
	  --rows N          rows of the main tables (default $ROWS; the queue
	                    keeps N/2 live and turns N/4 over per cycle, the
	                    update churn updates N/10 rows per round)
	  --save            write the table to the results directory
	  --results-dir DIR where --save writes; default bench/results
	  --pg N            PostgreSQL major: 15 (Debian's, the default) or a build of
	                    scripts/install-deps.sh --pg N --release
	  --wal-mode MODE   fastbtree's WAL: generic (the default) or compact
	                    (preloaded: its own WAL records)
	  --keep            keep the cluster (running) and its work directory
	  --help            show this help

	Takes about 4 minutes with the default rows on 2 cores.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--rows|--results-dir|--pg|--wal-mode)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--rows=*) ROWS=${1#*=} ;;
			--save) SAVE=yes ;;
			*) common_option "$1" ;;
		esac
		shift
	done
	is_posint "$ROWS" || die "--rows must be a positive integer, got '$ROWS'"
	[ "$ROWS" -ge 1000 ] || die "--rows must be at least 1000"
}

TABLE_ROWS=()

# both SQL...: run each SQL (with %AM% for the access method, %T% for the
# table name) in turn, as its own statement (VACUUM cannot share one), on
# the btree side, then the same on the fastbtree side
both()
{
	local am t sql s cmds

	for am in btree "$FBT_AM"; do
		t=$(side_table "$am")
		cmds=("SET client_min_messages = warning")
		for sql in "$@"; do
			s=${sql//%AM%/$am}
			cmds+=("${s//%T%/$t}")
		done
		psql_q "${cmds[@]}" >/dev/null || die "failed on the $am side: ${cmds[*]:1}"
	done
}

# side_table AM: the table name of the current step on AM's side
side_table()
{
	if [ "$1" = btree ]; then echo "${STEP}_bt"; else echo "${STEP}_fbt"; fi
}

# index_bytes TABLE: size in bytes of TABLE's index TABLE_k
index_bytes()
{
	psql_q "SELECT pg_relation_size('${1}_k')"
}

# record LABEL TARGET: one table row with both sides' index sizes now
record()
{
	local label=$1 target=$2 b f

	b=$(index_bytes "${STEP}_bt")
	f=$(index_bytes "${STEP}_fbt")
	TABLE_ROWS+=("| $label | $(mb "$b") | $(mb "$f") | $(ratio3 "$f" "$b") | $target |")
	log "$label: btree $(mb "$b") MB, $FBT_AM $(mb "$f") MB"
}

# ratio3 A B: A / B with three decimals
ratio3()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.3f\n", a / b }'
}

mb()
{
	awk -v b="$1" 'BEGIN { printf "%.1f\n", b / 1048576 }'
}

# blocks_touched SQL: index blocks (hits + reads) the query SQL
# touches, per side, as "btree fastbtree"
blocks_touched()
{
	local sql=$1 am t s out=()

	for am in btree "$FBT_AM"; do
		t=$(side_table "$am")
		s=${sql//%T%/$t}
		out+=("$(psql_q "SET enable_seqscan = off" "SET enable_bitmapscan = off" \
			"SELECT pg_stat_force_next_flush()" \
			"CREATE TEMP TABLE b0 AS SELECT idx_blks_hit + idx_blks_read AS n FROM pg_statio_user_indexes WHERE indexrelname = '${t}_k'" \
			"$s" \
			"SELECT pg_stat_force_next_flush()" \
			"SELECT s.idx_blks_hit + s.idx_blks_read - b0.n FROM pg_statio_user_indexes s, b0 WHERE s.indexrelname = '${t}_k'" | tail -n 1)")
	done
	echo "${out[*]}"
}

record_blocks()
{
	local label=$1 target=$2 sql=$3 b f

	read -r b f <<<"$(blocks_touched "$sql")"
	TABLE_ROWS+=("| $label | $b blocks | $f blocks | $(ratio3 "$f" "$b") | $target |")
	log "$label: btree $b, $FBT_AM $f index blocks"
}

# cancel_vacuum_both: on each side, a VACUUM of the step's table slowed
# down by vacuum_cost_delay and cancelled (pg_cancel_backend) a moment after
# pg_stat_progress_vacuum shows it vacuuming the index; counts in
# CANCELLED[0] (btree) and CANCELLED[1] the VACUUMs that the cancel ended
# (one may also finish first, on a fast machine)
cancel_vacuum_both()
{
	local am t pid vpid i side=0

	for am in btree "$FBT_AM"; do
		t=$(side_table "$am")
		as_user psql -X -q -v ON_ERROR_STOP=1 -c "SET vacuum_cost_delay = '5ms'" \
			-c "SET vacuum_cost_limit = 100" -c "VACUUM $t" >/dev/null 2>&1 &
		pid=$!
		for i in $(seq 1 6000); do
			kill -0 "$pid" 2>/dev/null || break
			vpid=$(psql_q "SELECT pid FROM pg_stat_progress_vacuum
				WHERE relid = '$t'::regclass AND phase = 'vacuuming indexes'")
			if [ -n "$vpid" ]; then
				sleep 0.2
				psql_q "SELECT pg_cancel_backend($vpid)" >/dev/null
				break
			fi
			sleep 0.01
		done
		# a failed status: the VACUUM ended in an error (the cancel)
		wait "$pid" || CANCELLED[side]=$((CANCELLED[side] + 1))
		side=$((side + 1))
	done
}

run_steps()
{
	local n=$ROWS half=$((ROWS / 2)) c

	STEP=u
	log "unique int4 keys: build from $n rows, insert $half more"
	both "CREATE TABLE %T% (k int4) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i * 2 FROM generate_series(1, $n) i ORDER BY hashint4(i);
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	record "unique int4, after build ($n rows)" "<= 1.00"
	both "INSERT INTO %T% SELECT i * 2 + 1 FROM generate_series(1, $half) i ORDER BY hashint4(i + 7);"
	record "unique int4, after $half random inserts" "<= 1.00"

	STEP=d
	log "int4 with 1,000 distinct keys"
	both "CREATE TABLE %T% (k int4) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT hashint4(i) % 1000 FROM generate_series(1, $n) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	record "int4 1,000 distinct, after build" "<= 1.05"
	both "INSERT INTO %T% SELECT hashint4(i + $n) % 1000 FROM generate_series(1, $half) i;"
	record "int4 1,000 distinct, after $half inserts" "<= 1.05"

	STEP=x
	log "text with 1,000 distinct keys"
	both "CREATE TABLE %T% (k text) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT md5((hashint4(i) % 1000)::text) FROM generate_series(1, $n) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k COLLATE \"C\");"
	record "text 1,000 distinct, after build" "<= 1.05"
	both "INSERT INTO %T% SELECT md5((hashint4(i + $n) % 1000)::text) FROM generate_series(1, $half) i;"
	record "text 1,000 distinct, after $half inserts" "<= 1.05"

	STEP=r
	log "delete 90% by key range, VACUUM, reinsert"
	both "CREATE TABLE %T% (k int4, pad int4) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i, i FROM generate_series(1, $n) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	record "range delete: built, $n unique keys" "<= 1.10"
	both "DELETE FROM %T% WHERE k <= $((n * 9 / 10))" "VACUUM %T%"
	record "range delete: 90% deleted, VACUUM" "<= 1.10"
	both "INSERT INTO %T% SELECT i, i FROM generate_series($((n + 1)), $((n + n * 9 / 10))) i;"
	record "range delete: reinserted $((n * 9 / 10))" "<= 1.10"
	record_blocks "range delete: full index scan, index blocks" "<= 1.00" \
		"SELECT count(*) FROM (SELECT k FROM %T% WHERE k > 0 OFFSET 0) s"

	STEP=q
	log "queue: $half live rows, $((n / 4)) turned over per cycle, VACUUM each cycle"
	both "CREATE TABLE %T% (k int8, pad text) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i, 'payload' FROM generate_series(1, $half) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	for c in $(seq 1 10); do
		both "DELETE FROM %T% WHERE k <= (SELECT min(k) FROM %T%) + $((n / 4)) - 1" \
			"INSERT INTO %T% SELECT (SELECT max(k) FROM %T%) + i, 'payload' FROM generate_series(1, $((n / 4))) i" \
			"VACUUM %T%"
		if [ "$c" -eq 1 ] || [ "$c" -eq 5 ] || [ "$c" -eq 10 ]; then
			record "queue, after cycle $c" "<= 1.10, flat"
		fi
	done
	record_blocks "queue: min(k), index blocks" "<= 2.00" \
		"SELECT min(k) FROM %T%"

	STEP=qc
	log "queue with VACUUM cancelled mid-pass: $half live rows, $((n / 4)) turned over per cycle"
	both "CREATE TABLE %T% (k int8, pad text) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i, 'payload' FROM generate_series(1, $half) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	CANCELLED=(0 0)
	for c in $(seq 1 6); do
		both "DELETE FROM %T% WHERE k <= (SELECT min(k) FROM %T%) + $((n / 4)) - 1"
		cancel_vacuum_both
		both "INSERT INTO %T% SELECT (SELECT max(k) FROM %T%) + i, 'payload' FROM generate_series(1, $((n / 4))) i" \
			"VACUUM %T%"
		if [ "$c" -eq 1 ] || [ "$c" -eq 6 ]; then
			record "queue, VACUUM cancelled mid-pass each cycle, after cycle $c" "<= 1.05"
		fi
	done
	TABLE_ROWS+=("| queue, VACUUMs cancelled in the index pass | ${CANCELLED[0]} of 6 | ${CANCELLED[1]} of 6 | | 6 of 6 |")

	STEP=rc
	log "delete 90% by key range, VACUUM, VACUUM cancelled mid-pass, reinsert"
	both "CREATE TABLE %T% (k int4, pad int4) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i, i FROM generate_series(1, $n) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);"
	both "DELETE FROM %T% WHERE k <= $((n * 9 / 10))" "VACUUM %T%" \
		"DELETE FROM %T% WHERE k % 10 = 0"
	CANCELLED=(0 0)
	cancel_vacuum_both
	both "INSERT INTO %T% SELECT i, i FROM generate_series($((n + 1)), $((n + n * 9 / 10))) i;"
	record "range delete, VACUUM cancelled mid-pass, reinserted $((n * 9 / 10))" "<= 1.05"
	TABLE_ROWS+=("| range delete, VACUUM cancelled in the index pass | ${CANCELLED[0]} of 1 | ${CANCELLED[1]} of 1 | | 1 of 1 |")

	STEP=c
	log "update churn: $((n / 10)) rows, 10 rounds of non-HOT updates"
	both "CREATE TABLE %T% (k int4, v int4) WITH (autovacuum_enabled = off);
		INSERT INTO %T% SELECT i, i FROM generate_series(1, $((n / 10))) i;
		CREATE INDEX %T%_k ON %T% USING %AM% (k);
		CREATE INDEX %T%_v ON %T% USING %AM% (v);"
	record "update churn: built, $((n / 10)) rows" ""
	local b0 f0 b1 f1
	b0=$(index_bytes c_bt)
	f0=$(index_bytes c_fbt)
	for c in $(seq 1 10); do
		both "UPDATE %T% SET v = v + 1;"
	done
	record "update churn: after 10 rounds (k index, unchanged keys)" ""
	b1=$(index_bytes c_bt)
	f1=$(index_bytes c_fbt)
	TABLE_ROWS+=("| update churn: growth of the k index | $(mb $((b1 - b0))) | $(mb $((f1 - f0))) | $(ratio3 $((f1 - f0)) $((b1 - b0))) | <= 1.20 |")
}

main()
{
	local started md stem

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	build_extension
	setup_cluster
	run_steps
	md="$WORK/space.md"
	{
		echo "# Index size: btree vs $FBT_AM"
		echo
		echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`$COMMAND_LINE\`"
		echo "- $(as_user postgres --version); fastbtree source $(source_revision); $(wal_mode_label)"
		echo "- btree with its defaults (deduplicate_items = on); sizes in MB (pg_relation_size); ratio = $FBT_AM / btree; target from issue 11"
		echo
		echo "| step | btree | $FBT_AM | ratio | target |"
		echo "|---|--:|--:|--:|---|"
		printf '%s\n' "${TABLE_ROWS[@]}"
		echo
		total_time "$started"
	} >"$md"
	if [ "$SAVE" = yes ]; then
		prepare_results_dir
		stem=$(results_stem "$RESULTS_DIR" -space)
		cp "$md" "$stem.md"
		show_results "$stem.md"
	else
		echo
		cat "$md"
	fi
}

main "$@"
