--
-- fastpath: the rightmost-leaf fastpath of inserts (nbtree's, fbtinsert.c
-- _fbt_fastpath_leaf): ascending keys go straight to the remembered
-- rightmost leaf, without a descent, and everything else as before.  Each
-- step is compared with a btree twin; fastbtree_stats() counts descents.
--
CREATE SCHEMA fbt_fastpath;
SET search_path = fbt_fastpath, public;
-- (15's NOTICE about ON CONFLICT arbiters, which 18 does not give)
SET client_min_messages = warning;

-- wide keys (an internal page holds about 19), so that the tree has the
-- three levels the fastpath needs (as nbtree's, root level 2) after a few
-- thousand rows; k's order is the key's
CREATE TABLE fp (k int4 GENERATED ALWAYS AS (s::int4) STORED, s text)
	WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX fp_k ON fp USING fastbtree (s COLLATE "C");
CREATE TABLE bp (k int4 GENERATED ALWAYS AS (s::int4) STORED, s text)
	WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX bp_k ON bp USING btree (s COLLATE "C");
CREATE FUNCTION key(i int) RETURNS text IMMUTABLE
	LANGUAGE sql AS $$ SELECT lpad(i::text, 400, '0') $$;
INSERT INTO fp (s) SELECT key(g) FROM generate_series(1, 12000, 2) g;
INSERT INTO bp (s) SELECT key(g) FROM generate_series(1, 12000, 2) g;
SELECT level FROM fastbtree_metap('fp_k');

-- 2000 ascending single-row inserts: after the first, descents only for
-- leaf splits (the fastpath needs room on the leaf)
CREATE FUNCTION ascend(tab text, lo int, hi int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN lo .. hi LOOP
		EXECUTE format('INSERT INTO %I (s) VALUES ($1)', tab) USING key(i);
	END LOOP;
END $$;
CREATE TEMP TABLE d0 AS SELECT descents FROM fastbtree_stats();
SELECT ascend('fp', 12001, 14000);
SELECT ascend('bp', 12001, 14000);
SELECT (SELECT descents FROM fastbtree_stats()) - descents < 300 AS few_descents
FROM d0;

-- duplicates: of the rightmost leaf's last key, inside that leaf, and far
-- to its left: btree's error each time
CREATE FUNCTION try_insert(tab text, i int) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %I (s) VALUES ($1)', tab) USING key(i);
	RETURN 'inserted';
EXCEPTION WHEN unique_violation THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT i, try_insert('fp', i) AS fastbtree, try_insert('bp', i) AS btree
FROM unnest(ARRAY[14000, 13990, 1, 14001]) i;
DELETE FROM fp WHERE k = 14001;
DELETE FROM bp WHERE k = 14001;
-- keys left of the rightmost leaf, between the odd ones, then ascending
-- again
INSERT INTO fp (s) SELECT key(g) FROM generate_series(2, 3000, 2) g;
INSERT INTO bp (s) SELECT key(g) FROM generate_series(2, 3000, 2) g;
SELECT ascend('fp', 14001, 14500);
SELECT ascend('bp', 14001, 14500);
-- a NULL key goes to the right end too, and is no duplicate
INSERT INTO fp (s) VALUES (NULL), (NULL);
INSERT INTO bp (s) VALUES (NULL), (NULL);
SELECT ascend('fp', 14501, 14600);
SELECT ascend('bp', 14501, 14600);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), count(k), sum(k), min(k), max(k) FROM fp
WHERE s COLLATE "C" > '' OR s IS NULL;
SELECT (SELECT array_agg(k ORDER BY s COLLATE "C") FROM fp WHERE s COLLATE "C" > '') =
	   (SELECT array_agg(k ORDER BY s COLLATE "C") FROM bp WHERE s COLLATE "C" > '') AS same_keys;
SELECT count(*) FROM fp WHERE s IS NULL;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT fastbtree_check('fp_k', true);

-- a non-unique index in descending order: the largest keys go to the
-- leftmost leaf, so ascending keys never reach the rightmost one
CREATE TABLE fd (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX fd_k ON fd USING fastbtree (k DESC);
INSERT INTO fd SELECT g FROM generate_series(1, 300000) g;
CREATE FUNCTION ascend1(lo int, hi int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN lo .. hi LOOP
		INSERT INTO fd VALUES (i);
	END LOOP;
END $$;
SELECT ascend1(300001, 300500);
SET enable_seqscan = off;
SELECT count(*), sum(k) FROM fd WHERE k > 0;
SELECT k FROM fd ORDER BY k DESC LIMIT 3;
RESET enable_seqscan;
SELECT fastbtree_check('fd_k', true);

RESET search_path;
DROP SCHEMA fbt_fastpath CASCADE;
