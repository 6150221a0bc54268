# t/001_crash_recovery.pl
#	Crash recovery of fastbtree indexes.
#
# A table "ft" carries four fastbtree indexes (a unique int8 key, an int4
# key with a wide INCLUDE column, a 320-byte text key with duplicates, and
# a multi-column unique index); its twin "bt" holds the same rows under the
# same btree indexes.  Every write of the pgbench workload changes both
# tables in one transaction.  Each iteration runs the workload, stops the
# server with an immediate shutdown at a different point (plain, after a
# CHECKPOINT, during a VACUUM, with a large uncommitted insert in
# progress), restarts it and checks that:
#	- crash recovery ran;
#	- fastbtree_check(index, heapallindexed => true) passes for every index;
#	- a forced index scan through each fastbtree index returns exactly the
#	  rows (and ctids) a sequential scan returns, in index order;
#	- the same query through the btree twin gives the same answer.
#
# fsync stays on and full_page_writes too: crash safety is what is tested.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $node = PostgreSQL::Test::Cluster->new('crash');

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
fsync = on
full_page_writes = on
synchronous_commit = on
shared_buffers = 16MB
max_wal_size = 512MB
checkpoint_timeout = 1h
autovacuum = off
log_statement = none
log_checkpoints = on
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
SET client_min_messages = warning;

CREATE TABLE ft (id int8, k int4, t text, u1 int4, u2 text, pad text);
CREATE TABLE bt (LIKE ft);
CREATE SEQUENCE ids START 15001;

-- the row for (id, k, g): t has duplicates (5000 values), u2 is unique
CREATE FUNCTION mkrow(p_id int8, p_k int4, p_g int4) RETURNS ft
LANGUAGE sql IMMUTABLE AS $$
	SELECT p_id, p_k, repeat(md5((p_k % 5000)::text), 10), p_g,
		   repeat(md5(p_id || ':' || p_k), 10), repeat('p', 300)
$$;

INSERT INTO ft SELECT (mkrow(i, hashint4(i) & 1048575, i % 100)).*
	FROM generate_series(1, 15000) i;
INSERT INTO bt SELECT * FROM ft;

CREATE UNIQUE INDEX ft_id ON ft USING fastbtree (id);
CREATE INDEX ft_k ON ft USING fastbtree (k) INCLUDE (pad);
CREATE INDEX ft_t ON ft USING fastbtree (t);
CREATE UNIQUE INDEX ft_u ON ft USING fastbtree (u1, u2);
CREATE UNIQUE INDEX bt_id ON bt USING btree (id);
CREATE INDEX bt_k ON bt USING btree (k) INCLUDE (pad);
CREATE INDEX bt_t ON bt USING btree (t);
CREATE UNIQUE INDEX bt_u ON bt USING btree (u1, u2);

-- level of an index page; NULL for a page fastbtree_page_stats() refuses
-- (an all-zero page, see level_profile in the test)
CREATE FUNCTION page_level(idx regclass, blkno int8) RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT level FROM fastbtree_page_stats(idx, blkno));
EXCEPTION WHEN index_corrupted THEN
	RETURN NULL;
END
$$;

-- workload: every change hits ft and bt in the same transaction
CREATE FUNCTION w_ins(p_k int4, p_g int4) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	v_id int8 := nextval('ids');
BEGIN
	INSERT INTO ft SELECT (mkrow(v_id, p_k, p_g)).*;
	INSERT INTO bt SELECT (mkrow(v_id, p_k, p_g)).*;
END
$$;

-- change every key of row p_id (t, u1 and u2 follow k and g)
CREATE FUNCTION w_upd(p_id int8, p_k int4, p_g int4) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	r ft := mkrow(p_id, p_k, p_g);
BEGIN
	UPDATE ft SET k = r.k, t = r.t, u1 = r.u1, u2 = r.u2 WHERE id = p_id;
	UPDATE bt SET k = r.k, t = r.t, u1 = r.u1, u2 = r.u2 WHERE id = p_id;
END
$$;

CREATE FUNCTION w_del(p_id int8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM ft WHERE id = p_id;
	DELETE FROM bt WHERE id = p_id;
END
$$;
});

my @fbt_indexes = qw(ft_id ft_k ft_t ft_u);

# Per index: a qual that selects every row through it, its order, and how a
# key prints.
my %index_query = (
	id => { pred => 'id > 0', order => 'id', key => 'id::text' },
	k => { pred => 'k >= 0', order => 'k', key => 'k::text' },
	t => { pred => q{t >= ''}, order => 't', key => 'hashtext(t)::text' },
	u => {
		pred => 'u1 >= 0',
		order => 'u1, u2',
		key => q{u1 || '/' || hashtext(u2)}
	},);

my $force_index = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;
};
my $force_seqscan = q{
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
};

# One line: row count, hash of the keys in the order returned, sum of the
# rows' hashes, sum of the hashes of rows with their ctids (except for the
# btree twin, whose ctids differ).
sub summary_query
{
	my ($table, $which, $with_ctid) = @_;
	my $q = $index_query{$which};
	my $row =
	  q{id || ':' || k || ':' || hashtext(t) || ':' || u1 || ':' || hashtext(u2)};
	my $ctid =
	  $with_ctid ? q{sum(hashtext(r || '@' || c)::int8)::text} : q{'-'};

	return qq{
SELECT count(*) || ' ' || coalesce(md5(string_agg(key, ',')), '-') || ' ' ||
	   coalesce(sum(hashtext(r)::int8), 0) || ' ' || coalesce($ctid, '-')
FROM (SELECT $q->{key} AS key, $row AS r, ctid::text AS c
	  FROM $table WHERE $q->{pred} ORDER BY $q->{order}) s};
}

# Page count per level of an index, e.g. "0:682 1:3 2:1"; "new:N" counts
# all-zero pages, which a crash leaves behind when it hits between extending
# the index and WAL-logging the new page's first contents.
sub level_profile
{
	my ($index) = @_;

	return $node->safe_psql(
		'postgres', qq{
SELECT string_agg(level || ':' || n, ' ' ORDER BY level)
FROM (SELECT coalesce(page_level('$index', b)::text, 'new') AS level,
			 count(*) AS n
	  FROM generate_series(1, pg_relation_size('$index') / 8192 - 1) b
	  GROUP BY 1) p});
}

# The whole verification, after the initial load and after each crash.
sub verify
{
	my ($label) = @_;

	# each check prints its index name unless it fails
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		join('',
			map { "SELECT '$_', fastbtree_check('$_', heapallindexed => true);\n" }
			  @fbt_indexes),
		on_error_stop => 0);
	for my $index (@fbt_indexes)
	{
		like($out, qr/^$index\|$/m,
			"$label: fastbtree_check($index, heapallindexed) passes");
	}
	diag("$label: fastbtree_check: $err") if $err ne '';

	# One session runs every query, each after EXPLAIN in the same settings:
	# per index, through it, by seqscan, and through its btree twin.
	my @runs;
	for my $which (sort keys %index_query)
	{
		push @runs,
		  [
			$which, 'fbt', $force_index, summary_query('ft', $which, 1),
			qr/Index (Only )?Scan using ft_$which on ft/
		  ],
		  [
			$which, 'seq', $force_seqscan, summary_query('ft', $which, 1),
			qr/Seq Scan on ft/
		  ],
		  [
			$which, 'twin', $force_index, summary_query('bt', $which, 0),
			qr/Index (Only )?Scan using bt_$which on bt/
		  ];
	}
	my $script = join('',
		map { "RESET ALL; $_->[2] EXPLAIN (COSTS OFF) $_->[3]; SELECT '=====';\n"
			  . "$_->[3]; SELECT '=====';\n" } @runs);
	my @chunks = split /^=====\n?/m, $node->safe_psql('postgres', $script);
	my %result;
	for my $run (@runs)
	{
		my ($which, $how, $settings, $query, $plan_re) = @$run;
		my ($plan, $res) = splice(@chunks, 0, 2);
		chomp $res;
		like($plan, $plan_re, "$label: plan for ft_$which ($how)");
		$result{$which}{$how} = $res;
	}

	for my $which (sort keys %index_query)
	{
		my $r = $result{$which};
		unlike($r->{fbt}, qr/^0 /, "$label: ft_$which index scan finds rows");
		is($r->{fbt}, $r->{seq},
			"$label: ft_$which index scan returns the rows and ctids of a seqscan, in order"
		);
		(my $mine = $r->{fbt}) =~ s/ \S+$/ -/;
		is($mine, $r->{twin},
			"$label: ft_$which returns what btree twin bt_$which returns");
	}

	my $counts = $node->safe_psql(
		'postgres', q{
SELECT count(*), max(id), pg_relation_size('ft_t') / 8192,
	   (SELECT level FROM fastbtree_metap('ft_t'))
FROM ft});
	my ($rows, $maxid, $blocks, $level) = split /\|/, $counts;
	diag("$label: ft has $rows rows, max id $maxid; "
		  . "ft_t has $blocks blocks, root level $level; "
		  . "ft_k: $result{k}{fbt}");
	return ($rows, $maxid);
}

# ft_id (int8, about 370 keys a page) stays at level 1; it only serves the
# workload's lookups by id.
my %initial_levels;
for my $index (qw(ft_k ft_t ft_u))
{
	my $level = $node->safe_psql('postgres',
		"SELECT level FROM fastbtree_metap('$index')");
	cmp_ok($level, '>=', 2, "$index has a root at level >= 2 before the workload")
	  or diag("$index: metapage level $level");
	$initial_levels{$index} = level_profile($index);
	diag("$index before the workload: pages per level $initial_levels{$index}");
}
verify('initial load');

# pgbench scripts
my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'ins' => [
		100, q{
\set k random(0, 1048575)
\set g random(0, 99)
SELECT w_ins(:k, :g);
}
	],
	'upd' => [
		50, q{
\set id random(1, :maxid)
\set k random(0, 1048575)
\set g random(0, 99)
SELECT w_upd(:id, :k, :g);
}
	],
	'del' => [
		30, q{
\set id random(1, :maxid)
SELECT w_del(:id);
}
	],
	'txn' => [
		20, q{
\set id random(1, :maxid)
\set k random(0, 1048575)
BEGIN;
SELECT w_ins(:k, :k % 100);
SELECT w_upd(:id, :k + 1, 7);
SELECT w_del(:id + 1);
COMMIT;
}
	],);
my @script_args;
for my $name (sort keys %scripts)
{
	my $file = "$dir/$name.sql";
	append_to_file($file, $scripts{$name}[1]);
	push @script_args, '-f', "$file\@$scripts{$name}[0]";
}

# Start pgbench in the background; it runs until the crash ends it.
sub start_workload
{
	my ($stdout, $stderr) = @_;
	my $maxid = $node->safe_psql('postgres', 'SELECT last_value FROM ids');

	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', '120',
			'-D', "maxid=$maxid", @script_args,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', $stdout, '2>', $stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}

# Start a psql running $sql in the background, killed by the crash.
sub start_psql
{
	my ($sql, $stdout, $stderr) = @_;

	return IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', $stdout, '2>', $stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}

# Crash points: seconds of workload, and what else happens meanwhile.
my @iterations = (
	{ sleep => 2.5, what => 'plain' },
	{ sleep => 1.5, what => 'checkpoint' },
	{ sleep => 3.0, what => 'vacuum' },
	{ sleep => 0.8, what => 'plain' },
	{ sleep => 2.0, what => 'uncommitted bulk insert' },);

my $prev_maxid =
  $node->safe_psql('postgres', 'SELECT max(id) FROM ft');
my $iter = 0;
my $server_down = 0;
for my $it (@iterations)
{
	$iter++;
	my $label = "crash $iter ($it->{what}, $it->{sleep}s)";
	my ($pb_out, $pb_err, $bg_out, $bg_err) = ('', '', '', '');
	my $bg;

	my $logstart = -s $node->logfile;
	my $pgbench = start_workload(\$pb_out, \$pb_err);
	my $started = time;

	# a VACUUM early in each run, so that crashes find pages it cleaned
	sleep(0.4);
	my ($vac_out, $vac_err) = ('', '');
	my $vacuum = start_psql('VACUUM ft', \$vac_out, \$vac_err);

	if ($it->{what} eq 'checkpoint')
	{
		# crash after a checkpoint: redo starts there, with full-page images
		sleep($it->{sleep} / 2);
		$node->safe_psql('postgres', 'CHECKPOINT');
		sleep($it->{sleep} / 2);
	}
	elsif ($it->{what} eq 'vacuum')
	{
		sleep($it->{sleep});
		$bg = start_psql('VACUUM ft', \$bg_out, \$bg_err);
		sleep(0.3);
	}
	elsif ($it->{what} eq 'uncommitted bulk insert')
	{
		# 4000 rows in one transaction that never commits: many splits whose
		# entries point to dead heap tuples after recovery
		$bg = start_psql(
			q{BEGIN;
INSERT INTO ft SELECT (mkrow(i, hashint4(i) & 1048575, i % 100)).*
	FROM generate_series(900000001, 900004000) i;
SELECT pg_sleep(600);
COMMIT;}, \$bg_out, \$bg_err);
		$node->poll_query_until('postgres',
			q{SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'PgSleep'}
		) or die "bulk insert did not reach its pg_sleep";
		sleep($it->{sleep});
	}
	else
	{
		sleep($it->{sleep});
	}

	$pgbench->pump_nb;
	ok($pgbench->pumpable, "$label: pgbench still running at the crash")
	  or diag("pgbench stderr: $pb_err");

	$node->stop('immediate', fail_ok => 1);
	$pgbench->finish;
	$bg->finish if $bg;
	$vacuum->finish;
	my $ran = sprintf('%.1f', time - $started);

	# Errors before the crash (the crash itself only ends connections)
	unlike($pb_err, qr/ERROR/, "$label: no SQL error in the workload")
	  or diag("pgbench stderr: $pb_err");
	unlike($vac_err . $bg_err, qr/ERROR/, "$label: no SQL error in VACUUM")
	  or diag("psql stderr: $vac_err $bg_err");

	my $log = slurp_file($node->logfile, $logstart);
	if ($log =~ /terminated by signal|PANIC|TRAP:/)
	{
		fail("$label: no server crash during the workload");
		diag(join("\n", grep { /signal|PANIC|TRAP|DETAIL/ } split /\n/, $log));
		$server_down = 1;
		last;
	}

	$logstart = -s $node->logfile;
	if (!$node->start(fail_ok => 1))
	{
		fail("$label: server restarts after the crash");
		diag(slurp_file($node->logfile, $logstart));
		$server_down = 1;
		last;
	}

	$log = slurp_file($node->logfile, $logstart);
	like(
		$log,
		qr/database system was (not properly shut down|interrupted)/,
		"$label: crash recovery ran");
	my ($redo) = $log =~ /(redo done at [^\n]*)/;
	diag("$label: workload ran ${ran}s; " . ($redo // 'no redo line'));

	my ($rows, $maxid) = verify($label);
	cmp_ok($maxid, '>', $prev_maxid,
		"$label: inserts committed before the crash survived");
	$prev_maxid = $maxid;
}

if ($server_down)
{
	done_testing();
	exit;
}

# The workload split pages above the leaves too: the text keys (about 22
# per page at every level) force internal splits.
for my $index (qw(ft_k ft_t ft_u))
{
	my $final = level_profile($index);
	diag("$index after the crashes: pages per level $final");
	next if $index eq 'ft_k';	# about 400 keys per internal page
	my ($before) = $initial_levels{$index} =~ /\b1:(\d+)/;
	my ($after) = $final =~ /\b1:(\d+)/;
	cmp_ok($after, '>', $before,
		"$index: level 1 pages split during the workload ($initial_levels{$index} -> $final)"
	);
}

# A clean restart after all this, and one more full check.
$node->restart;
verify('after clean restart');

$node->stop;
done_testing();
