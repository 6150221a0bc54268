-- Issue 26, item 7: a btree operator family that gains a member fastbtree's
-- family lacks (as PostgreSQL's equivclass test adds operators to btree's
-- integer_ops) must not switch planner parity off for the operators both
-- have; and the planner must never use the new operator as an index
-- condition of a fastbtree index: such a qual stays a filter.
SET client_min_messages = warning;
CREATE TABLE fg_f (a int4, b int4, k int8);
CREATE TABLE fg_b (a int4, b int4, k int8);
INSERT INTO fg_f SELECT g / 10, g % 10, g FROM generate_series(1, 5000) g;
INSERT INTO fg_b SELECT * FROM fg_f;
CREATE INDEX fg_f_ab ON fg_f USING fastbtree (a, b);
CREATE INDEX fg_b_ab ON fg_b USING btree (a, b);
CREATE INDEX fg_f_k ON fg_f USING fastbtree (k);
CREATE INDEX fg_b_k ON fg_b USING btree (k);
VACUUM ANALYZE fg_f;
VACUUM ANALYZE fg_b;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- the plans of both twins, with the index names made alike
CREATE FUNCTION fg_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		RETURN NEXT regexp_replace(line, 'fg_[fb]', 'fg_X', 'g');
	END LOOP;
END $$;
CREATE FUNCTION fg_same(q text) RETURNS TABLE (same_plan bool, same_rows bool)
LANGUAGE plpgsql AS $$
DECLARE
	pf text;
	pb text;
	rf text;
	rb text;
BEGIN
	SELECT string_agg(p, E'\n') INTO pf FROM fg_plan(format(q, 'fg_f')) p;
	SELECT string_agg(p, E'\n') INTO pb FROM fg_plan(format(q, 'fg_b')) p;
	EXECUTE format('SELECT string_agg(s::text, '','') FROM (%s) s', format(q, 'fg_f')) INTO rf;
	EXECUTE format('SELECT string_agg(s::text, '','') FROM (%s) s', format(q, 'fg_b')) INTO rb;
	RETURN QUERY SELECT pf = pb, rf = rb;
END $$;

-- a row comparison: its plan on fastbtree (which differs from btree's
-- before PostgreSQL 18, see README) is kept to compare with the plan after
CREATE TEMP TABLE fg_before AS
	SELECT string_agg(p, E'\n') AS plan
	FROM fg_plan('SELECT a, b FROM fg_f WHERE (a, b) > (300, 4) ORDER BY a, b LIMIT 3') p;
SELECT plan ~ 'Index Only Scan using fg_X_ab' AS index_scan FROM fg_before;
SELECT same_rows FROM fg_same('SELECT a, b FROM %s WHERE (a, b) > (300, 4) ORDER BY a, b LIMIT 3');
SELECT * FROM fg_same('SELECT a, b FROM %s WHERE a = 7 AND b >= 5');
SELECT * FROM fg_same('SELECT k FROM %s WHERE k = 42');

BEGIN;
CREATE TYPE int8alias1;
CREATE FUNCTION int8alias1in(cstring) RETURNS int8alias1
	STRICT IMMUTABLE LANGUAGE internal AS 'int8in';
CREATE FUNCTION int8alias1out(int8alias1) RETURNS cstring
	STRICT IMMUTABLE LANGUAGE internal AS 'int8out';
CREATE TYPE int8alias1 (input = int8alias1in, output = int8alias1out, like = int8);
CREATE CAST (int8 AS int8alias1) WITHOUT FUNCTION;
CREATE FUNCTION int8alias1eq(int8alias1, int8alias1) RETURNS bool
	STRICT IMMUTABLE LANGUAGE internal AS 'int8eq';
CREATE OPERATOR = (procedure = int8alias1eq, leftarg = int8alias1, rightarg = int8alias1,
	commutator = =, restrict = eqsel, join = eqjoinsel, merges);
CREATE FUNCTION int8alias1cmp(int8, int8alias1) RETURNS int
	STRICT IMMUTABLE LANGUAGE internal AS 'btint8cmp';
ALTER OPERATOR FAMILY integer_ops USING btree ADD
	OPERATOR 3 = (int8alias1, int8alias1),
	FUNCTION 1 int8alias1cmp (int8, int8alias1);

-- parity stays for the operators both families have
SELECT plan = (SELECT string_agg(p, E'\n')
			   FROM fg_plan('SELECT a, b FROM fg_f WHERE (a, b) > (300, 4) ORDER BY a, b LIMIT 3') p)
	AS same_plan_as_before
FROM fg_before;
SELECT same_rows FROM fg_same('SELECT a, b FROM %s WHERE (a, b) > (300, 4) ORDER BY a, b LIMIT 3');
SELECT * FROM fg_same('SELECT a, b FROM %s WHERE a = 7 AND b >= 5');
SELECT * FROM fg_same('SELECT k FROM %s WHERE k = 42');

-- the new operator: an index condition of the btree index only
SELECT * FROM fg_plan('SELECT k FROM fg_b WHERE k::int8alias1 = ''42''::int8alias1');
SELECT * FROM fg_plan('SELECT k FROM fg_f WHERE k::int8alias1 = ''42''::int8alias1');
SELECT k FROM fg_f WHERE k::int8alias1 = '42'::int8alias1;
SELECT k FROM fg_b WHERE k::int8alias1 = '42'::int8alias1;
SELECT * FROM fg_plan('SELECT k FROM fg_f WHERE k::int8alias1 = ''42''::int8alias1 AND k < 100');
SELECT k FROM fg_f WHERE k::int8alias1 = '42'::int8alias1 AND k < 100;
ROLLBACK;

DROP TABLE fg_f, fg_b;
DROP FUNCTION fg_plan(text), fg_same(text);
