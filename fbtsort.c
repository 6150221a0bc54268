/*-------------------------------------------------------------------------
 *
 * fbtsort.c
 *	  Index build for fastbtree: sort the heap's entries with a general
 *	  tuplesort, then load the tree bottom-up, left to right.
 *
 * PostgreSQL 15's btree-flavoured tuplesort refuses other access methods,
 * so entries are sorted as virtual tuples of (index attributes..., heap
 * TID, alive) ordered by each key column's opclass ordering operator ("<",
 * or ">" for DESC columns) with the column's collation and NULLS ordering,
 * and finally by heap TID: exactly the index order.  Leaves are filled to
 * the fillfactor, internal pages to FBT_NONLEAF_FILLFACTOR; each finished
 * page gets a suffix-truncated high key and a downlink one level up, as in
 * nbtsort.c (nbtree README, "Notes about bulk loading").  Every page is
 * written through generic WAL as a full image.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/smgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "fastbtree.h"

/* The page being filled on one level of the tree */
typedef struct FbtLevelState
{
	Page		page;			/* local copy being filled */
	Buffer		buf;			/* its block: allocated and pinned */
	uint32		level;
	Size		slack;			/* bytes to leave free (fillfactor) */
	struct FbtLevelState *parent;
} FbtLevelState;

typedef struct FbtBuildState
{
	Relation	heap;
	Relation	index;
	int			natts;			/* index attributes, key and INCLUDE */
	int			nkeyatts;
	bool		isunique;
	bool		nullsnotdistinct;
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	double		indtuples;		/* entries fed to the sort */
	IndexTuple	lastalive;		/* previous live entry, unique builds */
	FbtLevelState *leaf;
} FbtBuildState;

/* Allocate the next block and start an empty local page for it */
static void
_fbt_build_newpage(FbtBuildState *bs, FbtLevelState *lvl)
{
	lvl->page = (Page) palloc(BLCKSZ);
	_fbt_pageinit(lvl->page, lvl->level, lvl->level == 0 ? FBTP_LEAF : 0);
	lvl->buf = _fbt_allocbuf(bs->index);
	/* nobody else can see the index: no need to keep the lock meanwhile */
	LockBuffer(lvl->buf, BUFFER_LOCK_UNLOCK);
}

/* Write a finished local page to its block as a full-page WAL image */
static void
_fbt_build_writepage(Relation index, Buffer buf, Page page)
{
	FbtWal		wal;
	Page		img;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	_fbt_wal_start(&wal, index);
	img = _fbt_wal_register(&wal, buf, true);
	memcpy(img, page, BLCKSZ);
	_fbt_wal_finish(&wal);
	UnlockReleaseBuffer(buf);
}

static FbtLevelState *
_fbt_build_newlevel(FbtBuildState *bs, uint32 level)
{
	FbtLevelState *lvl = palloc0(sizeof(FbtLevelState));
	int			fillfactor = level == 0 ? FbtGetFillFactor(bs->index) :
		FBT_NONLEAF_FILLFACTOR;

	lvl->level = level;
	lvl->slack = BLCKSZ * (100 - fillfactor) / 100;
	_fbt_build_newpage(bs, lvl);
	return lvl;
}

static void
_fbt_build_additem(Relation index, Page page, IndexTuple itup)
{
	if (PageAddItem(page, (Item) itup, MAXALIGN(IndexTupleSize(itup)),
					InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add item to the index page of \"%s\"",
			 RelationGetRelationName(index));
}

/* The high key for a page whose successor starts with firstright */
static IndexTuple
_fbt_build_hikey(FbtBuildState *bs, FbtLevelState *lvl, Page page,
				 IndexTuple firstright)
{
	IndexTuple	hikey;

	if (lvl->level == 0)
	{
		IndexTuple	lastleft = (IndexTuple)
			PageGetItem(page, PageGetItemId(page, PageGetMaxOffsetNumber(page)));

		hikey = _fbt_truncate(bs->index, lastleft, firstright);
	}
	else
	{
		hikey = CopyIndexTuple(firstright);
		FbtPivotSetDownLink(hikey, InvalidBlockNumber);
	}
	return hikey;
}

static void _fbt_buildadd(FbtBuildState *bs, FbtLevelState *lvl,
						  IndexTuple itup);

/*
 * Finish lvl's page because itup does not fit: give it a high key and a
 * right-link, write it, post its successor's downlink to the parent level,
 * and start the successor with itup.  If the high key does not fit in the
 * room left, the page's last items move to the successor until it does.
 */
static void
_fbt_build_finishpage(FbtBuildState *bs, FbtLevelState *lvl, IndexTuple itup)
{
	Page		opage = lvl->page;
	Buffer		obuf = lvl->buf;
	IndexTuple *carry;
	int			ncarry = 0;
	IndexTuple	firstright = itup;
	IndexTuple	hikey;
	IndexTuple	downlink;
	BlockNumber nblkno;
	int			i;

	carry = palloc(sizeof(IndexTuple) * (PageGetMaxOffsetNumber(opage) + 1));
	hikey = _fbt_build_hikey(bs, lvl, opage, firstright);
	while (MAXALIGN(IndexTupleSize(hikey)) > PageGetFreeSpace(opage) &&
		   PageGetMaxOffsetNumber(opage) > 1)
	{
		OffsetNumber last = PageGetMaxOffsetNumber(opage);

		carry[ncarry++] = CopyIndexTuple((IndexTuple)
										 PageGetItem(opage, PageGetItemId(opage, last)));
		PageIndexTupleDelete(opage, last);
		firstright = carry[ncarry - 1];
		pfree(hikey);
		hikey = _fbt_build_hikey(bs, lvl, opage, firstright);
	}
	if (PageAddItem(opage, (Item) hikey, MAXALIGN(IndexTupleSize(hikey)),
					P_HIKEY, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add high key to the index page of \"%s\"",
			 RelationGetRelationName(bs->index));

	_fbt_build_newpage(bs, lvl);
	nblkno = BufferGetBlockNumber(lvl->buf);
	FbtPageGetOpaque(opage)->fbto_next = nblkno;
	FbtPageGetOpaque(lvl->page)->fbto_prev = BufferGetBlockNumber(obuf);
	_fbt_build_writepage(bs->index, obuf, opage);

	/* downlinks: the parent level starts with minus infinity to opage */
	if (lvl->parent == NULL)
	{
		IndexTuple	minusinf = _fbt_pivot_minus_infinity(NULL);

		lvl->parent = _fbt_build_newlevel(bs, lvl->level + 1);
		FbtPivotSetDownLink(minusinf, BufferGetBlockNumber(obuf));
		_fbt_build_additem(bs->index, lvl->parent->page, minusinf);
		pfree(minusinf);
	}
	downlink = hikey;
	FbtPivotSetDownLink(downlink, nblkno);
	_fbt_buildadd(bs, lvl->parent, downlink);
	pfree(downlink);
	pfree(opage);

	/* carried items were taken from the end: add them back in order */
	for (i = ncarry - 1; i >= 0; i--)
	{
		_fbt_buildadd(bs, lvl, carry[i]);
		pfree(carry[i]);
	}
	pfree(carry);
}

/*
 * Add one tuple (a leaf tuple, or a pivot with a downlink) to the level's
 * current page, finishing the page first if the tuple would eat into the
 * fillfactor slack.  The first data item of an internal page becomes minus
 * infinity.
 */
static void
_fbt_buildadd(FbtBuildState *bs, FbtLevelState *lvl, IndexTuple itup)
{
	Size		itupsz = MAXALIGN(IndexTupleSize(itup));
	Page		page = lvl->page;

	if (PageGetMaxOffsetNumber(page) >= 1 &&
		PageGetFreeSpace(page) < itupsz + lvl->slack)
	{
		_fbt_build_finishpage(bs, lvl, itup);
		page = lvl->page;
		if (PageGetMaxOffsetNumber(page) >= 1)
		{
			/* carried items went first; itup follows them */
			_fbt_buildadd(bs, lvl, itup);
			return;
		}
	}

	if (lvl->level > 0 && PageGetMaxOffsetNumber(page) == 0)
	{
		IndexTuple	minusinf = _fbt_pivot_minus_infinity(itup);

		_fbt_build_additem(bs->index, page, minusinf);
		pfree(minusinf);
	}
	else
		_fbt_build_additem(bs->index, page, itup);
}

/*
 * Finish the build: write each level's last (rightmost) page and point the
 * metapage at the top level's single page, the root.
 */
static void
_fbt_build_finish(FbtBuildState *bs, Buffer metabuf)
{
	FbtLevelState *lvl = bs->leaf;
	BlockNumber root = P_NONE;
	uint32		rootlevel = 0;
	FbtWal		wal;
	Page		metaimg;

	while (lvl != NULL)
	{
		FbtLevelState *parent = lvl->parent;

		if (parent == NULL)
		{
			FbtPageGetOpaque(lvl->page)->fbto_flags |= FBTP_ROOT;
			root = BufferGetBlockNumber(lvl->buf);
			rootlevel = lvl->level;
		}
		_fbt_build_writepage(bs->index, lvl->buf, lvl->page);
		pfree(lvl->page);
		pfree(lvl);
		lvl = parent;
	}

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	_fbt_wal_start(&wal, bs->index);
	metaimg = _fbt_wal_register(&wal, metabuf, true);
	_fbt_initmetapage(metaimg, root, rootlevel);
	_fbt_wal_finish(&wal);
	UnlockReleaseBuffer(metabuf);
}

/* table_index_build_scan() callback: feed one entry to the sort */
static void
_fbt_build_callback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *state)
{
	FbtBuildState *bs = (FbtBuildState *) state;
	TupleTableSlot *slot = bs->slot;
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < bs->natts; i++)
	{
		slot->tts_values[i] = values[i];
		slot->tts_isnull[i] = isnull[i];
	}
	slot->tts_values[bs->natts] = PointerGetDatum(tid);
	slot->tts_isnull[bs->natts] = false;
	slot->tts_values[bs->natts + 1] = BoolGetDatum(tupleIsAlive);
	slot->tts_isnull[bs->natts + 1] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(bs->sort, slot);
	bs->indtuples += 1;
}

/* Unique builds: a live entry equal to the previous live one is an error */
static void
_fbt_build_check_unique(FbtBuildState *bs, IndexTuple itup)
{
	if (bs->lastalive != NULL &&
		_fbt_keep_natts(bs->index, bs->lastalive, itup) > bs->nkeyatts)
	{
		TupleDesc	desc = RelationGetDescr(bs->index);
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		bool		anynull = false;
		int			i;

		index_deform_tuple(itup, desc, values, isnull);
		for (i = 0; i < bs->nkeyatts; i++)
			anynull |= isnull[i];
		if (!anynull || bs->nullsnotdistinct)
		{
			char	   *key_desc = BuildIndexValueDescription(bs->index,
															  values, isnull);

			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("could not create unique index \"%s\"",
							RelationGetRelationName(bs->index)),
					 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
					 errdetail("Duplicate keys exist."),
					 errtableconstraint(bs->heap,
										RelationGetRelationName(bs->index))));
		}
	}
	if (bs->lastalive != NULL)
		pfree(bs->lastalive);
	bs->lastalive = CopyIndexTuple(itup);
}

/*
 * fbtbuild() -- ambuild: build a new index over heap.
 *
 * index must be empty (no blocks).  Scans the heap (reporting progress in
 * pg_stat_progress_create_index), sorts, loads, and writes the metapage in
 * block 0.  Holds no buffer locks while scanning or sorting, so the build
 * can be cancelled.  Returns heap and index tuple counts.  Errors: 23505
 * "could not create unique index" as btree's, 54000 for an oversized row.
 * For a unique index, a NOTICE says that INSERT ... ON CONFLICT cannot use
 * it (PostgreSQL 15 accepts only btree indexes as arbiters).
 */
IndexBuildResult *
fbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	FbtBuildState bs;
	TupleDesc	idesc = RelationGetDescr(index);
	TupleDesc	sortdesc;
	int			natts = IndexRelationGetNumberOfAttributes(index);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	AttrNumber	attNums[INDEX_MAX_KEYS + 1];
	Oid			sortOps[INDEX_MAX_KEYS + 1];
	Oid			sortColls[INDEX_MAX_KEYS + 1];
	bool		nullsFirst[INDEX_MAX_KEYS + 1];
	Buffer		metabuf;
	double		reltuples;
	double		loaded = 0;
	int			i;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	if (indexInfo->ii_Unique &&
		(index->rd_createSubid != InvalidSubTransactionId ||
		 indexInfo->ii_Concurrent))
		ereport(NOTICE,
				(errmsg("unique index \"%s\" cannot be used by INSERT ... ON CONFLICT",
						RelationGetRelationName(index)),
				 errdetail("PostgreSQL 15 accepts only btree indexes as ON CONFLICT arbiters, and rejects every INSERT ... ON CONFLICT on a table with a unique index of another access method."),
				 errhint("Use a btree unique index on tables that need INSERT ... ON CONFLICT.")));

	memset(&bs, 0, sizeof(bs));
	bs.heap = heap;
	bs.index = index;
	bs.natts = natts;
	bs.nkeyatts = nkeyatts;
	bs.isunique = indexInfo->ii_Unique;
	bs.nullsnotdistinct = indexInfo->ii_NullsNotDistinct;

	/* block 0: the metapage, written last */
	metabuf = _fbt_allocbuf(index);
	if (BufferGetBlockNumber(metabuf) != FBT_METAPAGE)
		elog(ERROR, "unexpected metapage block %u in index \"%s\"",
			 BufferGetBlockNumber(metabuf), RelationGetRelationName(index));
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* sort tuples: index attributes, heap TID, alive */
	sortdesc = CreateTemplateTupleDesc(natts + 2);
	for (i = 0; i < natts; i++)
		TupleDescCopyEntry(sortdesc, i + 1, idesc, i + 1);
	TupleDescInitEntry(sortdesc, natts + 1, "htid", TIDOID, -1, 0);
	TupleDescInitEntry(sortdesc, natts + 2, "alive", BOOLOID, -1, 0);

	for (i = 0; i < nkeyatts; i++)
	{
		bool		desc = (index->rd_indoption[i] & INDOPTION_DESC) != 0;

		attNums[i] = i + 1;
		sortOps[i] = get_opfamily_member(index->rd_opfamily[i],
										 index->rd_opcintype[i],
										 index->rd_opcintype[i],
										 desc ? BTGreaterStrategyNumber :
										 BTLessStrategyNumber);
		if (!OidIsValid(sortOps[i]))
			elog(ERROR, "missing operator %d(%u,%u) in opfamily %u",
				 desc ? BTGreaterStrategyNumber : BTLessStrategyNumber,
				 index->rd_opcintype[i], index->rd_opcintype[i],
				 index->rd_opfamily[i]);
		sortColls[i] = index->rd_indcollation[i];
		nullsFirst[i] = (index->rd_indoption[i] & INDOPTION_NULLS_FIRST) != 0;
	}
	attNums[nkeyatts] = natts + 1;
	sortOps[nkeyatts] = TIDLessOperator;
	sortColls[nkeyatts] = InvalidOid;
	nullsFirst[nkeyatts] = false;

	bs.sort = tuplesort_begin_heap(sortdesc, nkeyatts + 1, attNums, sortOps,
								   sortColls, nullsFirst,
								   maintenance_work_mem, NULL, TUPLESORT_NONE);
	/* the scan callback fills a virtual slot; the sort returns minimal ones */
	bs.slot = MakeSingleTupleTableSlot(sortdesc, &TTSOpsVirtual);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 FBT_PHASE_TABLESCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   _fbt_build_callback, &bs, NULL);
	ExecDropSingleTupleTableSlot(bs.slot);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBT_PHASE_SORT);
	tuplesort_performsort(bs.sort);

	{
		const int	progress_index[] = {PROGRESS_CREATEIDX_SUBPHASE,
		PROGRESS_CREATEIDX_TUPLES_TOTAL, PROGRESS_CREATEIDX_TUPLES_DONE};
		const int64 progress_vals[] = {FBT_PHASE_LEAF_LOAD,
		(int64) bs.indtuples, 0};

		pgstat_progress_update_multi_param(3, progress_index, progress_vals);
	}

	bs.slot = MakeSingleTupleTableSlot(sortdesc, &TTSOpsMinimalTuple);
	while (tuplesort_gettupleslot(bs.sort, true, false, bs.slot, NULL))
	{
		Datum	   *values;
		bool	   *isnull;
		IndexTuple	itup;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(bs.slot);
		values = bs.slot->tts_values;
		isnull = bs.slot->tts_isnull;

		itup = index_form_tuple(idesc, values, isnull);
		itup->t_tid = *((ItemPointer) DatumGetPointer(values[natts]));
		_fbt_check_item_size(index, heap, itup);

		if (bs.isunique && DatumGetBool(values[natts + 1]))
			_fbt_build_check_unique(&bs, itup);

		if (bs.leaf == NULL)
			bs.leaf = _fbt_build_newlevel(&bs, 0);
		_fbt_buildadd(&bs, bs.leaf, itup);
		pfree(itup);

		if (((int64) ++loaded % 1024) == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
										 (int64) loaded);
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
								 (int64) loaded);
	ExecDropSingleTupleTableSlot(bs.slot);
	tuplesort_end(bs.sort);

	_fbt_build_finish(&bs, metabuf);

	/* the relcache's cached metapage, if any, predates the build */
	if (index->rd_amcache != NULL)
	{
		pfree(index->rd_amcache);
		index->rd_amcache = NULL;
	}

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * fbtbuildempty() -- ambuildempty: write the init fork of an unlogged
 * index, an empty metapage, WAL-logged and synced as core's AMs do.
 */
void
fbtbuildempty(Relation index)
{
	Page		metapage = (Page) palloc(BLCKSZ);

	_fbt_initmetapage(metapage, P_NONE, 0);
	PageSetChecksumInplace(metapage, FBT_METAPAGE);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, FBT_METAPAGE,
			  (char *) metapage, true);
#if PG_VERSION_NUM >= 160000
	log_newpage(&(RelationGetSmgr(index))->smgr_rlocator.locator,
				INIT_FORKNUM, FBT_METAPAGE, metapage, true);
#else
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node,
				INIT_FORKNUM, FBT_METAPAGE, metapage, true);
#endif
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(metapage);
}
