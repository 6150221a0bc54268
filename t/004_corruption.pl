# t/004_corruption.pl
#	fastbtree_check and queries on damaged fastbtree indexes.
#
# Four tables each get a fastbtree index; with the server stopped, each
# index file is damaged in one way by overwriting bytes on disk:
#	(a) two keys of a leaf page swapped (their line pointers exchanged),
#	(b) a leaf line pointer pointing outside the page,
#	(c) the metapage magic number,
#	(d) the metapage format version.
# fastbtree_check must report exactly that damage (SQLSTATE XX002, the
# index name, block and offset); queries through the damaged index must
# raise an error or return, never crash the server; REINDEX repairs it.
# Data checksums are off (initdb's default), so the damage is not caught by
# a checksum failure first.

use strict;
use warnings;

use Fcntl qw(SEEK_SET);
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
$node->init;
$node->append_conf('postgresql.conf', "log_statement = none\n");
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
});

for my $index (qw(c_ok_k c_a_k c_b_k c_c_k c_d_k))
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

my %file;
for my $index (qw(c_a_k c_b_k c_c_k c_d_k))
{
	$file{$index} = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$index')");
}

# Every write reaches the files before we touch them.
$node->stop;

sub read_bytes
{
	my ($path, $offset, $len) = @_;
	my $buf;

	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, SEEK_SET) or die "seek $path: $!";
	sysread($fh, $buf, $len) == $len or die "read $path: $!";
	close $fh;
	return $buf;
}

sub write_bytes
{
	my ($path, $offset, $bytes) = @_;

	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, SEEK_SET) or die "seek $path: $!";
	syswrite($fh, $bytes) == length($bytes) or die "write $path: $!";
	close $fh;
}

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

$node->start;

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

is($node->safe_psql('postgres', "SELECT fastbtree_check('c_ok_k', true)"),
	'', 'the undamaged index still passes');

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

$node->stop;
done_testing();
