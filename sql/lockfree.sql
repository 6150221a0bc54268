--
-- lockfree: the lock-free descent (README.design "Pins", "Optimistic
-- reads").  On an index nobody writes, every internal page of every
-- descent is searched without a lock and validated on the first try, the
-- answers are btree's, and each switch turns its mechanism off alone; the
-- counters of fastbtree_stats() prove which path ran.  Keys that are not
-- fixed-width, NULLs among compared pivot columns and searches for NULL use
-- the share lock.
--
CREATE SCHEMA fbt_lockfree;
SET search_path = fbt_lockfree, public;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 0;
-- the settings under test, whatever the server's defaults are
SET fastbtree.recent_buffers = on;
SET fastbtree.scan_pins = on;
SET fastbtree.optimistic_reads = on;
SET fastbtree.atomic_pins = on;

-- leaves at fillfactor 10: three levels with 60k rows
CREATE TABLE lf (k int4, k8 int8, f float8, t text, n int4, nf int4,
	k2 int4, n2 int4) WITH (autovacuum_enabled = off);
INSERT INTO lf
SELECT g, g::int8 * 1000, g / 7.0, 'key ' || g,
	CASE WHEN g % 3 = 0 THEN g END, CASE WHEN g % 3 = 0 THEN g END,
	g / 10 * 10, CASE WHEN g % 10 = 0 THEN g END
FROM generate_series(1, 60000) g;
CREATE TABLE lb (LIKE lf) WITH (autovacuum_enabled = off);
INSERT INTO lb SELECT * FROM lf;
CREATE INDEX lf_k ON lf USING fastbtree (k) WITH (fillfactor = 10);
CREATE INDEX lf_k8f ON lf USING fastbtree (k8 DESC, f) WITH (fillfactor = 10);
CREATE INDEX lf_t ON lf USING fastbtree (t) WITH (fillfactor = 10);
CREATE INDEX lf_n ON lf USING fastbtree (n) WITH (fillfactor = 10);
CREATE INDEX lf_nf ON lf USING fastbtree (nf NULLS FIRST) WITH (fillfactor = 10);
CREATE INDEX lf_k2n2 ON lf USING fastbtree (k2, n2) WITH (fillfactor = 10);
CREATE INDEX lb_k ON lb USING btree (k) WITH (fillfactor = 10);
CREATE INDEX lb_k8f ON lb USING btree (k8 DESC, f);
CREATE INDEX lb_t ON lb USING btree (t);
CREATE INDEX lb_n ON lb USING btree (n);
CREATE INDEX lb_nf ON lb USING btree (nf NULLS FIRST);
CREATE INDEX lb_k2n2 ON lb USING btree (k2, n2);
VACUUM ANALYZE lf;
VACUUM ANALYZE lb;
SELECT i, level FROM unnest(ARRAY['lf_k', 'lf_k8f', 'lf_t', 'lf_n', 'lf_nf',
	'lf_k2n2']) i,
	fastbtree_metap(i::regclass);

-- Counters moved by running query template q (with @ for the table) n
-- times, with $1 = 1 .. n, and whether its results equal btree's (lb).
-- The query runs as a prepared statement with a generic plan, made before
-- the counters are read: planning must not count, and PostgreSQL 18's
-- planner reads an ordered index's actual minimum or maximum (as 15's does
-- for btree only) when a constant falls at the histogram's ends.
CREATE FUNCTION run(q text, n int,
	OUT descents bigint, OUT validated bigint, OUT retried bigint,
	OUT fallbacks bigint, OUT unsupported bigint, OUT locked bigint,
	OUT recent_hits bigint, OUT pin_reuses bigint, OUT pins_taken bigint,
	OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	s0 record;
	s1 record;
	a text;
	b text;
	i int;
BEGIN
	same := true;
	SET LOCAL plan_cache_mode = force_generic_plan;
	EXECUTE 'PREPARE run_lf(int) AS SELECT (' || replace(q, '@', 'lf') || ')::text';
	EXECUTE 'EXPLAIN (COSTS OFF) EXECUTE run_lf(1)';
	SELECT * INTO s0 FROM fastbtree_stats();
	FOR i IN 1 .. n LOOP
		EXECUTE 'EXECUTE run_lf(' || i || ')' INTO a;
	END LOOP;
	SELECT * INTO s1 FROM fastbtree_stats();
	FOR i IN 1 .. n LOOP
		EXECUTE 'EXECUTE run_lf(' || i || ')' INTO a;
		EXECUTE 'SELECT (' || replace(q, '@', 'lb') || ')::text' INTO b USING i;
		same := same AND a IS NOT DISTINCT FROM b;
	END LOOP;
	DEALLOCATE run_lf;
	descents := s1.descents - s0.descents;
	validated := s1.optimistic_validated - s0.optimistic_validated;
	retried := s1.optimistic_retried - s0.optimistic_retried;
	fallbacks := (s1.fallback_odd + s1.fallback_changed + s1.fallback_bounds)
		- (s0.fallback_odd + s0.fallback_changed + s0.fallback_bounds);
	unsupported := s1.fallback_unsupported - s0.fallback_unsupported;
	locked := s1.locked_inner - s0.locked_inner;
	recent_hits := s1.recent_buffer_hits - s0.recent_buffer_hits;
	pin_reuses := s1.scan_pin_reuses - s0.scan_pin_reuses;
	pins_taken := s1.scan_pins_taken - s0.scan_pins_taken;
END $$;

-- Point lookups spread over the whole key range, including the smallest
-- keys (below every pivot: the minus-infinity downlink), the largest, and
-- keys outside the range: 2 internal pages per descent, all unlocked.
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ($1 * 7919) % 60003 - 1$$, 300);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = $1$$, 50);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = 60001 - $1$$, 50);
-- ranges, both directions, and cross-type keys
SELECT * FROM run($$SELECT sum(k) FROM (SELECT k FROM @ WHERE k >= $1 * 200 ORDER BY k LIMIT 5) s$$, 100);
SELECT * FROM run($$SELECT sum(k) FROM (SELECT k FROM @ WHERE k < $1 * 200 ORDER BY k DESC LIMIT 5) s$$, 100);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ($1 * 131)::int8$$, 100);
-- two columns, the first DESC; a second-column bound
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k8 = $1 * 599000 AND f >= $1 * 599 / 7.0$$, 100);

-- a nested loop: one scan, 500 rescans; its internal pages are pinned
-- once, then reused
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SELECT * FROM run($$SELECT count(*) FROM generate_series($1, 500 * 119 + $1, 119) g JOIN @ ON @.k = g$$, 3);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ANY (ARRAY[$1, $1 + 20000, $1 + 40000, $1 + 59999])$$, 50);

-- a reused pin counts as the pin btree takes: the inner scan's shared hits
-- in EXPLAIN (BUFFERS) equal btree's (3 per probe)
CREATE FUNCTION inner_hits(tab text) RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
	plan json;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) '
				   'SELECT count(*) FROM generate_series(1, 500 * 119, 119) g '
				   'JOIN %I ON %I.k = g', tab, tab) INTO plan;
	RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 1
			->> 'Shared Hit Blocks')::bigint;
END $f$;
SELECT inner_hits('lf') AS fastbtree_hits, inner_hits('lb') AS btree_hits;

-- text keys are never compared unlocked: every internal page share-locked
SELECT * FROM run($$SELECT count(*) FROM @ WHERE t = 'key ' || ($1 * 37)$$, 100);
-- searches for NULL use the lock; pivots whose first column is NULL are
-- compared unlocked (NULLS LAST: above every key; NULLS FIRST: below), a
-- NULL in a later column needs the lock
SELECT * FROM run($$SELECT count(*) FROM (SELECT 1 FROM @ WHERE n IS NULL LIMIT 3) s$$, 20);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE n > 60000 - $1$$, 20);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE n = $1 * 300$$, 100);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE nf = $1 * 300$$, 100);
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k2 = $1 * 10 AND n2 = $1 * 10$$, 100);

-- each switch alone
SET fastbtree.optimistic_reads = off;
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ($1 * 7919) % 60003 - 1$$, 100);
SET fastbtree.optimistic_reads = on;
SET fastbtree.scan_pins = off;
SELECT * FROM run($$SELECT count(*) FROM generate_series($1, 500 * 119 + $1, 119) g JOIN @ ON @.k = g$$, 3);
SET fastbtree.scan_pins = on;
-- hinted pages through ReadRecentBuffer(): every 16th use of a hint
-- through ReadBuffer() (the usage count), so fewer hits
SET fastbtree.atomic_pins = off;
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ($1 * 7919) % 60003 - 1$$, 100);
SET fastbtree.atomic_pins = on;
SET fastbtree.recent_buffers = off;
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = ($1 * 7919) % 60003 - 1$$, 100);
SET fastbtree.optimistic_reads = off;
SET fastbtree.scan_pins = off;
-- all three off: btree's path
SELECT * FROM run($$SELECT count(*) FROM generate_series($1, 500 * 119 + $1, 119) g JOIN @ ON @.k = g$$, 3);
SET fastbtree.recent_buffers = on;
SET fastbtree.scan_pins = on;
SET fastbtree.optimistic_reads = on;

-- Plain index scans read fixed-width leaf items without the attribute walk:
-- the item stored last on each leaf, at the page's end, must pass, with
-- and without NULLs (a bound with worst-case padding refused it).
SET enable_indexonlyscan = off;
CREATE TABLE m3 (a int4, b int4, c int4) WITH (autovacuum_enabled = off);
INSERT INTO m3 SELECT g, g, g FROM generate_series(1, 3000) g;
CREATE INDEX m3_f ON m3 USING fastbtree (a, b, c);
CREATE TABLE m7 (a int4, b int8, c int8, d int8, e int8, f int8, g int2)
	WITH (autovacuum_enabled = off);
INSERT INTO m7 SELECT g, g, CASE WHEN g % 2 = 0 THEN g END,
	CASE WHEN g % 3 = 0 THEN g END, NULL, CASE WHEN g % 5 = 0 THEN g END, 1
FROM generate_series(1, 3000) g;
CREATE INDEX m7_f ON m7 USING fastbtree (a, b, c, d, e, f, g);
CREATE TABLE m3b AS SELECT * FROM m3;
CREATE INDEX m3_b ON m3b USING btree (a, b, c);
CREATE TABLE m7b AS SELECT * FROM m7;
CREATE INDEX m7_b ON m7b USING btree (a, b, c, d, e, f, g);
EXPLAIN (COSTS OFF) SELECT count(*), sum(c) FROM m3 WHERE a >= 0;
SELECT count(*), sum(c) FROM m3 WHERE a >= 0;
SELECT count(*), sum(c) FROM m3b WHERE a >= 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(c), sum(d), sum(f) FROM m7 WHERE a >= 0;
SELECT count(*), sum(c), sum(d), sum(f) FROM m7 WHERE a >= 0;
SELECT count(*), sum(c), sum(d), sum(f) FROM m7b WHERE a >= 0;
SELECT count(*), sum(c), sum(d), sum(f) FROM m7 WHERE a < 3001 AND b > 10;
SELECT count(*), sum(c), sum(d), sum(f) FROM m7b WHERE a < 3001 AND b > 10;
RESET enable_indexonlyscan;

-- inserts descend unlocked too, and split pages on every level meanwhile
SELECT s.optimistic_validated AS v0 FROM fastbtree_stats() s \gset
INSERT INTO lf SELECT g, g, g, 'ins ' || g, g, g, g, g FROM generate_series(70001, 100000) g;
INSERT INTO lb SELECT g, g, g, 'ins ' || g, g, g, g, g FROM generate_series(70001, 100000) g;
SELECT s.optimistic_validated - :v0 >= 2 * 30000 AS inserts_unlocked
FROM fastbtree_stats() s;
SELECT * FROM run($$SELECT count(*) FROM @ WHERE k = 60000 + $1 * 100$$, 100);

\i sql/include/check_all.sql
DROP SCHEMA fbt_lockfree CASCADE;
