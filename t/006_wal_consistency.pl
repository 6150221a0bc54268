# t/006_wal_consistency.pl
#	Unlogged LP_DEAD hints, then wal_consistency_checking switched on at
#	run time: crash recovery and a streaming standby must keep replaying.
#
# LP_DEAD marks and the FBTP_HAS_GARBAGE flag are hints: set under a share
# (or the inserter's exclusive) lock, never WAL-logged.  Once
# wal_consistency_checking covers generic records, every later logged
# change of such a page carries the primary's page image, hints included,
# and redo compares what it rebuilt with that image.  Whatever hints a
# page had, every record that touches it must replay to the primary's
# bytes (issue 8, item 2).  btree masks its hints (btree_mask), so a btree
# twin of each table goes through the same statements as the reference.
#
# When the suite preloads fastbtree (compact mode, t/FbtWalMode.pm), the
# changes are fastbtree's own records and the setting covers them too
# ('generic,fastbtree'); fbt_mask() masks the hints there, as btree_mask().
#
# Two hint writers are exercised:
#	- scan: an index scan meets rows deleted by a committed transaction
#	  and kill_prior_tuple marks their entries (52 on one leaf);
#	- unique: a unique check finds the duplicate it would conflict with
#	  dead to all and marks it (fbtinsert.c).
# In each case the leaf was already changed since the last checkpoint
# before the hint was set, so the next record of the page is a delta, not
# a full-page image that would carry the hint along.
#
# Scenarios, each on fresh nodes:
#	1. scan hints, then (setting on) an insert on the leaf, then an
#	   immediate shutdown: the node must restart, with no "inconsistent
#	   page found", and answer through the index as the btree twin does;
#	   fastbtree_check passes.
#	2. the same with the unique-check hint.
#	3. a streaming standby; both hint paths on the primary, then
#	   wal_consistency_checking turned on by ALTER SYSTEM + reload on the
#	   primary and the standby, then logged changes of both leaves: the
#	   standby must replay them (no FATAL in its log) and answer like the
#	   primary, also after a restart and more writes.
#
# On the code before the item 2 fix, recovery stops with "FATAL:
# inconsistent page found, rel ..., blkno 1" and the server never starts
# again (scenarios 1 and 2), and the standby's startup process dies the
# same way (scenario 3).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

use FindBin;
use lib $FindBin::RealBin;
use FbtWalMode;

# what wal_consistency_checking is set to: fastbtree's records in this mode
my $checking = fbt_consistency_checking();

my @nodes;

# A server that failed to restart must not make the teardown bail out of
# later test files.
END
{
	local $?;
	for my $n (reverse @nodes)
	{
		$n->stop('immediate', fail_ok => 1) if $n;
	}
}

my $base_conf = q{
autovacuum = off
log_statement = none
full_page_writes = on
max_standby_streaming_delay = -1
};

# The tables of both hint paths and their btree twins, one leaf each where
# the hints land (block 1 of every index: the leftmost leaf).
my $schema = q{
CREATE EXTENSION fastbtree;
SET client_min_messages = warning;
CREATE TABLE w (k int, pad text);
CREATE TABLE wb (LIKE w);
INSERT INTO w SELECT g, 'x' FROM generate_series(1, 10000) g;
INSERT INTO wb SELECT * FROM w;
CREATE INDEX w_i ON w USING fastbtree (k);
CREATE INDEX wb_i ON wb USING btree (k);
CREATE TABLE u (k int, pad text);
CREATE TABLE ub (LIKE u);
INSERT INTO u SELECT g, 'x' FROM generate_series(1, 100) g;
INSERT INTO ub SELECT * FROM u;
CREATE UNIQUE INDEX u_k ON u USING fastbtree (k);
CREATE UNIQUE INDEX ub_k ON ub USING btree (k);
VACUUM w; VACUUM wb; VACUUM u; VACUUM ub;
CHECKPOINT;
};

my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
};

# After the checkpoint: change each leaf once (its full-page image), then
# set the hints with wal_consistency_checking off.
my $scan_hints = $force_index . q{
INSERT INTO w VALUES (20, 'a');
INSERT INTO wb VALUES (20, 'a');
DELETE FROM w WHERE k BETWEEN 10 AND 60;
DELETE FROM wb WHERE k BETWEEN 10 AND 60;
SELECT count(*) FROM w WHERE k BETWEEN 1 AND 100;
SELECT count(*) FROM wb WHERE k BETWEEN 1 AND 100;
};
my $unique_hints = q{
SET enable_indexscan = off;
SET enable_bitmapscan = off;
INSERT INTO u VALUES (1000, 'a');
INSERT INTO ub VALUES (1000, 'a');
DELETE FROM u WHERE k = 50;
DELETE FROM ub WHERE k = 50;
INSERT INTO u VALUES (50, 'again');
INSERT INTO ub VALUES (50, 'again');
};

# Logged changes of the hinted leaves.
my $scan_change = q{
INSERT INTO w VALUES (30, 'b');
INSERT INTO wb VALUES (30, 'b');
};
my $unique_change = q{
INSERT INTO u VALUES (0, 'b');
INSERT INTO ub VALUES (0, 'b');
};

# LP_DEAD entries on block 1 of an index
sub dead_on_leaf
{
	my ($node, $index) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM fastbtree_page_items('$index', 1) WHERE dead");
}

# What each table returns through its index, for comparison with the twin
my %queries = (
	w => q{SELECT string_agg(k || ':' || pad, ',') FROM
	(SELECT k, pad FROM %s WHERE k BETWEEN 1 AND 200 ORDER BY k) s},
	u => q{SELECT string_agg(k || ':' || pad, ',') FROM
	(SELECT k, pad FROM %s WHERE k >= 0 ORDER BY k) s},);

sub answers
{
	my ($node, $table) = @_;
	my $q = $force_index . sprintf($queries{ substr($table, 0, 1) }, $table);
	my $plan = $node->safe_psql('postgres', $force_index
		  . 'EXPLAIN (COSTS OFF) '
		  . sprintf($queries{ substr($table, 0, 1) }, $table));
	like($plan, qr/Index Scan using ${table}_[ik] on $table/,
		$node->name . ": $table is read through its index");
	return $node->safe_psql('postgres', $q);
}

sub compare_with_twins
{
	my ($node, $label) = @_;

	for my $t (qw(w u))
	{
		my $mine = answers($node, $t);
		my $twin = answers($node, "${t}b");
		isnt($mine, '', "$label: $t returns rows");
		is($mine, $twin, "$label: $t through fastbtree returns what btree twin ${t}b returns");
	}
	for my $index (qw(w_i u_k))
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT fastbtree_check('$index', heapallindexed => true)");
		is($ret, 0, "$label: fastbtree_check($index) passes")
		  or diag($err);
	}
}

sub inconsistency_lines
{
	my ($log) = @_;
	return join("\n",
		grep { /inconsistent|PANIC|FATAL|startup process|CONTEXT/ }
		  split /\n/, $log);
}

# Scenarios 1 and 2: hints by one path, the logged change with the setting
# on in that session only, an immediate shutdown, a restart.
sub crash_scenario
{
	my ($name, $hint_sql, $index, $expect_dead, $change_sql) = @_;
	my $node = PostgreSQL::Test::Cluster->new("crash_$name");
	push @nodes, $node;
	$node->init;
	$node->append_conf('postgresql.conf', $base_conf);
	$node->start;
	$node->safe_psql('postgres', $schema);

	$node->safe_psql('postgres', $hint_sql);
	is(dead_on_leaf($node, $index), $expect_dead,
		"$name: $expect_dead entries of $index block 1 marked LP_DEAD before the logged change"
	);
	$node->safe_psql('postgres',
		"SET wal_consistency_checking = '$checking';\n" . $change_sql);

	$node->stop('immediate');
	my $logstart = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	my $log = slurp_file($node->logfile, $logstart);
	ok($started, "$name: server restarts after the crash")
	  or diag("server log:\n" . inconsistency_lines($log));
	ok($log !~ /inconsistent page found/,
		"$name: redo finds no inconsistent page");
	if (!$started)
	{
		$node->stop('immediate', fail_ok => 1);
		return;
	}
	like($log, qr/redo done at/, "$name: crash recovery replayed WAL");
	compare_with_twins($node, "$name after crash recovery");
	$node->stop;
}

crash_scenario('scan', $scan_hints, 'w_i', 52, $scan_change);
crash_scenario('unique', $unique_hints, 'u_k', 1, $unique_change);

#
# Scenario 3: a streaming standby.
#
my $primary = PostgreSQL::Test::Cluster->new('primary');
push @nodes, $primary;
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $base_conf);
$primary->start;
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
push @nodes, $standby;
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', $base_conf);
$standby->start;

# Wait until the standby replayed everything the primary wrote; false if
# the standby stopped replaying (or died) first.
sub catchup
{
	my ($label) = @_;
	my $target = $primary->lsn('insert');
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $deadline)
	{
		my $log = slurp_file($standby->logfile);
		if ($log =~ /inconsistent page found|PANIC|startup process .* exited/)
		{
			fail("$label: standby replays up to $target");
			diag("standby log:\n" . inconsistency_lines($log));
			return 0;
		}
		my ($ret, $done) = $standby->psql('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn");
		if ($ret == 0 && $done eq 't')
		{
			pass("$label: standby replays up to $target");
			return 1;
		}
		sleep(0.1);
	}
	fail("$label: standby replays up to $target (timeout)");
	return 0;
}

sub compare_nodes
{
	my ($label) = @_;
	for my $t (qw(w wb u ub))
	{
		is(answers($standby, $t), answers($primary, $t),
			"$label: $t on the standby matches the primary");
	}
}

sub set_checking
{
	my ($node) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET wal_consistency_checking = '$checking'");
	$node->reload;
	$node->poll_query_until('postgres', 'SHOW wal_consistency_checking',
		$checking)
	  or die "wal_consistency_checking not on after reload on " . $node->name;
}

my $standby_ok = 1;
$primary->safe_psql('postgres', $schema);
$standby_ok = catchup('schema');
$primary->safe_psql('postgres', $scan_hints);
$primary->safe_psql('postgres', $unique_hints);
is(dead_on_leaf($primary, 'w_i'), 52,
	'standby: scan marked 52 entries of w_i block 1 LP_DEAD on the primary');
is(dead_on_leaf($primary, 'u_k'), 1,
	'standby: unique check marked 1 entry of u_k block 1 LP_DEAD on the primary');
$standby_ok &&= catchup('hints set');

set_checking($standby);
set_checking($primary);
$primary->safe_psql('postgres', $scan_change . $unique_change);
$standby_ok &&= catchup('logged changes of the hinted leaves');
compare_nodes('standby') if $standby_ok;

# A restart of the standby replays from its last restartpoint again.
my $logstart = -s $standby->logfile;
$standby->stop('immediate', fail_ok => 1);
my $restarted = $standby->start(fail_ok => 1);
ok($restarted, 'standby restarts')
  or diag("standby log:\n"
	  . inconsistency_lines(slurp_file($standby->logfile, $logstart)));
if ($restarted)
{
	is($standby->safe_psql('postgres', 'SHOW wal_consistency_checking'),
		$checking, 'standby: wal_consistency_checking is on after restart');
	$primary->safe_psql('postgres', q{
INSERT INTO w SELECT g, 'c' FROM generate_series(10001, 12000) g;
INSERT INTO wb SELECT g, 'c' FROM generate_series(10001, 12000) g;
DELETE FROM w WHERE k BETWEEN 70 AND 90;
DELETE FROM wb WHERE k BETWEEN 70 AND 90;
INSERT INTO u VALUES (-1, 'c'), (101, 'c');
INSERT INTO ub VALUES (-1, 'c'), (101, 'c');
});
	if (catchup('after the standby restart'))
	{
		compare_nodes('standby after restart');
		compare_with_twins($standby, 'standby after restart');
	}
}
# FATAL lines other than those of an orderly stop or of a connection
# attempt while the standby starts
my @fatal = grep {
	/FATAL|PANIC|inconsistent page found/
	  && !/terminating walreceiver process due to administrator command/
	  && !/the database system is (starting up|shutting down)/
} split /\n/, slurp_file($standby->logfile);
is(join("\n", @fatal), '',
	'standby log has no FATAL and no "inconsistent page found"');
compare_with_twins($primary, 'primary');

$standby->stop('immediate', fail_ok => 1);
$primary->stop;
done_testing();
