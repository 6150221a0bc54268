/* fastbtree--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.2'" to load this file. \quit

-- fastbtree_page_items gains tids: every heap TID of a posting list tuple
-- (deduplication), NULL for other items; htid is then the first of them,
-- as in pageinspect's bt_page_items.
DROP FUNCTION fastbtree_page_items(regclass, int8);
CREATE FUNCTION fastbtree_page_items(index regclass, blkno int8,
	OUT itemoffset int2, OUT ctid tid, OUT itemlen int4, OUT nulls bool,
	OUT vars bool, OUT data text, OUT dead bool, OUT pivot bool,
	OUT natts int4, OUT htid tid, OUT tids tid[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fastbtree_page_items'
LANGUAGE C STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION fastbtree_page_items(regclass, int8) FROM PUBLIC;

-- fastbtree_metap gains allequalimage: whether the index may form posting
-- lists (decided when it was built), as pageinspect's bt_metap shows it.
DROP FUNCTION fastbtree_metap(regclass);
CREATE FUNCTION fastbtree_metap(index regclass,
	OUT magic int4, OUT version int4, OUT root int8, OUT level int4,
	OUT allequalimage bool)
RETURNS record
AS 'MODULE_PATHNAME', 'fastbtree_metap'
LANGUAGE C STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION fastbtree_metap(regclass) FROM PUBLIC;
