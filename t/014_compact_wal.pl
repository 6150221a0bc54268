# t/014_compact_wal.pl
#	Compact WAL (issue 12): fastbtree's own WAL records when the library
#	is in shared_preload_libraries, generic WAL otherwise.
#
# Whatever settings the suite runs with, this file sets
# shared_preload_libraries itself on each node.
#
#	1. A preloaded primary with wal_consistency_checking = 'all,fastbtree'
#	   ('all' alone covers only core's resource managers) and a
#	   streaming standby: fastbtree.wal_mode shows compact; random inserts
#	   into three indexes (unique int4, low-cardinality int4 with posting
#	   lists and posting list splits, wide text keys with internal page
#	   inserts) log fastbtree's INSERT_LEAF, INSERT_UPPER, INSERT_POST,
#	   SPLIT_L, SPLIT_R and DEDUP records (pg_walinspect names them with rm_identify and describes
#	   them with rm_desc; pg_waldump, which cannot load the library, shows
#	   them as custom251); the standby replays them, checking every page
#	   against the primary's image, and answers as the primary does.
#	2. An immediate shutdown after more inserts: crash recovery replays
#	   the compact records (still checked) and the indexes answer as a
#	   sequential scan does; fastbtree_check passes.
#	3. The failure the README documents: compact records still to be
#	   replayed and the library taken out of shared_preload_libraries.
#	   The server refuses to start with PostgreSQL's "resource manager
#	   with ID 251 not registered" (not a crash of ours), and starts and
#	   recovers once the library is back.
#	4. Switching modes across clean restarts, generic -> compact ->
#	   generic, with the standby (preloaded) following throughout: only
#	   compact mode logs fastbtree records, and no row is lost.

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

my $primary = PostgreSQL::Test::Cluster->new('compact_primary');
push @nodes, $primary;
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'fastbtree'
# 'all' names core's resource managers only: fastbtree's is registered
# after the setting is read, and must be named
wal_consistency_checking = 'all,fastbtree'
autovacuum = off
max_standby_streaming_delay = -1
# every record carries page images: keep the segments the test reads back
wal_keep_size = '2GB'
max_wal_size = '4GB'
checkpoint_timeout = '1h'
});
$primary->start;

is($primary->safe_psql('postgres', 'SHOW fastbtree.wal_mode'),
	'compact', 'preloaded: fastbtree.wal_mode is compact');
my ($ret, $out, $err) =
  $primary->psql('postgres', 'SET fastbtree.wal_mode = generic');
like($err, qr/parameter "fastbtree.wal_mode" cannot be changed/,
	'fastbtree.wal_mode is read-only');

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE EXTENSION pg_walinspect;
CREATE TABLE t (id int, grp int, s text);
CREATE UNIQUE INDEX t_id ON t USING fastbtree (id);
CREATE INDEX t_grp ON t USING fastbtree (grp);
CREATE INDEX t_s ON t USING fastbtree (s);
});

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('compact_standby');
push @nodes, $standby;
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

# Rows in random order: leaf inserts and splits on all three indexes,
# downlinks into internal pages of t_s (wide keys, many levels), posting
# lists on t_grp (50 groups).
my $start = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql(
	'postgres', q{
SELECT setseed(0.14);
INSERT INTO t
SELECT g, g % 50, repeat(md5(g::text), 6)
FROM generate_series(1, 20000) g ORDER BY random();
});
# Posting list splits: free heap space in the table's first blocks, so that
# new rows get heap TIDs below those already in t_grp's posting lists.
$primary->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 0 AND id < 4000');
$primary->safe_psql('postgres', 'VACUUM t');
$primary->safe_psql(
	'postgres', q{
INSERT INTO t SELECT g, g % 50, md5(g::text) FROM generate_series(20001, 20400) g;
});
# Page splits caused by a posting list split, made certain: holes in the
# heap's first blocks before the index exists, a build that packs the
# leaves full of posting lists (fillfactor 100), no deduplication pass on
# insert, then new rows that land in the holes, so their heap TIDs fall
# inside the posting lists of full leaves.
$primary->safe_psql(
	'postgres', q{
CREATE TABLE p (grp int);
INSERT INTO p SELECT g % 3 FROM generate_series(1, 200000) g;
DELETE FROM p WHERE ctid < '(300,0)' AND (ctid::text::point)[1]::int % 5 = 0;
VACUUM p;
CREATE INDEX p_grp ON p USING fastbtree (grp) WITH (fillfactor = 100);
ALTER INDEX p_grp SET (deduplicate_items = off);
INSERT INTO p SELECT g % 3 FROM generate_series(1, 20000) g;
});
my $end = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');

my %kinds = map { split /\|/ } split /\n/, $primary->safe_psql(
	'postgres', qq{
SELECT record_type, count(*) FROM pg_get_wal_records_info('$start', '$end')
WHERE resource_manager = 'fastbtree' GROUP BY 1 ORDER BY 1});
for my $kind (qw(INSERT_LEAF INSERT_UPPER INSERT_POST SPLIT_L SPLIT_R DEDUP NEWROOT))
{
	ok(($kinds{$kind} // 0) > 0,
		"compact mode logs $kind records (" . ($kinds{$kind} // 0) . ')');
}
# (VACUUM t logs VACUUM and META; section 1b tests them)
is(join(',', sort keys %kinds),
	'DEDUP,INSERT_LEAF,INSERT_POST,INSERT_UPPER,META,NEWROOT,SPLIT_L,SPLIT_R,VACUUM',
	'every fastbtree record is named by rm_identify');

# rm_desc, through pg_walinspect: the first description of the records of
# the kinds given (comma-separated), matching an extra condition if any
sub first_description
{
	my ($kinds, $cond) = @_;
	my $in = join(',', map { "'$_'" } split /,/, $kinds);
	return $primary->safe_psql(
		'postgres', qq{
SELECT description FROM pg_get_wal_records_info('$start', '$end')
WHERE resource_manager = 'fastbtree' AND record_type IN ($in) $cond LIMIT 1});
}
like(first_description('INSERT_POST', ''),
	qr/^off: \d+, postingoff: \d+$/, 'rm_desc describes INSERT_POST');
like(first_description('INSERT_LEAF', ''),
	qr/^off: \d+$/, 'rm_desc describes INSERT_LEAF');
like(first_description('SPLIT_R', "AND description LIKE 'level: 1,%'"),
	qr/^level: 1, firstright: \d+, newitemoff: \d+$/,
	'rm_desc describes SPLIT_R (an internal page split)');
like(first_description('SPLIT_L,SPLIT_R', "AND description LIKE 'level: 0,%'"),
	qr/^level: 0, firstright: \d+, newitemoff: \d+$/,
	'leaf splits are logged as SPLIT_L / SPLIT_R');
like(first_description('SPLIT_L,SPLIT_R', "AND description LIKE '%postingoff%'"),
	qr/^level: 0, firstright: \d+, newitemoff: \d+, postingoff: [1-9]\d*$/,
	'a posting list split inside a page split is logged');
like(first_description('DEDUP', ''),
	qr/^nintervals: [1-9]\d*$/, 'rm_desc describes DEDUP');
like(
	$primary->safe_psql(
		'postgres', qq{
SELECT string_agg(description, ',' ORDER BY start_lsn)
FROM pg_get_wal_records_info('$start', '$end')
WHERE record_type = 'NEWROOT' AND block_ref LIKE '% rel %/' || pg_relation_filenode('t_s') || ' %'}),
	qr/level: 1,level: 2$/,
	'rm_desc describes NEWROOT: t_s grew two levels');

# An int4 leaf insert logs its tuple and offset, not a byte delta of the
# page (a generic record of a mid-page insert is about 1,300 bytes).
# Every record carries a page image here, for the consistency check.
my $leaf_len = $primary->safe_psql(
	'postgres', qq{
SELECT max(record_length - fpi_length) FROM pg_get_wal_records_info('$start', '$end')
WHERE record_type = 'INSERT_LEAF'
AND block_ref LIKE '% rel %/' || pg_relation_filenode('t_id') || ' %'});
ok($leaf_len > 0 && $leaf_len < 100,
	"t_id's INSERT_LEAF records are small without their page images (largest $leaf_len bytes)");

# Every fastbtree record was checked: each carries an image of each page
# it changes (a record without one would be replayed unchecked)
is($primary->safe_psql(
	'postgres', qq{
SELECT count(*) FROM pg_get_wal_records_info('$start', '$end')
WHERE resource_manager = 'fastbtree' AND fpi_length = 0
AND coalesce(block_ref, '') <> ''}),
	'0', 'wal_consistency_checking covers fastbtree\'s records');

# pg_waldump cannot load the library; it shows the records under core's
# name for the ID.
my $waldump = $primary->config_data('--bindir') . '/pg_waldump';
my ($stdout, $stderr);
IPC::Run::run [ $waldump, '-p', $primary->data_dir . '/pg_wal',
	'-s', $start, '-e', $end ], '>', \$stdout, '2>', \$stderr;
like($stdout, qr/^rmgr: custom251 /m, 'pg_waldump shows the records as custom251');

# A split logs the new right page's tuples as block data, as btree does,
# not a page image; fastbtree.debug_split_image (builds with assertions)
# forces the image form, the fallback and that of earlier builds' split
# records, which the standby then replays (checked) below.
my $split_data = $primary->safe_psql(
	'postgres', qq{
SELECT avg(record_length - fpi_length)::int FROM pg_get_wal_records_info('$start', '$end')
WHERE record_type IN ('SPLIT_L', 'SPLIT_R')});
ok($split_data > 1500,
	"split records carry the right page's tuples ($split_data bytes on average besides page images)");
SKIP:
{
	skip 'fastbtree.debug_split_image needs a build with assertions', 1
	  if $primary->safe_psql('postgres',
		"SELECT current_setting('fastbtree.debug_split_image', true) IS NULL") eq 't';
	my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$primary->safe_psql(
		'postgres', q{
SET fastbtree.debug_split_image = on;
SELECT setseed(0.27);
INSERT INTO t SELECT g, g % 50, md5(g::text) FROM generate_series(70001, 73000) g ORDER BY random();
});
	my $to = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	my ($nimage, $maxdata) = split /\|/, $primary->safe_psql(
		'postgres', qq{
SELECT count(*), avg(record_length - fpi_length)::int FROM pg_get_wal_records_info('$from', '$to')
WHERE record_type IN ('SPLIT_L', 'SPLIT_R')});
	ok($nimage > 0 && $maxdata < 1000,
		"fastbtree.debug_split_image: $nimage splits log the right page as an image ($maxdata bytes on average besides images)");
}

my $answers = q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(id::bigint), md5(string_agg(s, ',' ORDER BY s)) FROM t WHERE s > '';
SELECT grp, count(*), sum(id::bigint) FROM t WHERE grp BETWEEN 0 AND 49 GROUP BY grp ORDER BY grp;
SELECT count(*), sum(id::bigint) FROM t WHERE id > 0;
SELECT grp, count(*) FROM p WHERE grp BETWEEN 0 AND 2 GROUP BY grp ORDER BY grp;
};
my $seqscan = q{
SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(id::bigint), md5(string_agg(s, ',' ORDER BY s)) FROM t WHERE s > '';
SELECT grp, count(*), sum(id::bigint) FROM t WHERE grp BETWEEN 0 AND 49 GROUP BY grp ORDER BY grp;
SELECT count(*), sum(id::bigint) FROM t WHERE id > 0;
SELECT grp, count(*) FROM p WHERE grp BETWEEN 0 AND 2 GROUP BY grp ORDER BY grp;
};
my $expect = $primary->safe_psql('postgres', $seqscan);
is($primary->safe_psql('postgres', $answers), $expect,
	'primary: the indexes answer as a sequential scan does');

$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', $answers), $expect,
	'standby: replayed compact records answer as the primary does');
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'standby: no page differs from the primary\'s image');

# the indexes check_indexes() verifies (section 1b adds its own)
my @checked = qw(t_id t_grp t_s p_grp);

sub check_indexes
{
	my ($node, $label) = @_;
	for my $index (@checked)
	{
		my ($r, $o, $e) = $node->psql('postgres',
			"SELECT fastbtree_check('$index', heapallindexed => true)");
		is($r, 0, "$label: fastbtree_check($index) passes") or diag($e);
	}
}
check_indexes($primary, 'primary');

# 1b. Removal: deletion before a split, VACUUM (posting lists losing some
# of their TIDs), page deletion of leaves and of whole subtrees, the
# metapage's VACUUM fields, page reuse.  All compact, none generic.
$primary->safe_psql(
	'postgres', q{
CREATE TABLE d (k int, w int, g int, s text) WITH (autovacuum_enabled = off);
CREATE INDEX d_k ON d USING fastbtree (k);
CREATE INDEX d_w ON d USING fastbtree (w);
CREATE INDEX d_g ON d USING fastbtree (g);
CREATE INDEX d_s ON d USING fastbtree (s);
});
my $dstart = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql(
	'postgres', q{
INSERT INTO d SELECT i, i, i % 10, lpad(i::text, 200, '0') FROM generate_series(1, 30000) i;
});
# version churn: non-HOT updates leave unchanged copies in d_k, d_g, d_s,
# which bottom-up deletion removes before splitting
for my $round (1 .. 4)
{
	$primary->safe_psql('postgres', 'UPDATE d SET w = w + 1 WHERE k <= 4000');
}
# wide keys in d_s: deleting a range empties whole subtrees
$primary->safe_psql('postgres',
	'DELETE FROM d WHERE k BETWEEN 8000 AND 24000 OR k % 3 = 0');
$primary->safe_psql('postgres', 'VACUUM d');
# the deleted pages become reusable once an xid passes their safexid; the
# next VACUUM records them in the free space map, the inserts reuse them
$primary->safe_psql('postgres', 'SELECT txid_current()');
$primary->safe_psql('postgres', 'VACUUM d');
$primary->safe_psql(
	'postgres', q{
INSERT INTO d SELECT i, i, i % 10, lpad(i::text, 200, '0') FROM generate_series(8000, 24000) i;
});
my $dend = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
my %dkinds = map { split /\|/ } split /\n/, $primary->safe_psql(
	'postgres', qq{
SELECT coalesce(record_type, resource_manager), count(*)
FROM pg_get_wal_records_info('$dstart', '$dend')
WHERE resource_manager IN ('fastbtree', 'Generic', 'Btree') GROUP BY 1 ORDER BY 1});
for my $kind (qw(DELETE VACUUM MARK_HALFDEAD UNLINK REUSE_PAGE META))
{
	ok(($dkinds{$kind} // 0) > 0,
		"compact mode logs $kind records (" . ($dkinds{$kind} // 0) . ')');
}
my @others = grep { !/^(INSERT_LEAF|INSERT_UPPER|INSERT_POST|SPLIT_L|SPLIT_R|DEDUP|NEWROOT|DELETE|VACUUM|MARK_HALFDEAD|UNLINK|REUSE_PAGE|META)$/ } sort keys %dkinds;
is(join(',', @others), '',
	'compact mode: removal logs no generic record and no btree record');

sub first_d_description
{
	my ($kind, $cond) = @_;
	return $primary->safe_psql(
		'postgres', qq{
SELECT description FROM pg_get_wal_records_info('$dstart', '$dend')
WHERE resource_manager = 'fastbtree' AND record_type = '$kind' $cond
ORDER BY start_lsn LIMIT 1});
}
# (the heap's pruning usually carried the conflict already, and the
# table AM then reports no horizon; t/012 tests DELETE records with one)
like(first_d_description('DELETE', ''),
	qr/^(snapshotConflictHorizon: \d+, isCatalogRel: F, )?ndeleted: \d+, nupdated: \d+$/,
	'rm_desc describes DELETE');
like(first_d_description('VACUUM', "AND description NOT LIKE '%nupdated: 0'"),
	qr/^ndeleted: \d+, nupdated: [1-9]\d*$/,
	'rm_desc describes VACUUM, posting lists losing some TIDs');
like(first_d_description('MARK_HALFDEAD', "AND description NOT LIKE '%topparent: 4294967295,%'"),
	qr/^poff: \d+, topparent: \d+, rightsib: \d+$/,
	'rm_desc describes MARK_HALFDEAD of a subtree with internal pages');
like(first_d_description('UNLINK', "AND description LIKE '%level: 1,%'"),
	qr/^leftsib: \d+, rightsib: \d+, level: 1, safexid: \d+:\d+, leaftopparent: \d+$/,
	'rm_desc describes UNLINK of an internal page');
like(first_d_description('REUSE_PAGE', ''),
	qr/^rel: \d+\/\d+\/\d+, block: \d+, snapshotConflictHorizon: \d+:\d+, isCatalogRel: F$/,
	'rm_desc describes REUSE_PAGE');

my $danswers = q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint) FROM d WHERE k > 0;
SELECT count(*), sum(w::bigint) FROM d WHERE w > 0;
SELECT g, count(*), sum(k::bigint) FROM d WHERE g BETWEEN 0 AND 9 GROUP BY g ORDER BY g;
SELECT count(*), md5(string_agg(s, ',' ORDER BY s)) FROM d WHERE s > '';
};
my $dseqscan = q{
SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint) FROM d WHERE k > 0;
SELECT count(*), sum(w::bigint) FROM d WHERE w > 0;
SELECT g, count(*), sum(k::bigint) FROM d WHERE g BETWEEN 0 AND 9 GROUP BY g ORDER BY g;
SELECT count(*), md5(string_agg(s, ',' ORDER BY s)) FROM d WHERE s > '';
};
my $dexpect = $primary->safe_psql('postgres', $dseqscan);
is($primary->safe_psql('postgres', $danswers), $dexpect,
	'after removal: the indexes answer as a sequential scan does');
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', $danswers), $dexpect,
	'standby: replayed removal records answer as the primary does');
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'standby: no page differs from the primary\'s image after removal');
push @checked, qw(d_k d_w d_g d_s);
check_indexes($primary, 'after removal');

# 2. Crash recovery of compact records.
$primary->safe_psql(
	'postgres', q{
CHECKPOINT;
INSERT INTO t SELECT g, g % 50, repeat(md5(g::text), 4)
FROM generate_series(30001, 36000) g ORDER BY md5(g::text);
DELETE FROM d WHERE k BETWEEN 1000 AND 7000;
VACUUM d;
});
$expect = $primary->safe_psql('postgres', $seqscan);
$dexpect = $primary->safe_psql('postgres', $dseqscan);
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $answers), $expect,
	'after crash recovery the indexes answer as before the crash');
is($primary->safe_psql('postgres', $danswers), $dexpect,
	'after crash recovery of VACUUM and page deletion the indexes answer as before');
unlike(slurp_file($primary->logfile), qr/inconsistent page found|PANIC/,
	'crash recovery: no page differs from the primary\'s image');
check_indexes($primary, 'after crash recovery');

# 3. Compact records to replay and the library no longer preloaded.
$primary->safe_psql(
	'postgres', q{
CHECKPOINT;
INSERT INTO t SELECT g, g % 50, md5(g::text) FROM generate_series(40001, 40100) g;
});
$expect = $primary->safe_psql('postgres', $seqscan);
$primary->stop('immediate');
# (naming fastbtree's resource manager without the library is an error
# of its own)
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = ''\nwal_consistency_checking = 'all'");
my $logstart = -s $primary->logfile;
ok(!$primary->start(fail_ok => 1),
	'without the library the server does not start while compact records need replay');
my $log = substr(slurp_file($primary->logfile), $logstart);
like($log, qr/resource manager with ID 251 not registered/,
	'the error is PostgreSQL\'s: resource manager with ID 251 not registered');
unlike($log, qr/server process .* was terminated by signal|TRAP:/,
	'no crash');
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'fastbtree'\nwal_consistency_checking = 'all,fastbtree'");
$primary->start;
is($primary->safe_psql('postgres', $answers), $expect,
	'with the library back, recovery completes and no row is lost');

# 4. generic -> compact -> generic across clean restarts, the standby
# following (it stays preloaded: it replays both kinds).
my $rows = $primary->safe_psql('postgres', 'SELECT count(*) FROM t');
my $next = 50001;
for my $mode (qw(generic compact generic))
{
	$primary->append_conf('postgresql.conf',
		$mode eq 'compact'
		? "shared_preload_libraries = 'fastbtree'\nwal_consistency_checking = 'all,fastbtree'"
		: "shared_preload_libraries = ''\nwal_consistency_checking = 'all'");
	$primary->restart;
	# (without preload the setting exists once a session loads the library)
	is($primary->safe_psql('postgres', "LOAD 'fastbtree'; SHOW fastbtree.wal_mode"),
		$mode, "clean restart: fastbtree.wal_mode is $mode");
	my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$primary->safe_psql(
		'postgres', qq{
INSERT INTO t SELECT g, g % 50, md5(g::text) FROM generate_series($next, $next + 2999) g ORDER BY md5(g::text);
});
	$next += 3000;
	$rows += 3000;
	my $to = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	my $ours = $primary->safe_psql(
		'postgres', qq{
SELECT count(*) FROM pg_get_wal_records_info('$from', '$to')
WHERE resource_manager = 'fastbtree'});
	my $generic = $primary->safe_psql(
		'postgres', qq{
SELECT count(*) FROM pg_get_wal_records_info('$from', '$to')
WHERE resource_manager = 'Generic'});
	if ($mode eq 'compact')
	{
		ok($ours >= 3000, "compact mode: the inserts log fastbtree records ($ours)");
		is($generic, 0, 'compact mode: and no generic record');
	}
	else
	{
		is($ours, 0, 'generic mode: no fastbtree record');
		ok($generic >= 3000, "generic mode: the inserts log generic records ($generic)");
	}
	$expect = $primary->safe_psql('postgres', $seqscan);
	is($primary->safe_psql('postgres', $answers), $expect,
		"$mode mode: the indexes answer as a sequential scan does");
	is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
		"$mode mode: no row lost ($rows)");
	$primary->wait_for_catchup($standby, 'replay');
	is($standby->safe_psql('postgres', $answers), $expect,
		"$mode mode: the standby answers as the primary does");
}
check_indexes($primary, 'after the mode switches');
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'standby: no inconsistency through the mode switches');

done_testing();
