# t/005_build_progress.pl
#
# 005_build_progress: CREATE INDEX ... USING fastbtree reports its build
# sub-phases in pg_stat_progress_create_index, with btree's phase names,
# and the tuple counts of the load phase.  One session builds an index on a
# few million rows while this script polls the view from another.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->append_conf('postgresql.conf', qq{
fsync = off
maintenance_work_mem = '256MB'
max_parallel_maintenance_workers = 0
});
$node->start;

my $rows = 3_000_000;
$node->safe_psql('postgres', qq{
CREATE EXTENSION fastbtree;
CREATE TABLE big AS
	SELECT (hashint4(g) & 1073741823) AS k FROM generate_series(1, $rows) g;
VACUUM ANALYZE big;
});

my $builder = $node->background_psql('postgres');
$builder->query_until(qr/started/, qq{
\\echo started
CREATE INDEX big_k ON big USING fastbtree (k);
\\echo built
});

# Poll until the build has finished, recording every phase seen and the
# largest tuples_done/tuples_total of the load phase.
my %phases;
my ($load_done, $load_total) = (0, 0);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
my $done = 0;
while (time < $deadline)
{
	my $r = $node->safe_psql('postgres', q{
SELECT phase || '|' || tuples_done || '|' || tuples_total
FROM pg_stat_progress_create_index
WHERE relid = 'big'::regclass});
	if ($r eq '')
	{
		$done = 1
		  if $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_class WHERE relname = 'big_k'") eq '1';
		last if $done;
		next;
	}
	my ($phase, $tdone, $ttotal) = split /\|/, $r;
	$phases{$phase}++;
	if ($phase eq 'building index: loading tuples in tree')
	{
		$load_done = $tdone if $tdone > $load_done;
		$load_total = $ttotal;
	}
}
$builder->quit;

ok($done, 'the build finished');
diag('phases seen: ' . join(', ', sort keys %phases));
ok($phases{'building index: scanning table'},
	'the table scan phase is reported');
ok( $phases{'building index: sorting live tuples'}
	  || $phases{'building index: loading tuples in tree'},
	'a phase after the scan is reported (sorting or loading)');
ok(!grep({ !/^(initializing|building index: (scanning table|sorting live tuples|loading tuples in tree))$/ } keys %phases),
	'only btree\'s phase names appear');
if ($phases{'building index: loading tuples in tree'})
{
	is($load_total, $rows, 'the load phase counts every tuple');
	cmp_ok($load_done, '<=', $rows, 'tuples_done never exceeds the total');
}

$node->safe_psql('postgres', "SELECT fastbtree_check('big_k', true)");
is( $node->safe_psql('postgres',
		"SET enable_seqscan = off; SELECT count(*) FROM big WHERE k >= 0"),
	$rows,
	'the built index finds every row');

$node->stop;
done_testing();
