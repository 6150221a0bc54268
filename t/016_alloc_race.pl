# t/016_alloc_race.pl
#	A page added to the index is locked by its creator before anyone can
#	learn its block number (issue 26, item 1; nbtree's rule).
#
# Three sessions, held at debug stalls (builds with assertions:
# fastbtree.debug_stall_vacuum, fastbtree.debug_stall_extend; each stall
# takes and releases an advisory lock the test holds):
#	V: VACUUM of t, stalled before it visits the last block of the index,
#	   past the rightmost leaf;
#	E: inserts ascending keys; the rightmost leaf splits and the index is
#	   extended to block B; E stalls right after the extension;
#	then V goes on: it visits the last block, re-reads the index's size,
#	   finds B and must wait for E's lock on it;
#	R: inserts low keys, splitting the leftmost leaf; it needs a new page.
# Then E and V go on.
#
# Before the fix E locked B only after releasing the extension lock (the
# stall then sat in that gap): V read B all zeroes, recorded it free and
# finished; R took B from the free space map and wrote its right half
# there; E then overwrote B with its own.  Two leaves had B as right
# sibling, R's right half was gone, fastbtree_check() failed and an index
# scan over R's keys looped.  After: V waits for E, R extends the index
# again, and every check below passes.  The btree twin t_b gets the same
# rows by the same statements (run one after another) and must give the
# same answers.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('alloc_race');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}

$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
shared_buffers = 32MB
});
$node->start;

# Keys 10, 20, ..., 200,000, inserted in order: the leaves fill left to
# right.  Then 450 keys between 100,000 and 100,500 split a leaf in the
# middle, so the last block of the index is not the rightmost leaf.  A
# few rows deleted give VACUUM work without emptying a leaf.
my $load = q{
INSERT INTO %s SELECT g * 10 FROM generate_series(1, 20000) g;
INSERT INTO %s SELECT 100000 + g FROM generate_series(1, 500) g WHERE g % 10 <> 0;
DELETE FROM %s WHERE k % 1000 = 0;
};
my $e_rows = 'INSERT INTO %s SELECT 200000 + g FROM generate_series(1, 2000) g';
my $r_rows =
  'INSERT INTO %s SELECT g * 10 + d FROM generate_series(1, 60) g, generate_series(1, 9) d';

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE t (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX t_k ON t USING fastbtree (k);
CREATE TABLE t_b (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX t_b_k ON t_b USING btree (k);
} . sprintf($load, ('t') x 3) . sprintf($load, ('t_b') x 3));

my $nblocks =
  $node->safe_psql('postgres', q{SELECT pg_relation_size('t_k') / 8192});
my $rightmost = $node->safe_psql(
	'postgres', q{
SELECT blkno FROM generate_series(1, pg_relation_size('t_k') / 8192 - 1) blkno,
	fastbtree_page_stats('t_k', blkno) s
WHERE s.type = 'l' AND s.next = 0});
cmp_ok($rightmost, '<', $nblocks - 1,
	'the rightmost leaf is not the last block of the index');

# The test holds both stall locks.
my $ctl = $node->background_psql('postgres');
$ctl->query_safe('SELECT pg_advisory_lock(7101), pg_advisory_lock(7102)');

my $waiting_on = sub {
	my ($pid, $key) = @_;
	return $node->poll_query_until(
		'postgres', qq{
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND pid = $pid AND objid = $key AND NOT granted},
		'1');
};

my $v = $node->background_psql('postgres');
my $v_pid = $v->query_safe('SELECT pg_backend_pid()');
$v->query_safe(
	"SET fastbtree.debug_stall_vacuum = 7101; SET fastbtree.debug_stall_vacuum_block = "
	  . ($nblocks - 1));
$v->query_until(qr/started/, qq{
\\echo started
VACUUM (INDEX_CLEANUP ON) t;
\\echo vacuumed
});
ok($waiting_on->($v_pid, 7101), 'V stalls before the last block');

my $e = $node->background_psql('postgres');
my $e_pid = $e->query_safe('SELECT pg_backend_pid()');
$e->query_safe('SET fastbtree.debug_stall_extend = 7102');
$e->query_until(qr/started/, "\\echo started\n" . sprintf($e_rows, 't') . ";\n\\echo inserted\n");
ok($waiting_on->($e_pid, 7102), 'E stalls after extending the index');
is($node->safe_psql('postgres', q{SELECT pg_relation_size('t_k') / 8192}),
	$nblocks + 1, 'E extended the index by one block');

# V goes on: it either finishes (the bug) or waits for E's lock on B.
$ctl->query_safe('SELECT pg_advisory_unlock(7101)');
ok( $node->poll_query_until(
		'postgres', qq{
SELECT count(*) FROM pg_stat_activity
WHERE pid = $v_pid AND (state = 'idle' OR wait_event_type IN ('LWLock', 'BufferPin'))},
		'1'),
	'V has finished or waits on a buffer');
is( $node->safe_psql(
		'postgres',
		qq{SELECT wait_event_type FROM pg_stat_activity WHERE pid = $v_pid}),
	'LWLock',
	'V waits for the lock of the page E added');

# R splits the leftmost leaf; it must not get block B.
$node->safe_psql('postgres', sprintf($r_rows, 't'));
$ctl->query_safe('SELECT pg_advisory_unlock(7102)');
$e->query_safe('SELECT 1');
$v->query_safe('SELECT 1');
$e->quit;
$v->quit;
$ctl->quit;

$node->safe_psql('postgres',
	sprintf($e_rows, 't_b') . '; ' . sprintf($r_rows, 't_b'));

my ($ret, $out, $err) = $node->psql('postgres',
	q{SET statement_timeout = '60s'; SELECT fastbtree_check('t_k', true)});
is($ret, 0, 'fastbtree_check passes after the race') or diag($err);

# Every key through the index, forward and backward, and the range R
# inserted into, against the btree twin.
my $scans = q{
SET statement_timeout = '60s';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(k), md5(string_agg(k::text, ',' ORDER BY k)) FROM (SELECT k FROM %1$s ORDER BY k) s;
SELECT count(*), md5(string_agg(k::text, ',')) FROM (SELECT k FROM %1$s ORDER BY k DESC) s;
SELECT count(*), sum(k) FROM %1$s WHERE k BETWEEN 1 AND 700;
SELECT count(*) FROM %1$s WHERE k > 200000;
};
($ret, my $f_out, $err) = $node->psql('postgres', sprintf($scans, 't'));
is($ret, 0, 'index scans of t finish') or diag($err);
is($f_out, $node->safe_psql('postgres', sprintf($scans, 't_b')),
	'index scans of t return what the btree twin returns');
my $expected = 20000 + 450 - 200 + 2000 + 540;
like($f_out, qr/^$expected\|/, "the index holds all $expected rows");

# V finished its pass and the index is sound; a second VACUUM too.
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
($ret, $out, $err) =
  $node->psql('postgres', q{SELECT fastbtree_check('t_k', true)});
is($ret, 0, 'fastbtree_check passes after another VACUUM') or diag($err);

done_testing();
