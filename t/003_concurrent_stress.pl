# t/003_concurrent_stress.pl
#	Concurrent writers, readers, VACUUM and fastbtree_check on one node.
#
# pgbench clients run weighted scripts against fastbtree indexes at the
# same time: inserts of random keys (splits at every level), deletes and
# key-changing updates of rows found through the index, point probes,
# forward and backward range scans, inserts of colliding keys into a unique
# index (unique_violation caught in a DO block), and readers that check an
# invariant through the indexes while other clients move keys; a second
# pgbench runs VACUUM and fastbtree_check(..., heapallindexed) in a loop.
# No client may see an error.  Afterwards each index must agree exactly
# with the heap and with a btree index on a copy of the same column, pass
# fastbtree_check, and the unique index must hold no key twice.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FbtPgbench;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $duration = 20;

my $node = PostgreSQL::Test::Cluster->new('stress');

# A server that crashed must not make the teardown bail out of every later
# test file: stop it here, tolerating a dead postmaster.
END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_buffers = 8MB
autovacuum = off
log_statement = none
max_connections = 20
});
$node->start;

# s.k2 and s.t2 always equal k and t: their btree indexes are the twins of
# the fastbtree ones, on the same heap tuples.
$node->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE EXTENSION fastbtree;

CREATE TABLE s (id int8, k int4, k2 int4, t text, t2 text, pad text);
CREATE SEQUENCE s_ids START 20001;
INSERT INTO s SELECT i, hashint4(i) & 1048575, hashint4(i) & 1048575,
		repeat(md5(((hashint4(i) & 1048575) % 20000)::text), 6),
		repeat(md5(((hashint4(i) & 1048575) % 20000)::text), 6),
		repeat('x', 50)
	FROM generate_series(1, 20000) i;
CREATE UNIQUE INDEX s_id ON s USING fastbtree (id);
CREATE INDEX s_k ON s USING fastbtree (k);
CREATE INDEX s_t ON s USING fastbtree (t);
CREATE INDEX s_k2 ON s USING btree (k2);
CREATE INDEX s_t2 ON s USING btree (t2);

CREATE TABLE uq (k int4, v int4);
CREATE UNIQUE INDEX uq_k ON uq USING fastbtree (k);
INSERT INTO uq SELECT i, 0 FROM generate_series(1, 3000, 2) i;

CREATE TABLE inv (id int4, k int4, t text);
INSERT INTO inv SELECT i, hashint4(i) & 1048575, repeat(md5(i::text), 3)
	FROM generate_series(1, 3000) i;
CREATE UNIQUE INDEX inv_id ON inv USING fastbtree (id);
CREATE INDEX inv_k ON inv USING fastbtree (k);
CREATE INDEX inv_t ON inv USING fastbtree (t);
});

my @fbt_indexes = qw(s_id s_k s_t uq_k inv_id inv_k inv_t);

my %start_level;
for my $index (@fbt_indexes)
{
	$start_level{$index} = $node->safe_psql('postgres',
		"SELECT level FROM fastbtree_metap('$index')");
}
cmp_ok($start_level{s_t}, '>=', 2, "s_t starts at level >= 2");

my $dir = PostgreSQL::Test::Utils::tempdir;

# name => [weight, script]
my %work = (
	insert => [
		30, q{
\set k random(0, 1048575)
INSERT INTO s VALUES (nextval('s_ids'), :k, :k,
	repeat(md5((:k % 20000)::text), 6), repeat(md5((:k % 20000)::text), 6),
	repeat('x', 50));
}
	],
	delete => [
		10, q{
\set k random(0, 1048575)
DELETE FROM s WHERE ctid = (SELECT ctid FROM s WHERE k >= :k ORDER BY k LIMIT 1);
}
	],
	update => [
		15, q{
\set k random(0, 1048575)
\set nk random(0, 1048575)
UPDATE s SET k = :nk, k2 = :nk,
	t = repeat(md5((:nk % 20000)::text), 6),
	t2 = repeat(md5((:nk % 20000)::text), 6)
WHERE ctid = (SELECT ctid FROM s WHERE t >= repeat(md5((:k % 20000)::text), 6)
			  ORDER BY t LIMIT 1);
}
	],
	probe => [
		15, q{
\set k random(0, 1048575)
\set id random(1, 40000)
SELECT count(*) FROM s WHERE k = :k;
SELECT count(*) FROM s WHERE t = repeat(md5((:k % 20000)::text), 6);
SELECT k FROM s WHERE id = :id;
}
	],
	range => [
		10, q{
\set k random(0, 1048575)
SELECT count(*), sum(k) FROM s WHERE k BETWEEN :k AND :k + 20000;
SELECT k FROM s WHERE k <= :k ORDER BY k DESC LIMIT 50;
SELECT left(t, 4) FROM s WHERE t >= repeat(md5((:k % 20000)::text), 6) ORDER BY t LIMIT 50;
}
	],
	unique_insert => [
		10, q{
\set k random(1, 3000)
BEGIN;
DO $$ BEGIN INSERT INTO uq VALUES (:k, 1); EXCEPTION WHEN unique_violation THEN NULL; END $$;
\sleep 2 ms
COMMIT;
}
	],
	# two updates swapping keys wait for each other, as with btree: a
	# deadlock is not an index error
	unique_update => [
		5, q{
\set k random(1, 3000)
\set nk random(1, 3000)
DO $$ BEGIN UPDATE uq SET k = :nk, v = v + 1 WHERE k = :k; EXCEPTION WHEN unique_violation OR deadlock_detected THEN NULL; END $$;
DELETE FROM uq WHERE k = :nk + 1;
}
	],
	inv_move => [
		10, q{
\set id random(1, 3000)
\set k random(0, 1048575)
UPDATE inv SET k = :k, t = repeat(md5(:k::text || 'x'), 3) WHERE id = :id;
}
	],
	inv_check => [
		10, q{
SELECT 1 / ((SELECT count(*) FROM inv WHERE k >= 0) = 3000)::int;
SELECT 1 / ((SELECT count(*) FROM inv WHERE t >= '') = 3000)::int;
SELECT 1 / ((SELECT count(*) FROM inv WHERE k < 524288) +
			(SELECT count(*) FROM inv WHERE k >= 524288) = 3000)::int;
}
	],);

my %maint = (
	vacuum => [
		1, q{
VACUUM s;
VACUUM uq;
VACUUM inv;
\sleep 300 ms
}
	],
	check => [
		2, q{
SELECT fastbtree_check('s_k', true);
SELECT fastbtree_check('s_t', true);
SELECT fastbtree_check('s_id', true);
SELECT fastbtree_check('uq_k', true);
SELECT fastbtree_check('inv_k', true);
SELECT fastbtree_check('inv_t', true);
}
	],);

my ($work_out, $work_err, $maint_out, $maint_err) = ('', '', '', '');
my ($work, $maint);
{
	# every read goes through an index
	local $ENV{PGOPTIONS} = '-c enable_seqscan=off -c enable_bitmapscan=off';
	$work = start_pgbench($node, $dir, "-c 4 -j 2 -T $duration", \%work,
		\$work_out, \$work_err);
	$maint = start_pgbench($node, $dir, "-c 2 -j 1 -T $duration", \%maint,
		\$maint_out, \$maint_err);
}
my $work_ok = $work->finish;
my $maint_ok = $maint->finish;

check_pgbench('workload', $work_ok, $work_out, $work_err, $duration);
check_pgbench('VACUUM and fastbtree_check', $maint_ok, $maint_out, $maint_err,
	$duration);

# Every index passes the verifier after the workload.
for my $index (@fbt_indexes)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT fastbtree_check('$index', heapallindexed => true)");
	is($ret, 0, "fastbtree_check($index, heapallindexed) passes");
	diag($err) if $ret != 0;
}

my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;
};
my $force_seqscan = q{
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
};

# count, then md5 of "key@ctid" in the order of $order
sub ordered
{
	my ($settings, $key, $from, $order, $plan_re, $name) = @_;
	my $sql = qq{SELECT count(*) || ' ' || md5(string_agg(x, ','))
FROM (SELECT $key || '\@' || ctid AS x FROM $from ORDER BY $order) s};

	my $out = $node->safe_psql('postgres',
		"$settings EXPLAIN (COSTS OFF) $sql; SELECT '=====';\n$sql");
	my ($plan, $result) = split /^=====\n/m, $out;
	like($plan, $plan_re, "$name: plan");
	return $result;
}

# Index scan vs seqscan + sort, and fastbtree vs the btree twin, in key
# order with the heap TID as the tiebreaker, which both AMs use.
for my $c (
	[ 's_k', 'k', 's WHERE k >= 0', 'k', 's_k2', 'k2', 's WHERE k2 >= 0' ],
	[ 's_t', 'md5(t)', q{s WHERE t >= ''}, 't', 's_t2', 'md5(t2)', q{s WHERE t2 >= ''} ],
	[ 's_id', 'id', 's WHERE id > 0', 'id' ],
	[ 'uq_k', 'k', 'uq WHERE k > 0', 'k' ],
	[ 'inv_k', 'k', 'inv WHERE k >= 0', 'k' ],
	[ 'inv_t', 'md5(t)', q{inv WHERE t >= ''}, 't' ],
	[ 'inv_id', 'id', 'inv WHERE id > 0', 'id' ])
{
	my ($index, $key, $from, $order, $twin, $twinkey, $twinfrom) = @$c;
	my ($table) = $from =~ /^(\w+)/;

	my $via_index = ordered($force_index, $key, $from, $order,
		qr/Index (Only )?Scan using $index on $table/, "$index index scan");
	my $via_seqscan = ordered($force_seqscan, $key, $from,
		"$order, ctid", qr/Seq Scan on $table/, "$table seqscan");
	is($via_index, $via_seqscan,
		"$index returns exactly the heap's rows and ctids, in order");
	diag("$index: $via_index (rows, hash)");
	if ($twin)
	{
		(my $twinorder = $order) =~ s/(\w+)/${1}2/;
		my $via_twin = ordered($force_index, $twinkey, $twinfrom, $twinorder,
			qr/Index (Only )?Scan using $twin on $table/, "$twin index scan");
		is($via_index, $via_twin,
			"$index returns what its btree twin $twin returns, in the same order");
	}
}

# No key twice in the unique index's table, and counts agree.
is( $node->safe_psql(
		'postgres', "$force_seqscan
SELECT count(*) FROM (SELECT k FROM uq GROUP BY k HAVING count(*) > 1) d"),
	'0',
	'no key appears twice in uq');
diag('uq: '
	  . $node->safe_psql('postgres', 'SELECT count(*) FROM uq')
	  . ' rows after the workload (1500 before)');

is($node->safe_psql('postgres', "$force_seqscan SELECT count(*) FROM inv"),
	'3000', 'inv still has 3000 rows');

my @growth;
for my $index (@fbt_indexes)
{
	my $level = $node->safe_psql('postgres',
		"SELECT level FROM fastbtree_metap('$index')");
	my $blocks = $node->safe_psql('postgres',
		"SELECT pg_relation_size('$index') / 8192");
	push @growth, "$index level $start_level{$index}->$level, $blocks blocks";
}
diag('indexes after the workload: ' . join('; ', @growth));

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|TRAP/,
	'server log has no crash, PANIC or assertion failure');

$node->stop;
done_testing();
