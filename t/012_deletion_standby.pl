# t/012_deletion_standby.pl
#	Deletion of dead entries before a split (fbtdelete.c) and hot standby.
#
# A standby query whose snapshot predates a DELETE on the primary still
# sees the deleted rows.  When the primary then removes their index
# entries (kill_prior_tuple marks them LP_DEAD, an insert into the full
# leaf deletes them), the standby must either cancel that query, as it
# does for btree's own deletion records, or still return every row; it
# must never answer through an index that has lost entries its snapshot
# needs.  The heap here is laid out so that on-access pruning never runs
# (every heap page keeps more than a tenth of its space free), and the
# test checks that no heap tuple was pruned: the recovery conflict can
# then only come from fastbtree's conflict record (btree's REUSE_PAGE,
# logged before the deletion), so without it the standby would return
# too few rows and the test fails.
#
# With hot_standby_feedback = on the primary keeps the rows (its horizon
# waits for the standby's snapshot), and the standby query is not
# cancelled and still returns every row.  wal_consistency_checking covers
# fastbtree's records throughout (generic ones; and its own when the suite
# preloads it, t/FbtWalMode.pm): the standby compares every page it
# replays with the primary's image.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use FbtWalMode;
use Time::HiRes qw(sleep time);

my ($primary, $standby);

END
{
	local $?;
	for my $n ($standby, $primary)
	{
		$n->stop('immediate', fail_ok => 1) if $n;
	}
}

$primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# wal_keep_size: conflict_records() reads the WAL back from before a
# VACUUM; a checkpoint must not remove it meanwhile (with the consistency
# checks' page images, the inserts after it can fill max_wal_size)
$primary->append_conf('postgresql.conf', q{
autovacuum = off
log_statement = none
wal_keep_size = 1GB
} . "wal_consistency_checking = '" . fbt_consistency_checking() . "'\n");
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION fastbtree;
CREATE EXTENSION pageinspect;
});

$primary->backup('backup');
$standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby_feedback = off
max_standby_streaming_delay = 0
});
$standby->start;

# Four 1.7 kB rows per heap page leave about 1.3 kB free on each: less
# than a tenth free (819 bytes) is what makes a scan prune a page.
sub make_table
{
	my ($name) = @_;
	$primary->safe_psql('postgres', qq{
CREATE TABLE $name (k int, pad text) WITH (autovacuum_enabled = off, fillfactor = 100);
CREATE INDEX ${name}_k ON $name USING fastbtree (k);
INSERT INTO $name SELECT i * 2, repeat('p', 1700) FROM generate_series(1, 2000) i;
});
}

# Normal (not pruned) heap line pointers of a table, over every page.
sub normal_heap_items
{
	my ($name) = @_;
	return $primary->safe_psql('postgres', qq{
SELECT count(*) FROM generate_series(0, pg_relation_size('$name') / 8192 - 1) b,
	LATERAL heap_page_items(get_raw_page('$name', b::int)) h
WHERE h.lp_flags = 1;
});
}

# Entries on the leaves of a fastbtree index, high keys not counted:
# "live/LP_DEAD".
sub index_entries
{
	my ($idx) = @_;
	return $primary->safe_psql('postgres', qq{
SELECT sum(s.live_items) - count(*) FILTER (WHERE s.next <> 0) || '/' || sum(s.dead_items)
FROM generate_series(1, pg_relation_size('$idx') / 8192 - 1) b,
	LATERAL fastbtree_page_stats('$idx', b) s
WHERE s.type = 'l';
});
}

# The primary's cycle on table name: delete a key range, read it through
# the index (marks the entries LP_DEAD where the rows are dead to all),
# insert odd keys into the same leaves (they are full: deletion before a
# split runs there).
sub primary_cycle
{
	my ($name) = @_;
	$primary->safe_psql('postgres', qq{
DELETE FROM $name WHERE k BETWEEN 1000 AND 3000;
});
	$primary->safe_psql('postgres', qq{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM (SELECT k, pad FROM $name WHERE k BETWEEN 1 AND 5000) s;
});
	my $marked = index_entries("${name}_k");
	$primary->safe_psql('postgres', qq{
INSERT INTO $name SELECT k, 'odd' FROM generate_series(1001, 2999, 2) k;
});
	return $marked;
}

# An interactive psql on the standby, holding a repeatable-read snapshot.
my ($in, $out, $err) = ('', '', '');
my $timer = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
my $session;

sub session_start
{
	($in, $out, $err) = ('', '', '');
	$session = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $standby->connstr('postgres') ],
		'<', \$in, '>', \$out, '2>', \$err, $timer);
}

# Send sql, wait until the output (or the error output) shows marker
sub session_query
{
	my ($sql) = @_;
	my $marker = 'done-' . int(rand(1e9));
	$out = '';
	$err = '';
	$in .= "$sql\n\\echo $marker\n";
	$timer->start($PostgreSQL::Test::Utils::timeout_default);
	while ($out !~ /$marker/ && $session->pumpable)
	{
		$session->pump;
	}
	my $result = $out;
	$result =~ s/\n?$marker\n?//;
	return ($result, $err);
}

sub catchup
{
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
}

my $query = q{SELECT count(*) || ':' || sum(k) FROM t WHERE k BETWEEN 1000 AND 3000;};

#
# hot_standby_feedback = off: the conflict cancels the standby query.
#
make_table('t');
catchup();
session_start();
session_query(q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN ISOLATION LEVEL REPEATABLE READ;
});
my ($before) = session_query($query);
is($before, '1001:2002000', 'standby sees the key range through the index');

my $conflicts_query =
  q{SELECT confl_snapshot FROM pg_stat_database_conflicts WHERE datname = 'postgres'};
my $conflicts_before = $standby->safe_psql('postgres', $conflicts_query);
my $normal_before = normal_heap_items('t');
my $wal_start = $primary->lsn('insert');
my $marked = primary_cycle('t');
like($marked, qr{^\d+/[1-9]\d*$},
	"the primary's index scan marked entries LP_DEAD (live/dead: $marked)");
is(normal_heap_items('t'), $normal_before + 1000,
	'no heap tuple was pruned on the primary (only inserts added items)');
my ($marked_dead) = $marked =~ m{/(\d+)$};
my ($live_after, $dead_after) = split m{/}, index_entries('t_k');
is($live_after, 1999, 'the index holds the 1999 live rows');
cmp_ok($dead_after, '<', $marked_dead,
	"deletion before the split removed dead entries ($dead_after of $marked_dead left)");

catchup();
my ($again, $again_err) = session_query($query);
if ($again_err =~ /conflict with recovery/ || !$session->pumpable)
{
	pass('the standby query was cancelled by the recovery conflict');
}
else
{
	is($again, $before,
		'the standby query still returns every row of its snapshot');
}
like($again_err, qr/conflict with recovery/,
	'the conflict came from the conflict record (nothing else conflicts here)');
$session->kill_kill;
ok( $standby->poll_query_until(
		'postgres', "SELECT ($conflicts_query) > $conflicts_before"),
	'pg_stat_database_conflicts counted a snapshot conflict');

# The WAL holds the conflict, naming the index: without preload btree's
# REUSE_PAGE record (pg_waldump shows it); preloaded (compact mode),
# fastbtree's own DELETE record with its horizon, or REUSE_PAGE for a page
# reuse (pg_walinspect names and describes them).
sub conflict_records
{
	my ($index, $kind) = @_;
	my $idxnode = $primary->safe_psql('postgres',
		qq{SELECT pg_relation_filenode('$index')});
	if (!fbt_preloaded())
	{
		my ($stdout, $stderr) = run_command(
			[
				'pg_waldump', '-p', $primary->data_dir . '/pg_wal',
				'-s', $wal_start, '-r', 'Btree'
			]);
		my $n = scalar(() = $stdout =~ /REUSE_PAGE.*\/$idxnode\b/g);
		# (it always ends with an error at the end of the WAL written so
		# far; say what else it said when it found nothing)
		diag("pg_waldump from $wal_start found no REUSE_PAGE for $index: $stderr")
		  if $n == 0;
		return $n;
	}
	$primary->safe_psql('postgres',
		'CREATE EXTENSION IF NOT EXISTS pg_walinspect');
	# REUSE_PAGE has no block reference; its description names the index
	my $cond = $kind eq 'DELETE'
	  ? "description LIKE 'snapshotConflictHorizon: %' AND block_ref LIKE '%/$idxnode %'"
	  : "description LIKE 'rel: %/$idxnode, %'";
	return $primary->safe_psql(
		'postgres', qq{
SELECT count(*) FROM pg_get_wal_records_info('$wal_start', pg_current_wal_flush_lsn())
WHERE resource_manager = 'fastbtree' AND record_type = '$kind' AND $cond});
}
cmp_ok(conflict_records('t_k', 'DELETE'), '>', 0,
	'the WAL holds a conflict record for the fastbtree index ('
	  . (fbt_preloaded() ? "fastbtree's DELETE" : "btree's REUSE_PAGE") . ')');

$standby->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT fastbtree_check('t_k', true);
});
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; ' . $query),
	'1000:2000000', 'a new standby query sees the primary\'s rows');

#
# Page reuse.  A standby cursor reads the last live leaf before a range
# the primary deleted (its snapshot, taken after the DELETE, needs nothing
# the primary's VACUUM removes, so the heap's records do not conflict with
# it, and the deleted rows are on heap pages of their own, so replaying
# their pruning waits for no pin the cursor holds) and keeps that leaf's
# right-link.  The primary's VACUUM then deletes
# the emptied leaves, a later pass puts them in the free space map, and
# ascending inserts' splits reuse them, logging btree's REUSE_PAGE with
# each page's safexid first.  That record must cancel the cursor, whose
# snapshot is older than the deletions; replayed without it, the cursor
# would step from its saved right-link into a page now holding other keys
# and lose the rows after the range.
#
$primary->safe_psql('postgres', q{
CREATE TABLE r (k int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO r SELECT i, repeat('x', 50) FROM generate_series(1, 5000) i;
INSERT INTO r SELECT i, repeat('x', 50) FROM generate_series(15001, 20000) i;
INSERT INTO r SELECT i, repeat('x', 50) FROM generate_series(5001, 15000) i;
CREATE INDEX r_k ON r USING fastbtree (k);
DELETE FROM r WHERE k BETWEEN 5001 AND 15000;
});
catchup();
session_start();
session_query(q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
BEGIN ISOLATION LEVEL REPEATABLE READ;
DECLARE c CURSOR FOR SELECT k FROM r WHERE k >= 4990 ORDER BY k;
});
my ($first) = session_query('FETCH 5 FROM c;');
is($first, "4990\n4991\n4992\n4993\n4994", 'the standby cursor read the leaf before the range');

my $deleted_pages = q{
SELECT count(*) FROM generate_series(1, pg_relation_size('r_k') / 8192 - 1) b,
	LATERAL fastbtree_page_stats('r_k', b) s WHERE s.type = 'd'};
$conflicts_before = $standby->safe_psql('postgres', $conflicts_query);
$wal_start = $primary->lsn('insert');
# (no truncation: its exclusive lock would conflict with the cursor's)
$primary->safe_psql('postgres', 'VACUUM (TRUNCATE false) r;');
my $ndeleted = $primary->safe_psql('postgres', $deleted_pages);
cmp_ok($ndeleted, '>', 20, "VACUUM deleted the emptied leaves ($ndeleted)");
# xids past the deletions' safexids, then the pass that makes them reusable
$primary->safe_psql('postgres', 'SELECT txid_current();') for 1 .. 3;
$primary->safe_psql('postgres', 'VACUUM (TRUNCATE false) r;');
$primary->safe_psql('postgres', q{
INSERT INTO r SELECT i, 'new' FROM generate_series(30001, 45000) i;
});
my $nleft = $primary->safe_psql('postgres', $deleted_pages);
cmp_ok($nleft, '<', $ndeleted,
	"splits on the primary reused deleted pages ($nleft of $ndeleted left)");
catchup();

my ($rest, $rest_err) = session_query('FETCH ALL FROM c;');
my @rest = split /\n/, $rest;
if ($rest_err =~ /conflict with recovery/ || !$session->pumpable)
{
	pass('the standby cursor was cancelled by the recovery conflict');
}
else
{
	is( scalar(@rest) . ':' . ($rest[0] // '') . ':' . ($rest[-1] // ''),
		'5006:4995:20000',
		'the standby cursor still returns every row of its snapshot');
}
like($rest_err, qr/conflict with recovery/,
	'the reuse conflict record cancelled it (nothing else conflicts here)');
$session->kill_kill;
ok( $standby->poll_query_until(
		'postgres', "SELECT ($conflicts_query) > $conflicts_before"),
	'pg_stat_database_conflicts counted the reuse conflict');
cmp_ok(conflict_records('r_k', 'REUSE_PAGE'), '>', 0,
	'the WAL holds REUSE_PAGE records for the reused pages');
$standby->safe_psql('postgres', q{SELECT fastbtree_check('r_k', true);});
is($standby->safe_psql('postgres', q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) || ':' || min(k) || ':' || max(k) FROM r WHERE k >= 4990;
}), '20011:4990:45000', 'a new standby query sees the primary\'s rows');

#
# hot_standby_feedback = on: the primary keeps what the standby can see.
#
$standby->append_conf('postgresql.conf', 'hot_standby_feedback = on');
$standby->reload;
$primary->poll_query_until('postgres',
	q{SELECT backend_xmin IS NOT NULL FROM pg_stat_replication})
  or die 'feedback did not reach the primary';
make_table('t2');
catchup();
session_start();
session_query(q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN ISOLATION LEVEL REPEATABLE READ;
});
(my $query2 = $query) =~ s/FROM t /FROM t2 /;
($before) = session_query($query2);
is($before, '1001:2002000', 'standby sees t2\'s key range');
# (any xmin the standby reported is no newer than the session's snapshot,
# which is older than the DELETE below)
$marked = primary_cycle('t2');
is($marked, '2000/0',
	'with feedback the primary marks nothing dead (live/dead)');
catchup();
my ($kept, $kept_err) = session_query($query2);
is($kept_err, '', 'the standby query was not cancelled');
is($kept, $before, 'and still returns every row of its snapshot');
session_query('COMMIT;');
$session->finish;

# every record of fastbtree's carried a page image, and the standby rebuilt
# the same bytes (the deletions included)
unlike(slurp_file($standby->logfile), qr/inconsistent page found/,
	'the standby replayed every record to the primary\'s page images');

done_testing();
