/*-------------------------------------------------------------------------
 *
 * fbtinspect.c
 *	  SQL-callable inspection functions for fastbtree indexes, in the
 *	  spirit of pageinspect's btree functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "fastbtree.h"

/*
 * Open relid as a fastbtree index with AccessShareLock, or raise 42809
 * wrong_object_type if it is something else.  Other sessions' temporary
 * indexes cannot be read (0A000).
 */
static Relation
_fbt_open_index(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);

	if (rel->rd_rel->relkind != RELKIND_INDEX ||
		rel->rd_rel->relam != get_index_am_oid("fastbtree", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a fastbtree index",
						RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	return rel;
}

PG_FUNCTION_INFO_V1(fastbtree_metap);

/*
 * fastbtree_metap(index regclass) returns one row (magic int4, version
 * int4, root int8, level int4): the metapage of a fastbtree index, read
 * under a share lock on block 0 (root is P_NONE = 0 for an empty index).
 * Errors: 42809 for a relation that is not a fastbtree index, XX002
 * (index_corrupted) for a damaged metapage.
 */
Datum
fastbtree_metap(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = _fbt_open_index(relid);
	FbtMetaPageData *metad;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	metad = _fbt_getmeta(rel, true);
	values[0] = Int32GetDatum((int32) metad->fbtm_magic);
	values[1] = Int32GetDatum((int32) metad->fbtm_version);
	values[2] = Int64GetDatum((int64) metad->fbtm_root);
	values[3] = Int32GetDatum((int32) metad->fbtm_level);
	relation_close(rel, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
