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
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "fastbtree.h"

/*
 * _fbt_check_index_relation() -- raise an error unless rel (open, locked)
 * is a fastbtree index whose pages this backend can read: 42809
 * wrong_object_type for a partitioned index (it has no pages of its own)
 * or anything that is not a fastbtree index, 0A000 for another session's
 * temporary index (its pages live in that backend's local buffers).  For
 * fastbtree_check and the inspection functions.
 */
void
_fbt_check_index_relation(Relation rel)
{
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned index",
						RelationGetRelationName(rel)),
				 errdetail("A partitioned index has no pages of its own; use the index of each partition.")));
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
}

/*
 * _fbt_open_index() -- open relid as a fastbtree index with
 * AccessShareLock (held until the transaction ends, or released by the
 * caller's relation_close()), for the SQL-callable inspection and test
 * functions.  Errors: those of _fbt_check_index_relation().
 */
Relation
_fbt_open_index(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);

	_fbt_check_index_relation(rel);
	return rel;
}

FBT_FUNCTION_INFO_V1(fastbtree_metap);

/*
 * fastbtree_metap(index regclass) returns one row (magic int4, version
 * int4, root int8, level int4, and from extension version 1.2 on
 * allequalimage bool: may it form posting lists): the metapage of a
 * fastbtree index, read
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
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	metad = _fbt_getmeta(rel, true);
	values[0] = Int32GetDatum((int32) metad->fbtm_magic);
	values[1] = Int32GetDatum((int32) metad->fbtm_version);
	values[2] = Int64GetDatum((int64) metad->fbtm_root);
	values[3] = Int32GetDatum((int32) metad->fbtm_level);
	/* the column exists from extension version 1.2 on */
	values[4] = BoolGetDatum(metad->fbtm_allequalimage != 0);
	relation_close(rel, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Read a private copy of block blkno of a fastbtree index */
static Page
_fbt_copy_block(Relation rel, int64 blkno)
{
	Buffer		buf;
	Page		page;

	if (blkno < 0 || blkno >= RelationGetNumberOfBlocks(rel))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block number " INT64_FORMAT " is out of range for relation \"%s\"",
						blkno, RelationGetRelationName(rel))));
	page = palloc(BLCKSZ);
	buf = ReadBuffer(rel, (BlockNumber) blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)) ||
		FbtPageGetOpaque(page)->fbto_page_id != FBT_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("block " INT64_FORMAT " of index \"%s\" is not a valid fastbtree page",
						blkno, RelationGetRelationName(rel))));
	return page;
}

FBT_FUNCTION_INFO_V1(fastbtree_page_stats);

/*
 * fastbtree_page_stats(index regclass, blkno int8) returns one row
 * describing a page, like pageinspect's bt_page_stats: type ('m' meta,
 * 'r' root, 'i' internal, 'l' leaf, 'd' deleted, 'e' half-dead, as
 * pageinspect's letters), live_items, dead_items,
 * avg_item_size (bytes), free_size (bytes), prev, next, level, flags,
 * version.  Copies the page under a share lock.  Superuser only (granted
 * by the extension script).  Errors: 22023 for a block out of range, XX002
 * for a page that is not fastbtree's.
 */
Datum
fastbtree_page_stats(PG_FUNCTION_ARGS)
{
	Relation	rel = _fbt_open_index(PG_GETARG_OID(0));
	int64		blkno = PG_GETARG_INT64(1);
	Page		page = _fbt_copy_block(rel, blkno);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};
	int			live = 0;
	int			dead = 0;
	Size		itemsz = 0;
	char		type;
	OffsetNumber off;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	if (opaque->fbto_flags & FBTP_META)
		type = 'm';
	else
	{
		type = P_ISDELETED(opaque) ? 'd' : P_ISHALFDEAD(opaque) ? 'e' :
			P_ISROOT(opaque) ? 'r' : P_ISLEAF(opaque) ? 'l' : 'i';
		for (off = FirstOffsetNumber;
			 !P_ISDELETED(opaque) && off <= PageGetMaxOffsetNumber(page); off++)
		{
			ItemId		iid = PageGetItemId(page, off);

			if (ItemIdIsDead(iid))
				dead++;
			else
				live++;
			itemsz += ItemIdGetLength(iid);
		}
	}

	values[0] = CharGetDatum(type);
	values[1] = Int32GetDatum(live);
	values[2] = Int32GetDatum(dead);
	values[3] = Int32GetDatum(live + dead > 0 ? itemsz / (live + dead) : 0);
	values[4] = Int32GetDatum((int32) PageGetExactFreeSpace(page));
	values[5] = Int64GetDatum((int64) opaque->fbto_prev);
	values[6] = Int64GetDatum((int64) opaque->fbto_next);
	values[7] = Int32GetDatum((int32) opaque->fbto_level);
	values[8] = Int32GetDatum((int32) opaque->fbto_flags);
	values[9] = Int64GetDatum((int64) opaque->fbto_version);
	values[10] = Int32GetDatum((int32) opaque->fbto_cycleid);
	pfree(page);
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The heap TID of item itup, whose line pointer gives it itemlen bytes, or
 * NULL if it has none.  A pivot's heap TID sits in the last bytes its size
 * word claims; on a damaged page that word may be larger than the item or
 * too small to hold a TID after the tuple header, so the TID is shown only
 * if it lies inside the item, after the header and null bitmap.
 */
static ItemPointer
_fbt_item_heaptid(IndexTuple itup, Size itemlen)
{
	Size		size = IndexTupleSize(itup);

	if (FbtTupleIsPosting(itup))
	{
		/* the first TID, if the array lies inside the item */
		if (size > itemlen || !_fbt_posting_ok(itup))
			return NULL;
		return FbtTupleGetPosting(itup);
	}
	if (!FbtTupleIsPivot(itup))
		return &itup->t_tid;
	if ((ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
		 FBT_PIVOT_HEAPTID) == 0 ||
		size > itemlen ||
		size < IndexInfoFindDataOffset(itup->t_info) + sizeof(ItemPointerData))
		return NULL;
	return FbtTupleGetHeapTID(itup);
}

FBT_FUNCTION_INFO_V1(fastbtree_page_items);

/*
 * fastbtree_page_items(index regclass, blkno int8) returns setof rows, one
 * per line pointer, like pageinspect's bt_page_items: itemoffset, ctid
 * (raw t_tid: the heap TID of leaf items; downlink and attribute count of
 * pivots), itemlen (bytes), nulls, vars, data (hex of the tuple data),
 * dead, pivot, natts, htid (the heap TID, the first of a posting list,
 * or NULL, also when a damaged pivot's size word would place it outside
 * the item), and from extension version 1.2 on tids (a posting list's
 * heap TIDs, else NULL).  Items whose line
 * pointer leaves the page are skipped; a deleted page has no rows (its
 * one item is not a tuple).  Copies the page under a share
 * lock; superuser only.  Errors as fastbtree_page_stats.
 */
Datum
fastbtree_page_items(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel = _fbt_open_index(PG_GETARG_OID(0));
	int64		blkno = PG_GETARG_INT64(1);
	Page		page = _fbt_copy_block(rel, blkno);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber off;

	InitMaterializedSRF(fcinfo, 0);
	/* a deleted page's one item is its FbtDeletedPageData, not a tuple */
	if (!(opaque->fbto_flags & (FBTP_META | FBTP_DELETED)))
	{
		for (off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			IndexTuple	itup;
			Datum		values[11];
			bool		nulls[11] = {0};
			Size		dataoff;
			Size		datalen;
			StringInfoData hex;
			ItemPointer htid;
			Size		i;

			if (!ItemIdHasStorage(iid) ||
				ItemIdGetOffset(iid) + ItemIdGetLength(iid) > BLCKSZ ||
				ItemIdGetLength(iid) < sizeof(IndexTupleData))
				continue;
			itup = (IndexTuple) PageGetItem(page, iid);
			dataoff = IndexInfoFindDataOffset(itup->t_info);
			datalen = Min(IndexTupleSize(itup), ItemIdGetLength(iid));
			datalen = datalen > dataoff ? datalen - dataoff : 0;

			initStringInfo(&hex);
			for (i = 0; i < datalen; i++)
				appendStringInfo(&hex, "%s%02x", i ? " " : "",
								 (unsigned char) ((char *) itup)[dataoff + i]);

			values[0] = Int16GetDatum((int16) off);
			values[1] = PointerGetDatum(&itup->t_tid);
			values[2] = Int32GetDatum((int32) ItemIdGetLength(iid));
			values[3] = BoolGetDatum(IndexTupleHasNulls(itup) != 0);
			values[4] = BoolGetDatum(IndexTupleHasVarwidths(itup) != 0);
			values[5] = CStringGetTextDatum(hex.data);
			values[6] = BoolGetDatum(ItemIdIsDead(iid));
			values[7] = BoolGetDatum(FbtTupleIsPivot(itup));
			values[8] = Int32GetDatum(FbtTupleGetNAtts(itup, rel));
			htid = _fbt_item_heaptid(itup, ItemIdGetLength(iid));
			if (htid != NULL)
				values[9] = PointerGetDatum(htid);
			else
				nulls[9] = true;
			nulls[10] = true;
			if (FbtTupleIsPosting(itup) &&
				IndexTupleSize(itup) <= ItemIdGetLength(iid) &&
				_fbt_posting_ok(itup))
			{
				int			n = FbtTupleGetNPosting(itup);
				Datum	   *tids = palloc(sizeof(Datum) * n);
				int			j;

				for (j = 0; j < n; j++)
					tids[j] = PointerGetDatum(FbtTupleGetPostingN(itup, j));
				values[10] = PointerGetDatum(construct_array(tids, n, TIDOID,
															 sizeof(ItemPointerData),
															 false,
															 TYPALIGN_SHORT));
				nulls[10] = false;
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	pfree(page);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

FBT_FUNCTION_INFO_V1(fastbtree_stats);

/*
 * fastbtree_stats() returns one row of int8 counters of this backend's
 * descents and heap prefetches since it started (FbtStats in fastbtree.h;
 * the column comments in fastbtree--1.0--1.1.sql, fastbtree--1.3--1.4.sql
 * fastbtree--1.5--1.6.sql and fastbtree--1.6--1.7.sql say what each counts).  Takes no locks; the
 * counters are backend-local and never reset, so callers compare two
 * calls.
 */
Datum
fastbtree_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[19];
	bool		nulls[19] = {0};
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/*
	 * 13 columns until extension version 1.3, 16 in 1.4 and 1.5, 17 in 1.6,
	 * 19 since
	 */
	if (tupdesc->natts != 13 && tupdesc->natts != 16 &&
		tupdesc->natts != 17 && tupdesc->natts != lengthof(values))
		elog(ERROR, "fastbtree_stats() is declared with %d columns, the library returns 13, 16, 17 or %d",
			 tupdesc->natts, (int) lengthof(values));
	values[i++] = Int64GetDatum((int64) fbt_stats.descents);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_validated);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_retried);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_fallback_odd);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_fallback_changed);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_fallback_bounds);
	values[i++] = Int64GetDatum((int64) fbt_stats.opt_fallback_unsupported);
	values[i++] = Int64GetDatum((int64) fbt_stats.locked_inner);
	values[i++] = Int64GetDatum((int64) fbt_stats.versions_healed);
	values[i++] = Int64GetDatum((int64) fbt_stats.recent_hits);
	values[i++] = Int64GetDatum((int64) fbt_stats.recent_misses);
	values[i++] = Int64GetDatum((int64) fbt_stats.scan_pin_reuses);
	values[i++] = Int64GetDatum((int64) fbt_stats.scan_pins_taken);
	values[i++] = Int64GetDatum((int64) fbt_stats.prefetch_issued);
	values[i++] = Int64GetDatum((int64) fbt_stats.prefetch_hits);
	values[i++] = Int64GetDatum((int64) fbt_stats.prefetch_distance);
	values[i++] = Int64GetDatum((int64) fbt_stats.prefetch_read_ahead);
	values[i++] = Int64GetDatum((int64) fbt_stats.leaf_hint_hits);
	values[i++] = Int64GetDatum((int64) fbt_stats.leaf_hint_misses);
	Assert(i == lengthof(values));
	/* (a 1.3 catalog's function takes the first 13, a 1.5 one's 16, ...) */
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values,
													  nulls)));
}
