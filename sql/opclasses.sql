--
-- opclasses: fastbtree has one operator family and one operator class for
-- each built-in btree family and class (same name, input type, storage type
-- and DEFAULT flag), with the same operators under the same strategy
-- numbers and the same support functions under the same numbers.
--
-- Each difference query below must return no rows.  Built-in btree objects
-- are those with OIDs below FirstNormalObjectId (16384).
--

CREATE TEMP VIEW fbt_families AS
SELECT am.amname, f.oid, f.opfname
FROM pg_opfamily f
	JOIN pg_am am ON am.oid = f.opfmethod
WHERE (am.amname = 'btree' AND f.oid < 16384) OR am.amname = 'fastbtree';

CREATE TEMP VIEW fbt_classes AS
SELECT f.amname, c.opcname, f.opfname, c.opcintype::regtype AS intype,
	c.opckeytype::regtype AS keytype, c.opcdefault
FROM pg_opclass c
	JOIN fbt_families f ON f.oid = c.opcfamily;

CREATE TEMP VIEW fbt_operators AS
SELECT f.amname, f.opfname, a.amopstrategy AS strategy,
	a.amoplefttype::regtype AS lefttype, a.amoprighttype::regtype AS righttype,
	a.amopopr::regoperator AS operator, a.amoppurpose AS purpose,
	a.amopsortfamily AS sortfamily
FROM pg_amop a
	JOIN fbt_families f ON f.oid = a.amopfamily;

-- PostgreSQL 18's btree has skip support functions (support function 6)
-- for its skip scan, and fastbtree's families the same ones (added by the
-- 1.2 -> 1.3 update): 10 in each AM on 18, none before.
CREATE TEMP VIEW fbt_procs AS
SELECT f.amname, f.opfname, p.amprocnum AS procnum,
	p.amproclefttype::regtype AS lefttype,
	p.amprocrighttype::regtype AS righttype,
	p.amproc::regprocedure AS proc
FROM pg_amproc p
	JOIN fbt_families f ON f.oid = p.amprocfamily;
SELECT am.amname, count(p.procnum) = CASE
		WHEN current_setting('server_version_num')::int >= 180000
		THEN 10 ELSE 0 END AS skip_support_as_expected,
	coalesce(bool_and(p.proc::regproc::text LIKE '%skipsupport'), true)
		AS all_skip_support
FROM (VALUES ('btree'), ('fastbtree')) AS am(amname)
	LEFT JOIN fbt_procs p ON p.amname = am.amname AND p.procnum = 6
GROUP BY am.amname
ORDER BY am.amname;

-- Sizes of both catalogs: they must be equal (the support functions are
-- eleven more from PostgreSQL 18 on, range_ops' sort support and the skip
-- support functions)
SELECT am.amname,
	(SELECT count(*) FROM fbt_families f WHERE f.amname = am.amname) AS opfamilies,
	(SELECT count(*) FROM fbt_classes c WHERE c.amname = am.amname) AS opclasses,
	(SELECT count(*) FROM fbt_operators o WHERE o.amname = am.amname) AS amop,
	(SELECT count(*) FROM fbt_procs p WHERE p.amname = am.amname) -
		CASE WHEN current_setting('server_version_num')::int >= 180000
		THEN 11 ELSE 0 END AS amproc_as_on_15
FROM (VALUES ('btree'), ('fastbtree')) AS am(amname)
ORDER BY am.amname;

-- Operator families present in one AM only
(SELECT 'btree only' AS side, opfname FROM fbt_families WHERE amname = 'btree'
 EXCEPT
 SELECT 'btree only', opfname FROM fbt_families WHERE amname = 'fastbtree')
UNION ALL
(SELECT 'fastbtree only', opfname FROM fbt_families WHERE amname = 'fastbtree'
 EXCEPT
 SELECT 'fastbtree only', opfname FROM fbt_families WHERE amname = 'btree')
ORDER BY side, opfname;

-- Operator classes that differ in family, input type, storage type or
-- DEFAULT flag
(SELECT 'btree only' AS side, opcname, opfname, intype, keytype, opcdefault
 FROM fbt_classes WHERE amname = 'btree'
 EXCEPT
 SELECT 'btree only', opcname, opfname, intype, keytype, opcdefault
 FROM fbt_classes WHERE amname = 'fastbtree')
UNION ALL
(SELECT 'fastbtree only', opcname, opfname, intype, keytype, opcdefault
 FROM fbt_classes WHERE amname = 'fastbtree'
 EXCEPT
 SELECT 'fastbtree only', opcname, opfname, intype, keytype, opcdefault
 FROM fbt_classes WHERE amname = 'btree')
ORDER BY side, opcname, opfname;

-- Operators (pg_amop) present in one AM only
(SELECT 'btree only' AS side, opfname, strategy, lefttype, righttype,
	operator, purpose, sortfamily
 FROM fbt_operators WHERE amname = 'btree'
 EXCEPT
 SELECT 'btree only', opfname, strategy, lefttype, righttype,
	operator, purpose, sortfamily
 FROM fbt_operators WHERE amname = 'fastbtree')
UNION ALL
(SELECT 'fastbtree only', opfname, strategy, lefttype, righttype,
	operator, purpose, sortfamily
 FROM fbt_operators WHERE amname = 'fastbtree'
 EXCEPT
 SELECT 'fastbtree only', opfname, strategy, lefttype, righttype,
	operator, purpose, sortfamily
 FROM fbt_operators WHERE amname = 'btree')
ORDER BY side, opfname, lefttype, righttype, strategy;

-- Support functions (pg_amproc) present in one AM only
(SELECT 'btree only' AS side, opfname, procnum, lefttype, righttype, proc
 FROM fbt_procs WHERE amname = 'btree'
 EXCEPT
 SELECT 'btree only', opfname, procnum, lefttype, righttype, proc
 FROM fbt_procs WHERE amname = 'fastbtree')
UNION ALL
(SELECT 'fastbtree only', opfname, procnum, lefttype, righttype, proc
 FROM fbt_procs WHERE amname = 'fastbtree'
 EXCEPT
 SELECT 'fastbtree only', opfname, procnum, lefttype, righttype, proc
 FROM fbt_procs WHERE amname = 'btree')
ORDER BY side, opfname, lefttype, righttype, procnum;

-- Every fastbtree operator class passes the AM's own validator
SELECT count(*) AS opclasses, bool_and(amvalidate(oid)) AS all_valid
FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'fastbtree');

DROP VIEW fbt_procs, fbt_operators, fbt_classes, fbt_families;

-- Operator classes and families are found by name through the search_path.
-- btree's are in pg_catalog, which is always searched; fastbtree's are in
-- the schema the extension was created in (public here), so with public
-- off the path a named fastbtree class is not found.  Moved to pg_catalog
-- (CREATE EXTENSION fastbtree SCHEMA pg_catalog, or ALTER EXTENSION
-- fastbtree SET SCHEMA pg_catalog: README, "Installing ..."), they resolve as
-- btree's do.
CREATE SCHEMA fbt_opclass_path;
CREATE TABLE fbt_opclass_path.t (x text, k int8, v varchar);
SET search_path = fbt_opclass_path;
CREATE INDEX t_btree ON t USING btree (x text_pattern_ops, k int8_ops, v varchar_pattern_ops);
CREATE INDEX t_fastbtree ON t USING fastbtree (x text_pattern_ops, k int8_ops, v varchar_pattern_ops);
RESET search_path;
ALTER EXTENSION fastbtree SET SCHEMA pg_catalog;
SET search_path = fbt_opclass_path;
CREATE INDEX t_fastbtree ON t USING fastbtree (x text_pattern_ops, k int8_ops, v varchar_pattern_ops);
-- both definitions name the classes unqualified (visible on the path)
SELECT c.relname, pg_get_indexdef(c.oid)
FROM pg_class c WHERE c.relname IN ('t_btree', 't_fastbtree')
	AND c.relnamespace = 'fbt_opclass_path'::regnamespace
ORDER BY 1;
-- the families too: the same error as btree's (the operator is a member)
ALTER OPERATOR FAMILY integer_ops USING btree ADD OPERATOR 1 < (int8, int8);
ALTER OPERATOR FAMILY integer_ops USING fastbtree ADD OPERATOR 1 < (int8, int8);
RESET search_path;
-- back where the other tests expect it, every member with it
ALTER EXTENSION fastbtree SET SCHEMA public;
SELECT n.nspname, count(*) AS operator_classes
FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'fastbtree')
GROUP BY 1;
DROP SCHEMA fbt_opclass_path CASCADE;
