# t/022_parallel_scan.pl
#
# 022_parallel_scan: parallel index scans (forward and backward, plain and
# index-only, with and without the leader, with = ANY lists and skip
# arrays, one element combination at a time too) see every row exactly once while other sessions split the leaves they are reading
# and VACUUM deletes emptied leaves between them.  The table keeps a stable
# set of rows (every tenth key outside a gap, and nothing in the gap) that
# no writer touches; writers insert and delete other rows between the
# stable ones (splits) and fill and empty the gap (page deletion and
# reuse).  Every parallel scan must return the stable set, in key order
# where it is ordered.  ps2 is ps again with a leading column g = k % 7
# (the scans with arrays hand out their descents) under the same writers.
# Then fastbtree_check.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 't';
use FbtPgbench;

my $node = PostgreSQL::Test::Cluster->new('parallel_scan');
$node->init;
$node->append_conf('postgresql.conf', qq{
fsync = off
autovacuum = off
max_worker_processes = 12
max_parallel_workers = 12
});
$node->start;

# stable rows: k = 0, 10, ..., 999990 outside the gap [400000, 600000)
$node->safe_psql('postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE ps (k int4, stable bool, pad text);
INSERT INTO ps SELECT g * 10, true, repeat('s', 20) FROM generate_series(0, 99999) g
	WHERE g * 10 < 400000 OR g * 10 >= 600000;
CREATE INDEX ps_k ON ps USING fastbtree (k) WITH (fillfactor = 90);
CREATE TABLE ps2 (k int4, stable bool, pad text, g int4 GENERATED ALWAYS AS (k % 7) STORED);
INSERT INTO ps2 SELECT * FROM ps;
CREATE INDEX ps2_gk ON ps2 USING fastbtree (g, k) WITH (fillfactor = 90);
VACUUM ANALYZE ps, ps2;
});
my ($nstable, $sumstable) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*), sum(k) FROM ps WHERE stable');

my $parallel = q{
SET max_parallel_workers_per_gather = 4;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET cpu_operator_cost = 0;
SET min_parallel_index_scan_size = 0; SET min_parallel_table_scan_size = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off;
};

# the checks: name => [query, what it must return]
my %checks = (
	forward => [
		'SELECT count(*), sum(k) FROM ps WHERE k BETWEEN 0 AND 1000000 AND stable',
		"$nstable|$sumstable"
	],
	# descending order, each row once: the gaps between neighbours are
	# 10 (200010 across the gap) and never 0 or negative
	backward => [
		q{SELECT count(*), sum(k), min(d), max(d) FROM (SELECT k, lag(k) OVER () - k AS d FROM (SELECT k FROM ps WHERE stable AND k >= 0 ORDER BY k DESC) s) z},
		"$nstable|$sumstable|10|200010"
	],
	ordered => [
		q{SELECT count(*), sum(k), min(d), max(d) FROM (SELECT k, k - lag(k) OVER () AS d FROM (SELECT k FROM ps WHERE stable AND k >= 0 ORDER BY k) s) z},
		"$nstable|$sumstable|10|200010"
	],
	# 20000 keys, all stable
	any => [
		'SELECT count(*), sum(k) FROM ps WHERE k = ANY(\'{'
		  . join(',', map { $_ * 20 } 0 .. 19999)
		  . '}\') AND stable',
		'20000|3999800000'
	],
	# ps2: an array on g (array mode; one combination at a time with skip
	# scan off), a skip array on g, forward and backward
	any_g => [
		'SELECT count(*), sum(k) FROM ps2 WHERE g = ANY(\'{0,1,2,3,4,5,6}\') AND k BETWEEN 0 AND 1000000 AND stable',
		"$nstable|$sumstable"
	],
	any_g_one_at_a_time => [
		'SET fastbtree.skip_scan = off; SELECT count(*), sum(k) FROM ps2 WHERE g = ANY(\'{0,1,2,3,4,5,6}\') AND k BETWEEN 0 AND 1000000 AND stable',
		"$nstable|$sumstable"
	],
	skip => [
		'SELECT count(*), sum(k) FROM ps2 WHERE k BETWEEN 0 AND 1000000 AND stable',
		"$nstable|$sumstable"
	],
	skip_backward => [
		q{SELECT count(*), sum(k), min(d), max(d) FROM (SELECT k, lag(k) OVER () - k AS d FROM (SELECT k FROM ps2 WHERE stable AND k >= 0 AND g > -1 ORDER BY g DESC, k DESC) s) z},
		undef
	]);

# skip_backward's answer: the same order, from a sort of a sequential scan
$checks{skip_backward}[1] = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $checks{skip_backward}[0]");

# the plans are parallel index scans
my %plans = (
	forward => qr/Gather.*Parallel Index Scan using ps_k/s,
	backward => qr/Gather Merge.*Parallel Index Scan Backward using ps_k/s,
	ordered => qr/Gather Merge.*Parallel Index Scan using ps_k/s,
	any => qr/Gather.*Parallel Index Scan using ps_k/s,
	any_g => qr/Gather.*Parallel Index Scan using ps2_gk/s,
	any_g_one_at_a_time => qr/Gather.*Parallel Index Scan using ps2_gk/s,
	skip => qr/Gather.*Parallel Index Scan using ps2_gk/s,
	skip_backward => qr/Gather Merge.*Parallel Index Scan Backward using ps2_gk/s);
foreach my $name (sort keys %checks)
{
	# (settings the query starts with come before EXPLAIN)
	my ($settings, $query) =
	  $checks{$name}[0] =~ /^((?:SET [^;]*;\s*)*)(.*)$/s;
	my $plan = $node->safe_psql('postgres',
		"$parallel $settings EXPLAIN (COSTS OFF) $query");
	like($plan, $plans{$name}, "$name: a parallel index scan");
}

# writers: splits between the stable rows, the gap filled and emptied,
# VACUUM (which deletes the gap's emptied leaves)
my $dir = PostgreSQL::Test::Utils::tempdir;
my ($wout, $werr) = ('', '');
my $writers = start_pgbench(
	$node, $dir,
	'-c 3 -T 20',
	{
		splits => [
			4, q{
INSERT INTO ps SELECT (random() * 99999)::int * 10 + 1 + (random() * 8)::int, false, repeat('w', 40)
	FROM generate_series(1, 300);
DELETE FROM ps WHERE NOT stable AND k % 10 <> 0 AND k < (random() * 1000000)::int AND random() < 0.3;
}
		],
		# a chunk of the gap filled (a dozen leaves), another emptied
		gap => [
			2, q{
\set c random(0, 9)
\set d random(0, 9)
INSERT INTO ps SELECT 400000 + :c * 20000 + (random() * 19999)::int, false, repeat('g', 40)
	FROM generate_series(1, 3000);
DELETE FROM ps WHERE NOT stable AND k >= 400000 + :d * 20000 AND k < 420000 + :d * 20000;
}
		],
		splits2 => [
			4, q{
INSERT INTO ps2 SELECT (random() * 99999)::int * 10 + 1 + (random() * 8)::int, false, repeat('w', 40)
	FROM generate_series(1, 300);
DELETE FROM ps2 WHERE NOT stable AND k % 10 <> 0 AND k < (random() * 1000000)::int AND random() < 0.3;
}
		],
		gap2 => [
			2, q{
\set c random(0, 9)
\set d random(0, 9)
INSERT INTO ps2 SELECT 400000 + :c * 20000 + (random() * 19999)::int, false, repeat('g', 40)
	FROM generate_series(1, 3000);
DELETE FROM ps2 WHERE NOT stable AND k >= 400000 + :d * 20000 AND k < 420000 + :d * 20000;
}
		],
		vacuum => [ 1, "VACUUM ps;\nVACUUM ps2;\n" ],
	},
	\$wout, \$werr);

my %runs;
my %bad;
my $end = time + 18;
while (time < $end)
{
	foreach my $name (sort keys %checks)
	{
		foreach my $leader ('on', 'off')
		{
			my $got = $node->safe_psql('postgres',
				"$parallel SET parallel_leader_participation = $leader; $checks{$name}[0]");
			$runs{$name}++;
			if ($got ne $checks{$name}[1])
			{
				$bad{$name}++;
				diag("$name (leader $leader): got $got, want $checks{$name}[1]");
			}
		}
	}
}
my $wok = $writers->finish;
check_pgbench('writers', $wok, $wout, $werr, 20);

foreach my $name (sort keys %checks)
{
	is($bad{$name} // 0, 0,
		"$name: every one of $runs{$name} parallel scans returned the stable rows once");
}

# the writers did split and delete pages
my $nblocks = $node->safe_psql('postgres',
	"SELECT pg_relation_size('ps_k') / 8192");
my $ndeleted = $node->safe_psql('postgres', qq{
SELECT count(*) FROM generate_series(1, $nblocks - 1) b, fastbtree_page_stats('ps_k', b) s
WHERE s.type = 'd'});
diag("ps_k: $nblocks blocks, $ndeleted deleted now");
cmp_ok($nblocks, '>', 300, 'the index grew (leaves split)');

$node->safe_psql('postgres', "SELECT fastbtree_check('ps_k', true)");
$node->safe_psql('postgres', "SELECT fastbtree_check('ps2_gk', true)");
pass('fastbtree_check passes on both indexes');

$node->stop;
done_testing();
