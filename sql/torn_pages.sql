--
-- torn_pages: the search of internal pages without their content lock
-- (_fbt_search_inner_unlocked) on mutated copies of real internal pages
-- (wild header fields and line pointers, odd tuple lengths, garbage keys,
-- torn and random pages) answers only "found", "bounds" or "unsupported":
-- it never crashes or reads outside the page (the copies sit between
-- PROT_NONE guards, so a stray read would kill the backend and fail this
-- test), and on unmodified copies it gives exactly the locked search's
-- answer (offset, downlink, move-right).
--
-- Needs an assert-enabled build (scripts/test.sh and .ci/run build with
-- -DUSE_ASSERT_CHECKING): fastbtree_fuzz_unlocked() exists only there and
-- is not part of the extension script.
--
-- (Deduplication off: the shapes below count on separate entries.)
CREATE SCHEMA fbt_torn;
SET search_path = fbt_torn, public;

CREATE FUNCTION fastbtree_fuzz_unlocked(index regclass, iterations int8,
	seed int8,
	OUT pages int8, OUT iterations int8, OUT ok int8, OUT bounds int8,
	OUT unsupported int8, OUT unmodified_checked int8,
	OUT unmodified_unsupported int8, OUT unmodified_mismatch int8)
AS '$libdir/fastbtree', 'fastbtree_fuzz_unlocked'
LANGUAGE C STRICT;

-- One fuzz run: each result happened (found: the answer is used; bounds
-- and unsupported: the caller falls back to the share lock), unmodified
-- copies were checked (about one iteration in eight), some met NULL pivot
-- keys (only where the index has them), and all agreed with the locked
-- search.
CREATE FUNCTION fuzz(idx regclass, n int8, seed int8,
	OUT iterations int8, OUT found boolean, OUT bounds boolean,
	OUT unsupported boolean, OUT checked boolean,
	OUT checked_unsupported boolean, OUT mismatches int8)
LANGUAGE sql AS $$
	SELECT f.iterations, f.ok > 0, f.bounds > 0, f.unsupported > 0,
		f.unmodified_checked > n / 10, f.unmodified_unsupported > 0,
		f.unmodified_mismatch
	FROM fastbtree_fuzz_unlocked(idx, n, seed) f
$$;

-- levels and internal pages of an index
CREATE FUNCTION shape(idx regclass, OUT levels int4, OUT internal_pages int8)
LANGUAGE sql AS $$
	SELECT m.level + 1, f.pages
	FROM fastbtree_metap(idx) m, fastbtree_fuzz_unlocked(idx, 0, 0) f
$$;

-- Leaves at fillfactor 10 give trees of 3 levels with few rows; inserts
-- after the build split leaves and internal pages; duplicates make pivots
-- that keep a heap TID.

-- int4, one column
CREATE TABLE t4 (k int4) WITH (autovacuum_enabled = off);
INSERT INTO t4 SELECT g % 7000 FROM generate_series(1, 30000) g;
CREATE INDEX t4_f ON t4 USING fastbtree (k) WITH (fillfactor = 10, deduplicate_items = off);
INSERT INTO t4 SELECT (g * 7919) % 9000 FROM generate_series(1, 10000) g;
SELECT * FROM shape('t4_f');

-- int8 and int4 DESC
CREATE TABLE t84 (a int8, b int4) WITH (autovacuum_enabled = off);
INSERT INTO t84 SELECT g / 50 * 1000000007::int8, g % 97
FROM generate_series(1, 20000) g;
CREATE INDEX t84_f ON t84 USING fastbtree (a, b DESC) WITH (fillfactor = 10, deduplicate_items = off);
INSERT INTO t84 SELECT (g % 300) * 1000000007::int8, (g * 31) % 97
FROM generate_series(1, 8000) g;
SELECT * FROM shape('t84_f');

-- float8 with NaN, infinities, -0 and 0
CREATE TABLE tf (x float8) WITH (autovacuum_enabled = off);
INSERT INTO tf
SELECT CASE g % 8 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN '0'
	WHEN 3 THEN 'Infinity' WHEN 4 THEN '-Infinity'
	ELSE (g % 1000) / 7.0 - 60 END
FROM generate_series(1, 25000) g;
CREATE INDEX tf_f ON tf USING fastbtree (x) WITH (fillfactor = 10, deduplicate_items = off);
INSERT INTO tf SELECT CASE WHEN g % 3 = 0 THEN 'NaN'::float8
	ELSE -(g % 500) / 3.0 END
FROM generate_series(1, 8000) g;
SELECT * FROM shape('tf_f');

-- NULL keys: runs of NULLs longer than a leaf make pivots with NULLs.  A
-- NULL first column is compared unlocked (tn_f: no unmodified page is
-- "unsupported"); NULLs in later columns are left to the locked search
-- (tn_ab_f: "unsupported")
CREATE TABLE tn (a int4, b int2) WITH (autovacuum_enabled = off);
INSERT INTO tn
SELECT CASE WHEN g % 5 < 2 THEN NULL ELSE g % 3000 END,
	CASE WHEN g % 3 = 0 THEN NULL ELSE g % 50 END
FROM generate_series(1, 25000) g;
CREATE INDEX tn_f ON tn USING fastbtree (a) WITH (fillfactor = 10, deduplicate_items = off);
CREATE INDEX tn_ab_f ON tn USING fastbtree (a NULLS FIRST, b)
	WITH (fillfactor = 10, deduplicate_items = off);
INSERT INTO tn SELECT NULLIF(g % 4000, 7), NULLIF(g % 10, 3)
FROM generate_series(1, 6000) g;
SELECT * FROM shape('tn_f');
SELECT * FROM shape('tn_ab_f');

-- timestamptz, float4 DESC, int2: the other machine kinds
CREATE TABLE tt (ts timestamptz, f float4, s int2)
	WITH (autovacuum_enabled = off);
INSERT INTO tt
SELECT timestamptz '2024-01-01 00:00:00+00' + (g / 20) * interval '1 hour',
	CASE WHEN g % 11 = 0 THEN 'NaN'::float4 ELSE (g % 37)::float4 / 3 END,
	(g % 7 - 3)::int2
FROM generate_series(1, 20000) g;
CREATE INDEX tt_f ON tt USING fastbtree (ts, f DESC, s)
	WITH (fillfactor = 10, deduplicate_items = off);
SELECT * FROM shape('tt_f');

-- the fuzz: a fixed seed per index, 3.5 million iterations in all
SELECT * FROM fuzz('t4_f', 1000000, 1);
SELECT * FROM fuzz('t84_f', 600000, 2);
SELECT * FROM fuzz('tf_f', 600000, 3);
SELECT * FROM fuzz('tn_f', 400000, 4);
SELECT * FROM fuzz('tn_ab_f', 400000, 5);
SELECT * FROM fuzz('tt_f', 500000, 6);

-- a run is a function of its seed and the pages: a failure can be replayed
SELECT a = b AS same_counts, a <> c AS other_seed_differs
FROM fastbtree_fuzz_unlocked('tn_ab_f', 100000, 7) a,
	fastbtree_fuzz_unlocked('tn_ab_f', 100000, 7) b,
	fastbtree_fuzz_unlocked('tn_ab_f', 100000, 8) c;

-- errors
SELECT * FROM fastbtree_fuzz_unlocked('t4', 10, 1);
SELECT * FROM fastbtree_fuzz_unlocked('t4_f', -1, 1);
CREATE TABLE tsmall (k int4);
INSERT INTO tsmall VALUES (1), (2);
CREATE INDEX tsmall_f ON tsmall USING fastbtree (k);
SELECT * FROM fastbtree_fuzz_unlocked('tsmall_f', 10, 1);
CREATE TABLE ttext (t text);
INSERT INTO ttext SELECT g::text FROM generate_series(1, 20000) g;
CREATE INDEX ttext_f ON ttext USING fastbtree (t);
SELECT * FROM fastbtree_fuzz_unlocked('ttext_f', 10, 1);
SET fastbtree.fast_compare = off;
SELECT * FROM fastbtree_fuzz_unlocked('t4_f', 10, 1);
RESET fastbtree.fast_compare;

\i sql/include/check_all.sql
RESET search_path;
DROP SCHEMA fbt_torn CASCADE;
