# t/010_optimistic_recovery.pl
#	Optimistic inner-page reads around WAL replay: a hot standby uses the
#	locked path, and the odd versions replay leaves behind heal after
#	promotion and after crash recovery.
#
# Version protocol (fbtpage.c, _fbt_wal_finish): a change logs its pages
# with the odd version v' and leaves the primary's page at v' + 1, so redo
# (a standby, crash recovery) leaves exactly v' = primary's version - 1 on
# every page it replayed, and pages it did not touch keep the even version
# they had on disk.  The first locked visit of such an internal page outside
# recovery makes it even (_fbt_heal_version: versions_healed), after which
# optimistic readers validate on it again.
#
# ft and bt hold the same int4 keys (every write changes both in one
# transaction), ft_k USING fastbtree, bt_k its btree twin; ft_k has three
# levels (a root at level 2 over three or four level-1 pages).  Each phase
# compares ft_k's answers with bt_k's and the primary's, and takes exact
# differences of fastbtree_stats() around each query of one session:
#	1. standby: splitting inserts on the primary while pgbench readers on
#	   the standby compare ft with bt; after catch-up, each internal page
#	   of the standby has the version predicted from the primary's (odd on
#	   the replayed ones, the root among them, even on the others), and a
#	   sweep of probes counts descents = N, locked_inner = N * root level,
#	   no optimistic try at all, and heals nothing (recovery);
#	2. promotion: the first probe falls back and heals on each page of its
#	   path, the same probe again validates on each; a sweep heals every
#	   other odd page once; a second sweep validates everywhere;
#	3. crash restart (CHECKPOINT, splitting inserts, immediate stop):
#	   the versions read before any probe are the predicted odd ones on the
#	   replayed pages (fastbtree_page_stats copies the page under a share
#	   lock and does not heal), a sweep heals exactly those, the next one
#	   validates everywhere; fastbtree_check(heapallindexed) passes;
#	4. the same after a second crash with fastbtree.optimistic_reads = off:
#	   the pages crash 1 left odd and the sweeps healed are odd again
#	   (healing does not dirty a page, so the disk kept the odd version);
#	   no optimistic try, every internal page locked, and the locked path
#	   heals all the same, so that a later session with the switch on
#	   validates everywhere at once.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# shared_buffers: allows_streaming sets 1MB, which would evict the healed
# (never dirtied) internal pages between two probes; no checkpoint may fall
# between the CHECKPOINT and the crash of phases 3 and 4.  The switch is on
# whatever TEMP_CONFIG says (the CI run with the lock-free switches off):
# this test is about the optimistic path, and phase 4 turns it off itself.
my $conf = q{
fastbtree.optimistic_reads = on
autovacuum = off
log_statement = none
shared_buffers = 64MB
max_wal_size = 1GB
checkpoint_timeout = 1h
max_standby_streaming_delay = -1
};

my ($primary, $standby);

# ft_k's root block and level, read from the metapage after each change
my ($root, $rootlevel);

END
{
	local $?;
	for my $n ($standby, $primary)
	{
		$n->stop('immediate', fail_ok => 1) if $n;
	}
}

my @stat_cols = qw(descents optimistic_validated optimistic_retried
  fallback_odd fallback_changed fallback_bounds fallback_unsupported
  locked_inner versions_healed recent_buffer_hits recent_buffer_misses
  scan_pin_reuses scan_pins_taken);

my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;
};

# A sweep of point probes over the whole key range (every residue mod 4,
# so keys of every insert phase are among them), one line: probes, rows
# found, hash of the per-probe counts.  OFFSET 0 keeps the planner from
# pulling the subquery up, which would copy the probe into each aggregate
# (two descents per key).
my $sweep_step = 197;
my $sweep_max = 1400000;
my $nprobes = int(($sweep_max - 1) / $sweep_step) + 1;

sub sweep
{
	my ($table) = @_;

	return qq{
SELECT count(*) || ' ' || sum(c) || ' ' || md5(string_agg(c::text, ',' ORDER BY v))
FROM (SELECT v, (SELECT count(*) FROM $table WHERE k = v) AS c
	  FROM generate_series(1, $sweep_max, $sweep_step) v OFFSET 0) s};
}

# Run the queries of @steps in one session on $node after $setup; returns
# one hash per step: answer (its output) and d (the difference of each
# fastbtree_stats() column across it).
sub run_steps
{
	my ($node, $setup, @steps) = @_;
	my $stats = "SELECT '#stats', * FROM fastbtree_stats();\n";
	my $sql = $setup . $stats . join('', map { "$_;\n$stats" } @steps);
	my @lines = split /\n/, $node->safe_psql('postgres', $sql);
	my (@results, @prev, @answer);

	for my $line (@lines)
	{
		if ($line =~ /^#stats\|/)
		{
			my @cur = split /\|/, $line;
			shift @cur;
			if (@prev)
			{
				my %d;
				@d{@stat_cols} = map { $cur[$_] - $prev[$_] } 0 .. $#cur;
				push @results, { answer => join("\n", @answer), d => \%d };
			}
			@prev = @cur;
			@answer = ();
		}
		else
		{
			push @answer, $line;
		}
	}
	die "expected " . scalar(@steps) . " steps, got " . scalar(@results)
	  unless @results == @steps;
	return @results;
}

# Compare the differences of $r with %want (columns not named are not
# checked), one test per column, and print all of them.
sub check_stats
{
	my ($label, $r, %want) = @_;

	note("$label: "
		  . join(' ', map { "$_=$r->{d}{$_}" } @stat_cols));
	for my $col (sort keys %want)
	{
		is($r->{d}{$col}, $want{$col}, "$label: $col = $want{$col}");
	}
}

# Level and version of every internal page of ft_k on $node:
# { blkno => [level, version] }.
sub inner_versions
{
	my ($node) = @_;
	my %v;

	for my $row (
		split /\n/,
		$node->safe_psql(
			'postgres', q{
SELECT b, s.level, s.version
FROM generate_series(1, pg_relation_size('ft_k') / 8192 - 1) b,
	 LATERAL fastbtree_page_stats('ft_k', b) s
WHERE s.level > 0 ORDER BY b}))
	{
		my ($b, $level, $version) = split /\|/, $row;
		$v{$b} = [ $level, $version ];
	}
	return \%v;
}

# Whether the suite runs with fastbtree preloaded (compact WAL): its records
# do not carry the version, and redo gives a page the next odd value of its
# own copy, so only the parity of a replayed page's version is predictable
# (README.design, "Compact WAL").  Set after the primary starts.
my $compact = 0;

# The versions redo must leave, from the primary's versions in shared
# buffers before ($v0) and after ($v1) the WAL it replays: a page whose
# version moved (or that is new) carries the logged odd version, the
# primary's - 1 (in compact mode: an odd version, 'odd'); the others keep
# what they have on disk.  That is their
# version in $v0, except on a page an earlier recovery left odd ($prev, the
# versions that recovery left) and a probe healed since: healing does not
# dirty the page, so the disk still has the odd version and the page is
# read back odd.
sub replayed_versions
{
	my ($v0, $v1, $prev) = @_;
	my %want;

	for my $b (keys %$v1)
	{
		my ($level, $version) = @{ $v1->{$b} };

		if (!exists $v0->{$b} || $v0->{$b}[1] != $version)
		{
			$want{$b} = [ $level, $compact ? 'odd' : $version - 1 ];
		}
		elsif ($prev
			&& exists $prev->{$b}
			&& $prev->{$b}[1] % 2 == 1
			&& $prev->{$b}[1] + 1 == $version)
		{
			$want{$b} = [ $level, $prev->{$b}[1] ];
		}
		else
		{
			$want{$b} = [ $level, $version ];
		}
	}
	return \%want;
}

# $got with the versions $want expects only to be odd ('odd') replaced by
# 'odd' where they are, for is_deeply
sub parity_where_wanted
{
	my ($got, $want) = @_;
	my %g;

	for my $b (keys %$got)
	{
		my ($level, $version) = @{ $got->{$b} };
		$g{$b} = [
			$level,
			(exists $want->{$b} && $want->{$b}[1] eq 'odd' && $version % 2 == 1)
			? 'odd'
			: $version ];
	}
	return \%g;
}

sub odd_pages
{
	my ($v) = @_;
	return scalar grep { $v->{$_}[1] % 2 == 1 } keys %$v;
}

sub describe
{
	my ($v) = @_;
	return join(' ',
		map { "$_:L$v->{$_}[0]:v$v->{$_}[1]" } sort { $a <=> $b } keys %$v);
}

sub root_of
{
	my ($node) = @_;
	return split /\|/,
	  $node->safe_psql('postgres', 'SELECT root, level FROM fastbtree_metap(\'ft_k\')');
}

# Inserts of keys $expr (in i) for i in $lo .. $hi into ft and bt, one
# transaction per 1000 rows.
sub insert_phase
{
	my ($node, $expr, $lo, $hi) = @_;

	$node->safe_psql(
		'postgres', qq{
DO \$\$
BEGIN
	FOR j IN $lo .. $hi BY 1000 LOOP
		INSERT INTO ft SELECT $expr FROM generate_series(j, least(j + 999, $hi)) i;
		INSERT INTO bt SELECT $expr FROM generate_series(j, least(j + 999, $hi)) i;
		COMMIT;
	END LOOP;
END
\$\$;});
}

# The counts of a sweep that validates on every internal page it visits
# (root level of them per probe) and heals nothing.
sub all_validated
{
	return (
		descents => $nprobes,
		fallback_odd => 0,
		versions_healed => 0,
		locked_inner => 0,
		optimistic_validated => $nprobes * $rootlevel);
}

# fastbtree_check(ft_k, heapallindexed) passes on the primary
sub check_index
{
	my ($label) = @_;

	is($primary->safe_psql('postgres', "SELECT fastbtree_check('ft_k', true)"),
		'', "$label: fastbtree_check(ft_k, heapallindexed) passes");
}

# The sweep through ft_k ($fbt_answer) equals the sweep through bt_k on
# $node.
sub check_answers
{
	my ($node, $label, $fbt_answer) = @_;
	my $bt = $node->safe_psql('postgres', $force_index . sweep('bt'));

	is($fbt_answer, $bt, "$label: ft_k answers what bt_k answers");
}

# CHECKPOINT, inserts, crash restart: the versions read before any probe
# are the predicted ones ($prev: what the previous recovery left, if any).
# Returns the versions after recovery.
sub crash_and_check_versions
{
	my ($label, $expr, $lo, $hi, $prev) = @_;

	$primary->safe_psql('postgres', 'CHECKPOINT');
	my $v0 = inner_versions($primary);
	is(odd_pages($v0), 0, "$label: all internal pages even before the inserts");
	insert_phase($primary, $expr, $lo, $hi);
	my $v1 = inner_versions($primary);
	is(odd_pages($v1), 0, "$label: all internal pages even after the inserts");

	my $logstart = -s $primary->logfile;
	$primary->stop('immediate');
	$primary->start;
	like(
		slurp_file($primary->logfile, $logstart),
		qr/database system was (not properly shut down|interrupted)/,
		"$label: crash recovery ran");

	my $got = inner_versions($primary);
	my $want = replayed_versions($v0, $v1, $prev);
	note("$label: after recovery: " . describe($got));
	is_deeply(parity_where_wanted($got, $want), $want,
		"$label: replayed internal pages carry the logged odd version, the others their even one"
	);
	my $odd = odd_pages($got);
	cmp_ok($odd, '>', 0, "$label: some internal pages are odd after recovery");
	cmp_ok($odd, '<', scalar(keys %$got),
		"$label: some internal pages stay even");
	return $got;
}

# Phase 1: primary and hot standby.
$primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$compact = $primary->safe_psql('postgres',
	"SELECT current_setting('fastbtree.wal_mode', true) = 'compact'") eq 't';
note('fastbtree WAL mode: ' . ($compact ? 'compact' : 'generic'));

# Keys 4, 8, ..., 1200000: the insert phases use the other residues mod 4
# inside chosen ranges, and keys above 1200000.
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE ft (k int4);
CREATE TABLE bt (k int4);
INSERT INTO ft SELECT 4 * i FROM generate_series(1, 300000) i;
INSERT INTO bt SELECT k FROM ft;
CREATE INDEX ft_k ON ft USING fastbtree (k);
CREATE INDEX bt_k ON bt USING btree (k);
CHECKPOINT;
});
($root, $rootlevel) = root_of($primary);
is($rootlevel, 2, 'ft_k has three levels');

$primary->backup('backup');
$standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', $conf);
$standby->start;
$primary->wait_for_catchup($standby);

my $pv0 = inner_versions($primary);
note('primary before the inserts: ' . describe($pv0));
is(odd_pages($pv0), 0, 'primary: all internal pages even');
is_deeply(inner_versions($standby), $pv0,
	'standby starts with the internal pages of the base backup');

like(
	$standby->safe_psql('postgres', $force_index . 'EXPLAIN (COSTS OFF) ' . sweep('ft')),
	qr/using ft_k on ft/,
	'standby: the sweep goes through ft_k');

# Readers on the standby during replay: each range through ft_k must
# count what bt_k counts in the same snapshot.
my ($r_out, $r_err) = ('', '');
my $reader;
{
	my $dir = PostgreSQL::Test::Utils::tempdir;
	append_to_file(
		"$dir/read.sql", q{
\set a random(0, 1300000)
SELECT 1 / ((SELECT count(*) || ':' || coalesce(sum(k), 0) FROM ft WHERE k BETWEEN :a AND :a + 400) =
			(SELECT count(*) || ':' || coalesce(sum(k), 0) FROM bt WHERE k BETWEEN :a AND :a + 400))::int;
});
	local $ENV{PGOPTIONS} = '-c enable_seqscan=off -c enable_bitmapscan=off';
	$reader = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '5',
			'-f', "$dir/read.sql",
			'-h', $standby->host, '-p', $standby->port, 'postgres'
		],
		'>', \$r_out, '2>', \$r_err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}

# Splitting inserts: keys 4i + 1 in 40005 .. 120001 (leaves under the
# first level-1 page; each of them gets as many keys again and splits),
# then 60000 ascending keys above the maximum (rightmost splits, until the
# last level-1 page splits and the root gets a downlink).
insert_phase($primary, '4 * i + 1', 10001, 30000);
insert_phase($primary, '1200000 + i', 1, 60000);
$reader->finish;
like($r_out, qr/number of failed transactions: 0/,
	'standby readers: ft and bt agree during replay');
my ($reads) = $r_out =~ /actually processed: (\d+)/;
cmp_ok($reads // 0, '>', 0, 'standby readers ran');
unlike($r_err, qr/ERROR|abort/, 'standby readers: no error')
  or diag($r_err);
note("standby readers: $reads transactions");

$primary->wait_for_catchup($standby);
($root, $rootlevel) = root_of($primary);
is($rootlevel, 2, 'ft_k still has three levels');
my $pv1 = inner_versions($primary);
my $sv1 = inner_versions($standby);
note('primary after the inserts: ' . describe($pv1));
note('standby after replay: ' . describe($sv1));
is(odd_pages($pv1), 0, 'primary: all internal pages even after the inserts');
my $sv1_want = replayed_versions($pv0, $pv1);
is_deeply(parity_where_wanted($sv1, $sv1_want), $sv1_want,
	'standby: replayed internal pages carry the logged odd version, the others their even one'
);
is($sv1->{$root}[1] % 2, 1, 'standby: the root was replayed (odd version)');
my $standby_odd = odd_pages($sv1);
cmp_ok($standby_odd, '<', scalar(keys %$sv1),
	'standby: some level-1 pages were not replayed (even version)');

my $primary_answer = $primary->safe_psql('postgres', $force_index . sweep('ft'));
my ($s_sweep) = run_steps($standby, $force_index, sweep('ft'));
is($s_sweep->{answer}, $primary_answer, 'standby: the sweep answers what the primary does');
check_answers($standby, 'standby', $s_sweep->{answer});
check_stats(
	'standby sweep', $s_sweep,
	descents => $nprobes,
	locked_inner => $nprobes * $rootlevel,
	optimistic_validated => 0,
	optimistic_retried => 0,
	fallback_odd => 0,
	fallback_changed => 0,
	fallback_bounds => 0,
	fallback_unsupported => 0,
	versions_healed => 0);
is_deeply(inner_versions($standby), $sv1,
	'standby: locked reads in recovery heal nothing');

# Phase 2: promotion.  The first probe (a key of the first insert phase,
# under the replayed root and a replayed level-1 page) falls back on both
# and heals both; then both validate.
$standby->promote;
my ($p_first, $p_again, $p_sweep1, $p_sweep2) = run_steps(
	$standby, $force_index,
	'SELECT count(*) FROM ft WHERE k = 80001',
	'SELECT count(*) FROM ft WHERE k = 80001',
	sweep('ft'), sweep('ft'));
is($p_first->{answer}, '1', 'promoted: the probe finds its key');
check_stats(
	'promoted, first probe', $p_first,
	descents => 1,
	fallback_odd => $rootlevel,
	versions_healed => $rootlevel,
	locked_inner => $rootlevel,
	optimistic_validated => 0);
check_stats(
	'promoted, same probe again', $p_again,
	descents => 1,
	fallback_odd => 0,
	versions_healed => 0,
	locked_inner => 0,
	optimistic_validated => $rootlevel);
my ($proot_version) = $standby->safe_psql('postgres',
	"SELECT version FROM fastbtree_page_stats('ft_k', $root)");
is($proot_version, $sv1->{$root}[1] + 1,
	'promoted: the root version is even (healed) after the probe');
check_stats(
	'promoted, first sweep', $p_sweep1,
	descents => $nprobes,
	fallback_odd => $standby_odd - $rootlevel,
	versions_healed => $standby_odd - $rootlevel,
	locked_inner => $standby_odd - $rootlevel,
	optimistic_validated => $nprobes * $rootlevel - ($standby_odd - $rootlevel),
	optimistic_retried => 0);
check_stats(
	'promoted, second sweep', $p_sweep2,
	all_validated());
is($p_sweep1->{answer}, $primary_answer, 'promoted: the sweep answers what the primary did');
is($p_sweep2->{answer}, $p_sweep1->{answer}, 'promoted: both sweeps answer the same');
check_answers($standby, 'promoted', $p_sweep1->{answer});
my $healed = inner_versions($standby);
is(odd_pages($healed), 0, 'promoted: every internal page is even after the sweep');
is_deeply(
	$healed,
	{
		map { $_ => [ $sv1->{$_}[0], $sv1->{$_}[1] + $sv1->{$_}[1] % 2 ] }
		  keys %$sv1
	},
	'promoted: each odd version advanced by one, the even ones unchanged');
$standby->stop;
undef $standby;

# Phase 3: crash restart of the (old) primary.  Keys 4i + 2 in
# 520006 .. 600002: leaves under the second level-1 page.
my $recovered1 =
  crash_and_check_versions('crash 1', '4 * i + 2', 130001, 150000);
my $crash_odd = odd_pages($recovered1);
($root, $rootlevel) = root_of($primary);
my ($c_sweep1, $c_sweep2) =
  run_steps($primary, $force_index, sweep('ft'), sweep('ft'));
check_stats(
	'crash 1, first sweep', $c_sweep1,
	descents => $nprobes,
	fallback_odd => $crash_odd,
	versions_healed => $crash_odd,
	locked_inner => $crash_odd,
	optimistic_validated => $nprobes * $rootlevel - $crash_odd,
	optimistic_retried => 0);
check_stats(
	'crash 1, second sweep', $c_sweep2,
	all_validated());
is($c_sweep2->{answer}, $c_sweep1->{answer}, 'crash 1: both sweeps answer the same');
check_answers($primary, 'crash 1', $c_sweep1->{answer});
is(odd_pages(inner_versions($primary)), 0,
	'crash 1: every internal page is even after the sweep');
check_index('crash 1');

# Phase 4: the same with the switch off.  Keys 4i + 3 in 880007 ..
# 960003: leaves under the third level-1 page.
my $recovered2 = crash_and_check_versions('crash 2', '4 * i + 3', 220001,
	240000, $recovered1);
$crash_odd = odd_pages($recovered2);
# the pages crash 1 left odd and the sweeps healed since, unchanged
my @reread = grep {
	$recovered1->{$_}[1] % 2 == 1
	  && $recovered2->{$_}[1] == $recovered1->{$_}[1]
} keys %$recovered1;
cmp_ok(scalar(@reread), '>', 0,
	'crash 2: a page healed after crash 1 and not changed since is read back odd'
);
note('crash 2: read back odd: ' . join(' ', sort @reread));
($root, $rootlevel) = root_of($primary);
my ($o_sweep1, $o_sweep2) = run_steps($primary,
	$force_index . "SET fastbtree.optimistic_reads = off;\n",
	sweep('ft'), sweep('ft'));
my %no_optimistic = (
	optimistic_validated => 0,
	optimistic_retried => 0,
	fallback_odd => 0,
	fallback_changed => 0,
	fallback_bounds => 0,
	fallback_unsupported => 0);
check_stats(
	'crash 2, switch off, first sweep', $o_sweep1,
	descents => $nprobes,
	locked_inner => $nprobes * $rootlevel,
	versions_healed => $crash_odd,
	%no_optimistic);
check_stats(
	'crash 2, switch off, second sweep', $o_sweep2,
	descents => $nprobes,
	locked_inner => $nprobes * $rootlevel,
	versions_healed => 0,
	%no_optimistic);
my ($on_sweep) = run_steps($primary, $force_index, sweep('ft'));
check_stats(
	'crash 2, switch on again, new session', $on_sweep,
	all_validated());
is($o_sweep2->{answer}, $o_sweep1->{answer}, 'crash 2: both sweeps answer the same');
is($on_sweep->{answer}, $o_sweep1->{answer}, 'crash 2: switch on and off answer the same');
check_answers($primary, 'crash 2', $o_sweep1->{answer});
check_index('crash 2');

$primary->stop;
done_testing();
