# t/008_rescan_memory.pl
#	Backend memory stays flat over many scans whose "C"-collation text
#	search key arrives toasted (issue 8, item 9).
#
# A scan of a "C"-collation text column compares the search key with
# memcmp, so it needs the key's bytes detoasted.  That copy must live in
# memory the scan releases at the next rescan or at endscan; if it goes
# into the caller's memory context, every scan leaves one copy of the key
# behind until the end of the statement.
#
# Three callers reach the index with keys of that kind:
#
# (a) An exclusion constraint check.  check_exclusion_or_unique_constraint
#	opens a scan on the constraint's index for every inserted row, keyed
#	with the row's own values as they are in the slot: an INSERT ... SELECT
#	of a value stored out of line in the source table passes the source's
#	TOAST pointer.  Ten constraints on one column make ten such scans per
#	row.  This is the case that grows without the fix: each scan keeps a
#	4 kB chunk (a 2.1 kB key rounded up by the allocator).
#
# (b) A nested loop whose inner side is an index scan keyed by a toasted
#	outer column, 10^6 rescans.  nodeIndexscan.c already detoasts run-time
#	keys into memory it resets per rescan, so the key reaches the access
#	method detoasted; this case guards the rescan path itself (a per-scan
#	memory context created or grown at each rescan would show here).
#
# (c) An insert, whose search key is made from the new index tuple: a
#	long "C" text key is compressed there, and the key holds a
#	decompressed copy, which must be freed with the key.
#
# Memory is the backend's peak private resident size, read from
# /proc/<pid>/status by the backend itself (pg_read_file as superuser; the
# server runs as this script's OS user): VmHWM minus the file-backed and
# shared resident sizes (RssFile, RssShmem) at the time of reading.  Shared
# buffers and mapped libraries touched for the first time would otherwise
# count as growth; both only grow, so subtracting the current values can
# only understate a private peak by what was mapped after it, which the
# warm-up run makes small.  Each case measures after a warm-up run of the
# same statement (10^3-10^4 scans, filling the caches) and after the big
# run, in the same session.
#
# The bound: with the fix, what a scan detoasts is freed when the scan is
# rescanned or ended, so the big run's peak exceeds the warm-up's only by
# allocator noise, a few 8 kB blocks.  Without it, case (a) keeps
# 3 * 10^4 chunks of 4 kB, 120 MB (110 MB measured).  GROWTH_BOUND_KB
# (16 MB) lies far from both, and in case (b) any retention of more than
# 16 bytes per rescan (10^6 rescans) exceeds it too.
#
# Each case also checks the answers against a btree twin.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $GROWTH_BOUND_KB = 16 * 1024;

my $node = PostgreSQL::Test::Cluster->new('rescanmem');

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
fsync = off
autovacuum = off
jit = off
log_statement = none
max_parallel_workers_per_gather = 0
});
$node->start;

# src.v: 1000 distinct incompressible values of 2112 bytes (66 md5 digests),
# stored out of line uncompressed.  pm() is the peak private memory in kB
# described above.
$node->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE EXTENSION fastbtree;

CREATE FUNCTION pm() RETURNS bigint LANGUAGE sql AS $$
	SELECT m[1]::bigint - m[2]::bigint - m[3]::bigint
	FROM regexp_match(pg_read_file('/proc/self/status'),
		'VmHWM:\s+(\d+) kB.*RssFile:\s+(\d+) kB.*RssShmem:\s+(\d+) kB') m
$$;

CREATE TABLE src (id int, v text);
ALTER TABLE src ALTER COLUMN v SET STORAGE EXTERNAL;
INSERT INTO src
	SELECT g, (SELECT string_agg(md5(g || '.' || j), '')
			   FROM generate_series(1, 66) j)
	FROM generate_series(1, 3300) g;
VACUUM ANALYZE src;

CREATE TABLE inner_f (k text COLLATE "C");
CREATE TABLE inner_b (k text COLLATE "C");
INSERT INTO inner_f SELECT v FROM src WHERE id % 2 = 0 AND id <= 2000;
INSERT INTO inner_b SELECT k FROM inner_f;
CREATE INDEX inner_f_k ON inner_f USING fastbtree (k);
CREATE INDEX inner_b_k ON inner_b USING btree (k);
VACUUM ANALYZE inner_f;
VACUUM ANALYZE inner_b;

CREATE TABLE excl_f (id int, k text COLLATE "C");
CREATE TABLE excl_b (id int, k text COLLATE "C");
});

is( $node->safe_psql(
		'postgres', q{
SELECT pg_column_size(v) = 2112 AND pg_column_compression(v) IS NULL
	AND pg_relation_size(reltoastrelid) > 3300 * 2112
FROM src, pg_class WHERE relname = 'src' AND id = 1}),
	't',
	'the source values are stored out of line, uncompressed');

# the pm() values a session printed, in order (the lines that are integers)
sub stage_numbers
{
	my ($out) = @_;
	my @lines = grep { /^-?\d+$/ } split /\n/, $out;
	return @lines;
}

#
# (a) exclusion constraint checks
#
$node->safe_psql(
	'postgres', q{
SELECT format('ALTER TABLE excl_f ADD CONSTRAINT excl_f_%s
		EXCLUDE USING fastbtree (k WITH =)', c),
	format('ALTER TABLE excl_b ADD CONSTRAINT excl_b_%s
		EXCLUDE USING btree (k WITH =)', c)
FROM generate_series(1, 10) c \gexec
});

my $t0 = time;
my $out = $node->safe_psql(
	'postgres', q{
INSERT INTO excl_f SELECT id, v FROM src WHERE id <= 300;
SELECT pm();
INSERT INTO excl_f SELECT id, v FROM src WHERE id > 300;
SELECT pm();
});
my ($warm, $big) = stage_numbers($out);
diag(sprintf('exclusion checks: peak private memory %d kB after 3000 '
	  . 'scans, %d kB after 30000 more (growth %d kB, bound %d kB), %d s',
	$warm, $big, $big - $warm, $GROWTH_BOUND_KB, time - $t0));
cmp_ok($big - $warm, '<', $GROWTH_BOUND_KB,
	'exclusion checks with toasted keys: memory does not grow with the '
	  . 'number of scans');

$node->safe_psql('postgres', q{INSERT INTO excl_b SELECT id, v FROM src});
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*), sum(hashtext(k)) FROM excl_f}),
	$node->safe_psql(
		'postgres',
		q{SELECT count(*), sum(hashtext(k)) FROM excl_b}),
	'every row of the exclusion-checked insert is stored');

my ($ret, $stdout, $stderr) = $node->psql('postgres',
	q{INSERT INTO excl_f SELECT 0, v FROM src WHERE id = 7});
like(
	$stderr,
	qr/ERROR:  conflicting key value violates exclusion constraint "excl_f_1"/,
	'a duplicate toasted key is still rejected by the first constraint');
($ret, $stdout, $stderr) = $node->psql('postgres',
	q{INSERT INTO excl_b SELECT 0, v FROM src WHERE id = 7});
like(
	$stderr,
	qr/ERROR:  conflicting key value violates exclusion constraint "excl_b_1"/,
	'btree twin rejects it the same way');
$node->safe_psql('postgres', q{SELECT fastbtree_check('excl_f_1', true)});

#
# (b) nested loop, inner index scan keyed by a toasted outer column
#
# outer: 1000 toasted values times 1000, so 10^6 rescans of the inner index
# scan; half of the outer values are in the inner table.
my $plan_settings = q{
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SET join_collapse_limit = 1;
};
my $join = q{
SELECT count(*) || ',' || sum(hashtext(x.k))
FROM ((SELECT v FROM src WHERE id <= 1000) o
	  CROSS JOIN generate_series(1, %d) g)
	 JOIN %s x ON x.k = o.v
};

my $plan = $node->safe_psql('postgres',
	$plan_settings . 'EXPLAIN (COSTS OFF) ' . sprintf($join, 1000, 'inner_f'));
like(
	$plan,
	qr/Nested Loop.*Nested Loop.*Seq Scan on src.*Function Scan on generate_series.*Index Scan using inner_f_k on inner_f x\n\s+Index Cond: \(k = \(?src\.v\b/s,
	'the join rescans the fastbtree index once per outer row')
  or diag($plan);

$t0 = time;
$out = $node->safe_psql(
	'postgres',
	$plan_settings
	  . sprintf($join, 10, 'inner_f')
	  . ";\nSELECT pm();\n"
	  . sprintf($join, 1000, 'inner_f')
	  . ";\nSELECT pm();\n");
my @lines = split /\n/, $out;
my (undef, $warm_nl, $big_res, $big_nl) = @lines;
diag(sprintf('nested loop: peak private memory %d kB after 10^4 rescans, '
	  . '%d kB after 10^6 (growth %d kB, bound %d kB), %d s',
	$warm_nl, $big_nl, $big_nl - $warm_nl, $GROWTH_BOUND_KB, time - $t0));
cmp_ok($big_nl - $warm_nl, '<', $GROWTH_BOUND_KB,
	'10^6 rescans with toasted outer keys: memory does not grow');

is($big_res,
	$node->safe_psql('postgres', $plan_settings . sprintf($join, 1000, 'inner_b')),
	'the join through fastbtree gives the count and checksum of the btree twin');
is($big_res, '500000,' . $node->safe_psql('postgres',
		q{SELECT 1000 * sum(hashtext(k)) FROM inner_f
		  WHERE k IN (SELECT v FROM src WHERE id <= 1000)}),
	'half of the outer values match, each 1000 times');
$node->safe_psql('postgres', q{SELECT fastbtree_check('inner_f_k', true)});

#
# (c) inserts whose "C" text key is compressed in the index tuple
#
# index_form_tuple compresses a value longer than TOAST_INDEX_TARGET, and
# the insert's search key is made from that tuple, so its argument must be
# decompressed for the memcmp comparison.  The copy must be freed with the
# key: the statement below inserts 20000 rows into an index whose keys
# are 4000 compressible bytes, 80 MB of copies if each stayed.
$node->safe_psql(
	'postgres', q{
CREATE TABLE ins_f (k text COLLATE "C");
CREATE INDEX ins_f_k ON ins_f USING fastbtree (k);
CREATE TABLE ins_b (k text COLLATE "C");
CREATE INDEX ins_b_k ON ins_b USING btree (k);
});
my $ins = q{
INSERT INTO %s SELECT lpad(g::text, 10, '0') || repeat('x', 3990)
FROM generate_series(%d, %d) g;
};
$t0 = time;
$out = $node->safe_psql(
	'postgres',
	sprintf($ins, 'ins_f', 1, 1000) . "SELECT pm();\n"
	  . sprintf($ins, 'ins_f', 1001, 21000) . "SELECT pm();\n");
($warm, $big) = stage_numbers($out);
diag(sprintf('inserts: peak private memory %d kB after 1000 rows, '
	  . '%d kB after 20000 more (growth %d kB, bound %d kB), %d s',
	$warm, $big, $big - $warm, $GROWTH_BOUND_KB, time - $t0));
cmp_ok($big - $warm, '<', $GROWTH_BOUND_KB,
	'inserts of compressed "C" text keys: memory does not grow with rows');
is( $node->safe_psql(
		'postgres', q{
SELECT pg_column_size(k) < 1000 FROM
  (SELECT k FROM ins_f LIMIT 1) s}),
	't',
	'the inserted keys are compressible (stored compressed)');
$node->safe_psql('postgres',
	sprintf($ins, 'ins_b', 1, 21000));
my $probe = q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), min(left(k, 10)), max(left(k, 10)) FROM %s
WHERE k >= '0000000500' AND k < '0000020500'};
is($node->safe_psql('postgres', sprintf($probe, 'ins_f')),
	$node->safe_psql('postgres', sprintf($probe, 'ins_b')),
	'a range scan over the inserted keys answers as the btree twin');
$node->safe_psql('postgres', q{SELECT fastbtree_check('ins_f_k', true)});

$node->stop;
done_testing();
