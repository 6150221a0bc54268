# shellcheck shell=bash
#
# bench/lib.sh
#	Shared by bench/run.sh, bench/scaling.sh, bench/callgrind.sh,
#	bench/space.sh and bench/interleave.sh: the private build of the
#	extension, the throwaway cluster, the benchmark data sets, the pgbench
#	workload scripts, statistics helpers, the fastbtree switch
#	configurations and the callgrind measurements.
#
# Sourced, not executed.  The caller sets LOG_TAG (the prefix of its log
# lines), may override the defaults below from its command line, and then
# calls bench_prepare, build_extension and setup_cluster in that order.
#
# Every data set exists twice with identical contents and physical order:
# once indexed USING btree (names with "_bt", or pgbench's own names) and
# once USING fastbtree (names with "_fbt").  A "side" below is bt or fbt.

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BENCH_USER=fbbench
BENCH_DB=fbbench
FBT_AM=fastbtree
WORDS_FILE=/usr/share/dict/american-english

# Defaults; the callers' options override them.
SCALE=10
SHARED_BUFFERS=2GB
MAX_CONNECTIONS=50
KEEP=no
# fastbtree's WAL mode (--wal-mode): generic, or compact (the library in
# shared_preload_libraries, its own resource manager)
WAL_MODE=generic

# Keys per fastbtree_probe() call (in-server probe benchmark and callgrind)
# and rows of the nested-loop driver table.
PROBE_KEYS=20000
NL_KEYS=2000

BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
SRC_DIR=$(cd "$BENCH_DIR/.." && pwd)
WORK=
PORT=
PG_BINDIR=
EXT_LOADING=		# destdir or control_path (build_extension)
CLUSTER_STARTED=no
# Extra server settings for the connections the next as_user opens, as in
# PGOPTIONS ("-c name=value ...").
BENCH_PGOPTIONS=
# data set name -> yes, once loaded
declare -A LOADED=()
# number of distinct text keys, once the text data set is loaded
TEXT_KEYS=0

# The key types of the probe, build and callgrind measurements, in report
# order.  probe_index, probe_keys_table, probe_build_target and type_label
# describe each.
KEY_TYPES=(int4 int8 timestamptz text_c text_default twocol)

log()
{
	echo "$LOG_TAG: $*"
}

warn()
{
	echo "$LOG_TAG: warning: $*" >&2
}

die()
{
	echo "$LOG_TAG: ERROR: $*" >&2
	exit 1
}

as_user()
{
	runuser -u "$BENCH_USER" -- env \
		HOME="$WORK" \
		PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" \
		LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		PGHOST="$WORK/sock" PGPORT="$PORT" PGUSER="$BENCH_USER" PGDATABASE="$BENCH_DB" \
		PGOPTIONS="$BENCH_PGOPTIONS" \
		"$@"
}

# psql_q SQL...: run each SQL in turn in one session of the benchmark
# database; print unaligned tuples only
psql_q()
{
	local args=() s

	for s in "$@"; do
		args+=(-c "$s")
	done
	as_user psql -X -q -A -t -v ON_ERROR_STOP=1 "${args[@]}"
}

# sql_lit STRING: STRING as an SQL string literal
sql_lit()
{
	printf "'%s'" "${1//\'/\'\'}"
}

is_posint()
{
	[[ "$1" =~ ^[1-9][0-9]*$ ]]
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

# ratio A B: A / B with six decimals
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.6f\n", a / b }'
}

# median_pick RATIO...: the position (1-based, in argument order) of the
# median of the ratios: the middle one once sorted; when their number is
# even, of the two middle ones the one nearer 1, so that the choice never
# makes a difference look larger than the median does, whichever way the
# ratio reads.  Unlike median it always names one of the given values, so
# that the figures a table prints next to a median ratio can be the two
# runs that make that ratio.
median_pick()
{
	local i=0 v

	for v in "$@"; do
		i=$((i + 1))
		printf '%s %d\n' "$v" "$i"
	done | sort -g -k1,1 -k2,2n | awk '
		function dist(x) { return x < 1 ? 1 - x : x - 1 }
		{ v[NR] = $1; p[NR] = $2 }
		END {
			k = int((NR + 1) / 2)
			if (NR % 2 == 0 && dist(v[k + 1]) < dist(v[k]))
				k++
			print p[k]
		}'
}

# mean_se VALUE...: "mean ± standard error" of the values (the standard
# deviation over sqrt(count)), four decimals
mean_se()
{
	printf '%s\n' "$@" | awk '{ n++; s += $1; q += $1 * $1 }
		END {
			m = s / n
			v = n > 1 ? (q - n * m * m) / (n - 1) : 0
			printf "%.4f ± %.4f\n", m, sqrt(v > 0 ? v : 0) / sqrt(n)
		}'
}

# rel_spread VALUE...: (max - min) / median of the values, six decimals;
# how far repeat measurements of one thing strayed from each other
rel_spread()
{
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			if (m == 0) print "nan"; else printf "%.6f\n", (v[NR] - v[1]) / m
		}'
}

# noise_verdict RATIO MIN MAX NOISE NPAIRS: whether a ratio of fastbtree to
# btree differs from 1 by more than the machine's run-to-run noise.  MIN and
# MAX are the smallest and largest ratio over the pairs, NOISE the largest
# rel_spread of one configuration's repeat runs.  Prints "beyond noise"
# when every pair points the same way (MAX < 1 or MIN > 1) and the ratio is
# further from 1 than NOISE, "within noise" otherwise, and "noise not
# measured" with fewer than two pairs.  The test is deliberately
# conservative: slow drift of the machine widens NOISE although the
# interleaved pairs cancel most of it.
noise_verdict()
{
	if [ "$5" -lt 2 ]; then
		echo "noise not measured"
		return
	fi
	awk -v r="$1" -v lo="$2" -v hi="$3" -v n="$4" 'BEGIN {
		d = r - 1; if (d < 0) d = -d
		print (((hi < 1 || lo > 1) && d > n) ? "beyond noise" : "within noise")
	}'
}

# pct VALUE: a fraction as a percentage with one decimal ("0.123" -> "12.3%")
pct()
{
	awk -v v="$1" 'BEGIN { printf "%.1f%%\n", v * 100 }'
}

# tps_difference RATIO: "fastbtree N% faster" or "N% slower" for a tps
# ratio fastbtree/btree
tps_difference()
{
	awk -v r="$1" -v am="$FBT_AM" 'BEGIN {
		if (r >= 1) printf "%s %.1f%% faster\n", am, (r - 1) * 100
		else printf "%s %.1f%% slower\n", am, (1 - r) * 100
	}'
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
			echo "$LOG_TAG: warning: could not stop the cluster in $WORK/data" >&2
	fi
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		cd /
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# port_in_use, pick_port
# shellcheck source=scripts/pgport.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/pgport.sh"

# ensure_packages REASON PACKAGE...: apt-get install the Debian packages
# that are missing, saying why; refresh the package lists only if needed
ensure_packages()
{
	local reason=$1 missing=() pkg

	shift
	for pkg in "$@"; do
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] ||
			missing+=("$pkg")
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	command -v apt-get >/dev/null 2>&1 || die "need ${missing[*]} for $reason, and apt-get is not available"
	log "installing ${missing[*]} (needed for $reason)"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >"$WORK/apt.log" 2>&1; then
		log "apt-get install failed with the current package lists; refreshing them"
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
			>>"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; die "could not install ${missing[*]}"; }
	fi
}

# bench_prepare: check the environment, create the OS user, the work
# directory (a private copy of the source tree) and the exit trap
bench_prepare()
{
	[ "$(id -u)" -eq 0 ] || die "must be run as root (it creates the user $BENCH_USER and may install Debian packages)"
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
		--exclude=./results --exclude=./bench/results --exclude=./output_iso \
		--exclude=./tmp_check --exclude=./tmp_check_iso --exclude=./log \
		--exclude='./regression.*' \
		. | tar -C "$WORK/src" -xf - || die "copying the source tree failed"
	chown -R "$BENCH_USER:" "$WORK"
	as_user test -w "$WORK" || die "$BENCH_USER cannot write $WORK (check TMPDIR permissions)"
}

# build_extension: build the private copy with PGXS's default flags (those
# of the server: optimized, no assertions) and install it under
# $WORK/inst, never into the system directories.  The cluster finds it
# through Debian's extension_destdir setting, so concurrent builds and
# installs of other versions cannot change what is measured.
build_extension()
{
	log "building the extension (make), installing it under $WORK/inst"
	(cd "$WORK/src" && as_user make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$WORK/build.log" 2>&1) ||
		{ cat "$WORK/build.log" >&2; die "build failed"; }
	(cd "$WORK/src" && as_user make install DESTDIR="$WORK/inst" PG_CONFIG="$PG_CONFIG" >>"$WORK/build.log" 2>&1) ||
		{ cat "$WORK/build.log" >&2; die "make install DESTDIR=$WORK/inst failed"; }
	FBT_SO="$WORK/inst$("$PG_CONFIG" --pkglibdir)/$FBT_AM.so"
	[ -f "$FBT_SO" ] || die "$FBT_SO missing after make install"
	# Assert() expands to a call of ExceptionalCondition; a build without
	# assertions references none.
	if grep -qw ExceptionalCondition <<<"$(nm -D --undefined-only "$FBT_SO" 2>/dev/null)"; then
		die "$FBT_SO was built with assertions (USE_ASSERT_CHECKING); benchmark numbers would be meaningless"
	fi
	# (awk reads all of the output: with pipefail, grep -q could make the
	# pipeline fail by closing it early)
	# Debian's servers have extension_destdir (a Debian patch); 18 and later
	# have extension_control_path and find the library through
	# dynamic_library_path (a "$libdir/" prefix is dropped for the search)
	local settings
	settings=$("$PG_BINDIR/postgres" --describe-config 2>/dev/null | awk '{ print $1 }')
	if grep -qx extension_destdir <<<"$settings"; then
		EXT_LOADING=destdir
	elif grep -qx extension_control_path <<<"$settings"; then
		EXT_LOADING=control_path
	else
		die "this PostgreSQL has neither extension_destdir (a Debian patch) nor extension_control_path (18 and later), needed to load the private build"
	fi
}

# ext_loading_conf: the postgresql.conf lines that load the private build
ext_loading_conf()
{
	if [ "$EXT_LOADING" = destdir ]; then
		echo "extension_destdir = '$WORK/inst'"
	else
		echo "extension_control_path = '$WORK/inst$("$PG_CONFIG" --sharedir):\$system'"
		echo "dynamic_library_path = '$WORK/inst$("$PG_CONFIG" --pkglibdir):\$libdir'"
	fi
}

# wal_mode_conf: the postgresql.conf line of --wal-mode compact (none for
# generic).  The private build is named by its path: a bare name could
# preload the system's fastbtree.so, and CREATE EXTENSION would then load
# the private one beside it.
wal_mode_conf()
{
	[ "$WAL_MODE" = generic ] || echo "shared_preload_libraries = '$FBT_SO'"
}

# select_wal_mode MODE: --wal-mode
select_wal_mode()
{
	case "$1" in
		generic|compact) WAL_MODE=$1 ;;
		*) die "--wal-mode must be generic or compact, got '$1'" ;;
	esac
}

# wal_mode_label: the WAL mode for the results' headers
wal_mode_label()
{
	if [ "$WAL_MODE" = compact ]; then
		echo "fastbtree WAL mode: compact (shared_preload_libraries = '$FBT_AM', its own WAL records)"
	else
		echo "fastbtree WAL mode: generic (not preloaded, generic WAL records)"
	fi
}

# source_revision: the commit of the source tree, "+ changes" when the
# working tree differs from it (read-only git commands)
source_revision()
{
	local rev

	rev=$(git -C "$SRC_DIR" rev-parse --short HEAD 2>/dev/null) || { echo "unknown (not a git checkout)"; return; }
	if [ -n "$(git -C "$SRC_DIR" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		echo "$rev + uncommitted changes"
	else
		echo "$rev"
	fi
}

# setup_cluster: initdb, configure and start the throwaway cluster, create
# the database and the extensions
# setup_cluster: initdb, the settings below (then the lines of EXTRA_CONF,
# if set), start, create the database and the extensions
setup_cluster()
{
	PORT=$(pick_port) || die "no free port in 55000-55999"
	log "initdb in $WORK/data, port $PORT, socket directory $WORK/sock"
	mkdir "$WORK/sock" && chown "$BENCH_USER:" "$WORK/sock"
	as_user initdb -D "$WORK/data" --auth=trust --no-sync \
		--locale=C.UTF-8 --encoding=UTF8 >"$WORK/initdb.log" 2>&1 ||
		{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }
	cat >>"$WORK/data/postgresql.conf" <<-CONF

		# bench/: throwaway benchmark cluster.  fsync and synchronous_commit
		# are off so that no run waits for the disk: reads measure CPU, writes
		# measure the cost of building and inserting WAL, not of flushing it.
		# full_page_writes stays on (unless run.sh --full-page-writes off) so
		# write workloads log what a production server logs.  Never use these
		# settings for data you care about.
		port = $PORT
		listen_addresses = ''
		unix_socket_directories = '$WORK/sock'
		$(ext_loading_conf)
		$(wal_mode_conf)
		max_connections = $MAX_CONNECTIONS
		shared_buffers = $SHARED_BUFFERS
		maintenance_work_mem = 512MB
		fsync = off
		synchronous_commit = off
		full_page_writes = ${FULL_PAGE_WRITES:-on}
		max_wal_size = 8GB
		checkpoint_timeout = 60min
		# Runs must not be disturbed by background work, nor measure workers
		# starting on 2 cores: parallel plans only in the parallel workload
		# (which sets its own workers).  The build benchmark sets
		# max_parallel_maintenance_workers per build.
		autovacuum = off
		jit = off
		max_parallel_workers_per_gather = 0
		max_parallel_maintenance_workers = 0
		client_min_messages = warning
	CONF
	[ -z "${EXTRA_CONF:-}" ] || printf '%s\n' "$EXTRA_CONF" >>"$WORK/data/postgresql.conf"
	start_cluster
	as_user createdb "$BENCH_DB" || die "createdb failed"
	psql_q "CREATE EXTENSION $FBT_AM" "CREATE EXTENSION pg_prewarm" ||
		die "CREATE EXTENSION failed"
	local mode
	# (the setting exists before the library loads only when preloaded; no
	# LOAD here: it would not look in the private install)
	mode=$(psql_q "SELECT coalesce(current_setting('fastbtree.wal_mode', true), 'generic')") ||
		die "reading fastbtree.wal_mode failed"
	[ "$mode" = "$WAL_MODE" ] ||
		die "fastbtree.wal_mode is '$mode', expected $WAL_MODE (--wal-mode)"
	if [ "$EXT_LOADING" = destdir ]; then
		local destdir
		destdir=$(psql_q "SHOW extension_destdir") || die "SHOW extension_destdir failed"
		[ "$destdir" = "$WORK/inst" ] || die "extension_destdir is '$destdir', expected $WORK/inst"
	else
		local libpath
		libpath=$(psql_q "SHOW dynamic_library_path") || die "SHOW dynamic_library_path failed"
		[[ "$libpath" == "$WORK/inst"* ]] || die "dynamic_library_path is '$libpath', expected $WORK/inst..."
	fi
}

# start_cluster: start the benchmark cluster (setup_cluster made it)
start_cluster()
{
	CLUSTER_STARTED=yes
	as_user pg_ctl start -D "$WORK/data" -l "$WORK/server.log" -w -t 120 >/dev/null ||
		{ cat "$WORK/server.log" >&2; die "the benchmark cluster did not start"; }
}

stop_cluster()
{
	as_user pg_ctl stop -D "$WORK/data" -m fast -w -t 120 >/dev/null ||
		die "could not stop the benchmark cluster"
	CLUSTER_STARTED=no
}

# side_am SIDE: the access method of a side
side_am()
{
	case "$1" in
		bt) echo btree ;;
		fbt) echo "$FBT_AM" ;;
		*) die "unknown side '$1'" ;;
	esac
}

# accounts_table SIDE / accounts_index SIDE: pgbench's table and its
# fastbtree copy
accounts_table()
{
	if [ "$1" = bt ]; then echo pgbench_accounts; else echo pgbench_accounts_fbt; fi
}

accounts_index()
{
	if [ "$1" = bt ]; then echo pgbench_accounts_pkey; else echo pgbench_accounts_fbt_aid_idx; fi
}

nrows()
{
	echo $((SCALE * 100000))
}

# prewarm REL...: load relations into shared buffers
prewarm()
{
	local rel sql=""

	for rel in "$@"; do
		sql+="${sql:+, }pg_prewarm($(sql_lit "$rel"))"
	done
	psql_q "SELECT $sql" >/dev/null || die "pg_prewarm failed"
}

# vacuum_analyze TABLE...: VACUUM (FREEZE, ANALYZE), with every heap tuple
# frozen and every page all-visible, so that both sides' heaps are alike:
# pgbench -i loads pgbench_accounts frozen (COPY FREEZE), its copies are
# not, and an unfrozen tuple costs each heap fetch a snapshot test.  With synchronous_commit off, the commit records
# of the loads may not be flushed yet, and VACUUM may then neither set hint
# bits nor mark pages all-visible (index-only scans would visit the heap);
# a synchronous commit of a transaction with an XID flushes them first.
vacuum_analyze()
{
	local t sql=("SET synchronous_commit = on" "SELECT txid_current()")

	for t in "$@"; do
		sql+=("VACUUM (FREEZE, ANALYZE) $t")
	done
	psql_q "${sql[@]}" >/dev/null || die "VACUUM (FREEZE, ANALYZE) $* failed"
}

# load_data SET...: create the named data sets (each once)
load_data()
{
	local set

	for set in "$@"; do
		[ -n "${LOADED[$set]:-}" ] && continue
		case "$set" in
			accounts) load_accounts ;;
			nl) load_data accounts; load_nl ;;
			int8) load_int8 ;;
			ts) load_ts ;;
			text) load_text ;;
			two) load_two ;;
			skip) load_skip ;;
			ins_random) load_ins_random ;;
			ins_asc) load_ins_asc ;;
			mixed) load_mixed ;;
			churn) load_churn ;;
			probekeys) load_data accounts int8 ts text two; load_probekeys ;;
			pk_int4) load_data accounts; load_probe_array "$set" ;;
			pk_int8) load_data int8; load_probe_array "$set" ;;
			pk_ts) load_data ts; load_probe_array "$set" ;;
			pk_text) load_data text; load_probe_array "$set" ;;
			pk_two) load_data two; load_probe_array "$set" ;;
			*) die "unknown data set '$set'" ;;
		esac
		LOADED[$set]=yes
	done
}

# pgbench_accounts as pgbench -i makes it (btree primary key), and an
# identical copy with a unique fastbtree index
load_accounts()
{
	log "data: pgbench -i -s $SCALE ($(nrows) accounts), copy indexed USING $FBT_AM"
	as_user pgbench -i -q -s "$SCALE" >"$WORK/pgbench-init.log" 2>&1 ||
		{ cat "$WORK/pgbench-init.log" >&2; die "pgbench -i failed"; }
	psql_q "CREATE TABLE pgbench_accounts_fbt AS SELECT * FROM pgbench_accounts ORDER BY aid" \
		"CREATE UNIQUE INDEX pgbench_accounts_fbt_aid_idx ON pgbench_accounts_fbt USING $FBT_AM (aid)" ||
		die "copying pgbench_accounts failed"
	vacuum_analyze pgbench_accounts pgbench_accounts_fbt
}

# copy_indexed SRC SIDE NAME INDEXDEFS...: create NAME_SIDE as a copy of SRC
# (same order), with each index "SUFFIX:COLUMNS" created as
# NAME_SIDE_SUFFIX USING the side's AM, then VACUUM ANALYZE it
copy_indexed()
{
	local src=$1 side=$2 name=$3 am table def sql=()

	shift 3
	am=$(side_am "$side")
	table="${name}_$side"
	sql+=("DROP TABLE IF EXISTS $table" "CREATE TABLE $table AS SELECT * FROM $src")
	for def in "$@"; do
		sql+=("CREATE INDEX ${table}_${def%%:*} ON $table USING $am (${def#*:})")
	done
	psql_q "${sql[@]}" || die "creating $table failed"
	vacuum_analyze "$table"
}

# Copies built from a source table (k_NAME_src) that is dropped afterwards.
copy_both()
{
	local src=$1

	shift
	copy_indexed "$src" bt "$@"
	copy_indexed "$src" fbt "$@"
	psql_q "DROP TABLE $src" || die "DROP TABLE $src failed"
}

# nl_driver: the outer side of the nested-loop join, NL_KEYS distinct
# accounts in random order; both sides join the same table
load_nl()
{
	log "data: nl_driver ($NL_KEYS random aids)"
	psql_q "SELECT setseed(0.11)" \
		"CREATE TABLE nl_driver AS SELECT aid FROM generate_series(1, $(nrows)) aid ORDER BY random() LIMIT $NL_KEYS" \
		>/dev/null || die "creating nl_driver failed"
	vacuum_analyze nl_driver
}

# int8 keys spread over the whole int8 range, heap in a scrambled order so
# that index builds sort for real
load_int8()
{
	log "data: k_int8_bt/k_int8_fbt ($(nrows) int8 keys)"
	psql_q "CREATE TABLE k_int8_src AS SELECT i::int8 * 4294967311 AS k, i AS v
			FROM generate_series(1, $(nrows)) i ORDER BY hashint4(i)" >/dev/null ||
		die "creating k_int8_src failed"
	copy_both k_int8_src k_int8 "idx:k"
}

load_ts()
{
	log "data: k_ts_bt/k_ts_fbt ($(nrows) timestamptz keys)"
	psql_q "CREATE TABLE k_ts_src AS SELECT TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '17 seconds' AS k, i AS v
			FROM generate_series(1, $(nrows)) i ORDER BY hashint4(i)" >/dev/null ||
		die "creating k_ts_src failed"
	copy_both k_ts_src k_ts "idx:k"
}

# Text keys are pairs of words from Debian's word list ("apple zebra"), all
# distinct; text_keys(id, k) numbers them so that pgbench can pick one at
# random.  k_text_SIDE holds each key twice: kc with COLLATE "C" and kd
# with the database's default collation (C.UTF-8, compared by strcoll).
load_text()
{
	local nwords ntext

	ensure_packages "text keys (word list)" wamerican
	[ -r "$WORDS_FILE" ] || die "$WORDS_FILE missing although wamerican is installed"
	psql_q "CREATE TABLE words_raw (w text)" "\\copy words_raw FROM $(sql_lit "$WORDS_FILE")" \
		"CREATE TABLE word_list AS SELECT (row_number() OVER (ORDER BY w COLLATE \"C\") - 1)::int8 AS i, w
			FROM (SELECT DISTINCT w FROM words_raw WHERE w <> '') s" \
		"DROP TABLE words_raw" >/dev/null || die "loading $WORDS_FILE failed"
	nwords=$(psql_q "SELECT count(*) FROM word_list") || die "counting words failed"
	ntext=$(nrows)
	[ "$ntext" -le $((nwords * nwords)) ] || ntext=$((nwords * nwords))
	log "data: k_text_bt/k_text_fbt ($ntext keys, pairs of $nwords words)"
	# For a fixed first word a = j % W, the second word (j / W + a * 7919) % W
	# differs for every j < W * W, so all pairs are distinct.
	psql_q "CREATE TABLE text_keys AS SELECT (j + 1)::int4 AS id, a.w || ' ' || b.w AS k
			FROM generate_series(0, $ntext - 1) j
			JOIN word_list a ON a.i = j % $nwords
			JOIN word_list b ON b.i = (j / $nwords + (j % $nwords) * 7919) % $nwords" \
		"ALTER TABLE text_keys ADD PRIMARY KEY (id)" \
		"CREATE TABLE k_text_src (id int4, kc text COLLATE \"C\", kd text, v int4)" \
		"INSERT INTO k_text_src SELECT id, k, k, id FROM text_keys ORDER BY id" >/dev/null ||
		die "creating text keys failed"
	vacuum_analyze text_keys
	copy_both k_text_src k_text "kc_idx:kc" "kd_idx:kd"
	# shellcheck disable=SC2034	# read by run.sh
	TEXT_KEYS=$ntext
}

# Two-column keys (a, b): four rows per value of a; b is a scrambled
# function of the row number that pgbench recomputes
load_two()
{
	log "data: k_two_bt/k_two_fbt ($(nrows) (int4, int4) keys)"
	psql_q "CREATE TABLE k_two_src AS SELECT (i - 1) / 4 + 1 AS a, (i::int8 * 7919 % $(nrows))::int4 AS b, i AS v
			FROM generate_series(1, $(nrows)) i" >/dev/null ||
		die "creating k_two_src failed"
	copy_both k_two_src k_two "idx:a, b"
}

# Skip scan keys (grp, id): ten values of grp, each with every id; a query
# on id alone skips over grp (fastbtree, and btree since PostgreSQL 18)
load_skip()
{
	log "data: k_skip_bt/k_skip_fbt ($(nrows) (int4, int4) keys, 10 values of the leading column)"
	psql_q "CREATE TABLE k_skip_src AS SELECT (i % 10)::int4 AS grp, (i / 10)::int4 AS id, i AS v
			FROM generate_series(0, $(nrows) - 1) i" >/dev/null ||
		die "creating k_skip_src failed"
	copy_both k_skip_src k_skip "idx:grp, id"
}

# Write workloads start every run from a fresh copy of a base table, so
# that both sides see the same tree.  The base tables are loaded once.
load_ins_random()
{
	log "data: ins_random_base ($(nrows) random int4 keys)"
	psql_q "SELECT setseed(0.22)" \
		"CREATE TABLE ins_random_base AS SELECT (1 + floor(random() * 2147483646))::int4 AS k, i AS v
			FROM generate_series(1, $(nrows)) i" >/dev/null ||
		die "creating ins_random_base failed"
}

load_ins_asc()
{
	log "data: ins_asc_base (keys 1..$(nrows))"
	psql_q "CREATE TABLE ins_asc_base AS SELECT i::int8 AS k, i AS v FROM generate_series(1, $(nrows)) i" ||
		die "creating ins_asc_base failed"
}

load_mixed()
{
	log "data: mixed_base (even keys 2..$((2 * $(nrows))))"
	psql_q "CREATE TABLE mixed_base AS SELECT 2 * i AS k, i AS v FROM generate_series(1, $(nrows)) i" ||
		die "creating mixed_base failed"
}

# Update churn: every row's k is indexed and never changes; u, the
# neighbour column an UPDATE changes, has an index of its own, so every
# update is non-HOT and leaves a logically unchanged copy in the k index
# (bottom-up deletion's case)
load_churn()
{
	log "data: churn_base (keys 1..$(nrows), indexed neighbour column u)"
	psql_q "CREATE TABLE churn_base AS SELECT i AS k, i AS u, i AS v FROM generate_series(1, $(nrows)) i" ||
		die "creating churn_base failed"
}

# reset_data SET SIDE: rebuild the write table of SET for SIDE from its base
# table, checkpoint, and load it into shared buffers
reset_data()
{
	local set=$1 side=$2 table="${1}_$2"

	case "$set" in
		ins_random|mixed) copy_indexed "${set}_base" "$side" "$set" "idx:k" ;;
		churn) copy_indexed churn_base "$side" churn "idx:k" "u:u" ;;
		ins_asc)
			copy_indexed ins_asc_base "$side" ins_asc "idx:k"
			psql_q "DROP SEQUENCE IF EXISTS ${table}_seq" \
				"CREATE SEQUENCE ${table}_seq START $(($(nrows) + 1))" ||
				die "creating ${table}_seq failed"
			;;
		*) die "data set '$set' has no reset" ;;
	esac
	psql_q "CHECKPOINT" || die "CHECKPOINT failed"
	prewarm "$table" "${table}_idx"
}

# PROBE_KEYS random keys of each key type, in random order, as one array
# per type; the same array drives both sides
load_probekeys()
{
	load_data pk_int4 pk_int8 pk_ts pk_text pk_two
}

# load_probe_array TABLE: create one of the key arrays of load_probekeys
# (its source data set must be loaded)
load_probe_array()
{
	local from

	case "$1" in
		pk_int4) from="SELECT aid AS k, random() AS r FROM pgbench_accounts" ;;
		pk_int8) from="SELECT k, random() AS r FROM k_int8_bt" ;;
		pk_ts) from="SELECT k, random() AS r FROM k_ts_bt" ;;
		pk_text) from="SELECT kd AS k, random() AS r FROM k_text_bt" ;;
		pk_two) from="SELECT a AS k, random() AS r FROM generate_series(1, $(nrows) / 4) a" ;;
		*) die "unknown probe key array '$1'" ;;
	esac
	log "data: probe key array $1 ($PROBE_KEYS keys)"
	psql_q "SELECT setseed(0.33)" \
		"CREATE TABLE $1 AS SELECT array_agg(k ORDER BY r) AS keys FROM ($from ORDER BY 2 LIMIT $PROBE_KEYS) s" \
		>/dev/null || die "creating the probe key array $1 failed"
}

# probe_index TYPE SIDE: the index probed for a key type
probe_index()
{
	case "$1" in
		int4) accounts_index "$2" ;;
		int8) echo "k_int8_$2_idx" ;;
		timestamptz) echo "k_ts_$2_idx" ;;
		text_c) echo "k_text_$2_kc_idx" ;;
		text_default) echo "k_text_$2_kd_idx" ;;
		twocol) echo "k_two_$2_idx" ;;
		*) die "unknown key type '$1'" ;;
	esac
}

probe_keys_table()
{
	case "$1" in
		int4) echo pk_int4 ;;
		int8) echo pk_int8 ;;
		timestamptz) echo pk_ts ;;
		text_c|text_default) echo pk_text ;;
		twocol) echo pk_two ;;
		*) die "unknown key type '$1'" ;;
	esac
}

# probe_build_target TYPE: "TABLE (COLUMNS)" that the build benchmark indexes
probe_build_target()
{
	case "$1" in
		int4) echo "pgbench_accounts (aid)" ;;
		int8) echo "k_int8_bt (k)" ;;
		timestamptz) echo "k_ts_bt (k)" ;;
		text_c) echo "k_text_bt (kc)" ;;
		text_default) echo "k_text_bt (kd)" ;;
		twocol) echo "k_two_bt (a, b)" ;;
		*) die "unknown key type '$1'" ;;
	esac
}

type_label()
{
	case "$1" in
		int4) echo "int4" ;;
		int8) echo "int8" ;;
		timestamptz) echo "timestamptz" ;;
		text_c) echo "text COLLATE \"C\"" ;;
		text_default) echo "text, default collation (C.UTF-8)" ;;
		twocol) echo "(int4, int4), probing a" ;;
		*) echo "$1" ;;
	esac
}

# config_label CONFIG: btree, fbt_off (fastbtree.fast_compare = off) or
# fbt_on
config_label()
{
	case "$1" in
		btree) echo "btree" ;;
		fbt_off) echo "fastbtree, fast_compare off" ;;
		fbt_on) echo "fastbtree, fast_compare on" ;;
	esac
}

config_side()
{
	if [ "$1" = btree ]; then echo bt; else echo fbt; fi
}

config_fast_compare()
{
	if [ "$1" = fbt_off ]; then echo off; else echo on; fi
}

# results_stem DIR SUFFIX: DIR/DATE-HOSTSUFFIX, with a number appended if
# DIR already has such a results file
results_stem()
{
	local base n=2 stem

	base="$1/$(date +%Y-%m-%d)-$(hostname -s)$2"
	stem=$base
	while [ -e "$stem.md" ]; do
		stem="$base-$n"
		n=$((n + 1))
	done
	echo "$stem"
}

# --- workload scripts --------------------------------------------------

# wl_meta NAME KEY: the value of the "-- KEY: value" header line of a
# workload template, empty if there is none
wl_meta()
{
	sed -n "s/^-- $2: //p" "$BENCH_DIR/workloads/$1.sql" | head -n 1
}

# render_script NAME SIDE: write the pgbench script of one side and print
# its path
render_script()
{
	local name=$1 side=$2 out="$WORK/scripts/$1-$2.sql"

	sed -e "s/@side@/$side/g" \
		-e "s/@accounts@/$(accounts_table "$side")/g" \
		-e "s/@accounts_idx@/$(accounts_index "$side")/g" \
		"$BENCH_DIR/workloads/$name.sql" >"$out" || die "cannot write $out"
	echo "$out"
}

# statements SCRIPT: the SQL statements of a pgbench script, one a line
# (every statement of our templates is one line), without the semicolon
statements()
{
	# shellcheck disable=SC1003
	grep -v -e '^[[:space:]]*\\' -e '^[[:space:]]*--' -e '^[[:space:]]*$' "$1" |
		sed -e 's/[[:space:]]*;[[:space:]]*$//'
}

# gucs_to_pgoptions "a=b c=d": "-c a=b -c c=d"
gucs_to_pgoptions()
{
	local g out=""

	for g in $1; do
		out+="${out:+ }-c $g"
	done
	echo "$out"
}

# plan_has PLAN LINE: succeeds if a node or detail line of PLAN, with the
# indentation and "->  " removed, equals LINE
plan_has()
{
	grep -qxF -- "$2" <<<"$(sed -e 's/^[[:space:]]*//' -e 's/^->[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1")"
}

# check_index SIDE TABLE INDEX: INDEX exists on TABLE with the side's access
# method, and every index of TABLE uses that access method (so that writes
# maintain indexes of one kind only)
check_index()
{
	local side=$1 table=$2 index=$3 am got others

	am=$(side_am "$side")
	got=$(psql_q "SELECT a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			JOIN pg_am a ON a.oid = c.relam
			WHERE i.indexrelid = to_regclass($(sql_lit "$index")) AND i.indrelid = to_regclass($(sql_lit "$table"))") ||
		die "cannot look up index $index"
	[ "$got" = "$am" ] || die "index $index on $table: access method '${got:-(no such index)}', expected '$am'"
	others=$(psql_q "SELECT string_agg(c.relname || ' (' || a.amname || ')', ', ')
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
			WHERE i.indrelid = $(sql_lit "$table")::regclass AND a.amname <> $(sql_lit "$am")") ||
		die "cannot list the indexes of $table"
	[ -z "$others" ] || die "$table has indexes of another access method: $others"
}

# check_plans NAME SIDE SCRIPT: EXPLAIN every statement of SCRIPT with
# literal keys and as a generic plan; each "-- expect:" line above a
# statement must appear in both plans, each "-- expect-analyze:" line in
# EXPLAIN ANALYZE with literal keys; "-- expect-bt:" and "-- expect-fbt:"
# lines hold for one side only (where the two plans differ by design: on
# PostgreSQL 15 btree cannot skip).  Dies loudly otherwise.
check_plans()
{
	local name=$1 side=$2 script=$3 line expects=() analyze=() e idx_def
	local stmt lit gen nparams args plan kind main_line nlines=0

	read -r -a idx_def <<<"$(wl_meta "$name" index)"
	[ "${#idx_def[@]}" -eq 2 ] || die "workloads/$name.sql: needs one '-- index: TABLE INDEX' line"
	check_index "$side" "$(sed -e "s/@side@/$side/g" -e "s/@accounts@/$(accounts_table "$side")/g" <<<"${idx_def[0]}")" \
		"$(sed -e "s/@side@/$side/g" -e "s/@accounts_idx@/$(accounts_index "$side")/g" <<<"${idx_def[1]}")"

	while IFS= read -r line; do
		case "$line" in
			'-- expect: '*) expects+=("${line#-- expect: }"); nlines=$((nlines + 1)); continue ;;
			"-- expect-$side: "*) expects+=("${line#-- expect-"$side": }"); nlines=$((nlines + 1)); continue ;;
			'-- expect-bt: '*|'-- expect-fbt: '*) nlines=$((nlines + 1)); continue ;;
			'-- expect-analyze: '*) analyze+=("${line#-- expect-analyze: }"); continue ;;
			--*|\\*|'') continue ;;
		esac
		stmt=${line%;}
		[ "$nlines" -gt 0 ] || die "workloads/$name.sql: no '-- expect:' line above: $stmt"
		# pgbench variables (":name", not "::type"): a literal 1, or $1, $2, ...
		# one per occurrence, as pgbench -M prepared sends them
		lit=$(perl -pe 's/(?<![:\w]):[A-Za-z_]\w*/1/g' <<<"$stmt")
		gen=$(perl -pe 'my $n = 0; s/(?<![:\w]):[A-Za-z_]\w*/"\$" . ++$n/ge' <<<"$stmt")
		nparams=$(perl -ne 'my $n = () = /(?<![:\w]):[A-Za-z_]\w*/g; print $n' <<<"$stmt")
		args=""
		if [ "$nparams" -gt 0 ]; then
			args="($(printf '1%.0s,' $(seq 1 "$nparams") | sed 's/,$//'))"
		fi
		for kind in literal generic; do
			if [ "$kind" = literal ]; then
				plan=$(psql_q "EXPLAIN (COSTS OFF) $lit" 2>&1)
			else
				plan=$(psql_q "PREPARE bench_p AS $gen" "SET plan_cache_mode = force_generic_plan" \
					"EXPLAIN (COSTS OFF) EXECUTE bench_p$args" 2>&1)
			fi || { echo "$plan" >&2; die "$name ($side): EXPLAIN failed ($kind): $stmt"; }
			for e in "${expects[@]}"; do
				if ! plan_has "$plan" "$e"; then
					echo "$plan" >&2
					die "$name ($side): the $kind plan of '$stmt' has no line '$e'"
				fi
			done
		done
		if [ "${#analyze[@]}" -gt 0 ]; then
			plan=$(psql_q "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $lit" 2>&1) ||
				{ echo "$plan" >&2; die "$name ($side): EXPLAIN ANALYZE failed: $stmt"; }
			for e in "${analyze[@]}"; do
				if ! plan_has "$plan" "$e"; then
					echo "$plan" >&2
					die "$name ($side): EXPLAIN ANALYZE of '$stmt' has no line '$e'"
				fi
			done
		fi
		# the scan (or insert) line names the plan in the report
		main_line=${expects[0]:-$(sed -n 1p <<<"$plan" | sed -e 's/^[[:space:]]*//')}
		for e in "${expects[@]}"; do
			case "$e" in
				*' using '*|'Insert on '*) main_line=$e; break ;;
			esac
		done
		case "; ${PLAN_SUMMARY[$name:$side]:-}; " in
			*"; $main_line; "*) ;;
			*) PLAN_SUMMARY[$name:$side]+="${PLAN_SUMMARY[$name:$side]:+; }$main_line" ;;
		esac
		expects=()
		analyze=()
		nlines=0
	done <"$script"
}

# run_pgbench SCRIPT CLIENTS SECONDS: run pgbench; set RUN_TPS, RUN_TXNS
# and RUN_WAL (WAL bytes inserted during the run)
run_pgbench()
{
	local script=$1 clients=$2 seconds=$3 out rc lsn threads

	threads=$clients
	[ "$threads" -le "$(nproc)" ] || threads=$(nproc)
	lsn=$(psql_q "SELECT pg_current_wal_insert_lsn()") || die "cannot read the WAL position"
	out=$(as_user pgbench -n -M prepared -c "$clients" -j "$threads" -T "$seconds" \
		-s "$SCALE" -D nrows="$(nrows)" -D ntext="$TEXT_KEYS" -f "$script" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$out" >&2
		die "pgbench exited with status $rc ($(basename "$script"), $clients clients)"
	fi
	if ! grep -q '^number of failed transactions: 0 ' <<<"$out"; then
		echo "$out" >&2
		die "pgbench reported failed transactions ($(basename "$script"), $clients clients)"
	fi
	RUN_TPS=$(echo "$out" | awk '$1 == "tps" && $2 == "=" { print $3; exit }')
	RUN_TXNS=$(echo "$out" | awk '/^number of transactions actually processed:/ { print $6; exit }')
	if [ -z "$RUN_TPS" ] || [ -z "$RUN_TXNS" ]; then
		echo "$out" >&2
		die "no tps figure in pgbench output"
	fi
	RUN_WAL=$(psql_q "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn')") ||
		die "cannot read the WAL position"
}

declare -A PLAN_SUMMARY=()
# set by workload_setup: the rendered script of each side, the data set the
# workload rebuilds before every run (empty for read workloads)
declare -A WL_SCRIPT=()
WL_RESET=

# workload_setup NAME: load the data of workload NAME, write its script for
# each side (WL_SCRIPT), check its plans, load what it reads into shared
# buffers and warm both sides up with a short run; leaves the workload's
# "-- gucs:" settings in BENCH_PGOPTIONS for the runs that follow
workload_setup()
{
	local name=$1 title side prewarm_rels

	title=$(wl_meta "$name" title)
	WL_RESET=$(wl_meta "$name" reset)
	# shellcheck disable=SC2046
	load_data $(wl_meta "$name" data)
	BENCH_PGOPTIONS=$(gucs_to_pgoptions "$(wl_meta "$name" gucs)")
	mkdir -p "$WORK/scripts"
	echo
	log "workload $name: $title${BENCH_PGOPTIONS:+ (PGOPTIONS: $BENCH_PGOPTIONS)}"
	for side in bt fbt; do
		WL_SCRIPT[$side]=$(render_script "$name" "$side")
		[ -z "$WL_RESET" ] || reset_data "$WL_RESET" "$side"
		check_plans "$name" "$side" "${WL_SCRIPT[$side]}"
		log "plan ok: $name ($side): ${PLAN_SUMMARY[$name:$side]}"
		if [ -z "$WL_RESET" ]; then
			read -r -a prewarm_rels <<<"$(wl_meta "$name" index | sed -e "s/@side@/$side/g" \
				-e "s/@accounts@/$(accounts_table "$side")/g" -e "s/@accounts_idx@/$(accounts_index "$side")/g")"
			prewarm "${prewarm_rels[@]}"
		fi
	done
	case "$name" in
		join) prewarm nl_driver ;;
		text_c|text_default) prewarm text_keys text_keys_pkey ;;
	esac
	for side in bt fbt; do
		run_pgbench "${WL_SCRIPT[$side]}" 1 "${WARMUP_SECONDS:-2}"
	done
}

# --- fastbtree's switches (issues 9 and 27) ------------------------------

# Each is a boolean GUC fastbtree.NAME.  A switch configuration is "btree"
# (the btree side), "off" (fastbtree with every switch off), the name of
# one switch (that one on, the others off) or "all" (every switch on).
# atomic_pins changes only how pages hinted by recent_buffers are pinned,
# so alone it runs the same code as "off".
FBT_SWITCHES=(recent_buffers scan_pins optimistic_reads atomic_pins)
ALL_SWITCH_CONFIGS="off ${FBT_SWITCHES[*]} all"
# the configurations to measure; the callers' --switches override it
SWITCH_CONFIGS=$ALL_SWITCH_CONFIGS

# check_switch_configs "CONFIG ...": die unless each is a fastbtree
# configuration ("btree" is always measured and is not listed)
check_switch_configs()
{
	local c

	[ -n "${1// /}" ] || die "--switches must name at least one configuration (of: $ALL_SWITCH_CONFIGS)"
	for c in $1; do
		case " $ALL_SWITCH_CONFIGS " in
			*" $c "*) ;;
			*) die "unknown switch configuration '$c' (of: $ALL_SWITCH_CONFIGS)" ;;
		esac
	done
}

# switch_values CONFIG: the value of each of FBT_SWITCHES, in order, for a
# fastbtree configuration ("on off off")
switch_values()
{
	local sw out=""

	for sw in "${FBT_SWITCHES[@]}"; do
		case "$1" in
			all|"$sw") out+="${out:+ }on" ;;
			*) out+="${out:+ }off" ;;
		esac
	done
	echo "$out"
}

# switch_gucs CONFIG: "fastbtree.NAME=VALUE ..." for every switch; empty for
# btree
switch_gucs()
{
	local sw out="" v
	local -a vals

	[ "$1" != btree ] || return 0
	read -r -a vals <<<"$(switch_values "$1")"
	for sw in "${FBT_SWITCHES[@]}"; do
		v=${vals[0]}
		vals=("${vals[@]:1}")
		out+="${out:+ }fastbtree.$sw=$v"
	done
	echo "$out"
}

switch_label()
{
	case "$1" in
		btree) echo "btree" ;;
		off) echo "$FBT_AM, all switches off" ;;
		all) echo "$FBT_AM, all switches on" ;;
		*) echo "$FBT_AM, only $1 on" ;;
	esac
}

# switch_show_sql: a SELECT of one row, one column sw_NAME per switch, with
# its current value or "-" when this build has no such setting
switch_show_sql()
{
	local sw cols=""

	for sw in "${FBT_SWITCHES[@]}"; do
		cols+="${cols:+, }coalesce(current_setting('fastbtree.$sw', true), '-') AS sw_$sw"
	done
	echo "SELECT $cols"
}

declare -A SWITCH_ABSENT=()

# check_switches_shown CONFIG "VALUE ...": the values a session showed (in
# FBT_SWITCHES order, "-" for a setting this build lacks) must be the
# configuration's.  A missing setting only warns, once per switch (until
# the switch exists, its configurations measure the same code as "off").
check_switches_shown()
{
	local config=$1 sw want got
	local -a wants gots

	read -r -a wants <<<"$(switch_values "$config")"
	read -r -a gots <<<"$2"
	[ "${#gots[@]}" -eq "${#FBT_SWITCHES[@]}" ] ||
		die "could not read the switch settings of the session ($config): '$2'"
	for sw in "${FBT_SWITCHES[@]}"; do
		want=${wants[0]}; got=${gots[0]}
		wants=("${wants[@]:1}"); gots=("${gots[@]:1}")
		if [ "$got" = - ]; then
			if [ -z "${SWITCH_ABSENT[$sw]:-}" ]; then
				warn "fastbtree.$sw does not exist in this build (SHOW fails): not checked; configuration '$sw' measures the same code as 'off'"
				SWITCH_ABSENT[$sw]=yes
			fi
		elif [ "$got" != "$want" ]; then
			die "configuration $config: the session shows fastbtree.$sw = $got, expected $want"
		fi
	done
}

# switches_absent_note: a sentence for the reports naming the switches that
# did not exist in the measured build, if any
switches_absent_note()
{
	local sw list=""

	for sw in "${FBT_SWITCHES[@]}"; do
		[ -z "${SWITCH_ABSENT[$sw]:-}" ] || list+="${list:+, }fastbtree.$sw"
	done
	[ -z "$list" ] || echo "Not in the measured build (setting them only drew a warning, so those configurations ran the same code as \"off\"): $list."
}

# --- callgrind ----------------------------------------------------------

# cg_single BASE TOGGLES SETTINGS: run a single-user backend of the stopped
# cluster under callgrind with BASE.sql on stdin, writing BASE.callgrind,
# BASE.stdout and BASE.stderr.  TOGGLES: function names for
# --toggle-collect (empty: collect everything); SETTINGS: "name=value ..."
# passed with -c; CG_VALGRIND_OPTS (an array, if set): more valgrind
# options, such as --cache-sim=yes.  Dies if the backend fails or reports
# an ERROR.
cg_single()
{
	local base=$1 fn g rc toggles=() settings=()

	for fn in $2; do
		toggles+=(--toggle-collect="$fn")
	done
	for g in $3; do
		settings+=(-c "$g")
	done
	CG_FILE="$base.callgrind"
	as_user valgrind --tool=callgrind "${toggles[@]}" ${CG_VALGRIND_OPTS[@]+"${CG_VALGRIND_OPTS[@]}"} \
		--callgrind-out-file="$CG_FILE" \
		postgres --single -D "$WORK/data" -c shared_buffers=512MB "${settings[@]}" "$BENCH_DB" \
		<"$base.sql" >"$base.stdout" 2>"$base.stderr"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -q 'ERROR:' "$base.stdout" "$base.stderr" || [ ! -s "$CG_FILE" ]; then
		cat "$base.stdout" "$base.stderr" >&2
		die "single-user backend under valgrind failed ($(basename "$base"))"
	fi
}

# cg_column BASE NAME: the value of the result column NAME that the
# single-user backend printed to BASE.stdout (the last one)
cg_column()
{
	sed -n "s/^.* $2 = \"\([^\"]*\)\".*\$/\1/p" "$1.stdout" | tail -n 1
}

# cg_run TYPE CONFIG LOOPS: profile one fastbtree_probe() call in a
# single-user backend under callgrind, collecting only inside
# fastbtree_probe; sets CG_FILE and CG_PROBES.  The cluster must be stopped.
cg_run()
{
	local type=$1 config=$2 loops=$3 index keys base

	index=$(probe_index "$type" "$(config_side "$config")")
	keys=$(probe_keys_table "$type")
	base="$WORK/cg/$type-$config-$loops"
	echo "SELECT probes, found FROM fastbtree_probe('$index', (SELECT keys FROM $keys), $loops)" >"$base.sql"
	cg_single "$base" fastbtree_probe \
		"fastbtree.fast_compare=$(config_fast_compare "$config") fastbtree.recent_buffers=${CG_RECENT_BUFFERS:-off}"
	CG_PROBES=$(cg_column "$base" probes)
	CG_FOUND=$(cg_column "$base" found)
	if [ -z "$CG_PROBES" ] || [ -z "$CG_FOUND" ]; then
		cat "$base.stdout" >&2
		die "no result from fastbtree_probe under callgrind ($type, $config, loops $loops)"
	fi
}

# write_annotation PROFILE FILE: callgrind_annotate's views of PROFILE,
# inclusive and self cost, with the work directory's paths shortened
write_annotation()
{
	{
		callgrind_annotate --inclusive=yes --auto=no "$1"
		echo
		echo "==== self cost (callgrind_annotate without --inclusive) ===="
		echo
		callgrind_annotate --auto=no "$1"
	} 2>&1 | sed -e "s|$WORK/src/||g" -e "s|$WORK/inst||g" -e "s|$WORK/|WORK/|g" >"$2"
}

# select_major N: benchmark PostgreSQL N: 15 is Debian's, another major
# the build without assertions of scripts/install-deps.sh --pg N --release
select_major()
{
	case $1 in
		15) PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config ;;
		''|*[!0-9]*) die "--pg: '$1' is not a major version number" ;;
		*)
			PG_CONFIG=/opt/fastbtree-pg/$1-release/bin/pg_config
			[ -x "$PG_CONFIG" ] ||
				die "no PostgreSQL $1 build for benchmarks; run: bash scripts/install-deps.sh --pg $1 --release"
			;;
	esac
}

# common_option ARG: the options that bench/callgrind.sh, bench/scaling.sh,
# bench/space.sh and bench/interleave.sh share (--results-dir=DIR, --pg=N, --wal-mode=MODE,
# --keep, --help, which calls the caller's usage); dies on any other
common_option()
{
	case "$1" in
		--results-dir=*) RESULTS_DIR=${1#*=} ;;
		--pg=*) select_major "${1#*=}" ;;
		--wal-mode=*) select_wal_mode "${1#*=}" ;;
		--keep) KEEP=yes ;;
		-h|--help) usage; exit 0 ;;
		*) die "unknown argument: $1 (see --help)" ;;
	esac
}

# check_scale_buffers: die unless SCALE and SHARED_BUFFERS (--scale,
# --shared-buffers) are well formed
check_scale_buffers()
{
	is_posint "$SCALE" || die "--scale must be a positive integer, got '$SCALE'"
	[[ "$SHARED_BUFFERS" =~ ^[1-9][0-9]*(kB|MB|GB|TB)$ ]] ||
		die "--shared-buffers must look like 2GB or 512MB, got '$SHARED_BUFFERS'"
}

# check_clients "A B ...": die unless the client counts (--clients) are
# positive integers up to 1000; raise MAX_CONNECTIONS to fit the largest
check_clients()
{
	local c

	[ -n "${1// /}" ] || die "--clients must list at least one client count"
	for c in $1; do
		is_posint "$c" || die "--clients must be positive integers, got '$c'"
		[ "$c" -le 1000 ] || die "at most 1000 clients"
		[ $((c + 10)) -le "$MAX_CONNECTIONS" ] || MAX_CONNECTIONS=$((c + 10))
	done
}

# workload_heading NAME: the markdown heading of a workload's results: its
# title, btree's statements (the script render_script wrote), the plans
# checked and the session settings
workload_heading()
{
	echo
	echo "### $1: $(wl_meta "$1" title)"
	echo
	echo "btree side (the $FBT_AM side uses the copies with _fbt names):"
	echo
	echo '```sql'
	statements "$WORK/scripts/$1-bt.sql"
	echo '```'
	echo
	echo "Plans checked with EXPLAIN, btree: ${PLAN_SUMMARY[$1:bt]}; $FBT_AM: ${PLAN_SUMMARY[$1:fbt]}."
	[ -z "$(wl_meta "$1" gucs)" ] || echo "Session settings: \`$(wl_meta "$1" gucs)\`."
}

# total_time STARTED: "Total time: M min S s." since STARTED (date +%s)
total_time()
{
	local s=$(($(date +%s) - $1))

	echo "Total time: $((s / 60)) min $((s % 60)) s."
}

# show_results MDFILE: print a results file and where it is
show_results()
{
	echo
	cat "$1"
	echo
	log "results: $1"
}

# prepare_results_dir: create RESULTS_DIR if needed, check that it is
# writable, and make it absolute
prepare_results_dir()
{
	{ mkdir -p "$RESULTS_DIR" && [ -w "$RESULTS_DIR" ]; } || die "cannot write to $RESULTS_DIR"
	RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
}

# callgrind_phase MDFILE ANNOTATEFILE: run every type and configuration,
# write the markdown section to MDFILE and callgrind_annotate's view of
# int4 on fastbtree (fast_compare on) to ANNOTATEFILE.  Needs the probe data
# sets; stops the cluster.
callgrind_phase()
{
	local md=$1 annotate=$2 type config loops n i k
	# B and F are read through namerefs (perprobe_layer)
	# shellcheck disable=SC2034
	local -A I B F P FOUND

	ensure_packages "the callgrind measurement" valgrind
	command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate not found (package valgrind)"
	load_data probekeys
	log "stopping the cluster for the callgrind runs (each one a single-user backend under valgrind)"
	stop_cluster
	mkdir -p "$WORK/cg" && chown "$BENCH_USER:" "$WORK/cg"

	n=$((${#KEY_TYPES[@]} * 3 * 2))
	i=0
	for type in "${KEY_TYPES[@]}"; do
		for config in btree fbt_off fbt_on; do
			for loops in 1 3; do
				i=$((i + 1))
				cg_run "$type" "$config" "$loops"
				k="$type:$config:$loops"
				read -r "I[$k]" "B[$k]" "F[$k]" \
					< <(perl "$BENCH_DIR/cgsum.pl" "$CG_FILE" |
						awk '$1 == "total" { t = $2 } $1 == "bufmgr" { b = $2 } $1 == "bufmgr_formula" { f = $2 }
							END { print t, b, f }')
				P[$k]=$CG_PROBES
				FOUND[$k]=$CG_FOUND
				printf '%s: [%2d/%d] callgrind %-13s %-8s loops=%d  %14s instructions, %s probes\n' \
					"$LOG_TAG" "$i" "$n" "$type" "$config" "$loops" "${I[$k]}" "$CG_PROBES"
			done
		done
		if [ "${FOUND[$type:btree:3]}" != "${FOUND[$type:fbt_on:3]}" ] ||
			[ "${FOUND[$type:btree:3]}" != "${FOUND[$type:fbt_off:3]}" ]; then
			die "callgrind $type: btree found ${FOUND[$type:btree:3]} TIDs, fastbtree ${FOUND[$type:fbt_off:3]} (off) ${FOUND[$type:fbt_on:3]} (on)"
		fi
	done

	write_annotation "$WORK/cg/int4-fbt_on-3.callgrind" "$annotate"

	# per probe: (I3 - I1) / (probes3 - probes1)
	perprobe()
	{
		local -n arr=$1
		awk -v a="${arr[$2:3]}" -v b="${arr[$2:1]}" -v p="${P[$2:3]}" -v q="${P[$2:1]}" \
			'BEGIN { printf "%.0f\n", (a - b) / (p - q) }'
	}
	# index layer: the same after taking the buffer manager out
	perprobe_layer()
	{
		local -n tot=$1 buf=$2
		awk -v a="${tot[$3:3]}" -v b="${tot[$3:1]}" -v c="${buf[$3:3]}" -v d="${buf[$3:1]}" \
			-v p="${P[$3:3]}" -v q="${P[$3:1]}" \
			'BEGIN { printf "%.0f\n", ((a - c) - (b - d)) / (p - q) }'
	}

	{
		echo "| key type | btree | fbt (off) | fbt (on) | on/btree | btree, index layer | fbt (off), index layer | fbt (on), index layer | on/btree, index layer |"
		echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
		for type in "${KEY_TYPES[@]}"; do
			local t0 t1 t2 l0 l1 l2
			t0=$(perprobe I "$type:btree"); t1=$(perprobe I "$type:fbt_off"); t2=$(perprobe I "$type:fbt_on")
			l0=$(perprobe_layer I B "$type:btree"); l1=$(perprobe_layer I B "$type:fbt_off"); l2=$(perprobe_layer I B "$type:fbt_on")
			printf '| %s | %s | %s | %s | %.3f | %s | %s | %s | %.3f |\n' "$(type_label "$type")" \
				"$t0" "$t1" "$t2" "$(ratio "$t2" "$t0")" "$l0" "$l1" "$l2" "$(ratio "$l2" "$l0")"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$type" "$t0" "$t1" "$t2" "$l0" "$l1" "$l2" >>"$WORK/callgrind.tsv"
		done
		echo
		echo "The same, with the buffer manager counted as the issue first specified it (inclusive cost of"
		echo "ReadBufferExtended, LockBuffer, ReleaseBuffer and UnlockReleaseBuffer plus the self cost of"
		echo "ReleaseAndReadBuffer and ReadBuffer): that sum misses the unpin inside ReleaseAndReadBuffer and counts"
		echo "ReleaseBuffer twice when UnlockReleaseBuffer calls it, so the table above sums call edges instead."
		echo
		echo "| key type | btree, index layer | fbt (off), index layer | fbt (on), index layer | on/btree |"
		echo "|---|--:|--:|--:|--:|"
		for type in "${KEY_TYPES[@]}"; do
			local f0 f1 f2
			f0=$(perprobe_layer I F "$type:btree"); f1=$(perprobe_layer I F "$type:fbt_off"); f2=$(perprobe_layer I F "$type:fbt_on")
			printf '| %s | %s | %s | %s | %.3f |\n' "$(type_label "$type")" "$f0" "$f1" "$f2" "$(ratio "$f2" "$f0")"
		done
		echo
		echo "Where int4 probes on fastbtree (fast_compare on) spend their instructions, per probe"
		echo "(self cost of each function in the loops = 3 profile minus the loops = 1 profile, over the extra probes;"
		echo "static functions of the stripped postgres binary appear as addresses):"
		echo
		echo "| function | self instructions/probe | inclusive |"
		echo "|---|--:|--:|"
		perl "$BENCH_DIR/cgsum.pl" --per-probe "$((${P[int4:fbt_on:3]} - ${P[int4:fbt_on:1]}))" \
			"$WORK/cg/int4-fbt_on-1.callgrind" "$WORK/cg/int4-fbt_on-3.callgrind" | head -n 25
	} >"$md"
}

# callgrind_section MDFILE ANNOTATEFILE: the markdown section of the
# callgrind measurement, from the files callgrind_phase wrote
callgrind_section()
{
	echo
	echo "## Callgrind: instructions per probe"
	echo
	echo "Deterministic and independent of machine load.  Each configuration runs fastbtree_probe() in a"
	echo "single-user backend under \`valgrind --tool=callgrind --toggle-collect=fastbtree_probe\`, once with"
	echo "loops = 1 and once with loops = 3 over the same $PROBE_KEYS keys; instructions per probe ="
	echo "(I3 − I1) / (2 × $PROBE_KEYS), which cancels fixed costs (relcache loads, cold buffer reads)."
	echo "\"Index layer\" is the same difference after taking out the buffer manager: the inclusive cost"
	echo "of every call from outside into ReadBufferExtended, ReadBuffer, ReleaseAndReadBuffer,"
	echo "ReadRecentBuffer, LockBuffer, ConditionalLockBuffer, ReleaseBuffer, UnlockReleaseBuffer or"
	echo "IncrBufferRefCount.  Ratios below 1 mean $FBT_AM executes fewer instructions."
	echo "Where the instructions go: [\`$(basename "$2")\`]($(basename "$2"))"
	echo "(callgrind_annotate of int4 on $FBT_AM, fast_compare on, loops = 3)."
	echo
	cat "$1"
}
