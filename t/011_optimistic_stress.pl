# t/011_optimistic_stress.pl
#	Optimistic inner-page reads under concurrent splits, with the checker.
#
# The index w_k is on 24 int8 columns, the first 23 always 0: its pivots
# cannot be suffix-truncated below 24 attributes, so about 39 of them fill
# an internal page, and a few thousand rows make a tree of three levels
# (root on level 2) that splits at every level, root included, within
# seconds of inserts.  Every column is a fixed-width machine value, so
# descents search the internal pages without their content lock (issue 9).
# w_bt is its btree twin: every insert writes the same keys to both tables
# in one statement, so any snapshot sees the same rows in both.
#
# pgbench clients run at the same time: inserts of random keys (splits of
# leaves, level-1 pages and the root); probes that compare, in one
# statement and so in one snapshot, what fastbtree and btree answer: point
# lookups, nested loops whose inner index scan is rescanned 300 times,
# forward range scans and backward scans; where a probe covers rows that
# existed before the run it also checks that all of them are found (keys
# are only ever inserted).  A mismatch divides by zero, failing the client.
# The probes read only key columns, so they are index-only scans (the
# descent is the same as for plain index scans; the table is never
# vacuumed, so every row is still fetched from the heap).
# A third pgbench runs fastbtree_check(w_k, heapallindexed) in a loop.
# Each client stores its backend's fastbtree_stats() after every
# transaction; summed over the probing clients, the counters must show that
# unlocked searches were validated, that some had to be retried or fell
# back (a writer changed the page under them), and that rescans reused
# their scan pins.  Afterwards the index must pass the checker and return
# exactly what its twin returns.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FbtPgbench;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $duration = 25;
my $initial_rows = 6000;

my $node = PostgreSQL::Test::Cluster->new('optimistic');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_buffers = 16MB
autovacuum = off
log_statement = none
max_connections = 20
# the paths under test, whatever TEMP_CONFIG (CI's run with them off) says
fastbtree.recent_buffers = on
fastbtree.scan_pins = on
fastbtree.optimistic_reads = on
});
$node->start;

my $zero_cols = join(', ', map { "c$_" } 1 .. 23);
my $zero_defs = join(', ', map { "c$_ int8 NOT NULL DEFAULT 0" } 1 .. 23);

# the search key's leading 23 columns, for table alias $t
sub zeros
{
	my ($t) = @_;
	return join(' AND ', map { "$t.c$_ = 0" } 1 .. 23);
}

# the key of row number $id (an int4 expression), as int8
sub key_of
{
	my ($id) = @_;
	return "(hashint4($id) & 1073741823)::int8";
}

$node->safe_psql(
	'postgres', qq{
SET client_min_messages = warning;
CREATE EXTENSION fastbtree;
CREATE TABLE w ($zero_defs, k int8 NOT NULL) WITH (autovacuum_enabled = off);
CREATE TABLE w_bt ($zero_defs, k int8 NOT NULL)
	WITH (autovacuum_enabled = off);
CREATE SEQUENCE ids START @{[ $initial_rows + 1 ]};
INSERT INTO w (k) SELECT @{[ key_of('g') ]}
	FROM generate_series(1, $initial_rows) g;
INSERT INTO w_bt SELECT * FROM w;
CREATE INDEX w_k ON w USING fastbtree ($zero_cols, k);
CREATE INDEX w_bt_k ON w_bt USING btree ($zero_cols, k);
ANALYZE w, w_bt;

-- the last fastbtree_stats() of each client's backend
CREATE TABLE run_stats (pid int4 PRIMARY KEY, role text, st jsonb);
});

# levels and number of pages per level of w_k
sub tree_shape
{
	my $shape = $node->safe_psql(
		'postgres', q{
SELECT string_agg(level || ':' || n, ' ' ORDER BY level)
FROM (SELECT s.level, count(*) AS n
	  FROM generate_series(1, pg_relation_size('w_k') / 8192 - 1) b,
		   fastbtree_page_stats('w_k', b) s
	  GROUP BY s.level) l});
	my %pages = map { split /:/ } split / /, $shape;
	my $root_level =
	  $node->safe_psql('postgres', "SELECT level FROM fastbtree_metap('w_k')");
	return ($root_level, \%pages, $shape);
}

my ($start_level, $start_pages, $start_shape) = tree_shape();
is($start_level, 2, 'w_k starts with its root on level 2');
diag("w_k before the run (level:pages): $start_shape");

my $dir = PostgreSQL::Test::Utils::tempdir;

my $w_zeros = zeros('w');
my $b_zeros = zeros('w_bt');
my $record = q{
INSERT INTO run_stats
	VALUES (pg_backend_pid(), '%s', (SELECT to_jsonb(s) FROM fastbtree_stats() s))
	ON CONFLICT (pid) DO UPDATE SET st = EXCLUDED.st;
};

# The probes: each one statement that fails (division by zero) unless
# fastbtree and btree agree, and, over rows that existed before the run, find
# them all.  Plans are checked below.
my %probe_sql = (
	point => qq{
SELECT 1 / ((SELECT count(*) FROM w WHERE $w_zeros AND w.k = @{[ key_of(':id') ]})
	= (SELECT count(*) FROM w_bt WHERE $b_zeros AND w_bt.k = @{[ key_of(':id') ]})
	AND (:id > $initial_rows OR
		 (SELECT count(*) FROM w WHERE $w_zeros AND w.k = @{[ key_of(':id') ]}) > 0))::int;
},
	# the point probe as a plain index scan (index-only scans off, in its
	# own transaction): its leaf goes through the leaf hints
	point_heap => qq{
SELECT 1 / ((SELECT count(*) FROM w WHERE $w_zeros AND w.k = @{[ key_of(':id') ]})
	= (SELECT count(*) FROM w_bt WHERE $b_zeros AND w_bt.k = @{[ key_of(':id') ]})
	AND (:id > $initial_rows OR
		 (SELECT count(*) FROM w WHERE $w_zeros AND w.k = @{[ key_of(':id') ]}) > 0))::int;
},
	nestloop => qq{
SELECT 1 / ((SELECT count(*) FROM generate_series(:id, :id + 299) g
			 JOIN w ON $w_zeros AND w.k = @{[ key_of('g') ]})
	= (SELECT count(*) FROM generate_series(:id, :id + 299) g
	   JOIN w_bt ON $b_zeros AND w_bt.k = @{[ key_of('g') ]})
	AND (:id + 299 > $initial_rows OR
		 (SELECT count(*) FROM generate_series(:id, :id + 299) g
		  JOIN w ON $w_zeros AND w.k = @{[ key_of('g') ]}) >= 300))::int;
},
	range => qq{
SELECT 1 / ((SELECT count(*) || ' ' || coalesce(sum(k), 0) FROM w
			 WHERE $w_zeros AND w.k BETWEEN :lo AND :lo + 5000000)
	= (SELECT count(*) || ' ' || coalesce(sum(k), 0) FROM w_bt
	   WHERE $b_zeros AND w_bt.k BETWEEN :lo AND :lo + 5000000))::int;
},
	backward => qq{
SELECT 1 / ((SELECT coalesce(string_agg(k::text, ','), '') FROM
			 (SELECT k FROM w WHERE $w_zeros AND w.k <= :lo
			  ORDER BY k DESC LIMIT 100) s)
	= (SELECT coalesce(string_agg(k::text, ','), '') FROM
	   (SELECT k FROM w_bt WHERE $b_zeros AND w_bt.k <= :lo
		ORDER BY k DESC LIMIT 100) s))::int;
},);

# \set lines of each probe
my %probe_vars = (
	point => "\\set id random(1, " . ($initial_rows * 6) . ")\n",
	point_heap => "\\set id random(1, " . ($initial_rows * 6) . ")\n",
	nestloop => "\\set id random(1, " . ($initial_rows * 3) . ")\n",
	range => "\\set lo random(0, 1073741823)\n",
	backward => "\\set lo random(0, 1073741823)\n",);

my $planner_settings = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_sort = off;
};

# The plans use the two indexes the way they should.
my %plan_re = (
	point => qr/Index Only Scan using w_k on w.*Index Only Scan using w_bt_k on w_bt/s,
	point_heap => qr/Index Scan using w_k on w.*Index Scan using w_bt_k on w_bt/s,
	nestloop =>
	  qr/Nested Loop.*Function Scan.*Index Only Scan using w_k on w.*Nested Loop.*Index Only Scan using w_bt_k on w_bt/s,
	range => qr/Index Only Scan using w_k on w.*Index Only Scan using w_bt_k on w_bt/s,
	backward =>
	  qr/Index Only Scan Backward using w_k on w.*Index Only Scan Backward using w_bt_k on w_bt/s,
);
for my $name (sort keys %probe_sql)
{
	(my $sql = $probe_sql{$name}) =~ s/:(id|lo)\b/1000/g;
	my $ios = $name eq 'point_heap' ? 'SET enable_indexonlyscan = off;' : '';
	my $plan = $node->safe_psql('postgres',
		"$planner_settings $ios EXPLAIN (COSTS OFF) $sql");
	like($plan, $plan_re{$name}, "$name probe: plan");
}

my %probes = map {
	$_ => [
		1,
		$probe_vars{$_}
		  . ($_ eq 'point_heap'
			? "BEGIN;\nSET LOCAL enable_indexonlyscan = off;\n"
			  . $probe_sql{$_}
			  . "COMMIT;\n"
			: $probe_sql{$_})
		  . sprintf($record, 'probe')
	]
} keys %probe_sql;

my %writers = (
	insert => [
		1, q{
WITH n AS (SELECT } . key_of("nextval('ids')::int4") . q{ AS k
		   FROM generate_series(1, 5)),
	a AS (INSERT INTO w (k) SELECT k FROM n)
INSERT INTO w_bt (k) SELECT k FROM n;
} . sprintf($record, 'insert')
	],);

my %checker = (
	check => [
		1, q{
SELECT fastbtree_check('w_k', true);
\sleep 100 ms
}
	],);

my %runs = (
	probes => { opts => "-c 3 -j 1 -T $duration", scripts => \%probes },
	inserts => { opts => "-c 2 -j 1 -T $duration", scripts => \%writers },
	checker => { opts => "-c 1 -j 1 -T $duration", scripts => \%checker },);
{
	(my $pgoptions = $planner_settings) =~ s/SET (\w+) = (\w+);/-c $1=$2/g;
	local $ENV{PGOPTIONS} = join(' ', split(/\s+/, $pgoptions));
	for my $name (sort keys %runs)
	{
		my $run = $runs{$name};
		$run->{out} = '';
		$run->{err} = '';
		$run->{h} = start_pgbench($node, $dir, $run->{opts}, $run->{scripts},
			\$run->{out}, \$run->{err});
	}
}
for my $name (sort keys %runs)
{
	my $run = $runs{$name};
	check_pgbench($name, $run->{h}->finish, $run->{out}, $run->{err},
		$duration);
}

# The tree grew at every level: the level-2 root split (a new root on level
# 3) and level-1 pages split.
my ($end_level, $end_pages, $end_shape) = tree_shape();
diag("w_k after the run (level:pages): $end_shape");
cmp_ok($end_level, '>=', 3, 'the level-2 root split during the run');
cmp_ok($end_pages->{1}, '>', $start_pages->{1},
	'level-1 pages split during the run');

# Counters summed over the clients of each role.
my %sum;
for my $line (
	split /\n/,
	$node->safe_psql(
		'postgres', q{
SELECT role, key, sum(value::int8), count(DISTINCT pid)
FROM run_stats, jsonb_each_text(st)
GROUP BY role, key ORDER BY role, key}))
{
	my ($role, $key, $value, $clients) = split /\|/, $line;
	$sum{$role}{$key} = $value;
	$sum{$role}{clients} = $clients;
}
for my $role (sort keys %sum)
{
	diag("fastbtree_stats() summed over $sum{$role}{clients} $role clients: "
		  . join(', ',
			map { "$_ $sum{$role}{$_}" } grep { $_ ne 'clients' }
			  sort keys %{ $sum{$role} }));
}
my $p = $sum{probe};
is($p->{clients}, 3, 'every probing client stored its counters');
cmp_ok($p->{optimistic_validated} // 0, '>', 0,
	'probes validated unlocked searches');
cmp_ok(
	($p->{optimistic_retried} // 0) +
	  ($p->{fallback_odd} // 0) +
	  ($p->{fallback_changed} // 0),
	'>', 0,
	'probes met pages changing under them (retried or fell back)');
cmp_ok($p->{scan_pin_reuses} // 0, '>', 0, 'rescans reused scan pins');
SKIP:
{
	skip 'fastbtree.atomic_pins off: no leaf hints', 1
	  unless $node->safe_psql('postgres',
		"SELECT current_setting('fastbtree.atomic_pins') FROM fastbtree_stats()")
	  eq 'on';
	cmp_ok($p->{leaf_hint_hits} // 0, '>', 0,
		'plain index scans pinned leaves through leaf hints');
}

# The index passes the checker and returns exactly its twin's rows, in
# order.
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT fastbtree_check('w_k', heapallindexed => true)");
is($ret, 0, 'fastbtree_check(w_k, heapallindexed) passes after the run');
diag($err) if $ret != 0;

my %ordered;
for my $t ([ 'w', 'w_k' ], [ 'w_bt', 'w_bt_k' ])
{
	my ($table, $index) = @$t;
	my $z = zeros($table);
	my $sql = qq{SELECT count(*) || ' ' || md5(string_agg(k::text, ','))
FROM (SELECT k FROM $table WHERE $z AND k >= 0 ORDER BY k) s};
	my $plan = $node->safe_psql('postgres',
		"$planner_settings EXPLAIN (COSTS OFF) $sql");
	like($plan, qr/Index Only Scan using $index on $table/,
		"$table full scan: plan");
	$ordered{$table} = $node->safe_psql('postgres', "$planner_settings $sql");
}
is($ordered{w}, $ordered{w_bt}, 'w_k returns exactly what w_bt_k returns');
diag("w: $ordered{w} (rows, hash)");

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|TRAP/,
	'server log has no crash, PANIC or assertion failure');

$node->stop;
done_testing();
