-- gen_opclasses.sql
--	  Print the operator families and classes of fastbtree--1.0.sql.
--
-- Run by tools/gen_opclasses.sh against a stock PostgreSQL 15 cluster.  It
-- reads btree's operator families, classes, operators and support functions
-- from the catalogs, keeps the built-in ones (OID below 16384,
-- FirstNormalObjectId), and prints DDL that gives fastbtree the same
-- families and classes, with the same names, input types, DEFAULT flags,
-- operators and support functions.
--
-- Which class a member goes to: btree's catalogs do not record it (built-in
-- members have no pg_depend rows), so we follow the convention
-- CREATE OPERATOR CLASS itself implies.  Members whose left and right types
-- are both the input type of a class of the family are given in that
-- class's CREATE OPERATOR CLASS; when several classes of a family share an
-- input type (text_ops and varchar_ops, inet_ops and cidr_ops,
-- text_pattern_ops and varchar_pattern_ops), the default class, else the one
-- named like the family, takes them, and the others are created with no
-- member of their own.  Every other member (cross-type operators and
-- comparison procs, in_range procs with a foreign offset type) is a loose
-- family member, added by ALTER OPERATOR FAMILY ... ADD.
--
-- Every member names its left and right types explicitly: CREATE OPERATOR
-- CLASS derives them from a function's signature only for btree and hash
-- themselves.  Operators and functions are schema-qualified because the
-- extension script runs with search_path set to the extension's schema.
--
-- A storage type (opckeytype; only name_ops has one, cstring) is given as
-- STORAGE; fastbtree sets amstorage so that CREATE OPERATOR CLASS accepts
-- it (btree's own value comes from its bootstrap catalog).
--
-- The output order depends only on names (compared in "C" collation) and
-- OIDs of built-in objects, so regeneration gives the same text.

\set ON_ERROR_STOP on
SET search_path = pg_catalog;

DO $$
BEGIN
	IF current_setting('server_version_num')::int / 10000 <> 15 THEN
		RAISE EXCEPTION 'gen_opclasses.sql mirrors PostgreSQL 15, but the server is %',
			current_setting('server_version');
	END IF;
END
$$;

WITH fam AS (
	SELECT f.oid, f.opfname
	FROM pg_opfamily f
		JOIN pg_am am ON am.oid = f.opfmethod
	WHERE am.amname = 'btree' AND f.oid < 16384
),
cls AS (
	SELECT c.oid, c.opcname, c.opcfamily, c.opcintype, c.opckeytype,
		c.opcdefault,
		row_number() OVER (PARTITION BY c.opcfamily, c.opcintype
						   ORDER BY c.opcdefault DESC,
									c.opcname = f.opfname DESC,
									c.opcname COLLATE "C") = 1 AS holder
	FROM pg_opclass c
		JOIN fam f ON f.oid = c.opcfamily
	WHERE c.oid < 16384
),
mem AS (
	SELECT a.amopfamily AS family, a.amoplefttype AS lefttype,
		a.amoprighttype AS righttype, 0 AS kind, a.amopstrategy AS num,
		format('OPERATOR %s %s.%s (%s, %s)',
			   a.amopstrategy, quote_ident(n.nspname), o.oprname,
			   format_type(a.amoplefttype, NULL),
			   format_type(a.amoprighttype, NULL)) AS item
	FROM pg_amop a
		JOIN pg_operator o ON o.oid = a.amopopr
		JOIN pg_namespace n ON n.oid = o.oprnamespace
	WHERE a.amopfamily IN (SELECT oid FROM fam) AND a.oid < 16384
	UNION ALL
	SELECT p.amprocfamily, p.amproclefttype, p.amprocrighttype, 1,
		p.amprocnum,
		format('FUNCTION %s (%s, %s) %s.%s(%s)',
			   p.amprocnum,
			   format_type(p.amproclefttype, NULL),
			   format_type(p.amprocrighttype, NULL),
			   quote_ident(n.nspname), quote_ident(pr.proname),
			   (SELECT string_agg(format_type(t.typ, NULL), ', '
								  ORDER BY t.ord)
				FROM unnest(pr.proargtypes::oid[]) WITH ORDINALITY
					AS t(typ, ord)))
	FROM pg_amproc p
		JOIN pg_proc pr ON pr.oid = p.amproc
		JOIN pg_namespace n ON n.oid = pr.pronamespace
	WHERE p.amprocfamily IN (SELECT oid FROM fam) AND p.oid < 16384
),
owned AS (
	SELECT m.*, c.oid AS opclass
	FROM mem m
		LEFT JOIN cls c ON c.opcfamily = m.family AND c.holder
			AND c.opcintype = m.lefttype AND c.opcintype = m.righttype
),
class_ddl AS (
	SELECT c.opcfamily AS family, c.opcname,
		CASE WHEN NOT c.holder THEN
			format(E'-- %s holds the members of type %s; STORAGE %s only\n' ||
				   E'-- fills %s''s otherwise empty member list.\n',
				   (SELECT h.opcname FROM cls h
					WHERE h.opcfamily = c.opcfamily
						AND h.opcintype = c.opcintype AND h.holder),
				   format_type(c.opcintype, NULL),
				   format_type(c.opcintype, NULL),
				   c.opcname)
		ELSE '' END ||
		format(E'CREATE OPERATOR CLASS %s%s\n\tFOR TYPE %s USING fastbtree FAMILY %s AS\n\t%s;',
			   quote_ident(c.opcname),
			   CASE WHEN c.opcdefault THEN ' DEFAULT' ELSE '' END,
			   format_type(c.opcintype, NULL),
			   quote_ident(f.opfname),
			   coalesce((SELECT string_agg(o.item, E',\n\t'
										   ORDER BY o.kind, o.num)
						 FROM owned o
						 WHERE o.opclass = c.oid),
						'STORAGE ' || format_type(c.opcintype, NULL)) ||
				CASE WHEN c.opckeytype <> 0 AND c.opckeytype <> c.opcintype
					THEN E',\n\tSTORAGE ' || format_type(c.opckeytype, NULL)
					ELSE '' END) ||
		'' AS ddl
	FROM cls c
		JOIN fam f ON f.oid = c.opcfamily
),
family_ddl AS (
	SELECT f.opfname,
		format('-- %s', f.opfname) || E'\n' ||
		format('CREATE OPERATOR FAMILY %s USING fastbtree;',
			   quote_ident(f.opfname)) ||
		coalesce(E'\n' ||
				 (SELECT string_agg(cd.ddl, E'\n'
									ORDER BY cd.opcname COLLATE "C")
				  FROM class_ddl cd
				  WHERE cd.family = f.oid), '') ||
		coalesce(E'\n' ||
				 format(E'ALTER OPERATOR FAMILY %s USING fastbtree ADD\n\t',
						quote_ident(f.opfname)) ||
				 (SELECT string_agg(o.item, E',\n\t'
									ORDER BY o.lefttype, o.righttype,
											 o.kind, o.num)
				  FROM owned o
				  WHERE o.family = f.oid AND o.opclass IS NULL) || ';',
				 '') AS ddl
	FROM fam f
)
SELECT string_agg(ddl, E'\n\n' ORDER BY opfname COLLATE "C")
FROM family_ddl;
