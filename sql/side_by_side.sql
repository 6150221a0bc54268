--
-- side_by_side: fastbtree_twin() makes the twin of every index shape (the
-- catalog's definition of the twin is the original's in the other access
-- method), fastbtree.prefer plans a query on either side, and
-- fastbtree_compare() runs a query on both, refusing what is not a
-- read-only query and rows that differ.
--
CREATE SCHEMA fbt_side;
SET search_path = fbt_side, public;
-- (15 notes that a unique fastbtree index is no ON CONFLICT arbiter)
SET client_min_messages = warning;

CREATE TABLE t (a int4, b text, c int4, d date, e int8);
INSERT INTO t SELECT i, 'k' || (i % 1000), i % 7, date '2020-01-01' + i % 500,
	CASE WHEN i % 11 = 0 THEN NULL ELSE i % 300 END
FROM generate_series(1, 50000) i;
CREATE INDEX t_a ON t (a);
CREATE INDEX t_desc ON t (c DESC, e NULLS FIRST, a DESC NULLS LAST);
CREATE INDEX t_expr ON t (lower(b) text_pattern_ops, (c + 1) DESC NULLS LAST)
	INCLUDE (d) WITH (fillfactor = 70) WHERE c > 2;
CREATE UNIQUE INDEX t_u ON t (a, b COLLATE "C") NULLS NOT DISTINCT;
CREATE INDEX t_opts ON t (e) WITH (deduplicate_items = off, fillfactor = 50);
CREATE INDEX t_incl ON t (d) INCLUDE (a, b);
CREATE TABLE p (k int4, v text) PARTITION BY RANGE (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (1000);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (1000) TO (2000);
INSERT INTO p SELECT i, 'v' || i FROM generate_series(0, 1999) i;
CREATE INDEX p_k ON p (k, v);
ANALYZE t, p;

-- the twins
SELECT fastbtree_twin(i) FROM unnest('{t_a,t_desc,t_expr,t_u,t_opts,t_incl,p_k}'::regclass[]) i;
-- each twin's definition is its original's, but for the name and method
CREATE FUNCTION same_def(orig regclass, twin regclass) RETURNS bool
LANGUAGE sql AS $$
	SELECT replace(replace(pg_get_indexdef(orig),
						   ' USING ' || (SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.oid = orig) || ' ',
						   ' USING ' || (SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.oid = twin) || ' '),
				   'INDEX ' || orig::text || ' ON', 'INDEX ' || twin::text || ' ON')
		= pg_get_indexdef(twin)
$$;
SELECT o, same_def(o, (o::text || '_fbt')::regclass)
FROM unnest('{t_a,t_desc,t_expr,t_u,t_opts,t_incl,p_k}'::regclass[]) o;
-- so are the partitions' twins
SELECT c.relname, a.amname, pg_get_indexdef(c.oid) ~ ' USING fastbtree \(k, v\)' AS def
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_am a ON a.oid = c.relam
WHERE i.inhparent = 'p_k_fbt'::regclass ORDER BY 1;
-- the reverse: the btree twin of a fastbtree index
CREATE INDEX t_b_f ON t USING fastbtree (b COLLATE "C" DESC, a) WHERE a > 10;
SELECT fastbtree_twin('t_b_f');
SELECT same_def('t_b_f_bt', 't_b_f') AS reverse_same;
-- one twin is enough
SELECT fastbtree_twin('t_a');
-- CONCURRENTLY comes back to run at top level (\gexec); a name taken
-- gets a number
CREATE INDEX t_cc ON t (c, a);
CREATE INDEX t_cc_fbt ON t (a);
SELECT fastbtree_twin('t_cc', concurrently => true) \gexec
SELECT same_def('t_cc', 't_cc_fbt1') AS concurrent_twin_same;
DROP INDEX t_cc, t_cc_fbt, t_cc_fbt1;
-- refusals
CREATE INDEX t_hash ON t USING hash (a);
SELECT fastbtree_twin('t_hash');
DROP INDEX t_hash;
SELECT fastbtree_twin('t');
CREATE OPERATOR CLASS my_int4_ops FOR TYPE int4 USING btree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 btint4cmp(int4, int4);
CREATE INDEX t_mine ON t (c my_int4_ops);
SELECT fastbtree_twin('t_mine');
RESET client_min_messages;

-- choosing a side: the same query, planned on each
CREATE FUNCTION used(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	r text := '';
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l ~ 'Scan' THEN
			r := r || CASE WHEN r = '' THEN '' ELSE ' / ' END ||
				regexp_replace(l, '^.* (Scan|Scan Backward) (using|on) (\S+) on .*$', '\3');
		END IF;
	END LOOP;
	RETURN r;
END
$$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT s, used('SELECT * FROM t WHERE a = 5'),
	used('SELECT c, e, a FROM t WHERE c = 3 ORDER BY c DESC, e NULLS FIRST, a DESC NULLS LAST LIMIT 5'),
	used('SELECT d FROM t WHERE lower(b) ~>=~ ''k12'' AND lower(b) ~<~ ''k13'' AND c > 3'),
	used('SELECT * FROM p WHERE k = 1500')
FROM unnest('{btree,fastbtree,none}'::text[]) s,
	LATERAL set_config('fastbtree.prefer', s, false) x;
RESET fastbtree.prefer;
-- an index without a twin stays a candidate on either side
DROP INDEX t_desc_fbt;
SET fastbtree.prefer = fastbtree;
SELECT used('SELECT c, e, a FROM t WHERE c = 3 ORDER BY c DESC, e NULLS FIRST, a DESC NULLS LAST LIMIT 5');
RESET fastbtree.prefer;
SELECT fastbtree_twin('t_desc');

-- comparing one query: the sides, their indexes, sound figures
SELECT side, indexes, median_ms >= min_ms AND median_ms <= max_ms AS median_ok,
	shared_hit + shared_read > 0 AS buffers, speedup > 0 AS speedup_ok,
	(speedup_range IS NULL) = (side = 'btree') AS range_ok
FROM fastbtree_compare('SELECT * FROM t WHERE a BETWEEN 1000 AND 1100', 4);
SELECT side, indexes FROM fastbtree_compare($q$
	-- a comment first, and a trailing semicolon
	SELECT c, e, a FROM t WHERE c = 3 ORDER BY c DESC, e NULLS FIRST, a DESC NULLS LAST LIMIT 5;
$q$, 2);
SELECT side, indexes FROM fastbtree_compare('WITH x AS (SELECT k FROM p WHERE k BETWEEN 10 AND 1990) SELECT count(*) FROM x', 1);
-- no twin involved: the same index on both sides
-- (on an expression no other index has, so that the plan cannot choose
-- another one)
CREATE INDEX t_lone ON t ((e * 2), c);
SELECT side, indexes FROM fastbtree_compare('SELECT count(*) FROM t WHERE e * 2 = 10', 1);
-- within a transaction: settings and the transaction as before
BEGIN;
SELECT count(*) FROM fastbtree_compare('SELECT * FROM t WHERE a < 100', 2);
SHOW fastbtree.prefer;
SHOW transaction_read_only;
INSERT INTO t VALUES (100001, 'x', 1, NULL, NULL);
COMMIT;
-- refused: writes and what is not a query
SELECT * FROM fastbtree_compare('DELETE FROM t');
SELECT * FROM fastbtree_compare('WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d');
CREATE SEQUENCE sq;
SELECT * FROM fastbtree_compare('SELECT nextval(''sq'')');
SELECT * FROM fastbtree_compare('VACUUM t');
SELECT * FROM fastbtree_compare('SELECT 1', 0);
SELECT count(*) AS rows_kept FROM t WHERE a = 100001;
-- rows that differ: a "twin" whose entries are not its predicate's (its
-- catalog entry made to say c > 2 while it holds c > 3 only)
CREATE INDEX t_pa ON t (a) WHERE c > 2;
CREATE INDEX t_pa_fbt ON t USING fastbtree (a) WHERE c > 3;
UPDATE pg_index SET indpred = (SELECT indpred FROM pg_index WHERE indexrelid = 't_pa'::regclass)
WHERE indexrelid = 't_pa_fbt'::regclass;
SELECT * FROM fastbtree_compare('SELECT a FROM t WHERE c = 3 AND a < 500', 1);
DROP INDEX t_pa_fbt;
RESET enable_seqscan;
RESET enable_bitmapscan;

\i sql/include/check_all.sql
DROP SCHEMA fbt_side CASCADE;
