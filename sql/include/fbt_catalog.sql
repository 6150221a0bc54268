-- fbt_catalog(): fastbtree's catalog entries (operator families and
-- classes, operators, support functions, SQL functions), one row per
-- object kind: the count and an md5 of the sorted entries (upgrade.sql)
CREATE FUNCTION fbt_catalog() RETURNS TABLE (kind text, n bigint, hash text)
LANGUAGE sql AS $$
	SELECT 'opfamily', count(*), md5(string_agg(f.opfname, ',' ORDER BY f.opfname))
	FROM pg_opfamily f JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'fastbtree'
	UNION ALL
	SELECT 'opclass', count(*), md5(string_agg(c.opcname || ':' || f.opfname || ':' ||
			c.opcintype::regtype || ':' || c.opckeytype::regtype || ':' || c.opcdefault::text,
			',' ORDER BY c.opcname, f.opfname))
	FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily
		JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'fastbtree'
	UNION ALL
	SELECT 'amop', count(*), md5(string_agg(f.opfname || ':' || o.amopstrategy::text || ':' ||
			o.amopopr::regoperator || ':' || o.amoppurpose::text,
			',' ORDER BY f.opfname, o.amopopr::regoperator::text, o.amopstrategy))
	FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
		JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'fastbtree'
	UNION ALL
	SELECT 'amproc', count(*), md5(string_agg(f.opfname || ':' || p.amprocnum::text || ':' ||
			p.amproclefttype::regtype || ':' || p.amprocrighttype::regtype || ':' ||
			p.amproc::regprocedure,
			',' ORDER BY f.opfname, p.amproclefttype::regtype::text,
			p.amprocrighttype::regtype::text, p.amprocnum))
	FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
		JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'fastbtree'
	UNION ALL
	SELECT 'function', count(*), md5(string_agg(p.oid::regprocedure || ':' ||
			pg_get_function_result(p.oid) || ':' || p.proacl::text,
			',' ORDER BY p.oid::regprocedure::text))
	FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
		AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'fastbtree'
$$;
