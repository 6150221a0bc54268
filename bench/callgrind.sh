#!/usr/bin/env bash
#
# bench/callgrind.sh
#	Instructions per index probe, btree vs fastbtree, counted by callgrind:
#	deterministic, whatever else the machine is doing.
#
# Run as root on a Debian 12 machine after scripts/install-deps.sh (valgrind
# is installed if missing).  Like bench/run.sh, it builds the extension
# with PGXS's default flags (the server's: optimized, without assertions)
# into a private directory, creates the benchmark tables in a throwaway
# cluster and stops it.  Then, for each key type (int4, int8, timestamptz,
# text COLLATE "C", text with the default collation, and a two-column
# (int4, int4) index probed on its first column) and each configuration
# (btree; fastbtree with fastbtree.fast_compare off; on), it runs
#
#	valgrind --tool=callgrind --toggle-collect=fastbtree_probe \
#		postgres --single -D DATA DB
#
# as the unprivileged user with one fastbtree_probe() call on stdin, twice:
# with loops => 1 and loops => 3 over the same key array.  The difference
# cancels fixed costs (relcache loads, cold buffer reads), so
#
#	instructions/probe = (I3 - I1) / (probes3 - probes1)
#
# and the "index layer" figure is the same after subtracting the buffer
# manager (see cgsum.pl).  It writes results/DATE-HOST-callgrind.md with the
# table and results/DATE-HOST-callgrind-int4-fastbtree.txt, the
# callgrind_annotate output for int4 on fastbtree (fast_compare on).
# bench/run.sh --suite all runs the same measurement on its own cluster.

set -uo pipefail
export LC_ALL=C

LOG_TAG=callgrind
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RESULTS_DIR="$BENCH_DIR/results"

usage()
{
	cat <<-EOF
	Usage: bash bench/callgrind.sh [options]

	Count instructions per index probe with callgrind for btree and
	fastbtree (fast_compare off and on) on six key types.  Run as root.

	Options:
	  --scale N         rows per table = 100000 * N; default $SCALE
	  --types "T ..."   only these key types (of: ${KEY_TYPES[*]})
	  --recent-buffers  run fastbtree with fastbtree.recent_buffers = on
	  --results-dir DIR where to save the results; default bench/results
	  --keep            keep the (stopped) cluster and the profiles in the
	                    work directory
	  --help            show this help

	Takes about 10 minutes with the default scale.
	EOF
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
			--scale|--results-dir|--types)
				[ $# -ge 2 ] || die "$1 needs a value (see --help)"
				set -- "$1=$2" "${@:3}"
				continue
				;;
			--scale=*) SCALE=${1#*=} ;;
			--results-dir=*) RESULTS_DIR=${1#*=} ;;
			--types=*) read -r -a KEY_TYPES <<<"${1#*=}" ;;
			--recent-buffers) CG_RECENT_BUFFERS=on ;;
			--keep) KEEP=yes ;;
			-h|--help) usage; exit 0 ;;
			*) die "unknown argument: $1 (see --help)" ;;
		esac
		shift
	done
	is_posint "$SCALE" || die "--scale must be a positive integer, got '$SCALE'"
}

main()
{
	local stem annotate md started

	parse_args "$@"
	started=$(date +%s)
	bench_prepare
	{ mkdir -p "$RESULTS_DIR" && [ -w "$RESULTS_DIR" ]; } || die "cannot write to $RESULTS_DIR"
	RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
	stem=$(results_stem "$RESULTS_DIR" -callgrind)
	annotate="$stem-int4-$FBT_AM.txt"
	md="$stem.md"

	build_extension
	setup_cluster
	load_data probekeys
	callgrind_phase "$WORK/callgrind.md" "$annotate"
	{
		echo "# fastbtree callgrind measurement: btree vs $FBT_AM"
		echo
		echo "- $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname -s); command: \`bash bench/callgrind.sh $*\`"
		echo "- $(as_user postgres --version); fastbtree source $(source_revision), built with PGXS defaults (no assertions)"
		echo "- CPU: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); $(valgrind --version)"
		echo "- scale $SCALE: $(nrows) rows per table"
		callgrind_section "$WORK/callgrind.md" "$annotate"
		echo
		echo "Total time: $(( ($(date +%s) - started) / 60 )) min."
	} >"$md"
	echo
	cat "$md"
	echo
	log "results: $md"
	log "callgrind_annotate: $annotate"
}

main "$@"
