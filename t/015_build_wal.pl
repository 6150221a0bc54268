# t/015_build_wal.pl
#	Index builds write their pages through smgr, outside shared buffers,
#	and log them as core's full-page records (fbtsort.c, fbt_bulk_* in
#	fbtcompat.h).  Every way a build's pages reach durable storage:
#
# 1. wal_level = replica, with a streaming standby: builds (one of more
#    than 32 pages, so several batches of full-page records; a REINDEX; an
#    empty table), then an immediate shutdown.  Crash recovery replays the
#    pages: every index answers as a sequential scan does and passes
#    fastbtree_check, on the primary after the crash and on the standby.
# 2. wal_level = minimal: indexes built in the transaction that created
#    their relfilenode are not WAL-logged; core syncs them at commit (above
#    wal_skip_threshold) or logs their pages then (below it).  A table
#    created with its indexes in one transaction, and an index created on
#    an older table, both sizes, then an immediate shutdown: all intact.
# 3. An unlogged table's index: after the crash the table is reset to
#    empty and the index with it (its init fork), valid and usable.  A
#    temporary table's index answers as a sequential scan in its session.
#
# Runs in the suite's WAL mode (scripts/test.sh --set), like every test.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @nodes;

END
{
	local $?;
	for my $n (reverse @nodes)
	{
		$n->stop('immediate', fail_ok => 1) if $n;
	}
}

# The answers through the index of TABLE on column k, and by a sequential
# scan: count, sum and a hash of the keys in order
sub answers
{
	my ($node, $table, $via_index) = @_;
	my $set = $via_index
	  ? 'SET enable_seqscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
	return $node->safe_psql('postgres', qq{$set
SELECT count(*), coalesce(sum(k::bigint), 0), md5(coalesce(string_agg(k::text, ',' ORDER BY k), ''))
FROM $table WHERE k > -2147483648});
}

sub check_table
{
	my ($node, $table, $index, $label) = @_;
	is(answers($node, $table, 1), answers($node, $table, 0),
		"$label: $index answers as a sequential scan does");
	my ($r, $o, $e) = $node->psql('postgres',
		"SELECT fastbtree_check('$index', heapallindexed => true)");
	is($r, 0, "$label: fastbtree_check($index) passes") or diag($e);
}

# 1. Replica: crash recovery and a standby replay the builds.
my $primary = PostgreSQL::Test::Cluster->new('build_primary');
push @nodes, $primary;
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
autovacuum = off
checkpoint_timeout = '1h'
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION fastbtree');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('build_standby');
push @nodes, $standby;
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{
CREATE TABLE r (k int, s text);
INSERT INTO r SELECT (g * 7919) % 100003, md5(g::text) FROM generate_series(1, 60000) g;
CREATE INDEX r_k ON r USING fastbtree (k);
CREATE INDEX r_s ON r USING fastbtree (s);
CREATE TABLE r2 (k int);
INSERT INTO r2 SELECT g % 100 FROM generate_series(1, 30000) g;
CREATE INDEX r2_k ON r2 USING fastbtree (k);
REINDEX INDEX r2_k;
CREATE TABLE e (k int);
CREATE INDEX e_k ON e USING fastbtree (k);
});
cmp_ok($primary->safe_psql('postgres', "SELECT pg_relation_size('r_k') / 8192"),
	'>', 32, 'r_k has more pages than one batch of full-page records');
$primary->stop('immediate');
$primary->start;
check_table($primary, 'r', 'r_k', 'after crash recovery');
check_table($primary, 'r2', 'r2_k', 'after crash recovery');
check_table($primary, 'e', 'e_k', 'after crash recovery');
is($primary->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM r WHERE s > ''}), '60000',
	'after crash recovery: r_s (text keys) finds every row');
$primary->safe_psql('postgres', 'INSERT INTO e SELECT generate_series(1, 500)');
check_table($primary, 'e', 'e_k', 'the index built on an empty table then takes rows');

$primary->wait_for_catchup($standby, 'replay');
check_table($standby, 'r', 'r_k', 'standby');
check_table($standby, 'r2', 'r2_k', 'standby');
check_table($standby, 'e', 'e_k', 'standby');

# 2. and 3. wal_level = minimal, unlogged and temporary tables.
my $minimal = PostgreSQL::Test::Cluster->new('build_minimal');
push @nodes, $minimal;
$minimal->init;
$minimal->append_conf('postgresql.conf', q{
wal_level = minimal
max_wal_senders = 0
wal_skip_threshold = '64kB'
autovacuum = off
checkpoint_timeout = '1h'
});
$minimal->start;
$minimal->safe_psql('postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE older (k int);
INSERT INTO older SELECT (g * 31) % 50021 FROM generate_series(1, 50000) g;
CREATE TABLE older_small (k int);
INSERT INTO older_small SELECT g FROM generate_series(1, 300) g;
});
$minimal->safe_psql('postgres', q{
BEGIN;
CREATE TABLE small (k int);
INSERT INTO small SELECT g FROM generate_series(1, 500) g;
CREATE INDEX small_k ON small USING fastbtree (k);
CREATE TABLE big (k int);
INSERT INTO big SELECT (g * 7919) % 100003 FROM generate_series(1, 80000) g;
CREATE INDEX big_k ON big USING fastbtree (k);
COMMIT;
CREATE INDEX older_k ON older USING fastbtree (k);
CREATE INDEX older_small_k ON older_small USING fastbtree (k);
CREATE UNLOGGED TABLE u (k int);
INSERT INTO u SELECT g FROM generate_series(1, 20000) g;
CREATE INDEX u_k ON u USING fastbtree (k);
});
cmp_ok($minimal->safe_psql('postgres', "SELECT pg_relation_size('small_k')"),
	'<', 65536, 'small_k is below wal_skip_threshold (its pages are logged at commit)');
cmp_ok($minimal->safe_psql('postgres', "SELECT pg_relation_size('big_k')"),
	'>', 65536, 'big_k is above wal_skip_threshold (synced at commit)');
check_table($minimal, 'u', 'u_k', 'unlogged, before the crash');

# a temporary table's index lives and dies in one session
my $temp = $minimal->safe_psql('postgres', q{
CREATE TEMP TABLE tt (k int);
INSERT INTO tt SELECT (g * 13) % 7001 FROM generate_series(1, 7000) g;
CREATE INDEX tt_k ON tt USING fastbtree (k);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint), md5(string_agg(k::text, ',' ORDER BY k)) FROM tt WHERE k > -1;
RESET enable_seqscan; SET enable_indexscan = off; SET enable_indexonlyscan = off;
SELECT count(*), sum(k::bigint), md5(string_agg(k::text, ',' ORDER BY k)) FROM tt WHERE k > -1;
SELECT count(*) FROM (SELECT fastbtree_check('tt_k', true)) c;
});
my @temp = split /\n/, $temp;
is($temp[0], $temp[1], 'temporary: the index answers as a sequential scan does');
like($temp[0], qr/^7000\|/, 'temporary: all 7000 rows');
is($temp[2], '1', 'temporary: fastbtree_check passes');

$minimal->stop('immediate');
$minimal->start;
check_table($minimal, 'small', 'small_k', 'wal_level minimal, after the crash');
check_table($minimal, 'big', 'big_k', 'wal_level minimal, after the crash');
check_table($minimal, 'older', 'older_k', 'wal_level minimal, after the crash');
check_table($minimal, 'older_small', 'older_small_k', 'wal_level minimal, after the crash');
is($minimal->safe_psql('postgres', 'SELECT count(*) FROM u'), '0',
	'unlogged: the table is reset by the crash');
check_table($minimal, 'u', 'u_k', 'unlogged, reset');
$minimal->safe_psql('postgres', 'INSERT INTO u SELECT g FROM generate_series(1, 3000) g');
check_table($minimal, 'u', 'u_k', 'unlogged, written again after the reset');

done_testing();
