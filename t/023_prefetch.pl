# t/023_prefetch.pl
#
# 023_prefetch: index scans prefetch the heap blocks of the rows they are
# about to return (fbtprefetch.c).  On a table whose rows are not in key
# order and whose heap does not fit in shared buffers, after a restart: a
# scan of 1,500 rows prefetches most of their blocks, few of them already
# in shared buffers (or, taken as such, in the page cache: not here), and its distance grows, reading ahead into the leaves
# it steps onto (forward and backward) with fastbtree.prefetch_read_ahead
# on, and not with it off; run again warm, it only probes and reads nothing
# ahead; ORDER BY ... LIMIT 1 prefetches at most one block; an index-only
# scan of an all-visible heap prefetches none; a bitmap scan and
# fastbtree.prefetch = off prefetch none.  Every answer equals a btree
# twin's and the answer with prefetch off, forward and backward.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('prefetch');
$node->init;
$node->append_conf('postgresql.conf', qq{
fsync = off
autovacuum = off
shared_buffers = 16MB
effective_io_concurrency = 32
});
$node->start;

# 100,000 rows of about 230 bytes, keys a permutation of the rows: about
# 3,000 heap blocks (24 MB), a key's neighbours on unrelated blocks
$node->safe_psql('postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE h (k int4, pad text);
INSERT INTO h SELECT (g * 7919) % 100000, repeat(md5(g::text), 7)
	FROM generate_series(0, 99999) g;
CREATE TABLE hb (LIKE h);
INSERT INTO hb SELECT * FROM h;
CREATE INDEX h_k ON h USING fastbtree (k);
CREATE INDEX hb_k ON hb USING btree (k);
ANALYZE h, hb;
});

# the cold checks need fastbtree.debug_prefetch_cached_us (below)
if ($node->safe_psql('postgres',
		"SELECT current_setting('fastbtree.debug_prefetch_cached_us', true) IS NULL FROM fastbtree_stats()") eq 't')
{
	$node->stop;
	plan skip_all => 'fastbtree.debug_prefetch_cached_us needs a build with assertions';
}

# (prefetch on whatever the suite's settings: CI runs it with every switch off)
# (a test cannot empty the kernel's page cache: debug_prefetch_cached_us = 0
# counts every prefetch that misses shared buffers as a read)
my $scan = q{SET fastbtree.prefetch = on; SET fastbtree.prefetch_read_ahead = on; SET fastbtree.debug_prefetch_cached_us = 0; SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;};

# run QUERY in one session after SETTINGS and return "answer", the change
# of (prefetches, prefetch_hits), the distance after it and the change of
# prefetch_read_ahead
sub measured
{
	my ($settings, $query) = @_;
	my $out = $node->safe_psql('postgres', qq{
$scan $settings
CREATE TEMP TABLE s0 AS SELECT * FROM fastbtree_stats();
SELECT md5(string_agg(x::text, ',')) FROM ($query) x;
SELECT f.prefetches - s0.prefetches, f.prefetch_hits - s0.prefetch_hits, f.prefetch_distance,
	f.prefetch_read_ahead - s0.prefetch_read_ahead
FROM fastbtree_stats() f, s0;});
	my ($answer, $counts) = split /\n/, $out;
	my ($n, $hits, $dist, $ahead) = split /\|/, $counts;
	return ($answer, $n, $hits, $dist, $ahead);
}

my $q_fwd = 'SELECT k, length(pad) FROM h WHERE k BETWEEN 20000 AND 21499 ORDER BY k';
my $q_bwd = 'SELECT k, length(pad) FROM h WHERE k BETWEEN 60000 AND 61499 ORDER BY k DESC';
my %want;
foreach my $q ($q_fwd, $q_bwd)
{
	(my $qb = $q) =~ s/FROM h /FROM hb /;
	$want{$q} = $node->safe_psql('postgres',
		"$scan SELECT md5(string_agg(x::text, ',')) FROM ($qb) x");
}

# cold: shared buffers emptied by a restart
$node->restart;
# (1,500 int4 keys fill four or five leaves: three or more steps)
my ($answer, $n, $hits, $dist, $ahead) = measured('', $q_fwd);
is($answer, $want{$q_fwd}, 'cold forward scan: the rows of btree\'s scan, in order');
cmp_ok($n, '>=', 600, "cold forward scan: $n heap blocks prefetched for 1,500 rows");
cmp_ok($hits, '<=', $n / 2, "cold forward scan: $hits of them were in shared buffers");
cmp_ok($dist, '>', 1, "cold forward scan: the distance grew to $dist");
cmp_ok($ahead, '>=', 3, "cold forward scan: $ahead leaves read ahead");
cmp_ok($ahead, '<=', 5, "cold forward scan: at most one read ahead per step ($ahead)");

# warm: the same scan again only probes
($answer, $n, $hits, $dist, $ahead) = measured('', $q_fwd);
is($answer, $want{$q_fwd}, 'warm forward scan: the same rows');
cmp_ok($n, '<=', 20, "warm forward scan: $n probes for 1,500 rows");
is($hits, $n, 'warm forward scan: every probe found its block in shared buffers');
is($dist, '0', 'warm forward scan: the distance fell to 0');
is($ahead, '0', 'warm forward scan: no leaf read ahead');

# cold, backward
($answer, $n, $hits, $dist, $ahead) = measured('', $q_bwd);
is($answer, $want{$q_bwd}, 'cold backward scan: the rows of btree\'s scan, in order');
cmp_ok($n, '>=', 600, "cold backward scan: $n heap blocks prefetched");
cmp_ok($ahead, '>=', 3, "cold backward scan: $ahead leaves read ahead");

# shared buffers empty, the blocks in the page cache (every prefetch that
# misses shared buffers taken as found there): the distance stays at 0 and
# the scan only probes, nothing to overlap
$node->restart;
($answer, $n, $hits, $dist, $ahead) = measured('SET fastbtree.debug_prefetch_cached_us = 1000000;', $q_fwd);
is($answer, $want{$q_fwd}, 'page-cache scan: the same rows');
cmp_ok($n, '<=', 20, "page-cache scan: $n probes for 1,500 rows");
is($dist, '0', 'page-cache scan: the distance stayed at 0');
is($ahead, '0', 'page-cache scan: no leaf read ahead');

# cold, read ahead off (the default): the same rows, no leaf read ahead
$node->restart;
($answer, $n, $hits, $dist, $ahead) = measured('SET fastbtree.prefetch_read_ahead = off;', $q_fwd);
is($answer, $want{$q_fwd}, 'cold forward scan without read ahead: the same rows');
cmp_ok($n, '>=', 600, "cold forward scan without read ahead: $n heap blocks prefetched");
is($ahead, '0', 'cold forward scan without read ahead: no leaf read ahead');

# cold, a range that ends a few rows into a leaf, and a filter on a column
# that does not end the scan: the read ahead stops where the scan does
$node->restart;
my $q_end = 'SELECT k, length(pad) FROM h WHERE k BETWEEN 10000 AND 10999 AND k % 5 <> 0 ORDER BY k';
(my $q_end_b = $q_end) =~ s/FROM h /FROM hb /;
($answer, $n, $hits, $dist, $ahead) = measured('', $q_end);
is($answer, $node->safe_psql('postgres', "$scan SELECT md5(string_agg(x::text, ',')) FROM ($q_end_b) x"),
	'cold scan with a filter: the rows of btree\'s scan');
cmp_ok($ahead, '>=', 1, "cold scan with a filter: $ahead leaves read ahead");

# off
$node->restart;
($answer, $n, $hits, $dist, $ahead) = measured('SET fastbtree.prefetch = off;', $q_fwd);
is($answer, $want{$q_fwd}, 'prefetch off: the same rows');
is($n, '0', 'prefetch off: nothing prefetched');
is($ahead, '0', 'prefetch off: no leaf read ahead');

# LIMIT 1, cold
$node->restart;
($answer, $n, $hits, $dist, $ahead) = measured('', 'SELECT k FROM h WHERE k > 30000 ORDER BY k LIMIT 1');
is($answer, $node->safe_psql('postgres', q{SELECT md5('(30001)')}), 'LIMIT 1: the first row');
cmp_ok($n, '<=', 1, "LIMIT 1: $n block prefetched");
is($ahead, '0', 'LIMIT 1: no leaf read ahead');

# a bitmap scan prefetches for itself
($answer, $n) = measured('SET enable_indexscan = off; SET enable_bitmapscan = on;',
	'SELECT count(*) FROM h WHERE k BETWEEN 40000 AND 44999');
is($answer, $node->safe_psql('postgres', q{SELECT md5('(5000)')}), 'bitmap scan: the count');
is($n, '0', 'bitmap scan: nothing prefetched by the index');

# index-only, all-visible heap: no heap block to visit, none prefetched
$node->safe_psql('postgres', 'VACUUM h');
$node->restart;
($answer, $n) = measured('SET enable_indexonlyscan = on;',
	'SELECT k FROM h WHERE k BETWEEN 50000 AND 54999 ORDER BY k');
is( $answer,
	$node->safe_psql('postgres',
		q{SELECT md5(string_agg('(' || g || ')', ',' ORDER BY g)) FROM generate_series(50000, 54999) g}),
	'index-only scan: the keys');
my $plan = $node->safe_psql('postgres',
	"$scan SET enable_indexonlyscan = on; EXPLAIN (COSTS OFF) SELECT k FROM h WHERE k BETWEEN 50000 AND 54999 ORDER BY k");
like($plan, qr/Index Only Scan using h_k/, 'index-only scan: the plan');
is($n, '0', 'index-only scan of an all-visible heap: nothing prefetched');

# index-only after updates: the blocks not all-visible are prefetched
$node->safe_psql('postgres', 'UPDATE h SET pad = pad WHERE k % 3 = 0 AND k BETWEEN 50000 AND 54999');
$node->restart;
($answer, $n) = measured('SET enable_indexonlyscan = on;',
	'SELECT k FROM h WHERE k BETWEEN 50000 AND 54999 ORDER BY k');
is( $answer,
	$node->safe_psql('postgres',
		q{SELECT md5(string_agg('(' || g || ')', ',' ORDER BY g)) FROM generate_series(50000, 54999) g}),
	'index-only scan after updates: the keys');
cmp_ok($n, '>', 0, "index-only scan after updates: $n blocks not all-visible prefetched");

$node->safe_psql('postgres', "SELECT fastbtree_check('h_k', true)");
$node->stop;
done_testing();
