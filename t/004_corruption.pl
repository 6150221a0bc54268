# t/004_corruption.pl
#	fastbtree_check and queries on damaged fastbtree indexes.
#
# Tables each get a fastbtree index; with the server stopped, each index
# file is damaged in one way by overwriting bytes on disk:
#	(a) two keys of a leaf page swapped (their line pointers exchanged),
#	(b) a leaf line pointer pointing outside the page,
#	(c) the metapage magic number,
#	(d) the metapage format version,
#	(e) a downlink removed from the root (level 1): its line pointer
#		deleted, the page otherwise valid, no INCOMPLETE_SPLIT anywhere
#		(and, as a control that must pass, the same with the left sibling
#		marked INCOMPLETE_SPLIT, as a crash in mid-split leaves it),
#	(f) root pivots given the heap-TID flag with too few bytes for one.
# fastbtree_check must report exactly that damage (SQLSTATE XX002, the
# index name, block and offset); queries through the damaged index must
# raise an error or return, never crash the server; REINDEX repairs (a) to
# (d); fastbtree_page_items shows the damaged pivots without reading
# outside them.
#
# A check of an undamaged index on cold shared buffers leaves no more of
# it cached than one BAS_BULKREAD buffer ring holds.
#
# Then three kinds of damage that crash the backend on btree, and on
# fastbtree until scans check items (issue 8, item 3), each read by a
# query through the index:
#	(g) leaf tuples whose size word says 8191 bytes, by an index-only scan,
#	(h) a text key with a 4-byte varlena header of 1 GB,
#	(i) pd_lower = pd_upper on the root (an internal page), by a descent,
#	(j) a leaf's right-link set to InvalidBlockNumber (P_NEW to
#		ReadBuffer, which must not extend the index), by a full scan,
#	(k) a text key with a 4-byte varlena header whose length (2) is
#		shorter than the header itself.
# Each query must fail with SQLSTATE XX002 naming the index and the
# damaged block, and no backend may die: the log shows no "terminated by
# signal" and a new session works.  Before scans check items once per page
# these three crash the backend; the test then waits for the automatic
# restart instead of hanging, and fails.
#
# Last, three indexes over a few keys with hundreds of duplicates each, so
# that the build makes posting lists, each get one posting list tuple of a
# leaf damaged:
#	(l) its first two heap TIDs swapped, out of ascending order,
#	(m) its TID count (in t_tid's offset number) raised to the smallest
#		count whose TIDs no longer fit in the tuple,
#	(n) its last heap TID made invalid (offset number 0).
# fastbtree_check must report exactly that damage (SQLSTATE XX002, the
# index name, block and offset), and fastbtree_page_items must show it as
# written.  A plain index scan and forward and backward index-only scans
# read the damaged tuple: each must return or raise an error (for (m),
# XX002 naming the index and the block, since scans bound the TID array by
# the tuple), and no backend may die.
#
# Data checksums are off (init_without_checksums), so the damage is not
# caught by a checksum failure first.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FbtPageFile;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $BLCKSZ = 8192;
my $PAGE_HEADER = 24;	# SizeOfPageHeaderData: line pointers follow

my $node = PostgreSQL::Test::Cluster->new('corrupt');

# A server that crashed must not make the teardown bail out of every later
# test file: stop it here, tolerating a dead postmaster.
END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}
init_without_checksums($node);
# A backend crash (before item 3 of issue 8 is fixed) must not end the
# server: the later tests report it and go on.
# effective_io_concurrency = 0 keeps BAS_BULKREAD's ring at 256 kB (32
# buffers) on 18 too, which adds room for read-ahead to it (case "ring").
$node->append_conf('postgresql.conf',
	"log_statement = none\nrestart_after_crash = on\neffective_io_concurrency = 0\n");
$node->start;

is($node->safe_psql('postgres', 'SHOW data_checksums'),
	'off', 'data checksums are off');

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE c_ok (k int4, v int4);
CREATE TABLE c_a (LIKE c_ok);
CREATE TABLE c_b (LIKE c_ok);
CREATE TABLE c_c (LIKE c_ok);
CREATE TABLE c_d (LIKE c_ok);
INSERT INTO c_ok SELECT i, i FROM generate_series(1, 5000) i;
INSERT INTO c_a SELECT * FROM c_ok;
INSERT INTO c_b SELECT * FROM c_ok;
INSERT INTO c_c SELECT * FROM c_ok;
INSERT INTO c_d SELECT * FROM c_ok;
CREATE INDEX c_ok_k ON c_ok USING fastbtree (k);
CREATE INDEX c_a_k ON c_a USING fastbtree (k);
CREATE INDEX c_b_k ON c_b USING fastbtree (k);
CREATE INDEX c_c_k ON c_c USING fastbtree (k);
CREATE INDEX c_d_k ON c_d USING fastbtree (k);
CREATE TABLE c_e (LIKE c_ok);
CREATE TABLE c_e2 (LIKE c_ok);
CREATE TABLE c_f (LIKE c_ok);
CREATE TABLE c_g (LIKE c_ok);
CREATE TABLE c_i (LIKE c_ok);
INSERT INTO c_e SELECT * FROM c_ok;
INSERT INTO c_e2 SELECT * FROM c_ok;
INSERT INTO c_f SELECT * FROM c_ok;
INSERT INTO c_g SELECT * FROM c_ok;
INSERT INTO c_i SELECT * FROM c_ok;
CREATE TABLE c_big (k int4);
INSERT INTO c_big SELECT i FROM generate_series(1, 100000) i;
CREATE INDEX c_big_k ON c_big USING fastbtree (k);
VACUUM ANALYZE c_big;
CREATE EXTENSION pg_buffercache;
CREATE TABLE c_h (t text);
INSERT INTO c_h SELECT 'k' || lpad(i::text, 6, '0') FROM generate_series(1, 5000) i;
CREATE INDEX c_e_k ON c_e USING fastbtree (k);
CREATE INDEX c_e2_k ON c_e2 USING fastbtree (k);
CREATE INDEX c_f_k ON c_f USING fastbtree (k);
CREATE INDEX c_g_k ON c_g USING fastbtree (k);
CREATE INDEX c_h_t ON c_h USING fastbtree (t);
CREATE TABLE c_j (LIKE c_ok);
INSERT INTO c_j SELECT * FROM c_ok;
CREATE INDEX c_j_k ON c_j USING fastbtree (k);
VACUUM ANALYZE c_j;
CREATE TABLE c_k (t text);
INSERT INTO c_k SELECT * FROM c_h;
CREATE INDEX c_k_t ON c_k USING fastbtree (t);
VACUUM ANALYZE c_k;
CREATE INDEX c_i_k ON c_i USING fastbtree (k);
VACUUM ANALYZE c_g;
VACUUM ANALYZE c_h;
CREATE TABLE c_l (k int4, v int4);
INSERT INTO c_l SELECT i % 5, i FROM generate_series(1, 2000) i;
CREATE TABLE c_m (LIKE c_l);
CREATE TABLE c_n (LIKE c_l);
INSERT INTO c_m SELECT * FROM c_l;
INSERT INTO c_n SELECT * FROM c_l;
CREATE INDEX c_l_k ON c_l USING fastbtree (k);
CREATE INDEX c_m_k ON c_m USING fastbtree (k);
CREATE INDEX c_n_k ON c_n USING fastbtree (k);
VACUUM ANALYZE c_l;
VACUUM ANALYZE c_m;
VACUUM ANALYZE c_n;
});

for my $index (qw(c_ok_k c_a_k c_b_k c_c_k c_d_k c_e_k c_e2_k c_f_k c_g_k c_h_t c_i_k c_j_k c_k_t c_l_k c_m_k c_n_k))
{
	is($node->safe_psql('postgres', "SELECT fastbtree_check('$index', true)"),
		'', "$index passes fastbtree_check before the damage");
}

# A leaf with a right sibling (so offset 1 is its high key) and items to
# spare: returns its block number.
sub inner_leaf
{
	my ($index) = @_;

	return $node->safe_psql(
		'postgres', qq{
SELECT b FROM generate_series(1, pg_relation_size('$index') / $BLCKSZ - 1) b,
	fastbtree_page_stats('$index', b) s
WHERE s.type = 'l' AND s.next <> 0 AND s.live_items > 10
ORDER BY b LIMIT 1});
}

my $leaf_a = inner_leaf('c_a_k');
my $leaf_b = inner_leaf('c_b_k');
ok($leaf_a =~ /^\d+$/ && $leaf_b =~ /^\d+$/,
	"found leaves with a high key: c_a_k block $leaf_a, c_b_k block $leaf_b");
my $keys_a = $node->safe_psql('postgres',
	"SELECT string_agg(data, ' | ' ORDER BY itemoffset) FROM fastbtree_page_items('c_a_k', $leaf_a) WHERE itemoffset BETWEEN 2 AND 3"
);
diag("c_a_k block $leaf_a, items 2 and 3 before the swap: $keys_a");

# The roots of c_e_k, c_e2_k, c_f_k, c_i_k are on level 1, above more than
# three leaves; c_e_k's second and third leaves (downlinks at offsets 2 and
# 3), the same blocks in c_e2_k, built alike.
my %root;
for my $index (qw(c_e_k c_e2_k c_f_k c_i_k))
{
	$root{$index} = $node->safe_psql('postgres',
		"SELECT root FROM fastbtree_metap('$index') WHERE level = 1");
	ok($root{$index} =~ /^\d+$/, "$index has a root on level 1: $root{$index}");
}
my %child = map { split /\|/ } split /\n/, $node->safe_psql(
	'postgres', qq{
SELECT itemoffset, (ctid::text::point)[0]::int8
FROM fastbtree_page_items('c_e_k', $root{c_e_k}) WHERE itemoffset IN (2, 3)});
ok(defined $child{2} && defined $child{3},
	"c_e_k downlinks 2 and 3 lead to blocks $child{2} and $child{3}");
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg((ctid::text::point)[0]::text, ',' ORDER BY itemoffset)
FROM fastbtree_page_items('c_e2_k', $root{c_e2_k}) WHERE itemoffset IN (2, 3)}),
	"$child{2},$child{3}",
	'c_e2_k has the same downlinks as c_e_k');
my $leaf_g = inner_leaf('c_g_k');
my $leaf_h = inner_leaf('c_h_t');
my $leaf_j = inner_leaf('c_j_k');
my $leaf_k = inner_leaf('c_k_t');
my $pages_j = $node->safe_psql('postgres',
	"SELECT pg_relation_size('c_j_k') / $BLCKSZ");

# (g), (h) and (i) are read by index-only scans (the tables are vacuumed;
# enable_indexscan = off would rule out index-only scans too).
my $force_ios = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
};
my $query_g = 'SELECT sum(k) FROM c_g WHERE k BETWEEN 1 AND 5000';
my $query_h =
  "SELECT count(*) FROM (SELECT t FROM c_h WHERE t BETWEEN 'k' AND 'l' ORDER BY t) s WHERE t LIKE 'k%'";
my $query_i = 'SELECT k FROM c_i WHERE k = 4321';
like($node->safe_psql('postgres', "$force_ios EXPLAIN (COSTS OFF) $query_g"),
	qr/Index Only Scan using c_g_k/, '(g) the query is an index-only scan');
like($node->safe_psql('postgres', "$force_ios EXPLAIN (COSTS OFF) $query_h"),
	qr/Index Only Scan using c_h_t/, '(h) the query is an index-only scan');
is($node->safe_psql('postgres', "$force_ios $query_g"),
	'12502500', '(g) answer before the damage');
is($node->safe_psql('postgres', "$force_ios $query_h"),
	'5000', '(h) answer before the damage');

# (l), (m), (n): the first posting list tuple of each index in block order
# (a leaf's, since only leaves hold them), its heap TIDs, and its key, read
# from the table row of its first TID.  Three TIDs at least, so that (l)
# and (n) damage different ones.
my %post;
for my $index (qw(c_l_k c_m_k c_n_k))
{
	my ($table) = $index =~ /^(c_\w)_k$/;
	my ($blk, $off, $tids, $key) = split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT b, i.itemoffset, array_to_string(i.tids, ' '),
	(SELECT k FROM $table WHERE ctid = i.htid)
FROM generate_series(1, pg_relation_size('$index') / $BLCKSZ - 1) b,
	fastbtree_page_items('$index', b) i
WHERE i.tids IS NOT NULL
ORDER BY b, i.itemoffset LIMIT 1});
	my @tids = split / /, $tids // '';

	cmp_ok(scalar(@tids), '>=', 3,
		"$index has a posting list: block $blk, offset $off, "
		  . scalar(@tids) . " heap TIDs of key $key");
	$post{$index} = { blk => $blk, off => $off, tids => \@tids, key => $key };
}

# Queries that read a posting list of key %2$d through the index of table
# %1$s: a plain index scan (which fetches the heap rows of its TIDs), and
# index-only scans in both directions, which copy the TIDs in different
# orders.
my @posting_probes = (
	'SELECT count(*), sum(v) FROM %1$s WHERE k = %2$d',
	'SELECT count(*), sum(k) FROM (SELECT k FROM %1$s WHERE k >= %2$d ORDER BY k) s',
	'SELECT count(*), sum(k) FROM (SELECT k FROM %1$s WHERE k <= %2$d ORDER BY k DESC) s'
);
my @posting_plans = (
	qr/Index Scan using c_l_k/,
	qr/Index Only Scan using c_l_k/,
	qr/Index Only Scan Backward using c_l_k/);
for my $i (0 .. $#posting_probes)
{
	my $sql = sprintf($posting_probes[$i], 'c_l', $post{c_l_k}{key});

	like($node->safe_psql('postgres', "$force_ios EXPLAIN (COSTS OFF) $sql"),
		$posting_plans[$i], "(l) to (n) plan of \"$sql\"");
}

my %file;
for my $index (qw(c_a_k c_b_k c_c_k c_d_k c_e_k c_e2_k c_f_k c_g_k c_h_t c_i_k c_j_k c_k_t c_l_k c_m_k c_n_k))
{
	$file{$index} = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$index')");
}

# Every write reaches the files before we touch them.
$node->stop;

# offset of line pointer $off (1-based) of block $blk
sub lp_pos
{
	my ($blk, $off) = @_;
	return $blk * $BLCKSZ + $PAGE_HEADER + 4 * ($off - 1);
}

# (a) swap the line pointers of the first two data items (offsets 2 and 3)
my $lp2 = read_bytes($file{c_a_k}, lp_pos($leaf_a, 2), 4);
my $lp3 = read_bytes($file{c_a_k}, lp_pos($leaf_a, 3), 4);
write_bytes($file{c_a_k}, lp_pos($leaf_a, 2), $lp3);
write_bytes($file{c_a_k}, lp_pos($leaf_a, 3), $lp2);

# (b) line pointer 4 points at byte 20000 (ItemIdData: lp_off 15 bits,
# lp_flags 2 bits, lp_len 15 bits, little-endian bit fields)
my $lp4 = unpack('V', read_bytes($file{c_b_k}, lp_pos($leaf_b, 4), 4));
my $len4 = $lp4 >> 17;
write_bytes($file{c_b_k}, lp_pos($leaf_b, 4),
	pack('V', 20000 | (1 << 15) | ($len4 << 17)));

# (c) the metapage magic, (d) the metapage version: FbtMetaPageData starts
# right after the page header
write_bytes($file{c_c_k}, $PAGE_HEADER, pack('V', 0xDEADBEEF));
write_bytes($file{c_d_k}, $PAGE_HEADER + 4, pack('V', 99));

# PageHeaderData: pd_lower at byte 12, pd_upper at byte 14 (uint16 each)
sub page_bounds
{
	my ($path, $blk) = @_;
	return unpack('vv', read_bytes($path, $blk * $BLCKSZ + 12, 4));
}

# byte position of the tuple of line pointer $off in block $blk
sub tuple_pos
{
	my ($path, $blk, $off) = @_;
	my $lp = unpack('V', read_bytes($path, lp_pos($blk, $off), 4));
	return $blk * $BLCKSZ + ($lp & 0x7FFF);
}

# (e) delete the root's line pointer 3: later ones move down one slot and
# pd_lower shrinks by one; the tuple bytes stay as unused space.  In c_e2_k
# the same, and the left sibling of the page that lost its downlink is
# marked INCOMPLETE_SPLIT (0x20 in fbto_flags, 16 bytes into the 24-byte
# special space), as a crash between a split and its downlink leaves it:
# that is no corruption.
for my $index (qw(c_e_k c_e2_k))
{
	my $path = $file{$index};
	my $blk = $root{$index};
	my ($lower, $upper) = page_bounds($path, $blk);
	my $nlp = ($lower - $PAGE_HEADER) / 4;
	my $rest = read_bytes($path, lp_pos($blk, 4), 4 * ($nlp - 3));

	write_bytes($path, lp_pos($blk, 3), $rest . pack('V', 0));
	write_bytes($path, $blk * $BLCKSZ + 12, pack('v', $lower - 4));
}
{
	my $flagpos = $child{2} * $BLCKSZ + $BLCKSZ - 24 + 16;
	my ($flags) = unpack('v', read_bytes($file{c_e2_k}, $flagpos, 2));

	write_bytes($file{c_e2_k}, $flagpos, pack('v', $flags | 0x20));
}

# (f) IndexTupleData: t_tid (bi_hi, bi_lo, ip_posid: uint16 each), then
# t_info (uint16, size in the low 13 bits).  The minus-infinity item
# (offset 1, 8 bytes) gets FBT_PIVOT_HEAPTID (0x1000) in ip_posid; the
# pivot at offset 2 (one attribute) gets the flag and a size word of 8191,
# far beyond its line pointer's length.
{
	my $path = $file{c_f_k};
	my $blk = $root{c_f_k};
	my $t1 = tuple_pos($path, $blk, 1);
	my $t2 = tuple_pos($path, $blk, 2);
	my ($posid1) = unpack('v', read_bytes($path, $t1 + 4, 2));
	my ($posid2, $info2) = unpack('vv', read_bytes($path, $t2 + 4, 4));

	write_bytes($path, $t1 + 4, pack('v', $posid1 | 0x1000));
	write_bytes($path, $t2 + 4,
		pack('vv', $posid2 | 0x1000, ($info2 & ~0x1FFF) | 0x1FFF));
}

# (g) the size word of leaf items 2, 3 and 4 says 8191 bytes.  One such
# item alone makes an index-only scan copy 8 kB from beyond the page into
# its 16 kB tuple buffer without overrunning it; three overrun it.
for my $off (2 .. 4)
{
	my $t = tuple_pos($file{c_g_k}, $leaf_g, $off);
	my ($info) = unpack('v', read_bytes($file{c_g_k}, $t + 6, 2));

	write_bytes($file{c_g_k}, $t + 6, pack('v', ($info & ~0x1FFF) | 0x1FFF));
}

# (h) the key of leaf item 2 (after the 8-byte tuple header, a 1-byte
# varlena header) gets a 4-byte uncompressed header of 0x3FFFFFFF bytes
write_bytes($file{c_h_t}, tuple_pos($file{c_h_t}, $leaf_h, 2) + 8,
	pack('V', 0x3FFFFFFF << 2));

# (i) pd_lower = pd_upper on the root
{
	my ($lower, $upper) = page_bounds($file{c_i_k}, $root{c_i_k});

	write_bytes($file{c_i_k}, $root{c_i_k} * $BLCKSZ + 12, pack('v', $upper));
}

# (j) the right-link (fbto_next, 4 bytes into the special space, which
# takes the last 24 bytes of the page) of a leaf
write_bytes($file{c_j_k}, ($leaf_j + 1) * $BLCKSZ - 24 + 4,
	pack('V', 0xFFFFFFFF));

# (k) like (h), but a 4-byte header whose length word says 2 bytes
write_bytes($file{c_k_t}, tuple_pos($file{c_k_t}, $leaf_k, 2) + 8,
	pack('V', 2 << 2));

# (l), (m), (n): a posting list tuple's t_tid holds the byte offset of its
# TID array in the block number (bi_hi, bi_lo) and FBT_IS_POSTING (0x2000)
# plus the TID count in the offset number; t_info's low 13 bits are the
# tuple's size.  Each TID of the array is bi_hi, bi_lo, ip_posid (uint16
# each).  Returns the tuple's file position, the array's offset, the
# count and the size, having checked that the tuple is the posting list
# fastbtree_page_items showed.
sub posting_layout
{
	my ($index) = @_;
	my $p = $post{$index};
	my $t = tuple_pos($file{$index}, $p->{blk}, $p->{off});
	my ($hi, $lo, $posid, $info) =
	  unpack('vvvv', read_bytes($file{$index}, $t, 8));

	is($posid & ~0x0FFF, 0x2000, "$index: the item is a posting list");
	is($posid & 0x0FFF, scalar(@{ $p->{tids} }),
		"$index: its TID count agrees with fastbtree_page_items");
	return ($t, ($hi << 16) | $lo, $posid & 0x0FFF, $info & 0x1FFF);
}

# (l) swap the first two TIDs: the second is now below the first
{
	my ($t, $postoff) = posting_layout('c_l_k');
	my $pair = read_bytes($file{c_l_k}, $t + $postoff, 12);

	write_bytes($file{c_l_k}, $t + $postoff,
		substr($pair, 6, 6) . substr($pair, 0, 6));
}

# (m) the smallest count whose TIDs the tuple cannot hold.  The count plus
# one is not always that: the tuple's size is MAXALIGN'd, and the padding
# after the array can have room for one more TID.
{
	my ($t, $postoff, $n, $size) = posting_layout('c_m_k');
	my $count = int(($size - $postoff) / 6) + 1;

	write_bytes($file{c_m_k}, $t + 4, pack('v', 0x2000 | $count));
	@{ $post{c_m_k} }{qw(postoff size count)} = ($postoff, $size, $count);
}

# (n) the offset number of the last TID, 0: InvalidOffsetNumber.  Its block
# stays, so the TID still sorts after its predecessor whenever the two are
# in different heap blocks; only the validity check can catch it then.
{
	my ($t, $postoff, $n) = posting_layout('c_n_k');

	write_bytes($file{c_n_k}, $t + $postoff + 6 * ($n - 1) + 4, pack('v', 0));
}

$node->start;

# Shared buffers are cold now.  fastbtree_check reads the index through one
# BAS_BULKREAD ring (256 kB: 32 buffers) for the whole run, so checking an
# index of about 300 pages leaves at most the ring's buffers of it behind.
my $big_pages =
  $node->safe_psql('postgres', "SELECT pg_relation_size('c_big_k') / $BLCKSZ");
cmp_ok($big_pages, '>', 200, "c_big_k has $big_pages pages");
is($node->safe_psql('postgres', "SELECT fastbtree_check('c_big_k')"),
	'', 'c_big_k passes fastbtree_check');
my $big_cached = $node->safe_psql(
	'postgres', q{
SELECT count(*) FROM pg_buffercache
WHERE relfilenode = pg_relation_filenode('c_big_k')
	AND reldatabase = (SELECT oid FROM pg_database WHERE datname = 'postgres')});
cmp_ok($big_cached, '<=', 32,
	"fastbtree_check used one buffer ring: $big_cached of $big_pages pages cached");

# fastbtree_check($index) must fail with XX002 and this message and detail.
sub check_fails
{
	my ($index, $msg_re, $detail_re, $name) = @_;
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\nSELECT fastbtree_check('$index', true)");

	isnt($ret, 0, "$name: fastbtree_check($index) fails");
	like($err, qr/ERROR:  XX002: $msg_re/, "$name: error message");
	like($err, qr/DETAIL:  $detail_re/, "$name: error detail") if $detail_re;
	diag("$name: fastbtree_check says: "
		  . join(' ', grep { /ERROR|DETAIL/ } split /\n/, $err));
}

check_fails(
	'c_a_k',
	qr/index "c_a_k" is corrupted/,
	qr/Block $leaf_a, offset 3: item is not greater than its predecessor/,
	'(a) swapped keys');
check_fails(
	'c_b_k',
	qr/index "c_b_k" is corrupted/,
	qr/Block $leaf_b, offset 4: line pointer points outside the tuple space: offset 20000, length $len4/,
	'(b) line pointer outside the page');
check_fails(
	'c_c_k',
	qr/index "c_c_k" is corrupted/,
	qr/Block 0, offset 0: metapage has wrong magic number 0xdeadbeef/,
	'(c) metapage magic');
check_fails(
	'c_d_k',
	qr/index "c_d_k" is corrupted/,
	qr/Block 0, offset 0: metapage has unsupported version 99/,
	'(d) metapage version');

my ($lost, $lostleft) = ($child{3}, $child{2});
check_fails(
	'c_e_k',
	qr/index "c_e_k" is corrupted/,
	qr/Block $lost, offset 0: page has no downlink in level 1, and its left sibling $lostleft is not marked incomplete-split/,
	'(e) lost downlink');
my $root_f = $root{c_f_k};
check_fails(
	'c_f_k',
	qr/index "c_f_k" is corrupted/,
	qr/Block $root_f, offset 1: invalid pivot tuple attribute count word 0x1000/,
	'(f) heap-TID flag on a short pivot');

# (l) to (n): the details end at the TID number or the size, so that a
# longer number in the message does not match too.
my ($blk_l, $off_l) = @{ $post{c_l_k} }{qw(blk off)};
check_fails(
	'c_l_k',
	qr/index "c_l_k" is corrupted/,
	qr/Block $blk_l, offset $off_l: posting list heap TIDs are not in strictly ascending order at TID 1$/m,
	'(l) posting list TIDs swapped');
my ($blk_m, $off_m, $postoff_m, $size_m, $count_m) =
  @{ $post{c_m_k} }{qw(blk off postoff size count)};
check_fails(
	'c_m_k',
	qr/index "c_m_k" is corrupted/,
	qr/Block $blk_m, offset $off_m: invalid posting list: $count_m heap TIDs at offset $postoff_m in a tuple of $size_m bytes$/m,
	'(m) posting list TID count beyond the tuple');
my ($blk_n, $off_n) = @{ $post{c_n_k} }{qw(blk off)};
my $last_n = $#{ $post{c_n_k}{tids} };
check_fails(
	'c_n_k',
	qr/index "c_n_k" is corrupted/,
	qr/Block $blk_n, offset $off_n: posting list heap TID $last_n is invalid$/m,
	'(n) invalid posting list TID');

# fastbtree_page_items shows the damage as it was meant: (l) the TIDs in
# the swapped order, (m) no TIDs at all, as the array would overrun the
# tuple, (n) the last TID with offset number 0.
sub posting_tids
{
	my ($index) = @_;
	my $p = $post{$index};

	return $node->safe_psql('postgres',
		"SELECT coalesce(array_to_string(tids, ' '), 'none') FROM fastbtree_page_items('$index', $p->{blk}) WHERE itemoffset = $p->{off}"
	);
}
{
	my @tids = @{ $post{c_l_k}{tids} };

	@tids[ 0, 1 ] = @tids[ 1, 0 ];
	is(posting_tids('c_l_k'), "@tids",
		'(l) fastbtree_page_items shows the first two TIDs swapped');
}
is(posting_tids('c_m_k'), 'none',
	'(m) fastbtree_page_items shows no TIDs for the overrunning array');
{
	my @tids = @{ $post{c_n_k}{tids} };

	$tids[-1] =~ s/,\d+\)$/,0)/;
	is(posting_tids('c_n_k'), "@tids",
		'(n) fastbtree_page_items shows offset number 0 in the last TID');
}

is($node->safe_psql('postgres', "SELECT fastbtree_check('c_ok_k', true)"),
	'', 'the undamaged index still passes');
is($node->safe_psql('postgres', "SELECT fastbtree_check('c_e2_k', true)"),
	'', '(e) a missing downlink after an incomplete split passes');

# (e) the page without a downlink is still reached through the right-link
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM generate_series(1, 5000) g
WHERE EXISTS (SELECT 1 FROM c_e WHERE k = g)}),
	'5000',
	'(e) every key is found through the index despite the lost downlink');

# (f) the heap TIDs of the damaged pivots are not read: NULL
is( $node->safe_psql(
		'postgres', qq{
SELECT itemoffset, pivot, natts, htid IS NULL
FROM fastbtree_page_items('c_f_k', $root{c_f_k}) WHERE itemoffset <= 3
ORDER BY itemoffset}),
	"1|t|0|t\n2|t|1|t\n3|t|1|t",
	'(f) fastbtree_page_items shows no heap TID for the damaged pivots');

# Queries through the damaged indexes: an error or an answer, not a crash.
my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
};
my @probes = (
	'SELECT count(*), sum(v) FROM %s WHERE k BETWEEN 1 AND 5000',
	'SELECT v FROM %s WHERE k = 123',
	'SELECT v FROM %s WHERE k = 4321',
	'SELECT string_agg(k::text, \',\') FROM (SELECT k FROM %s WHERE k < 60 ORDER BY k DESC) s',
	'SELECT count(*) FROM %s WHERE k > 0',);

sub probe_table
{
	my ($table, $name) = @_;
	my @seen;

	for my $q (@probes)
	{
		my $sql = sprintf($q, $table);
		my ($ret, $out, $err) =
		  $node->psql('postgres', "$force_index $sql", on_error_stop => 1);
		ok($ret == 0 || ($ret == 3 && $err =~ /ERROR/),
			"$name: \"$sql\" returns or raises an error")
		  or diag("psql exit $ret: $err");
		my ($errline) = $err =~ /(ERROR:[^\n]*)/;
		push @seen, $ret == 0 ? "returned [$out]" : $errline;
	}
	diag("$name: queries through the index: " . join('; ', @seen));
	return @seen;
}

my @seen_c = probe_table('c_c', '(c) metapage magic');
like($seen_c[1], qr/ERROR:  index "c_c_k" is not a fastbtree/,
	'(c) a query through c_c_k reports "is not a fastbtree"');
my @seen_d = probe_table('c_d', '(d) metapage version');
like(
	$seen_d[1],
	qr/ERROR:  version mismatch in index "c_d_k": file version 99, current version 1/,
	'(d) a query through c_d_k reports the version mismatch');
probe_table('c_a', '(a) swapped keys');
probe_table('c_b', '(b) line pointer outside the page');

for my $index (qw(c_c_k c_d_k))
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM fastbtree_metap('$index')");
	like($err, qr/ERROR:  (index "$index" is not a fastbtree|version mismatch in index "$index")/,
		"fastbtree_metap($index) reports the damaged metapage");
}

is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still answers');
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|TRAP:/,
	'no backend crashed');

# REINDEX repairs each index.
for my $index (qw(c_a_k c_b_k c_c_k c_d_k))
{
	my ($table) = $index =~ /^(c_\w)_k$/;
	$node->safe_psql('postgres', "REINDEX INDEX $index");
	is($node->safe_psql('postgres', "SELECT fastbtree_check('$index', true)"),
		'', "$index passes fastbtree_check after REINDEX");
	is($node->safe_psql('postgres',
			"$force_index SELECT count(*), sum(v) FROM $table WHERE k BETWEEN 1 AND 5000"),
		'5000|12502500',
		"$index answers correctly after REINDEX");
}

# The query $name ran after the log had $logstart bytes: no backend may
# have died since.  A crashed backend makes the postmaster restart every
# session (restart_after_crash): wait for it before the next query.
sub no_crash_since
{
	my ($name, $logstart) = @_;

	ok($node->poll_query_until('postgres', 'SELECT 1', '1'),
		"$name: the server accepts connections");
	my $log = substr(slurp_file($node->logfile), $logstart);
	unlike($log, qr/terminated by signal|TRAP:|PANIC/,
		"$name: no backend crashed");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM c_ok WHERE k < 100'),
		'99', "$name: a new session runs a query");
}

# Item 3: each query must raise XX002 naming the index and the block, and
# its backend must survive.
sub damaged_query_fails
{
	my ($name, $index, $blk, $sql) = @_;
	my $logstart = -s $node->logfile;
	my ($ret, $out, $err) = $node->psql(
		'postgres', "\\set VERBOSITY verbose\n$force_ios $sql",
		on_error_stop => 1,
		timeout => $PostgreSQL::Test::Utils::timeout_default);
	my ($errline) = $err =~ /(ERROR:[^\n]*)/;
	my ($detail) = $err =~ /(DETAIL:[^\n]*)/;

	diag("$name: psql exit $ret, " . ($errline // "no ERROR: $err")
		  . ($detail ? " $detail" : ''));
	like($errline // '', qr/^ERROR:  XX002: .*index "$index"/,
		"$name: the query fails with XX002 naming index $index");
	like(($errline // '') . ' ' . ($detail // ''), qr/\bblock $blk\b/i,
		"$name: the error names block $blk");
	no_crash_since($name, $logstart);
}

damaged_query_fails('(g) tuple size 8191, index-only scan',
	'c_g_k', $leaf_g, $query_g);
damaged_query_fails('(h) 1 GB varlena key', 'c_h_t', $leaf_h, $query_h);
damaged_query_fails('(i) pd_lower = pd_upper on the root',
	'c_i_k', $root{c_i_k}, $query_i);
damaged_query_fails('(k) varlena length shorter than its header',
	'c_k_t', $leaf_k,
	"SELECT count(*) FROM (SELECT t FROM c_k WHERE t BETWEEN 'k' AND 'l' ORDER BY t) s WHERE t LIKE 'k%'");

# (j): a link to InvalidBlockNumber names no block of its own; the error
# must name the index, and the index must not have grown (ReadBuffer of
# P_NEW would have added a page)
{
	my ($ret, $out, $err) = $node->psql(
		'postgres', "\\set VERBOSITY verbose\n$force_ios SELECT count(*) FROM (SELECT k FROM c_j ORDER BY k) s",
		timeout => $PostgreSQL::Test::Utils::timeout_default);
	my ($errline) = $err =~ /(ERROR:[^\n]*)/;
	diag('(j) right-link to InvalidBlockNumber: ' . ($errline // "no ERROR: $err"));
	like($errline // '', qr/^ERROR:  XX002: .*index "c_j_k"/,
		'(j) the scan fails with XX002 naming index c_j_k');
	is($node->safe_psql('postgres',
			"SELECT pg_relation_size('c_j_k') / $BLCKSZ"),
		$pages_j, '(j) the index did not grow');
}

# (l), (n): the scans need not see the damage (nbtree's check neither the
# order nor the validity of posting list TIDs), but whatever they make of
# it, they must return or raise an error, and no backend may die.  For (n)
# that rules out handing the invalid TID to the executor on a server built
# with assertions: index_getnext_tid() asserts that every TID an index
# returns is valid.  (m): a TID array overrunning its tuple would make them
# read beyond it, so they must fail with XX002 naming the index and the
# block.  Returns, per query, what it did.
sub posting_probe
{
	my ($name, $table, $key) = @_;
	my @seen;

	for my $q (@posting_probes)
	{
		my $sql = sprintf($q, $table, $key);
		my $logstart = -s $node->logfile;
		my ($ret, $out, $err) = $node->psql(
			'postgres', "\\set VERBOSITY verbose\n$force_index $sql",
			on_error_stop => 1,
			timeout => $PostgreSQL::Test::Utils::timeout_default);
		my ($errline) = $err =~ /(ERROR:[^\n]*)/;

		ok($ret == 0 || ($ret == 3 && defined $errline),
			"$name: \"$sql\" returns or raises an error")
		  or diag("psql exit $ret: $err");
		push @seen, $ret == 0 ? "returned [$out]" : $errline // "psql exit $ret";
		no_crash_since("$name: \"$sql\"", $logstart);
	}
	diag("$name: queries through the index: " . join('; ', @seen));
	return @seen;
}

posting_probe('(l) posting list TIDs swapped', 'c_l', $post{c_l_k}{key});
{
	my @seen = posting_probe('(m) posting list TID count beyond the tuple',
		'c_m', $post{c_m_k}{key});

	for my $i (0 .. $#seen)
	{
		like($seen[$i], qr/^ERROR:  XX002: .*index "c_m_k".*\bblock $blk_m\b/,
			"(m) query $i fails with XX002 naming index c_m_k and block $blk_m");
	}
}
posting_probe('(n) invalid posting list TID', 'c_n', $post{c_n_k}{key});

$node->stop;
done_testing();
