# t/021_parallel_build.pl
#
# 021_parallel_build: CREATE INDEX ... USING fastbtree scans and sorts with
# parallel workers where btree's build would (max_parallel_maintenance_
# workers, maintenance_work_mem, the table's parallel_workers), and the
# result is the serial build's, block for block.  Plain, unique (with dead
# duplicates, which stay out of the unique check, and with live ones,
# which raise btree's error), INCLUDE, expression, CONCURRENTLY and REINDEX
# [CONCURRENTLY] builds are compared with btree twins on the same rows.  A
# parallel-unsafe expression gets no workers, as btree's build gets none.
# A crash (a worker killed) in the middle of a parallel build leaves no
# index behind, and the table takes a new one.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('parallel_build');
$node->init;
$node->append_conf('postgresql.conf', qq{
fsync = off
maintenance_work_mem = '256MB'
max_parallel_maintenance_workers = 2
max_worker_processes = 8
min_parallel_table_scan_size = 0
log_min_messages = debug1
restart_after_crash = on
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION fastbtree;
CREATE EXTENSION pageinspect;
CREATE TABLE t AS
	SELECT (hashint4(g) & 1048575) AS k, g AS id, md5(g::text) AS s
	FROM generate_series(1, 300000) g;
VACUUM ANALYZE t;
-- how many raw pages (past the page header) of two indexes differ
CREATE FUNCTION blocks_differing(a regclass, b regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT CASE WHEN pg_relation_size(a) <> pg_relation_size(b) THEN -1
	ELSE (SELECT count(*) FROM generate_series(0, pg_relation_size(a) / 8192 - 1) n
		  WHERE substring(get_raw_page(a::text, n::int) FROM 25) <>
				substring(get_raw_page(b::text, n::int) FROM 25)) END
$$;
});

# build: run a CREATE INDEX with the session settings given, and return
# whether the log says it asked for parallel workers for that index
sub build
{
	my ($settings, $sql, $name) = @_;
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "$settings $sql");
	my $log = slurp_file($node->logfile, $offset);
	return $log =~ /building index "\Q$name\E" on table "\w+" with request for [1-9]\d* parallel workers/;
}

# --- plain, INCLUDE and expression indexes: parallel = serial, block for block
foreach my $case (
	[ 'k', '(k)' ],
	[ 'inc', '(k) INCLUDE (s)' ],
	[ 'expr', '((k % 1000), s)' ],
	[ 'text', '(s DESC NULLS FIRST)' ])
{
	my ($tag, $cols) = @$case;
	ok(build('', "CREATE INDEX p_$tag ON t USING fastbtree $cols;", "p_$tag"),
		"$tag: the build asks for parallel workers");
	ok( !build('SET max_parallel_maintenance_workers = 0;',
			"CREATE INDEX s_$tag ON t USING fastbtree $cols;", "s_$tag"),
		"$tag: with max_parallel_maintenance_workers = 0 it asks for none");
	build('', "CREATE INDEX b_$tag ON t USING btree $cols;", "b_$tag");
	is($node->safe_psql('postgres', "SELECT blocks_differing('p_$tag', 's_$tag')"),
		'0', "$tag: the parallel build's pages are the serial build's");
	$node->safe_psql('postgres', "SELECT fastbtree_check('p_$tag', true)");
	is( $node->safe_psql('postgres',
			"SELECT pg_relation_size('p_$tag') = pg_relation_size('b_$tag')"),
		't', "$tag: as many blocks as btree's parallel build");
}

# the table's parallel_workers is honoured as for btree
$node->safe_psql('postgres', 'ALTER TABLE t SET (parallel_workers = 0)');
ok(!build('', 'CREATE INDEX pw0 ON t USING fastbtree (id);', 'pw0'),
	'parallel_workers = 0 on the table: no workers');
$node->safe_psql('postgres', 'ALTER TABLE t RESET (parallel_workers)');

# a parallel-unsafe expression: serial, as btree
$node->safe_psql('postgres', q{
CREATE FUNCTION unsafe_id(int) RETURNS int IMMUTABLE PARALLEL UNSAFE
LANGUAGE plpgsql AS $$ BEGIN RETURN $1; END $$;
});
ok(!build('', 'CREATE INDEX unsafe_e ON t USING fastbtree (unsafe_id(k));', 'unsafe_e'),
	'a parallel-unsafe expression: no workers');

# --- unique: dead duplicates stay out of the check; live ones are btree's error
$node->safe_psql('postgres', q{
CREATE TABLE u AS SELECT g AS id FROM generate_series(1, 200000) g;
INSERT INTO u SELECT g FROM generate_series(1, 1000) g;
VACUUM ANALYZE u;
});
my ($ret, $out, $err_fbt) = $node->psql('postgres', q{
SET client_min_messages = error;
CREATE UNIQUE INDEX u_fbt ON u USING fastbtree (id);});
my ($ret2, $out2, $err_bt) = $node->psql('postgres',
	'CREATE UNIQUE INDEX u_bt ON u USING btree (id);');
ok($ret != 0 && $ret2 != 0, 'live duplicates: both builds fail');
my ($msg_fbt) = $err_fbt =~ /(ERROR:.*)/;
my ($msg_bt) = $err_bt =~ /(ERROR:.*)/;
$msg_fbt =~ s/u_fbt/IDX/;
$msg_bt =~ s/u_bt/IDX/;
is($msg_fbt, $msg_bt, "live duplicates: btree's error ($msg_bt)");

# an open snapshot keeps the deleted duplicates RECENTLY_DEAD for the build
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM u;');
$node->safe_psql('postgres', 'DELETE FROM u WHERE ctid IN (SELECT ctid FROM u WHERE id <= 1000 ORDER BY ctid DESC LIMIT 1000)');
ok( build(
		'', 'CREATE UNIQUE INDEX u_fbt ON u USING fastbtree (id);', 'u_fbt'),
	'dead duplicates: the unique build runs in parallel');
build('', 'CREATE UNIQUE INDEX u_bt ON u USING btree (id);', 'u_bt');
build('SET max_parallel_maintenance_workers = 0;',
	'CREATE UNIQUE INDEX u_fbt0 ON u USING fastbtree (id);', 'u_fbt0');
$holder->quit;
is($node->safe_psql('postgres', "SELECT blocks_differing('u_fbt', 'u_fbt0')"),
	'0', 'dead duplicates: the parallel unique build is the serial one');
$node->safe_psql('postgres', "SELECT fastbtree_check('u_fbt', true)");
is( $node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*), sum(id) FROM u WHERE id <= 5000'),
	'5000|12502500',
	'dead duplicates: the unique index finds each live row once');

# --- CONCURRENTLY and REINDEX: rows equal to btree's
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 0');
ok( build('', 'CREATE INDEX CONCURRENTLY c_fbt ON t USING fastbtree (s);', 'c_fbt'),
	'CREATE INDEX CONCURRENTLY asks for parallel workers');
build('', 'CREATE INDEX CONCURRENTLY c_bt ON t USING btree (s);', 'c_bt');
ok(build('', 'REINDEX INDEX p_k;', 'p_k'), 'REINDEX asks for parallel workers');
ok( build('', 'REINDEX INDEX CONCURRENTLY p_inc;', 'p_inc_ccnew'),
	'REINDEX CONCURRENTLY asks for parallel workers');
$node->safe_psql('postgres', "SELECT fastbtree_check(i, true) FROM unnest(ARRAY['c_fbt', 'p_k', 'p_inc']::regclass[]) i");
# each fastbtree index alone, without its twins
$node->safe_psql('postgres', 'DROP INDEX c_bt, b_k, s_k');
my $q = q{SELECT count(*), sum(id), min(s), max(s) FROM t WHERE s BETWEEN '3' AND 'c'};
my $q_k = q{SELECT count(*), sum(id) FROM t WHERE k BETWEEN 1000 AND 300000};
my $want = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
my $want_k = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q_k");
foreach my $pair ([ 'c_fbt', $q, $want ], [ 'p_k', $q_k, $want_k ])
{
	my ($idx, $query, $expect) = @$pair;
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) $query");
	like($plan, qr/\Q$idx\E/, "$idx is used");
	is($node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $query"),
		$expect, "$idx: rows equal to a sequential scan's");
}

# --- a crash in the middle of a parallel build leaves nothing behind
$node->safe_psql('postgres', q{
CREATE FUNCTION slow_id(int) RETURNS int IMMUTABLE PARALLEL SAFE
LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.0005); RETURN $1; END $$;
CREATE TABLE slow AS SELECT g AS id FROM generate_series(1, 60000) g;
VACUUM ANALYZE slow;
});
my $builder = $node->background_psql('postgres', on_error_stop => 0);
$builder->query_until(qr/started/, q{
\echo started
CREATE INDEX slow_fbt ON slow USING fastbtree (slow_id(id));
});
my $worker = '';
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while ($worker eq '' && time < $deadline)
{
	$worker = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'parallel worker' AND query LIKE 'CREATE INDEX slow_fbt%' LIMIT 1");
}
isnt($worker, '', 'a parallel worker of the build is running');
kill 'KILL', $worker;
# (psql may be gone already: writing its \q can fail with EPIPE)
eval { $builder->quit; };
# the postmaster restarts every backend and recovers
$node->poll_query_until('postgres', 'SELECT 1', '1')
  or die 'the server did not come back';
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'slow_fbt%'"),
	'0', 'after the crash no index of the interrupted build is left');
$node->safe_psql('postgres', q{
CREATE OR REPLACE FUNCTION slow_id(int) RETURNS int IMMUTABLE PARALLEL SAFE
LANGUAGE sql AS 'SELECT $1';
CREATE INDEX slow_fbt ON slow USING fastbtree (slow_id(id));
});
$node->safe_psql('postgres', "SELECT fastbtree_check('slow_fbt', true)");
is( $node->safe_psql('postgres',
		'SET enable_seqscan = off; SELECT count(*) FROM slow WHERE slow_id(id) > 100'),
	'59900', 'the table takes a new index after the crash');

$node->stop;
done_testing();
