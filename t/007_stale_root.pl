# t/007_stale_root.pl
#	A backend whose cached metapage predates the index's growth must pay
#	one extra root-to-leaf path, not a walk across a whole level.
#
# Sessions A1..A4 each cache the metapage of a fastbtree index and of its
# btree twin while each index is a single leaf (block 1, the root, level
# 0).  Another session then grows both to three levels with hundreds of
# leaves.  Each A session then runs one operation whose descent starts from
# its stale cache, and counts the index pages it touched:
#	A1: a point lookup of the largest key (Index Scan);
#	A2: the same through a Bitmap Index Scan (index pages only);
#	A3: ORDER BY k DESC LIMIT 1 (the rightmost-leaf endpoint descent);
#	A4: an INSERT of a new largest key (the write descent).
#
# Expected count, as nbtree's _bt_getroot() does it: a cached root is
# accepted only if it is still the root, or alone on its level (leftmost
# and rightmost); block 1 is now the leftmost leaf with a right sibling,
# so it is read once (1), released, the metapage is reread (1), and the
# descent goes root -> ... -> leaf, one page per level (root level + 1).
# Index pages = root level + 3.  A1 and A3 also read one heap page (the
# matching row), the same page for both twins.  The btree twin, measured
# the same way in the same session, must show exactly the same numbers.
#
# On the code before the fix (issue 8, item 4: fbtpage.c accepts any page
# that is leftmost on the cached level), each of these descents starts at
# the leftmost leaf and moves right across every leaf: hundreds of
# buffers, and A4 exclusive-locks each leaf in turn.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('stale_root');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}

# autovacuum off: an ANALYZE of the tables would send a relcache
# invalidation for the indexes and so reset the A sessions' caches.
$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
log_statement = none
shared_buffers = 32MB
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE EXTENSION pageinspect;
CREATE TABLE s_f (k int4);
CREATE TABLE s_b (k int4);
CREATE INDEX s_f_k ON s_f USING fastbtree (k);
CREATE INDEX s_b_k ON s_b USING btree (k);
INSERT INTO s_f VALUES (1);
INSERT INTO s_b VALUES (1);
});

my $nrows = 300000;

my $index_scan = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
};
my $bitmap_scan = q{
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
};
my $explain = 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)';

# Per session: settings, and the statement (%s = table) it measures.
my %ops = (
	lookup => [ $index_scan, "SELECT k FROM %s WHERE k = $nrows" ],
	bitmap => [ $bitmap_scan, "SELECT k FROM %s WHERE k = $nrows" ],
	endpoint => [ $index_scan, 'SELECT k FROM %s ORDER BY k DESC LIMIT 1' ],
	insert => [ '', 'INSERT INTO %s VALUES (' . ($nrows + 1) . ')' ],);

# Cache both metapages in each session, at the one-leaf stage, by running
# the same statements it will measure (so that syscache misses are paid
# now, not during the measurement); the insert session caches them with a
# lookup.
my %session;
for my $op (sort keys %ops)
{
	my $s = $node->background_psql('postgres');
	$session{$op} = $s;
	$s->query_safe($ops{$op}[0]) if $ops{$op}[0] ne '';
	for my $t (qw(s_f s_b))
	{
		if ($op eq 'insert')
		{
			$s->query_safe("$index_scan SELECT k FROM $t WHERE k = 1");
		}
		else
		{
			$s->query_safe("$explain " . sprintf($ops{$op}[1], $t));
		}
	}
}

is( $node->safe_psql(
		'postgres',
		q{SELECT (SELECT root || '/' || level FROM fastbtree_metap('s_f_k')) || ' ' ||
	   (SELECT root || '/' || level FROM bt_metap('s_b_k'))}),
	'1/0 1/0',
	'both indexes are one root leaf at block 1 when the sessions cache them');

# Grow both indexes (sequential keys: the leaves fill left to right).
$node->safe_psql(
	'postgres', qq{
INSERT INTO s_f SELECT g FROM generate_series(2, $nrows) g;
INSERT INTO s_b SELECT g FROM generate_series(2, $nrows) g;
});

my ($flevel, $blevel, $leaves) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT level FROM fastbtree_metap('s_f_k')),
	   (SELECT level FROM bt_metap('s_b_k')),
	   (SELECT count(*) FROM generate_series(1, pg_relation_size('s_f_k') / 8192 - 1) b,
			fastbtree_page_stats('s_f_k', b) s WHERE s.level = 0)});
cmp_ok($flevel, '>=', 2, "fastbtree index grew to root level $flevel");
is($blevel, $flevel, 'btree twin has the same root level');
cmp_ok($leaves, '>=', 300, "fastbtree index has $leaves leaves");
is( $node->safe_psql(
		'postgres',
		q{SELECT level || ' ' || prev || ' ' || (next <> 0) FROM fastbtree_page_stats('s_f_k', 1)}),
	'0 0 true',
	'block 1 is now the leftmost leaf, with a right sibling');

my $expect_index = $flevel + 3;

# "Buffers: shared hit=N read=M" of the plan node matching $node_re
sub node_buffers
{
	my ($plan, $node_re) = @_;
	my @lines = split /\n/, $plan;
	for my $i (0 .. $#lines)
	{
		next unless $lines[$i] =~ $node_re;
		for my $j ($i + 1 .. $#lines)
		{
			last if $lines[$j] =~ /->/;
			if ($lines[$j] =~ /Buffers: shared(.*)/)
			{
				my $b = $1;
				my ($hit) = $b =~ /hit=(\d+)/;
				my ($read) = $b =~ /read=(\d+)/;
				return ($hit // 0) + ($read // 0);
			}
		}
	}
	diag("no buffers line for $node_re in:\n$plan");
	return -1;
}

my %node_re = (
	lookup => sub { qr/^\s*(->\s*)?Index Scan using $_[0]_k on $_[0]\b/ },
	bitmap => sub { qr/^\s*(->\s*)?Bitmap Index Scan on $_[0]_k\b/ },
	endpoint =>
	  sub { qr/^\s*(->\s*)?Index Scan Backward using $_[0]_k on $_[0]\b/ },);
my %heap_pages = (lookup => 1, bitmap => 0, endpoint => 1);

for my $op (qw(lookup bitmap endpoint))
{
	my %n;
	for my $t (qw(s_f s_b))
	{
		my $plan = $session{$op}->query_safe("$explain " . sprintf($ops{$op}[1], $t));
		like($plan, qr/actual rows=1(\.00)? /, "$op on $t finds its row");
		$n{$t} = node_buffers($plan, $node_re{$op}->($t));
	}
	my $want = $expect_index + $heap_pages{$op};
	is($n{s_f}, $want,
		"$op after growth: fastbtree touches $want buffers (stale root, metapage, "
		  . ($flevel + 1)
		  . " levels"
		  . ($heap_pages{$op} ? ', heap page' : '') . ')');
	is($n{s_f}, $n{s_b}, "$op after growth: as many buffers as btree");
}

# The insert, counted by the index's own buffer counters of this
# transaction (blocks fetched = hits + reads): the heap insert is not
# counted against the index, and nothing is flushed inside a transaction.
{
	my $s = $session{insert};
	my %n;
	$s->query_safe('BEGIN');
	for my $t (qw(s_f s_b))
	{
		my $q = "SELECT pg_stat_get_xact_blocks_fetched('${t}_k'::regclass)";
		my $before = $s->query_safe($q);
		$s->query_safe(sprintf($ops{insert}[1], $t));
		$n{$t} = $s->query_safe($q) - $before;
	}
	$s->query_safe('COMMIT');
	is($n{s_f}, $expect_index,
		"insert after growth: fastbtree touches $expect_index index buffers");
	is($n{s_f}, $n{s_b}, 'insert after growth: as many index buffers as btree');
}

# The next statements in the same sessions start from fresh caches.
is( $session{lookup}->query_safe(
		"$index_scan SELECT count(*) FROM s_f WHERE k BETWEEN $nrows - 10 AND $nrows + 1"),
	'12', 'lookup session reads the grown index correctly');

$_->quit for values %session;
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT fastbtree_check('s_f_k', heapallindexed => true)");
is($ret, 0, 'fastbtree_check passes') or diag($err);

$node->stop;
done_testing();
