# t/020_atomic_pins.pl
#	Atomic pins (issue 27): every way out of a scan releases them, a
#	cleanup-lock waiter is woken, stale hints never give a wrong page.
#
# fastbtree pins hinted internal pages with one compare-and-swap on the
# buffer header, outside the buffer manager's private reference counts
# (fbtpin.c), and keeps those pins for a scan's lifetime.  One pin left
# behind would make DROP INDEX spin forever in DropRelationBuffers(), so:
#
# Part 1: a backend whose nested loop holds scan pins is cancelled
# (statement_timeout), fails with an error, rolls back a subtransaction
# around cursors (the cursor opened inside loses its pins, the one opened
# before keeps them and still reads the right rows), and is terminated.
# After each, pg_buffercache shows no pin left on any block of the index
# (pins are seen while the scans run, so the check can fail), and DROP
# INDEX from another session finishes.
#
# Part 2: VACUUM waiting for a cleanup lock on a page another backend has
# pinned atomically is woken when that pin goes.  Reader R stalls
# (fastbtree.debug_stall_lock, builds with assertions) inside its descent,
# holding atomic pins on the root and a level-1 page; VACUUM with
# fastbtree.debug_vacuum_cleanup_internal (assertions) waits for a cleanup
# lock on an internal page R pinned (wait event BufferPin); R's statement
# ends and VACUUM must finish: UnpinBuffer()'s wakeup, which a pin taken
# outside bufmgr has to do itself.
#
# Part 3: with shared_buffers at 1MB, twenty indexes and a churn of a table
# larger than the pool, the hints point at buffers evicted and reused for
# other pages; every probe answers as the btree twin does, and the
# counters show the misses.
#
# Runs with fastbtree.atomic_pins on (the default) or off (CI's switch-off
# run): the answers and the absence of leftover pins are the same.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('atomic_pins');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}

$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
shared_buffers = 32MB
# the paths under test, whatever the suite's settings; fastbtree.atomic_pins
# stays as the suite sets it (CI runs it off once)
fastbtree.recent_buffers = on
fastbtree.scan_pins = on
fastbtree.optimistic_reads = on
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE EXTENSION pg_buffercache;
CREATE TABLE t (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT g, g % 1000 FROM generate_series(1, 300000) g;
CREATE INDEX t_k ON t USING fastbtree (k);
VACUUM ANALYZE t;
-- pins on t_k's pages, all of them or the internal ones
CREATE FUNCTION pins(idx regclass, inner_only bool) RETURNS bigint
LANGUAGE sql AS $$
SELECT coalesce(sum(b.pinning_backends), 0)
FROM pg_buffercache b
WHERE b.relfilenode = pg_relation_filenode(idx)
	AND b.reldatabase = (SELECT oid FROM pg_database
						 WHERE datname = current_database())
	AND b.relforknumber = 0
	AND b.pinning_backends > 0
	AND (NOT inner_only OR
		 (b.relblocknumber > 0 AND
		  (fastbtree_page_stats(idx, b.relblocknumber)).type IN ('r', 'i')))
$$;
});
is($node->safe_psql('postgres', "SELECT level FROM fastbtree_metap('t_k')"),
	'2', 't_k has three levels');

my $session_setup = q{
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
};
# a nested loop probing t_k once per outer row
my $nestloop = q{
SELECT count(*), sum(t.v) FROM generate_series(1, %d) g JOIN t ON t.k = g %s};

# no pin left on t_k, and DROP INDEX of a copy would not wait: checked by
# dropping a fresh index of the same table in the next part's setup
sub no_pins_left
{
	my ($what) = @_;
	is($node->safe_psql('postgres', "SELECT pins('t_k', false)"),
		'0', "$what: no pin left on any block of t_k");
}

# a setting of fastbtree's in a new session ('' if it has no such setting,
# as a build without assertions has no debug settings): the library is
# loaded first, since a session that has not used it does not know them
sub fbt_setting
{
	my ($name) = @_;
	my $out = $node->safe_psql('postgres',
		"SELECT descents >= 0 FROM fastbtree_stats();\n"
		  . "SELECT coalesce(current_setting('$name', true), '')");
	my @lines = split /\n/, $out, -1;
	return $lines[1] // '';
}

# run sql in background session $bg, expecting an error matching $re
sub expect_error
{
	my ($bg, $sql, $re, $name) = @_;
	$bg->query($sql);
	like($bg->{stderr}, $re, $name);
	$bg->{stderr} = '';
}

# run $sql in background session $bg (backend $pid), which must stall on
# the advisory lock $key (fastbtree.debug_stall_lock) another session holds
sub start_stalled
{
	my ($bg, $pid, $key, $sql) = @_;
	$bg->query_until(qr/started/, "\\echo started\n$sql;\n");
	$node->poll_query_until(
		'postgres', qq{
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND pid = $pid AND objid = $key AND NOT granted},
		'1') or die "no stall: $sql";
}

# is backend $pid idle within 5 s?  (A VACUUM woken by an unpin finishes at
# once; not woken, it sleeps until something else sets its latch, about
# 10 s here.)
sub idle_soon
{
	my ($pid) = @_;
	my $start = time;
	while (time - $start < 5)
	{
		return 1
		  if $node->safe_psql('postgres',
			"SELECT state FROM pg_stat_activity WHERE pid = $pid") eq 'idle';
		select(undef, undef, undef, 0.05);
	}
	return 0;
}

# ---- Part 1 ----
my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe($session_setup);
like(
	$s->query_safe("EXPLAIN (COSTS OFF) " . sprintf($nestloop, 1000, '')),
	qr/Nested Loop.*Index Scan using t_k/s,
	'the probe is a nested loop over t_k');
# warm the backend's hints: later descents pin through them
is($s->query_safe(sprintf($nestloop, 1000, '')), '1000|499500',
	'nested loop answers');

# a cursor shows the scan pins held between fetches
$s->query_safe("BEGIN");
$s->query_safe(
	"DECLARE b CURSOR FOR SELECT t.k FROM generate_series(1, 1000) g JOIN t ON t.k = g * 7"
);
is($s->query_safe("FETCH 5 FROM b"), "7\n14\n21\n28\n35", 'cursor b reads');
my $inner_a = $node->safe_psql('postgres', "SELECT pins('t_k', true)");
cmp_ok($inner_a, '>=', 2,
	"an open cursor's scan keeps internal pages pinned ($inner_a pins)");

# subtransaction: cursor c opened inside loses its pins, b keeps its own
$s->query_safe("SAVEPOINT sp");
$s->query_safe("DECLARE c CURSOR FOR SELECT t.k FROM generate_series(1, 1000) g JOIN t ON t.k = g * 11;");
is($s->query_safe("FETCH 3 FROM c"), "11\n22\n33", 'cursor c reads');
is($s->query_safe("FETCH 2 FROM b"), "42\n49", 'cursor b reads in the subtransaction');
my $inner_bc = $node->safe_psql('postgres', "SELECT pins('t_k', true)");
# one backend's buffer-manager pins on a buffer count once in
# pinning_backends (its shared refcount), atomic pins once each
my $atomic = $s->query_safe("SHOW fastbtree.atomic_pins");
cmp_ok($inner_bc, $atomic eq 'on' ? '>' : '==', $inner_a,
	"both cursors hold internal pins ($inner_bc; atomic pins $atomic)");
expect_error($s, 'SELECT 1 / 0', qr/division by zero/,
	'an error in the subtransaction');
$s->query_safe("ROLLBACK TO sp");
is($node->safe_psql('postgres', "SELECT pins('t_k', true)"),
	$inner_a, 'rolled back: the subtransaction\'s cursor left no pin');
is($s->query_safe("FETCH 2 FROM b"), "56\n63",
	'cursor b still reads the right rows');
$s->query_safe("CLOSE b");
$s->query_safe("COMMIT");
no_pins_left('cursors closed');

# an error in the middle of the nested loop (the outer side divides by 0)
expect_error($s, sprintf($nestloop, 1000, 'WHERE 1 / (g - 500) > -5'),
	qr/division by zero/, 'error mid nested loop');
no_pins_left('after the error');

# statement_timeout in the middle of the nested loop
$s->query_safe("SET statement_timeout = '300ms'");
expect_error(
	$s,
	sprintf($nestloop, 10000000, 'WHERE pg_sleep(0.00001) IS NOT NULL'),
	qr/canceling statement due to statement timeout/,
	'statement_timeout mid nested loop');
$s->query_safe("RESET statement_timeout");
no_pins_left('after the cancel');
is($s->query_safe(sprintf($nestloop, 1000, '')), '1000|499500',
	'the session goes on with the right answers');

# terminated in the middle of the nested loop
my $s_pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_until(qr/started/,
	"\\echo started\n"
	  . sprintf($nestloop, 10000000, 'WHERE pg_sleep(0.00001) IS NOT NULL')
	  . ";\n");
ok( $node->poll_query_until(
		'postgres', "SELECT pins('t_k', true) > 0", 't'),
	'the long nested loop holds internal pins');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($s_pid)");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $s_pid", 't'),
	'the terminated backend is gone');
eval { $s->quit; };
no_pins_left('after pg_terminate_backend');

my ($ret, $out, $stderr) = $node->psql(
	'postgres', 'CREATE INDEX t_k2 ON t USING fastbtree (k); DROP INDEX t_k2; DROP INDEX t_k',
	timeout => 60);
is($ret, 0, 'DROP INDEX from another session finishes');

# ---- Part 2 ----
$node->safe_psql('postgres', 'CREATE INDEX t_k ON t USING fastbtree (k)');
my $has_stall = fbt_setting('fastbtree.debug_stall_lock') eq '' ? '0' : '1';
SKIP:
{
	skip 'fastbtree built without assertions: no stall to hold the pin', 5
	  unless $has_stall eq '1';

	my $r = $node->background_psql('postgres');
	my $r_pid = $r->query_safe('SELECT pg_backend_pid()');
	$r->query_safe($session_setup);
	# dead rows, so that VACUUM scans the index
	$node->safe_psql('postgres', 'DELETE FROM t WHERE k % 100 = 0');
	# warm the hints, then stall the next descent on a level-1 page
	is($r->query_safe('SELECT v FROM t WHERE k = 170003'), '3', 'R reads');
	$r->query_safe(
		'SET fastbtree.debug_stall_lock = 7401; SET fastbtree.debug_stall_level = 1'
	);
	my $ctl = $node->background_psql('postgres');
	$ctl->query_safe('SELECT pg_advisory_lock(7401)');
	start_stalled($r, $r_pid, 7401, 'SELECT v FROM t WHERE k = 170001');
	is( $node->safe_psql(
			'postgres', q{
SELECT string_agg(ty, '' ORDER BY ty) FROM (
SELECT (fastbtree_page_stats('t_k', relblocknumber)).type::text AS ty
FROM pg_buffercache
WHERE relfilenode = pg_relation_filenode('t_k') AND pinning_backends > 0) s}),
		'ir',
		'R holds the root and a level-1 page pinned');

	my $v = $node->background_psql('postgres');
	my $v_pid = $v->query_safe('SELECT pg_backend_pid()');
	$v->query_safe('SET fastbtree.debug_vacuum_cleanup_internal = on');
	$v->query_until(qr/started/, "\\echo started\nVACUUM t;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event FROM pg_stat_activity WHERE pid = $v_pid",
			'BufferPin'),
		'VACUUM waits for a cleanup lock on a page R pinned');

	$ctl->query_safe('SELECT pg_advisory_unlock(7401)');
	ok(idle_soon($v_pid), 'VACUUM is woken when the atomic pin goes');
	$r->query_safe('RESET fastbtree.debug_stall_lock');
	is($r->query_safe('SELECT v FROM t WHERE k = 170002'), '2',
		'R reads after the stall');
	$_->quit for ($r, $ctl);
	eval { $v->quit; };
}
no_pins_left('after part 2');

# ---- Part 2c: a leaf pinned atomically through its leaf hint ----
# A plain index scan (its leaf pin dropped after the read) pins a hinted
# leaf atomically, without the buffer-mapping lookup.  R stalls between
# that pin and the leaf's lock (fastbtree.debug_stall_level = 0): VACUUM
# waiting for the leaf's cleanup lock is woken when the pin goes, and a
# cancel during the stall (an error while the pin is held) leaves no pin.
my $atomic_on = fbt_setting('fastbtree.atomic_pins');
SKIP:
{
	skip 'needs the stall (assertions) and atomic pins', 10
	  unless $has_stall eq '1' && $atomic_on eq 'on';

	my $r = $node->background_psql('postgres', on_error_stop => 0);
	my $r_pid = $r->query_safe('SELECT pg_backend_pid()');
	$r->query_safe($session_setup);
	$node->safe_psql('postgres', 'DELETE FROM t WHERE k % 100 = 1');
	is($r->query_safe('SELECT v FROM t WHERE k = 170003'), '3', 'R reads');
	my $hits0 = $r->query_safe('SELECT leaf_hint_hits FROM fastbtree_stats()');
	is($r->query_safe('SELECT v FROM t WHERE k = 170005'), '5',
		'R reads the same leaf');
	cmp_ok($r->query_safe('SELECT leaf_hint_hits FROM fastbtree_stats()'),
		'>', $hits0, 'the second probe pinned the leaf through its hint');
	$r->query_safe(
		'SET fastbtree.debug_stall_lock = 7402; SET fastbtree.debug_stall_level = 0'
	);
	my $ctl = $node->background_psql('postgres');
	$ctl->query_safe('SELECT pg_advisory_lock(7402)');
	start_stalled($r, $r_pid, 7402, 'SELECT v FROM t WHERE k = 170002');
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM pg_buffercache
WHERE relfilenode = pg_relation_filenode('t_k') AND pinning_backends > 0
	AND relblocknumber > 0
	AND (fastbtree_page_stats('t_k', relblocknumber)).type = 'l'}),
		'1',
		'R holds the leaf pinned');

	my $v = $node->background_psql('postgres');
	my $v_pid = $v->query_safe('SELECT pg_backend_pid()');
	$v->query_until(qr/started/, "\\echo started\nVACUUM t;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event FROM pg_stat_activity WHERE pid = $v_pid",
			'BufferPin'),
		'VACUUM waits for the cleanup lock of the leaf R pinned');
	$ctl->query_safe('SELECT pg_advisory_unlock(7402)');
	ok(idle_soon($v_pid), 'VACUUM is woken when the atomic leaf pin goes');
	eval { $v->quit; };

	# cancelled while it holds the atomic leaf pin; VACUUM's relcache
	# invalidation (new relpages) emptied R's hints: one probe refills them
	$r->query_safe('RESET fastbtree.debug_stall_lock');
	is($r->query_safe('SELECT v FROM t WHERE k = 170006'), '6',
		'R reads after VACUUM');
	$r->query_safe('SET fastbtree.debug_stall_lock = 7402');
	$ctl->query_safe('SELECT pg_advisory_lock(7402)');
	start_stalled($r, $r_pid, 7402, 'SELECT v FROM t WHERE k = 170004');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($r_pid)");
	$ctl->query_safe('SELECT pg_advisory_unlock(7402)');
	$r->query('RESET fastbtree.debug_stall_lock');
	like($r->{stderr}, qr/canceling statement due to user request/,
		'R was cancelled holding the atomic leaf pin');
	no_pins_left('after the cancel on the leaf');
	$r->{stderr} = '';
	is($r->query_safe('SELECT v FROM t WHERE k = 170004'), '4',
		'R reads after the cancel');
	$_->quit for ($r, $ctl);
}
no_pins_left('after part 2c');

# ---- Part 2b: the root as warm as btree's (issue 27, item 2) ----
# After a restart (an empty pool), one session probes a fastbtree index
# and its btree twin 10 times each: the roots' usage counts must be equal.
# Through ReadRecentBuffer() (atomic pins off) the hinted root kept the
# usage count of its first read.
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION pageinspect;
CREATE TABLE tb (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO tb SELECT k, v FROM t;
CREATE INDEX tb_k ON tb USING btree (k);
});
my $root_usage = q{
SELECT (SELECT usagecount FROM pg_buffercache
		WHERE relfilenode = pg_relation_filenode('t_k')
		AND relblocknumber = (SELECT root FROM fastbtree_metap('t_k')))
	|| '/' ||
	(SELECT usagecount FROM pg_buffercache
		WHERE relfilenode = pg_relation_filenode('tb_k')
		AND relblocknumber = (SELECT root FROM bt_metap('tb_k')))};
for my $atomic ('on', 'off')
{
	$node->restart;
	my $probes = "SET fastbtree.atomic_pins = $atomic; SET enable_seqscan = off; SET enable_bitmapscan = off;\n";
	$probes .= "SELECT v FROM t WHERE k = " . ($_ * 1000) . ";\nSELECT v FROM tb WHERE k = " . ($_ * 1000) . ";\n"
	  for 1 .. 10;
	$node->safe_psql('postgres', $probes);
	my ($f, $b) = split m{/}, $node->safe_psql('postgres', $root_usage);
	if ($atomic eq 'on')
	{
		is($f, $b, "atomic pins: the root's usage count is btree's ($f, $b)");
	}
	else
	{
		note "through ReadRecentBuffer(): root usage count $f, btree's $b";
	}
}

# ---- Part 3 ----
$node->append_conf('postgresql.conf', "shared_buffers = 1MB\n");
$node->restart;
my $ntab = 20;
my $setup = '';
for my $i (1 .. $ntab)
{
	$setup .= qq{
CREATE TABLE f$i (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO f$i SELECT g * $i, g FROM generate_series(1, 30000) g;
CREATE INDEX f${i}_k ON f$i USING fastbtree (k);
CREATE TABLE b$i (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO b$i SELECT g * $i, g FROM generate_series(1, 30000) g;
CREATE INDEX b${i}_k ON b$i USING btree (k);
};
}
$setup .= q{
CREATE TABLE churn (x int4, pad text);
INSERT INTO churn SELECT g, repeat('x', 200) FROM generate_series(1, 60000) g;
CREATE INDEX churn_x ON churn USING btree (x);
VACUUM ANALYZE;
};
$node->safe_psql('postgres', $setup);

# The planner's view of fastbtree as btree stays on in this session: with it
# off (CI's switch-off run), planning each probe (every EXECUTE is planned
# afresh) found the roots through a fresh hint after the churn, and no
# stale hint was ever followed (seen: 0 misses in 9,600 descents with every
# root out of the pool after each churn).
my $probe = qq{
SET fastbtree.plan_as_btree = on;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO \$\$
DECLARE
	a bigint;
	b bigint;
	key int;
BEGIN
	FOR round IN 1 .. 6 LOOP
		FOR i IN 1 .. $ntab LOOP
			FOR j IN 1 .. 40 LOOP
				key := (random() * 30000 * i)::int;
				EXECUTE format('SELECT coalesce(sum(v), -1) FROM f%s WHERE k = \$1', i)
					INTO a USING key;
				EXECUTE format('SELECT coalesce(sum(v), -1) FROM b%s WHERE k = \$1', i)
					INTO b USING key;
				IF a IS DISTINCT FROM b THEN
					RAISE EXCEPTION 'f% key %: % where btree has %', i, key, a, b;
				END IF;
				EXECUTE format('SELECT count(*) FROM f%s WHERE k BETWEEN \$1 AND \$1 + 500', i)
					INTO a USING key;
				EXECUTE format('SELECT count(*) FROM b%s WHERE k BETWEEN \$1 AND \$1 + 500', i)
					INTO b USING key;
				IF a IS DISTINCT FROM b THEN
					RAISE EXCEPTION 'f% range at %: % rows where btree has %', i, key, a, b;
				END IF;
			END LOOP;
		END LOOP;
		-- evict: the pool holds 128 pages; an index scan reads churn's
		-- 1,800 heap pages without the ring buffer a large seq scan uses,
		-- over ten sweeps of the clock: enough to take even a root at the
		-- highest usage count (5) out of the pool every round (600 pages,
		-- about five sweeps, left some roots in place on some runs)
		PERFORM sum(length(pad)) FROM churn WHERE x > 0;
	END LOOP;
END
\$\$;
SELECT recent_buffer_hits > 0, recent_buffer_misses > 0 FROM fastbtree_stats();
SELECT leaf_hint_hits, leaf_hint_misses FROM fastbtree_stats();
};
my ($pret, $pout, $perr) = $node->psql('postgres', $probe);
is($pret, 0, 'tiny pool with churn: every probe equals btree\'s')
  or diag($perr);
my ($hint_line, $leaf_line) = split /\n/, $pout;
is($hint_line, 't|t', 'the hints hit, and missed buffers evicted and reused');
my ($leaf_hits, $leaf_misses) = split /\|/, $leaf_line // '';
note("leaf hints: $leaf_hits hits, $leaf_misses misses");
SKIP:
{
	skip 'atomic pins off: no leaf hints', 2 unless $atomic_on eq 'on';
	cmp_ok($leaf_hits, '>', 0, 'leaves pinned through leaf hints');
	cmp_ok($leaf_misses, '>', 0,
		'leaf hints to buffers evicted and reused missed');
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_buffercache b JOIN pg_class c
	ON b.relfilenode = pg_relation_filenode(c.oid)
WHERE c.relname LIKE 'f%\_k' AND b.pinning_backends > 0}),
	'0',
	'no block of the twenty indexes left pinned');

done_testing();
