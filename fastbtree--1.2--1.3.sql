/* fastbtree--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.3'" to load this file. \quit

-- Skip support (support function 6, PostgreSQL 18 on): each of fastbtree's
-- operator families gets the skip support functions that btree's built-in
-- family of the same name has, for the same types, so that a skip scan
-- steps to the next value of a discrete type (date, timestamp, uuid, oid,
-- boolean, "char" and the integers) without probing, as btree's does.
-- btree has none before 18: nothing is added there.  A cluster upgraded
-- from 15 by pg_upgrade keeps the families it had (see README.design,
-- "Array mode"); skip scans still work there, probing for the next value.
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN
		SELECT quote_ident(fn.nspname) || '.' || quote_ident(ff.opfname) AS family,
			format_type(p.amproclefttype, NULL) AS lefttype,
			format_type(p.amprocrighttype, NULL) AS righttype,
			p.amproc::regprocedure::text AS proc
		FROM pg_catalog.pg_amproc p
			JOIN pg_catalog.pg_opfamily bf ON bf.oid = p.amprocfamily
			JOIN pg_catalog.pg_am ba ON ba.oid = bf.opfmethod
			JOIN pg_catalog.pg_opfamily ff ON ff.opfname = bf.opfname
			JOIN pg_catalog.pg_am fa ON fa.oid = ff.opfmethod
			JOIN pg_catalog.pg_namespace fn ON fn.oid = ff.opfnamespace
		WHERE ba.amname = 'btree' AND bf.oid < 16384
			AND fa.amname = 'fastbtree'
			AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
							JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
						WHERE d.classid = 'pg_catalog.pg_opfamily'::regclass
							AND d.objid = ff.oid AND d.deptype = 'e'
							AND d.refclassid = 'pg_catalog.pg_extension'::regclass
							AND e.extname = 'fastbtree')
			AND p.amprocnum = 6
			AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_amproc q
							WHERE q.amprocfamily = ff.oid
								AND q.amprocnum = 6
								AND q.amproclefttype = p.amproclefttype
								AND q.amprocrighttype = p.amprocrighttype)
		ORDER BY ff.opfname, p.amproclefttype
	LOOP
		EXECUTE format('ALTER OPERATOR FAMILY %s USING fastbtree ADD FUNCTION 6 (%s, %s) %s',
					   r.family, r.lefttype, r.righttype, r.proc);
	END LOOP;
END
$$;
