# t/009_cancel_walks.pl
#	Walks over pages are cancellable (issue 8, item 5).
#
# A damaged index can make a walk along a level endless: here a leaf L is
# made its own right sibling and the root's downlink to L's right sibling R
# is pointed at L instead, so every descent for a key of R's range lands on
# L, finds L's high key below the key, and moves right, to L again.  Every
# loop over pages must check for interrupts, so statement_timeout (or a
# cancel) ends such a query with SQLSTATE 57014 instead of leaving a backend
# spinning that only a server restart stops.  Each query gets a psql
# timeout well above statement_timeout, so a loop without the check fails
# the test instead of hanging it.
#
# Checked: a point lookup and a range scan (read descent), an INSERT (the
# write descent), a forward scan that steps from leaf to leaf from the
# start of the index (it steps from L to L), and a backward scan from the
# end, which looks for R's left neighbour by walking right from R's
# left-link L.  That walk, as nbtree's _bt_walk_left(), gives up after
# four hops (page deletion can make the page it left vanish from the
# chain) and then reports the damage: XX002 "could not find left sibling"
# is the right end there, also soon after the start.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FbtPageFile;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $BLCKSZ = 8192;
my $PAGE_HEADER = 24;
# FbtPageOpaqueData: fbto_prev, fbto_next (uint32 each) first, in the last
# MAXALIGN(24) bytes of the page
my $SPECIAL = $BLCKSZ - 24;

my $node = PostgreSQL::Test::Cluster->new('cancel');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}
init_without_checksums($node);
$node->append_conf('postgresql.conf', "log_statement = none\n");
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE w (k int4);
INSERT INTO w SELECT i FROM generate_series(1, 5000) i;
CREATE INDEX w_k ON w USING fastbtree (k);
VACUUM ANALYZE w;
});

my $root = $node->safe_psql('postgres',
	"SELECT root FROM fastbtree_metap('w_k') WHERE level = 1");
ok($root =~ /^\d+$/, "w_k has its root on level 1: block $root");

# L: the leaf of downlink 3 of the root; R: the leaf of downlink 4
my %child = map { split /\|/ } split /\n/, $node->safe_psql(
	'postgres', qq{
SELECT itemoffset, (ctid::text::point)[0]::int8
FROM fastbtree_page_items('w_k', $root) WHERE itemoffset IN (3, 4)});
my ($leaf_l, $leaf_r) = ($child{3}, $child{4});
is( $node->safe_psql(
		'postgres', "SELECT next FROM fastbtree_page_stats('w_k', $leaf_l)"),
	$leaf_r, "leaf $leaf_l is followed by leaf $leaf_r");
# a key in R's range, the smallest one
my $rkey = $node->safe_psql(
	'postgres', qq{
SELECT min(k) FROM w WHERE ctid IN
  (SELECT ctid FROM fastbtree_page_items('w_k', $leaf_r) WHERE NOT pivot)});
ok($rkey =~ /^\d+$/ && $rkey > 1, "leaf $leaf_r starts at key $rkey");

my $path = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('w_k')");
$node->stop;

# L's right-link to L itself
write_bytes($path, $leaf_l * $BLCKSZ + $SPECIAL + 4, pack('V', $leaf_l));
# the root's downlink 4 (to R) to L: a pivot's t_tid block number, stored
# as BlockIdData (bi_hi, bi_lo: uint16 each), starts the tuple
my $lp4 = unpack('V', read_bytes($path, $root * $BLCKSZ + $PAGE_HEADER + 12, 4));
my $tuple4 = $root * $BLCKSZ + ($lp4 & 0x7FFF);
write_bytes($path, $tuple4, pack('vv', $leaf_l >> 16, $leaf_l & 0xFFFF));

$node->start;

# Each query must be cancelled by statement_timeout, well before psql's own
# timeout.
sub cancelled
{
	my ($name, $sql, $alternative) = @_;
	my $t0 = time;
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\nSET statement_timeout = '1s';\n"
		  . "SET enable_seqscan = off;\n$sql",
		timeout => 60);
	my $elapsed = time - $t0;

	diag("$name: psql exit $ret after ${elapsed}s: "
		  . (($err =~ /(ERROR:[^\n]*)/)[0] // $err));
	my $expected = qr/ERROR:  57014: canceling statement due to statement timeout/;
	$expected = qr/$expected|$alternative/ if defined $alternative;
	like($err, $expected,
		"$name: cancelled by statement_timeout"
		  . (defined $alternative ? ' or stopped by the corruption check' : ''));
	cmp_ok($elapsed, '<', 30, "$name: ends soon after the timeout");
}

# keys above L's high key (which may equal R's first key): every descent
# for them moves right from L
my $key = $rkey + 1;
cancelled('point lookup', "SELECT * FROM w WHERE k = $key;");
cancelled('range scan',
	"SET enable_bitmapscan = off;\n"
	  . "SELECT count(*) FROM w WHERE k BETWEEN $key AND $key + 10;");
cancelled('insert', "INSERT INTO w VALUES ($key);");
cancelled('full forward scan',
	"SET enable_bitmapscan = off;\n"
	  . "SELECT count(*) FROM (SELECT k FROM w ORDER BY k) s;");
cancelled('full backward scan',
	"SET enable_bitmapscan = off;\n"
	  . "SELECT count(*) FROM (SELECT k FROM w ORDER BY k DESC) s;",
	qr/ERROR:  XX002: could not find left sibling of block \d+ in index "w_k"/);

is($node->safe_psql('postgres', 'SELECT 1'), '1',
	'the server still answers');
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|TRAP:|PANIC/, 'no backend crashed');

$node->stop;
done_testing();
