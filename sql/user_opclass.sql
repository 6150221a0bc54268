--
-- user_opclass: operator classes whose operators belong to no btree
-- operator family.  amvalidate accepts them, so CREATE INDEX must work and
-- the index must be in the order of the class's own support procedures:
-- the build sorts, and scans position, by support proc 2 or 1 of the
-- index's operator family, never by a btree "<".  No btree index is ever
-- built on these operators (a btree class of the same operators would make
-- them btree ordering operators and hide a build that sorts by them).
-- The expected orders are computed without the index.
--
CREATE SCHEMA fbt_user_opclass;
SET search_path = fbt_user_opclass, public;
-- PostgreSQL 15's NOTICE for unique fastbtree indexes (ON CONFLICT cannot
-- use them) is tested in unique_core
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
\i sql/include/both_ams.sql

-- New operators over int4.  Their functions are built-in C functions, so
-- the planner cannot inline them into plain int4 comparisons.
CREATE OPERATOR #< (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4lt);
CREATE OPERATOR #<= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4le);
CREATE OPERATOR #= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4eq);
CREATE OPERATOR #>= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4ge);
CREATE OPERATOR #> (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4gt);

-- 1. int4's order under new names, with core's btint4cmp and sortsupport
CREATE OPERATOR CLASS alt_int4_ops FOR TYPE int4 USING fastbtree AS
	OPERATOR 1 #<, OPERATOR 2 #<=, OPERATOR 3 #=, OPERATOR 4 #>=,
	OPERATOR 5 #>,
	FUNCTION 1 btint4cmp(int4, int4),
	FUNCTION 2 btint4sortsupport(internal);

-- 2. int4's reverse order: "~<" is int4's ">", and support proc 1 is a
-- reversed comparison in SQL, with no sortsupport procedure (so the build
-- and the scans use core's shim over proc 1)
CREATE FUNCTION rev_cmp(int4, int4) RETURNS int4
LANGUAGE sql IMMUTABLE STRICT AS 'SELECT btint4cmp($2, $1)';
CREATE OPERATOR ~< (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4gt);
CREATE OPERATOR ~<= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4ge);
CREATE OPERATOR ~= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4eq);
CREATE OPERATOR ~>= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4le);
CREATE OPERATOR ~> (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4lt);
CREATE OPERATOR CLASS rev_int4_ops FOR TYPE int4 USING fastbtree AS
	OPERATOR 1 ~<, OPERATOR 2 ~<=, OPERATOR 3 ~=, OPERATOR 4 ~>=,
	OPERATOR 5 ~>,
	FUNCTION 1 rev_cmp(int4, int4);

-- 3. text's order under new names, with core's bttextcmp and sortsupport
-- (scans position text keys through the sortsupport comparator)
CREATE OPERATOR #< (LEFTARG = text, RIGHTARG = text, FUNCTION = text_lt);
CREATE OPERATOR #<= (LEFTARG = text, RIGHTARG = text, FUNCTION = text_le);
CREATE OPERATOR #= (LEFTARG = text, RIGHTARG = text, FUNCTION = texteq);
CREATE OPERATOR #>= (LEFTARG = text, RIGHTARG = text, FUNCTION = text_ge);
CREATE OPERATOR #> (LEFTARG = text, RIGHTARG = text, FUNCTION = text_gt);
CREATE OPERATOR CLASS alt_text_ops FOR TYPE text USING fastbtree AS
	OPERATOR 1 #<, OPERATOR 2 #<=, OPERATOR 3 #=, OPERATOR 4 #>=,
	OPERATOR 5 #>,
	FUNCTION 1 bttextcmp(text, text),
	FUNCTION 2 bttextsortsupport(internal);

SELECT opcname, amvalidate(oid) FROM pg_opclass
WHERE opcname IN ('alt_int4_ops', 'rev_int4_ops', 'alt_text_ops')
ORDER BY opcname;
-- none of the operators is a member of any btree family
SELECT count(*) AS in_btree_families FROM pg_amop
WHERE amopmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
	AND amopopr IN (SELECT oid FROM pg_operator
					WHERE oprnamespace = 'fbt_user_opclass'::regnamespace);

-- Support functions whose signature cannot serve their number are refused
-- when the class or family is defined, as btree refuses them (PostgreSQL 15
-- checks signatures itself only for btree and hash).  PostgreSQL 18 checks
-- support functions 1 and 2 itself for every ordered access method, naming
-- the AM "ordering" in the message; both_ams_sig() names it as 15 does.
CREATE FUNCTION both_ams_sig(tmpl text)
RETURNS TABLE (am text, result text, same boolean)
LANGUAGE sql AS $$
	SELECT b.am, replace(b.result, ': ordering ', ': ' || b.am || ' '), b.same
	FROM both_ams(tmpl) b
$$;
SELECT * FROM both_ams_sig('CREATE OPERATOR CLASS bad1_@ FOR TYPE int4 USING @ AS OPERATOR 1 <, FUNCTION 1 int4lt(int4, int4)');
SELECT * FROM both_ams_sig('CREATE OPERATOR CLASS bad2_@ FOR TYPE int4 USING @ AS OPERATOR 1 <, FUNCTION 1 int4abs(int4)');
SELECT * FROM both_ams_sig('CREATE OPERATOR CLASS bad3_@ FOR TYPE int4 USING @ AS OPERATOR 1 <, FUNCTION 1 btint4cmp(int4, int4), FUNCTION 2 btint4cmp(int4, int4)');
SELECT * FROM both_ams_sig('CREATE OPERATOR CLASS bad4_@ FOR TYPE int4 USING @ AS OPERATOR 1 <, FUNCTION 1 btint4cmp(int4, int4), FUNCTION 3 int4lt(int4, int4)');
SELECT * FROM both_ams_sig('CREATE OPERATOR CLASS bad5_@ FOR TYPE int4 USING @ AS OPERATOR 1 <, FUNCTION 1 btint4cmp(int4, int4), FUNCTION 4 int4abs(int4)');
SELECT * FROM both_ams_sig('CREATE OPERATOR FAMILY fam_@ USING @; ALTER OPERATOR FAMILY fam_@ USING @ ADD FUNCTION 1 (int4, int8) int48lt(int4, int8)');
SELECT * FROM both_ams_sig('CREATE OPERATOR FAMILY fam_@ USING @; ALTER OPERATOR FAMILY fam_@ USING @ ADD FUNCTION 4 (int4, int8) btequalimage(oid)');
SELECT * FROM both_ams_sig('CREATE OPERATOR FAMILY fam_@ USING @; ALTER OPERATOR FAMILY fam_@ USING @ ADD FUNCTION 1 (int4, int8) btint48cmp(int4, int8)');

-- One table per index, so that each query has one index to use: 2003
-- distinct values in scattered heap order, and two NULLs.
CREATE TABLE base (x int4, t text);
INSERT INTO base SELECT (g * 7919) % 2003 - 1000, md5(g::text)
FROM generate_series(1, 2003) g;
INSERT INTO base VALUES (NULL, NULL), (NULL, NULL);
CREATE TABLE a_alt AS SELECT * FROM base;
CREATE TABLE a_rev AS SELECT * FROM base;
CREATE TABLE a_rev_desc AS SELECT * FROM base;
CREATE TABLE a_rev_nf AS SELECT * FROM base;
CREATE TABLE a_rev_u AS SELECT * FROM base;
CREATE TABLE a_text AS SELECT * FROM base;

CREATE INDEX a_alt_x ON a_alt USING fastbtree (x alt_int4_ops);
CREATE INDEX a_rev_x ON a_rev USING fastbtree (x rev_int4_ops);
CREATE INDEX a_rev_desc_x ON a_rev_desc USING fastbtree (x rev_int4_ops DESC NULLS LAST);
CREATE INDEX a_rev_nf_x ON a_rev_nf USING fastbtree (x rev_int4_ops NULLS FIRST, t);
CREATE UNIQUE INDEX a_rev_u_x ON a_rev_u USING fastbtree (x rev_int4_ops);
CREATE INDEX a_text_t ON a_text USING fastbtree (t alt_text_ops);
VACUUM ANALYZE a_alt, a_rev, a_rev_desc, a_rev_nf, a_rev_u, a_text;

-- ord(tbl, col, qual, sortexpr): the values of col that an index scan of
-- tbl returns for qual, in scan order, against the same rows sorted by
-- sortexpr without the index
CREATE FUNCTION ord(tbl text, col text, qual text, sortexpr text,
	OUT scan text, OUT nrows int, OUT in_order bool)
LANGUAGE plpgsql AS $$
DECLARE
	got text[];
	want text[];
	line text;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	scan := NULL;
	FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT %s FROM %s WHERE %s',
							   col, tbl, qual)
	LOOP
		IF line ~ '(Scan|Cond:|Filter:)' THEN
			scan := coalesce(scan || '; ', '') ||
				btrim(regexp_replace(line, '^[ ->]*', ''));
		END IF;
	END LOOP;
	EXECUTE format('SELECT array_agg(%s::text) FROM (SELECT %s FROM %s WHERE %s) s',
				   col, col, tbl, qual) INTO got;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	EXECUTE format('SELECT array_agg(%s::text ORDER BY %s) FROM %s WHERE %s',
				   col, sortexpr, tbl, qual) INTO want;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	nrows := coalesce(cardinality(got), 0);
	in_order := got IS NOT DISTINCT FROM want;
END
$$;

-- whole index (NULLs included), then ranges, equality and arrays through
-- each class's operators
BEGIN;
SELECT * FROM ord('a_alt', 'x', 'x #>= -2147483648 OR x IS NULL', 'x NULLS LAST');
SELECT * FROM ord('a_alt', 'x', 'x #> 990', 'x');
SELECT * FROM ord('a_alt', 'x', 'x #>= -5 AND x #< 5', 'x');
SELECT * FROM ord('a_alt', 'x', 'x #= 7', 'x');
SELECT * FROM ord('a_alt', 'x', 'x #= ANY (''{3, -900, 12}'')', 'x');
SELECT * FROM ord('a_rev', 'x', 'x ~>= 2147483647 OR x IS NULL', '-x NULLS LAST');
SELECT * FROM ord('a_rev', 'x', 'x ~> 990', '-x');
SELECT * FROM ord('a_rev', 'x', 'x ~< -990', '-x');
SELECT * FROM ord('a_rev', 'x', 'x ~>= 5 AND x ~<= -5', '-x');
SELECT * FROM ord('a_rev', 'x', 'x ~= -7', '-x');
SELECT * FROM ord('a_rev', 'x', 'x ~= ANY (''{3, -900, 12}'')', '-x');
SELECT * FROM ord('a_rev', 'x', 'x IS NULL', '-x');
SELECT * FROM ord('a_rev_desc', 'x', 'x ~>= 2147483647 OR x IS NULL', 'x NULLS LAST');
SELECT * FROM ord('a_rev_desc', 'x', 'x ~> 990', 'x');
SELECT * FROM ord('a_rev_desc', 'x', 'x ~< -990', 'x');
SELECT * FROM ord('a_rev_nf', 'x', 'x ~>= 2147483647 OR x IS NULL', '-x NULLS FIRST');
SELECT * FROM ord('a_rev_nf', 'x', 'x ~>= 5 AND x ~<= -5', '-x');
SELECT * FROM ord('a_rev_u', 'x', 'x ~> 990', '-x');
SELECT * FROM ord('a_text', 't', 't #>= '''' OR t IS NULL', 't NULLS LAST');
SELECT * FROM ord('a_text', 't', 't #> ''f''', 't');
SELECT * FROM ord('a_text', 't', 't #>= ''3'' AND t #< ''5''', 't');
SELECT * FROM ord('a_text', 't', 't #= ''c4ca4238a0b923820dcc509a6f75849b''', 't');
COMMIT;

-- The unique check uses the class's own equality, with btree's messages,
-- at insert and at build time.
INSERT INTO a_rev_u VALUES (7, 'dup');
CREATE TABLE u (x int4);
INSERT INTO u SELECT g FROM generate_series(1, 100) g;
INSERT INTO u VALUES (42);
CREATE UNIQUE INDEX u_rev ON u USING fastbtree (x rev_int4_ops);
-- Dead duplicates (deleted by the building transaction itself) do not
-- count: they go to a second sort, merged in index order into the load,
-- which fastbtree_check verifies.  A btree twin over plain int4 agrees.
BEGIN;
DELETE FROM u WHERE x % 3 = 0;
INSERT INTO u SELECT g FROM generate_series(1, 100) g WHERE g % 3 = 0;
CREATE UNIQUE INDEX u_btree ON u USING btree (x);
CREATE UNIQUE INDEX u_rev ON u USING fastbtree (x rev_int4_ops);
CREATE UNIQUE INDEX u_rev2 ON u USING fastbtree (x rev_int4_ops DESC, x alt_int4_ops);
COMMIT;
SELECT * FROM fastbtree_check('u_rev', true);
SELECT * FROM fastbtree_check('u_rev2', true);
DROP INDEX u_btree, u_rev2;
BEGIN;
SELECT * FROM ord('u', 'x', 'x ~< 90', '-x');
SELECT * FROM ord('u', 'x', 'x ~>= 10', '-x');
COMMIT;

-- Rebuilds sort the same way: REINDEX, VACUUM FULL.
REINDEX TABLE a_rev;
REINDEX INDEX a_alt_x;
REINDEX INDEX a_text_t;
VACUUM FULL a_rev_desc;
REINDEX TABLE u;
BEGIN;
SELECT * FROM ord('a_rev', 'x', 'x ~>= 2147483647 OR x IS NULL', '-x NULLS LAST');
SELECT * FROM ord('a_alt', 'x', 'x #>= -2147483648 OR x IS NULL', 'x NULLS LAST');
SELECT * FROM ord('a_text', 't', 't #>= '''' OR t IS NULL', 't NULLS LAST');
SELECT * FROM ord('a_rev_desc', 'x', 'x ~>= 2147483647 OR x IS NULL', 'x NULLS LAST');
SELECT * FROM ord('u', 'x', 'x ~< 90', '-x');
COMMIT;

\i sql/include/check_all.sql
DROP SCHEMA fbt_user_opclass CASCADE;
