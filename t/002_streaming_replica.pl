# t/002_streaming_replica.pl
#	fastbtree indexes on a streaming standby.
#
# A primary and a streaming standby run with wal_consistency_checking =
# 'generic' ('generic,fastbtree' when the suite preloads fastbtree, compact
# mode: t/FbtWalMode.pm): every record of fastbtree's carries an image of
# each page it changes, and the standby's startup process compares the page it rebuilt
# by replay with that image (a mismatch logs "inconsistent page found" and
# stops the standby).  The primary runs write cycles (bulk inserts,
# deletes, key-changing updates, VACUUM) that split pages at every level;
# after each cycle the standby must answer the same queries, through the
# same fastbtree indexes, with the same output, and pass fastbtree_check.
# Meanwhile, readers on the standby check an invariant through the indexes
# while the primary moves keys around.  Finally the standby is promoted and
# written to.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

use FindBin;
use lib $FindBin::RealBin;
use FbtWalMode;

my $consistency_conf = 'wal_consistency_checking = \''
  . fbt_consistency_checking() . "'\n" . q{
wal_compression = on
log_statement = none
autovacuum = off
max_standby_streaming_delay = -1
};

my ($primary, $standby);

# A server that crashed must not make the teardown bail out of every later
# test file: stop the nodes here, tolerating a dead postmaster.
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
$primary->append_conf('postgresql.conf', $consistency_conf);
$primary->start;

# One table exists before the base backup, so that the standby starts from
# copied index files; the rest is created afterwards and reaches it as WAL.
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE inv (id int4, k int4, t text);
INSERT INTO inv SELECT i, hashint4(i) & 1048575, repeat(md5(i::text), 3)
	FROM generate_series(1, 3000) i;
CREATE INDEX inv_k ON inv USING fastbtree (k);
CREATE INDEX inv_t ON inv USING fastbtree (t);
CREATE INDEX inv_id ON inv USING fastbtree (id);
});

$primary->backup('backup');
$standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', $consistency_conf);
$standby->start;

$primary->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE TABLE r (id int4, k int4, t text, u1 int4, u2 text);
CREATE INDEX r_k ON r USING fastbtree (k);
CREATE INDEX r_t ON r USING fastbtree (t);
CREATE UNIQUE INDEX r_u ON r USING fastbtree (u1, u2);
});

my @indexes = qw(inv_k inv_t inv_id r_k r_t r_u);

sub standby_log
{
	return slurp_file($standby->logfile);
}

# Stop here, after reporting why: the standby stopped replaying (as it
# does when wal_consistency_checking finds an inconsistent page).
sub standby_died
{
	my ($label) = @_;
	my $log = standby_log();

	fail("$label: standby replays the primary's WAL");
	diag("standby log:\n"
		  . join("\n",
			grep { /inconsistent|PANIC|FATAL|startup process|CONTEXT/ }
			  split /\n/, $log));
	ok($log !~ /inconsistent page found/,
		'standby log has no "inconsistent page found"');
	$standby->stop('immediate', fail_ok => 1);
	$primary->stop;
	done_testing();
	exit;
}

# Wait until the standby has replayed everything the primary wrote; fail
# fast if the standby stopped.
sub catchup
{
	my ($label) = @_;
	my $target = $primary->lsn('write');
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $deadline)
	{
		standby_died($label)
		  if standby_log() =~
		  /inconsistent page found|PANIC|startup process .* exited/;
		my ($ret, $done) = $standby->psql('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn");
		if ($ret == 0 && $done eq 't')
		{
			pass("$label: standby replayed up to $target");
			return;
		}
		sleep(0.1);
	}
	standby_died("$label: timeout");
}

my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;
};

# Queries answered through fastbtree indexes, one line each.  Full scans
# print ctids too: a physical standby has the same heap and index pages,
# so even the order of equal keys (heap TID order) must match.
my @queries = (
	[ 'r_k forward scan' => q{
SELECT count(*) || ' ' || md5(string_agg(k || '@' || ctid, ','))
FROM (SELECT k, ctid FROM r WHERE k >= 0 ORDER BY k) s} ],
	[ 'r_k backward scan' => q{
SELECT count(*) || ' ' || md5(string_agg(k || '@' || ctid, ','))
FROM (SELECT k, ctid FROM r WHERE k >= 0 ORDER BY k DESC) s} ],
	[ 'r_t forward scan' => q{
SELECT count(*) || ' ' || md5(string_agg(md5(t) || '@' || ctid, ','))
FROM (SELECT t, ctid FROM r WHERE t >= '' ORDER BY t) s} ],
	[ 'r_u forward scan' => q{
SELECT count(*) || ' ' || md5(string_agg(u1 || '/' || md5(u2) || '@' || ctid, ','))
FROM (SELECT u1, u2, ctid FROM r WHERE u1 >= 0 ORDER BY u1, u2) s} ],
	[ 'r_k point probes' => q{
SELECT string_agg((SELECT count(*) FROM r WHERE k = v)::text, ',')
FROM generate_series(0, 1048575, 997) v} ],
	[ 'r_k range probes' => q{
SELECT string_agg((SELECT count(*) || ':' || coalesce(sum(k), 0) FROM r
				   WHERE k BETWEEN v AND v + 3000), ',')
FROM generate_series(0, 1048575, 10007) v} ],
	[ 'r_k = ANY' => q{
SELECT count(*) || ' ' || coalesce(sum(k), 0) FROM r
WHERE k = ANY (ARRAY(SELECT hashint4(i) & 1048575 FROM generate_series(1, 20000, 7) i))} ],
	[ 'r_u prefix' => q{
SELECT string_agg((SELECT count(*) FROM r WHERE u1 = g AND u2 > 'a')::text, ',')
FROM generate_series(0, 49) g} ],
	[ 'r_t range' => q{
SELECT string_agg(left(t, 8), ',') FROM
	(SELECT t FROM r WHERE t > '8' AND t < '9' ORDER BY t DESC LIMIT 300) s} ],
	[ 'min/max' => q{
SELECT min(k) || ' ' || max(k) || ' ' || left(min(t), 8) || ' ' || left(max(t), 8) FROM r} ],
	[ 'inv through every index' => q{
SELECT (SELECT count(*) FROM inv WHERE k >= 0) || ' ' ||
	   (SELECT count(*) FROM inv WHERE t >= '') || ' ' ||
	   (SELECT count(*) FROM inv WHERE id > 0)} ],);

my $all_queries = $force_index
  . join('', map { "$_->[1];\n" } @queries);

# The same queries on both nodes must print the same lines.
sub compare_nodes
{
	my ($label) = @_;
	my @p = split /\n/, $primary->safe_psql('postgres', $all_queries), -1;
	my @s = split /\n/, $standby->safe_psql('postgres', $all_queries), -1;

	is(scalar(@s), scalar(@queries), "$label: standby answered every query");
	for my $i (0 .. $#queries)
	{
		is($s[$i], $p[$i],
			"$label: $queries[$i][0] on the standby matches the primary");
	}
}

# Each index passes fastbtree_check on $node.  heapallindexed works on a
# hot standby too: the heap scan uses an MVCC snapshot and writes nothing.
sub check_indexes
{
	my ($node, $label) = @_;

	for my $index (@indexes)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT fastbtree_check('$index', heapallindexed => true)");
		is($ret, 0,
			"$label: fastbtree_check($index, heapallindexed) passes on "
			  . $node->name);
		diag("$label: $err") if $ret != 0;
	}
}

# One cycle of writes on the primary: bulk insert, deletes (scattered and a
# key range), key-changing updates, VACUUM.
sub write_cycle
{
	my ($c) = @_;
	my $lo = ($c - 1) * 4000 + 1;
	my $hi = $c * 4000;

	$primary->safe_psql(
		'postgres', qq{
SET client_min_messages = warning;
INSERT INTO r SELECT i, hashint4(i) & 1048575,
		repeat(md5(((hashint4(i) & 1048575) % 2500)::text), 3),
		i % 50, repeat(md5(i::text), 3)
	FROM generate_series($lo, $hi) i;
DELETE FROM r WHERE k % 7 = $c;
DELETE FROM r WHERE k BETWEEN $c * 100000 AND $c * 100000 + 30000;
UPDATE r SET k = (k * 31 + $c) & 1048575,
		t = repeat(md5((((k * 31 + $c) & 1048575) % 2500)::text), 3),
		u1 = (u1 + $c) % 50
	WHERE id % 5 = $c % 5;
VACUUM r;
});
}

# The plans go through fastbtree on the standby (once it has the tables).
catchup('initial schema');
my $plans = $standby->safe_psql('postgres',
	$force_index . join('', map { "EXPLAIN (COSTS OFF) $_->[1];\n" } @queries));
unlike($plans, qr/Seq Scan on (r|inv)\b/, 'standby plans use no seqscan');
for my $index (qw(r_k r_t r_u inv_k inv_t inv_id))
{
	like($plans, qr/using $index on/, "standby plans use $index");
}

for my $c (1 .. 4)
{
	write_cycle($c);
	catchup("cycle $c");
	compare_nodes("cycle $c");
	check_indexes($standby, "cycle $c");
	my $state = $primary->safe_psql(
		'postgres', q{
SELECT count(*), (SELECT level FROM fastbtree_metap('r_k')),
	   (SELECT level FROM fastbtree_metap('r_t')),
	   (SELECT level FROM fastbtree_metap('r_u')),
	   pg_relation_size('r_t') / 8192
FROM r});
	my ($rows, $lk, $lt, $lu, $blocks) = split /\|/, $state;
	diag("cycle $c: r has $rows rows; root levels r_k $lk, r_t $lt, r_u $lu;"
		  . " r_t has $blocks blocks");
	if ($c == 4)
	{
		cmp_ok($lt, '>=', 2, 'r_t grew to level 2 or more');
		cmp_ok($lu, '>=', 2, 'r_u grew to level 2 or more');
	}
}
check_indexes($primary, 'after the cycles');

# Readers on the standby, during replay of splits: inv always holds 3000
# rows, and every index must find all of them in every snapshot while the
# primary keeps moving keys (each update inserts new index entries, so
# pages split on the primary and the splits replay under the readers).
my $dir = PostgreSQL::Test::Utils::tempdir;
append_to_file(
	"$dir/move.sql", q{
\set id random(1, 3000)
\set k random(0, 1048575)
UPDATE inv SET k = :k, t = repeat(md5(:k::text || 'x'), 3) WHERE id = :id;
});
my ($w_out, $w_err) = ('', '');
my $writer = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-j', '1', '-T', '7',
		'-f', "$dir/move.sql",
		'-h', $primary->host, '-p', $primary->port, 'postgres'
	],
	'>', \$w_out, '2>', \$w_err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
{
	local $ENV{PGOPTIONS} =
	  '-c enable_seqscan=off -c enable_bitmapscan=off';
	$standby->pgbench(
		'-n -c 2 -j 2 -T 6',
		0,
		[qr/number of failed transactions: 0/, qr/actually processed: [1-9]/],
		[qr/^$/],
		'standby readers find every row of inv through each index during replay',
		{
			'002_inv_read' => q{
SELECT 1 / ((SELECT count(*) FROM inv WHERE k >= 0) = 3000)::int;
SELECT 1 / ((SELECT count(*) FROM inv WHERE t >= '') = 3000)::int;
SELECT 1 / ((SELECT count(*) FROM inv WHERE k BETWEEN 0 AND 524287) +
			(SELECT count(*) FROM inv WHERE k BETWEEN 524288 AND 1048575) = 3000)::int;
}
		});
}
$writer->finish;
like($w_out, qr/number of failed transactions: 0/,
	'primary moved inv keys without errors');
my ($moved) = $w_out =~ /actually processed: (\d+)/;
diag("primary moved $moved inv keys while the standby read");
catchup('after the inv updates');
compare_nodes('after the inv updates');
check_indexes($standby, 'after the inv updates');

# What the standby's log says about consistency checking.
my $log = standby_log();
ok($log !~ /inconsistent page found/,
	'standby log has no "inconsistent page found"');
my @notes = grep { /inconsistent|consistency|PANIC|FATAL|ERROR/ }
  split /\n/, $log;
diag("standby wal_consistency_checking = "
	  . $standby->safe_psql('postgres', 'SHOW wal_consistency_checking')
	  . "; standby log lines about consistency or errors: "
	  . (@notes ? "\n" . join("\n", @notes) : 'none'));

# How much of the primary's WAL still on disk carried page images for the
# check (the oldest segments may have been recycled).
my $waldir = $primary->data_dir . '/pg_wal';
opendir(my $dh, $waldir) or die "opendir $waldir: $!";
my ($oldest) = sort grep { /^[0-9A-F]{24}$/ } readdir($dh);
closedir($dh);
my ($dump, $dumperr) = ('', '');
my $start = sprintf('%X/%X', hex(substr($oldest, 8, 8)),
	hex(substr($oldest, 16, 8)) * 16 * 1024 * 1024);
IPC::Run::run([ 'pg_waldump', '-p', $waldir, '-s', $start ],
	'>', \$dump, '2>', \$dumperr);
# (pg_waldump names fastbtree's own records by their resource manager ID)
my @ours = grep { /^rmgr: (Generic|custom251) / } split /\n/, $dump;
my $verification = grep { /for WAL verification/ } @ours;
diag("primary WAL from segment $oldest on: " . scalar(@ours)
	  . " generic or fastbtree records, "
	  . "$verification with page images for WAL verification");
cmp_ok($verification, '>', 0,
	'fastbtree\'s records carry page images for consistency checking');

# Promote the standby and write to it.
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'standby promoted');
$standby->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
INSERT INTO r SELECT i, hashint4(i) & 1048575,
		repeat(md5(((hashint4(i) & 1048575) % 2500)::text), 3),
		i % 50, repeat(md5(i::text), 3)
	FROM generate_series(100001, 104000) i;
DELETE FROM r WHERE k % 11 = 3;
UPDATE r SET k = k + 1, u1 = (u1 + 1) % 50 WHERE id % 3 = 0;
UPDATE inv SET k = 1048575 - k;
VACUUM r;
VACUUM inv;
});
check_indexes($standby, 'after promotion');

# Index scans and seqscans agree on the promoted node.
for my $q (
	[ 'r_k', 'SELECT k, ctid FROM r WHERE k >= 0', 'k' ],
	[ 'r_t', q{SELECT t, ctid FROM r WHERE t >= ''}, 't' ],
	[ 'r_u', 'SELECT u1, u2, ctid FROM r WHERE u1 >= 0', 'u1, u2' ],
	[ 'inv_k', 'SELECT k, ctid FROM inv WHERE k >= 0', 'k' ])
{
	my ($index, $select, $order) = @$q;
	my $sql =
	  "SELECT count(*) || ' ' || md5(string_agg(x::text, ',' ORDER BY x::text)) FROM ($select) x";
	my $via_index = $standby->safe_psql('postgres', "$force_index $sql");
	my $via_seqscan = $standby->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $sql"
	);
	like(
		$standby->safe_psql('postgres', "$force_index EXPLAIN (COSTS OFF) $sql"),
		qr/using $index on/,
		"promoted: query uses $index");
	is($via_index, $via_seqscan,
		"promoted: $index index scan and seqscan return the same rows");
}

$standby->stop;
$primary->stop;
done_testing();
