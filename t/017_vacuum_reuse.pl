# t/017_vacuum_reuse.pl
#	Splits reuse free pages while a VACUUM pass runs and after one is
#	cancelled; a pass goes back for the right half of a split it would
#	otherwise miss (issue 26, item 2).
#
# The index t_k gets about 50 free pages (a key range deleted, two
# VACUUMs).  Then:
#  1. VACUUM V is held (fastbtree.debug_stall_vacuum, builds with
#     assertions) before block X, a leaf holding rows V is to remove.
#     Meanwhile inserts split that leaf and its neighbours: they must take
#     free pages (the index does not grow), and the right half of X lands
#     on a recycled block V has already passed, carrying some of the rows
#     V must remove.  When V goes on it must go back for them (nbtree's
#     vacuum cycle ids): afterwards the index holds one entry per live row.
#     Before the fix the first split during the pass took every free page
#     out of the map and rejected it, and the index grew.
#  2. VACUUM V2 is held the same way and cancelled (pg_cancel_backend).
#     Later splits must still reuse free pages.  Before the fix the
#     cancelled pass left the metapage's vacuum-running flag set, and every
#     split drained the map and extended the index.
#  3. A VACUUM that completes, fastbtree_check(), and the rows of every
#     index scan against the btree twin t_b, which got the same statements
#     without stalls; the index is no larger than 1.05x the twin's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('vacuum_reuse');

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

# Statements run on t and on its twin t_b (%1$s).
my $setup = q{
CREATE TABLE %1$s (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX %1$s_k ON %1$s USING %2$s (k);
INSERT INTO %1$s SELECT g * 10 FROM generate_series(1, 40000) g;
DELETE FROM %1$s WHERE k BETWEEN 100010 AND 300000;
VACUUM %1$s;
};
my $dead1 = 'DELETE FROM %1$s WHERE k > 350000 AND k % 100 = 0';
my $ins1 =
  'INSERT INTO %1$s SELECT 380000 + g * 10 + d FROM generate_series(0, 199) g, generate_series(1, 9) d';
my $dead2 = 'DELETE FROM %1$s WHERE k < 50000 AND k % 100 = 0';
my $ins2 =
  'INSERT INTO %1$s SELECT 10000 + g * 10 + d FROM generate_series(0, 199) g, generate_series(1, 9) d';

$node->safe_psql('postgres', 'CREATE EXTENSION fastbtree');
$node->safe_psql('postgres', sprintf($setup, 't', 'fastbtree'));
$node->safe_psql('postgres', sprintf($setup, 't_b', 'btree'));

# The pages deleted by the first VACUUM become free once no snapshot can
# reach them: let transactions go by, VACUUM again.
$node->safe_psql('postgres', 'SELECT txid_current()') for 1 .. 3;
$node->safe_psql('postgres', 'VACUUM t; VACUUM t_b');

my $size = sub {
	my ($rel) = @_;
	return $node->safe_psql('postgres',
		"SELECT pg_relation_size('$rel') / 8192");
};
my $nblocks = $size->('t_k');
my $ndeleted = $node->safe_psql(
	'postgres', qq{
SELECT count(*) FROM generate_series(1, $nblocks - 1) b, fastbtree_page_stats('t_k', b) s
WHERE s.type = 'd'});
cmp_ok($ndeleted, '>=', 40, "the index has $ndeleted deleted pages to reuse");

# X: the leaf holding key 380,000.
my $x = $node->safe_psql(
	'postgres', qq{
SELECT b FROM generate_series(1, $nblocks - 1) b
WHERE (fastbtree_page_stats('t_k', b)).type = 'l'
  AND EXISTS (SELECT 1 FROM fastbtree_page_items('t_k', b) i
			  WHERE NOT i.pivot AND i.htid = (SELECT ctid FROM t WHERE k = 380000))});
like($x, qr/^\d+$/, "key 380,000 is on leaf $x");

my $ctl = $node->background_psql('postgres');
my $waiting_on = sub {
	my ($pid, $key) = @_;
	return $node->poll_query_until(
		'postgres', qq{
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND pid = $pid AND objid = $key AND NOT granted},
		'1');
};
my $stalled_vacuum = sub {
	my ($key, $block) = @_;
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe(
		"SET fastbtree.debug_stall_vacuum = $key; SET fastbtree.debug_stall_vacuum_block = $block"
	);
	# psql goes on after an error (the cancel of part 2)
	$s->query_until(qr/started/,
		"\\set ON_ERROR_STOP 0\n\\echo started\nVACUUM t;\n\\echo vacuumed\n");
	ok($waiting_on->($pid, $key), "VACUUM stalls before block $block");
	return ($s, $pid);
};

# 1. Splits during a pass.
$node->safe_psql('postgres', sprintf($dead1, 't'));
$ctl->query_safe('SELECT pg_advisory_lock(7201)');
my ($v, $v_pid) = $stalled_vacuum->(7201, $x);
$node->safe_psql('postgres', sprintf($ins1, 't'));
is($size->('t_k'), $nblocks, 'splits during the pass reused free pages');
my $right = $node->safe_psql('postgres',
	"SELECT next FROM fastbtree_page_stats('t_k', $x)");
cmp_ok($right, '<', $x,
	"leaf $x split to block $right, which the pass has passed");
# Duplicates of a key of that right half: its deduplication rewrites the
# page, which must keep the pass's cycle id (nbtree's dedup pass copies
# the special space) or the pass would not come back for it.
my $dupkey = $node->safe_psql(
	'postgres', qq{
SELECT k FROM t WHERE ctid IN (SELECT htid FROM fastbtree_page_items('t_k', $right)
							   WHERE NOT pivot) ORDER BY k DESC LIMIT 1});
my $dupins = "INSERT INTO %1\$s SELECT $dupkey FROM generate_series(1, 150)";
$node->safe_psql('postgres', sprintf($dupins, 't'));
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) > 0 FROM fastbtree_page_items('t_k', $right) WHERE cardinality(tids) > 1}),
	't',
	"block $right holds a posting list now");
$ctl->query_safe('SELECT pg_advisory_unlock(7201)');
$v->query_safe('SELECT 1');
$v->quit;

my $entries = qq{
SELECT sum(coalesce(cardinality(i.tids), 1))
FROM generate_series(1, pg_relation_size('t_k') / 8192 - 1) b,
	fastbtree_page_items('t_k', b) i
WHERE (fastbtree_page_stats('t_k', b)).type = 'l' AND NOT i.pivot};
is($node->safe_psql('postgres', $entries),
	$node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'after the pass the index holds one entry per live row');

# 2. A cancelled pass.
$node->safe_psql('postgres', sprintf($dead2, 't'));
$ctl->query_safe('SELECT pg_advisory_lock(7202)');
my ($v2, $v2_pid) = $stalled_vacuum->(7202, $nblocks - 1);
$node->safe_psql('postgres', "SELECT pg_cancel_backend($v2_pid)");
my ($out, $ret) = $v2->query('SELECT 1');
like($v2->{stderr}, qr/canceling statement due to user request/,
	'the stalled VACUUM was cancelled');
$v2->quit;
$ctl->query_safe('SELECT pg_advisory_unlock(7202)');
$ctl->quit;

my $before = $size->('t_k');
$node->safe_psql('postgres', sprintf($ins2, 't'));
is($size->('t_k'), $before,
	'splits after the cancelled pass reused free pages');

# 3. The twin got the same statements.
$node->safe_psql('postgres', join(";\n", map { sprintf($_, 't_b') } ($dead1, $ins1, $dupins, $dead2, $ins2)));
$node->safe_psql('postgres', 'VACUUM t; VACUUM t_b');
my ($r, $o, $err) =
  $node->psql('postgres', q{SELECT fastbtree_check('t_k', true)});
is($r, 0, 'fastbtree_check passes') or diag($err);
is($node->safe_psql('postgres', $entries),
	$node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'the index holds one entry per live row');

my $scans = q{
SET statement_timeout = '60s';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(k), md5(string_agg(k::text, ',' ORDER BY k)) FROM (SELECT k FROM %1$s ORDER BY k) s;
SELECT count(*), md5(string_agg(k::text, ',')) FROM (SELECT k FROM %1$s ORDER BY k DESC) s;
SELECT count(*), sum(k) FROM %1$s WHERE k BETWEEN 370000 AND 390000;
};
is($node->safe_psql('postgres', sprintf($scans, 't')),
	$node->safe_psql('postgres', sprintf($scans, 't_b')),
	'index scans return what the btree twin returns');
my ($f, $b) = ($size->('t_k'), $size->('t_b_k'));
cmp_ok($f, '<=', 1.05 * $b, "index size $f blocks, btree twin $b");

done_testing();
