/* fastbtree--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.3'" to load this file. \quit

-- fastbtree_add_skip_support() -> integer: skip support (support function
-- 6, PostgreSQL 18 on) for fastbtree's operator families.  Each of the
-- extension's families gets the skip support functions that btree's
-- built-in family of the same name has, for the types it has operators
-- for, so that a skip scan steps to the next value of a discrete type
-- (date, timestamp, uuid, oid, boolean, "char" and the integers) without
-- probing, as btree's does.  Returns the number of functions added: none
-- before 18 (btree has none) and none once they are all there.  Run by
-- this update; to be run again on a database whose extension reached 1.3
-- on 15 and that pg_upgrade then brought to 18.  Superuser only (ALTER
-- OPERATOR FAMILY ... ADD FUNCTION); errors as that command raises them.
CREATE FUNCTION fastbtree_add_skip_support() RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
	n integer := 0;
BEGIN
	FOR r IN
		SELECT quote_ident(fn.nspname) || '.' || quote_ident(ff.opfname) AS family,
			format_type(p.amproclefttype, NULL) AS lefttype,
			format_type(p.amprocrighttype, NULL) AS righttype,
			p.amproc::regprocedure::text AS proc
		FROM pg_amproc p
			JOIN pg_opfamily bf ON bf.oid = p.amprocfamily
			JOIN pg_am ba ON ba.oid = bf.opfmethod
			JOIN pg_opfamily ff ON ff.opfname = bf.opfname
			JOIN pg_am fa ON fa.oid = ff.opfmethod
			JOIN pg_namespace fn ON fn.oid = ff.opfnamespace
		WHERE ba.amname = 'btree' AND bf.oid < 16384 AND p.oid < 16384
			AND fa.amname = 'fastbtree'
			AND p.amprocnum = 6
			-- one of the extension's own families
			AND EXISTS (SELECT 1 FROM pg_depend d
							JOIN pg_extension e ON e.oid = d.refobjid
						WHERE d.classid = 'pg_opfamily'::regclass
							AND d.objid = ff.oid AND d.deptype = 'e'
							AND d.refclassid = 'pg_extension'::regclass
							AND e.extname = 'fastbtree')
			-- which has operators for these types
			AND EXISTS (SELECT 1 FROM pg_amop o
						WHERE o.amopfamily = ff.oid
							AND o.amoplefttype = p.amproclefttype
							AND o.amoprighttype = p.amprocrighttype)
			-- and no such function yet
			AND NOT EXISTS (SELECT 1 FROM pg_amproc q
							WHERE q.amprocfamily = ff.oid
								AND q.amprocnum = 6
								AND q.amproclefttype = p.amproclefttype
								AND q.amprocrighttype = p.amprocrighttype)
		ORDER BY ff.opfname, p.amproclefttype
	LOOP
		EXECUTE format('ALTER OPERATOR FAMILY %s USING fastbtree ADD FUNCTION 6 (%s, %s) %s',
					   r.family, r.lefttype, r.righttype, r.proc);
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fastbtree_add_skip_support() FROM PUBLIC;

SELECT fastbtree_add_skip_support();
