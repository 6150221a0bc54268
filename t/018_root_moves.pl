# t/018_root_moves.pl
#	A reader whose root has moved (issue 26, items 3 and 4).
#
# Part 1 (item 3): a stale cached root, recycled as a leaf, must not stay
# pinned for a scan's lifetime.  Session C caches t_k's metapage (root
# block 3, level 1) in a transaction, through a PL/pgSQL function whose
# cursor plan is cached; in that transaction C acquires no new lock, so it
# processes no invalidation and keeps its cache.  Meanwhile the root splits
# (block 3 becomes an inner page), the keys under block 3 are deleted,
# VACUUM deletes block 3 and recycles it, and a split reuses it as a leaf.
# C then calls the function again: its cursor's descent starts from the
# cached root, finds a leaf, and re-reads the metapage; the cursor stays
# open while C waits on an advisory lock.  A VACUUM (INDEX_CLEANUP ON)
# with dead rows on every leaf must then finish: before the fix the
# rejected leaf stayed among the scan's pins and VACUUM waited for its
# cleanup lock until the cursor closed (here: statement_timeout).  The
# btree twin t_b gets the same statements, and its VACUUM finishes too.
#
# Part 2 (item 4): the root named by a freshly read metapage splits and is
# deleted before the reader locks it.  Reader R stalls
# (fastbtree.debug_stall_getroot, builds with assertions) right after
# reading the metapage afresh, before it pins the root (block 3, level 1);
# then the root splits, and VACUUM deletes block 3, whose keys were
# deleted before R started;
# R goes on, finds block 3 deleted and must step right to the new leftmost
# page of level 1 (as nbtree's _bt_getroot()) and return the right rows.
# Before the fix R failed with "root block 3 of index ... is not a leftmost
# page of level 1" (ERRCODE_INDEX_CORRUPTED) on a sound index.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('root_moves');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}

$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
shared_buffers = 64MB
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION fastbtree');

# Statements on t (%1$s) with USING %2$s, and on the twin t_b.
my $create = q{
CREATE TABLE %1$s (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX %1$s_k ON %1$s USING %2$s (k);
INSERT INTO %1$s SELECT g FROM generate_series(1, 600) g;
};
# the root splits; then everything under block 3 (and more) goes
my $grow = q{
INSERT INTO %1$s SELECT g FROM generate_series(601, 200000) g;
DELETE FROM %1$s WHERE k < 190000;
VACUUM %1$s;
};
my $recycle = q{
VACUUM %1$s;
INSERT INTO %1$s SELECT g * 2 FROM generate_series(1, 80000) g;
DELETE FROM %1$s WHERE k % 7 = 0;
};

my $metap = sub {
	return $node->safe_psql('postgres',
		"SELECT root || '/' || level FROM fastbtree_metap('$_[0]')");
};
my $type3 = sub {
	return $node->safe_psql('postgres',
		"SELECT type FROM fastbtree_page_stats('$_[0]', 3)");
};
my $waiting_on = sub {
	my ($pid, $key) = @_;
	return $node->poll_query_until(
		'postgres', qq{
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND pid = $pid AND objid = $key AND NOT granted},
		'1');
};

# ---- Part 1 ----
for my $tb ([ 't', 'fastbtree' ], [ 't_b', 'btree' ])
{
	$node->safe_psql('postgres', sprintf($create, @$tb));
	$node->safe_psql(
		'postgres', qq{
CREATE FUNCTION scan_$tb->[0]() RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE
	c CURSOR FOR SELECT k FROM $tb->[0] WHERE k > 0 ORDER BY k;
	r int;
BEGIN
	OPEN c;
	FETCH c INTO r;
	PERFORM pg_advisory_lock_shared(7301);
	PERFORM pg_advisory_unlock_shared(7301);
	CLOSE c;
	RETURN r;
END
\$\$});
}
is($metap->('t_k'), '3/1', 't_k: root block 3, level 1');

my $c = $node->background_psql('postgres');
my $c_pid = $c->query_safe('SELECT pg_backend_pid()');
$c->query_safe(
	q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
BEGIN;
SELECT scan_t(), scan_t_b();
});

for my $t ('t', 't_b')
{
	$node->safe_psql('postgres', 'SELECT txid_current()') for 1 .. 3;
	$node->safe_psql('postgres', sprintf($grow, $t));
}
is($type3->('t_k'), 'd', 'block 3, once the root, is deleted');
$node->safe_psql('postgres', 'SELECT txid_current()') for 1 .. 3;
$node->safe_psql('postgres', sprintf($recycle, $_)) for ('t', 't_b');
is($type3->('t_k'), 'l', 'block 3 is reused as a leaf');
like($metap->('t_k'), qr{/2$}, 't_k has a root of level 2');

my $ctl = $node->background_psql('postgres');
$ctl->query_safe('SELECT pg_advisory_lock(7301)');
$c->query_until(qr/started/, "\\echo started\nSELECT scan_t(), scan_t_b();\n");
ok($waiting_on->($c_pid, 7301), 'C holds its cursor on t open');

for my $t ('t', 't_b')
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '30s'; VACUUM (INDEX_CLEANUP ON) $t");
	is($ret, 0, "VACUUM of $t finishes while C's cursor is open")
	  or diag($err);
	last if $ret != 0;
}
$ctl->query_safe('SELECT pg_advisory_unlock(7301)');
my $got = $c->query_safe('COMMIT');
is($c->query_safe('SELECT scan_t(), scan_t_b()'), '2|2',
	'both cursors return the first key');
$c->quit;

my ($r, $o, $err) =
  $node->psql('postgres', q{SELECT fastbtree_check('t_k', true)});
is($r, 0, 'fastbtree_check passes') or diag($err);

# ---- Part 2 ----
# R caches u_k's metapage while the index is one leaf (block 1); then
# u_k grows to a root of level 1 (block 3), which stays the root up to
# about 150,000 ascending keys and, when it splits, keeps the keys below
# about 104,000.  The rows R must not see go before R's query starts (its
# snapshot would keep them from VACUUM); the root splits after.  No VACUUM
# or ANALYZE of u before R's query: R keeps its cached metapage.  R's
# descent refuses the cached root (block 1 now has a right sibling),
# reads the metapage (root 3, level 1), and stalls.
my $u_create = q{
CREATE TABLE %1$s (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX %1$s_k ON %1$s USING %2$s (k);
INSERT INTO %1$s SELECT g FROM generate_series(1, 100) g;
};
my $u_load = q{
INSERT INTO %1$s SELECT g FROM generate_series(101, 145000) g;
DELETE FROM %1$s WHERE k < 110000;
};
my $u_grow = q{
INSERT INTO %1$s SELECT g FROM generate_series(145001, 200000) g;
VACUUM %1$s;
};
my $query = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(k) FROM %s WHERE k BETWEEN 100 AND 199000;
};
$node->safe_psql('postgres',
	join('', map { sprintf($u_create, @$_) } ([ 'u', 'fastbtree' ], [ 'u_b', 'btree' ])));
is($metap->('u_k'), '1/0', 'u_k: one leaf, block 1');
my $rd = $node->background_psql('postgres');
my $rd_pid = $rd->query_safe('SELECT pg_backend_pid()');
$rd->query_safe(sprintf($query, 'u'));
$node->safe_psql('postgres', sprintf($u_load, $_)) for ('u', 'u_b');
is($metap->('u_k'), '3/1', 'u_k: root block 3, level 1');

$ctl->query_safe('SELECT pg_advisory_lock(7302)');
$rd->query_safe("SET fastbtree.debug_stall_getroot = 7302");
$rd->query_until(qr/started/,
	"\\set ON_ERROR_STOP 0\n\\echo started\n" . sprintf($query, 'u') . "\\echo done\n");
ok($waiting_on->($rd_pid, 7302), 'R stalls before it pins the root');
# the btree twin's answer, from a snapshot taken as R's was
my $tw = $node->background_psql('postgres');
$tw->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1');

$node->safe_psql('postgres', sprintf($u_grow, $_)) for ('u', 'u_b');
is($type3->('u_k'), 'd', 'block 3, the root R read, is deleted');
like($metap->('u_k'), qr{/2$}, 'u_k has a root of level 2');

$ctl->query_safe('SELECT pg_advisory_unlock(7302)');
my ($out, $ret) = $rd->query('SELECT 1');
is($rd->{stderr}, '', 'R reports no error');
$rd->quit;
$ctl->quit;
$out =~ s/\n.*//s;
is($out, 35001 . '|' . (110000 + 145000) * 35001 / 2,
	'R returns the rows of its snapshot');
is($tw->query_safe(sprintf($query, 'u_b')), $out,
	'R returns what the btree twin returns from the same snapshot');
$tw->quit;
($r, $o, $err) =
  $node->psql('postgres', q{SELECT fastbtree_check('u_k', true)});
is($r, 0, 'fastbtree_check passes') or diag($err);

done_testing();
