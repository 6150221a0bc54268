/*-------------------------------------------------------------------------
 *
 * fbtsort.c
 *	  Index build for fastbtree: sort the heap's entries with tuplesort,
 *	  then load the tree bottom-up, left to right.
 *
 * Entries are sorted by tuplesort's index-tuple sort, in the order of the
 * index's own operator families: each key column by its sortsupport
 * procedure (support proc 2) or, failing that, its three-way comparison
 * (support proc 1), with the column's collation, DESC and NULLS ordering,
 * and finally by heap TID -- exactly the order the tree is searched in,
 * for every operator class amvalidate accepts, including classes whose
 * operators belong to no btree family (see _fbt_build_sortrel for how
 * tuplesort is made to accept a non-btree index).  As in nbtsort.c, a
 * unique build sorts live entries in one tuplesort, which raises btree's
 * own duplicate-key error, and dead ones in a second; the load merges the
 * two.
 *
 * A parallel build is nbtsort.c's: the heap is scanned by the leader and
 * the workers together (a parallel table scan), each participant sorting
 * what it read into its own part of a shared tuplesort, and the leader's
 * tuplesort merges the parts into one sorted stream, which the leader
 * loads exactly as a serial build loads its own (the same pages, block for
 * block: the sort order is total, heap TID last).  Workers are asked for
 * as core asks for btree's (plan_create_index_workers(): the GUCs, the
 * table's parallel_workers, maintenance_work_mem, parallel-unsafe
 * expressions or predicate); see _fbt_build_workers().
 *
 * Pages are filled as nbtsort.c fills them (nbtree README, "Notes about
 * bulk loading"), so that a build makes btree's pages: the same items on
 * each page of every level, in the same blocks.  Leaves are filled to the
 * fillfactor, internal pages to FBT_NONLEAF_FILLFACTOR, with a page's free
 * space counted as btree's page would have it (_fbt_build_pagefull: room
 * kept for the high key's line pointer, and on leaves for a heap TID; the
 * fillfactor test counts the last item's posting list, which its high key
 * would drop, as free).  When a page is full, its last item moves on to a
 * new page and makes the full page's high key: suffix-truncated against the
 * item before it on a leaf, the item itself on an internal page (on the new
 * page it keeps only its downlink: minus infinity).  Then a finished page's
 * downlink goes one level up with its low key (its left sibling's high
 * key), and the rightmost pages' when the load ends.  Our special space is
 * 8 bytes larger than btree's, so a leaf btree fills to its last bytes
 * (fillfactor 100 with duplicates and no posting lists) holds an item less
 * here.  Pages are written outside shared buffers, through smgr, and
 * WAL-logged as whole pages in batches (fbt_bulk_*, fbtcompat.h), as
 * nbtree's build writes them; in both WAL modes, since core's full-page
 * records need no resource manager of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/progress.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "fastbtree.h"

/*
 * nbtree's page special space (BTPageOpaqueData: two sibling links, the
 * level, flags and a vacuum cycle id) is 8 bytes smaller than ours.  The
 * build measures a page's room as btree's page would have it, so that its
 * pages end where btree's do; see _fbt_build_pagefull().
 */
#define FBT_BUILD_BTREE_SPECIAL \
	MAXALIGN(2 * sizeof(BlockNumber) + sizeof(uint32) + 2 * sizeof(uint16))
#define FBT_BUILD_SPECIAL_EXTRA \
	(MAXALIGN(sizeof(FbtPageOpaqueData)) - FBT_BUILD_BTREE_SPECIAL)

/* The page being filled on one level of the tree */
typedef struct FbtLevelState
{
	Page		page;			/* local copy being filled: data items only,
								 * the high key goes in when it is finished */
	BlockNumber blkno;			/* its block */
	uint32		level;
	Size		slack;			/* bytes to leave free (fillfactor) */
	Size		lastextra;		/* posting list bytes of the page's last
								 * item, which its high key would not keep */
	IndexTuple	lowkey;			/* pivot for the page's downlink: the left
								 * sibling's high key, or minus infinity */
	struct FbtLevelState *parent;
} FbtLevelState;

typedef struct FbtBuildState
{
	Relation	heap;
	Relation	index;
	Relation	sortrel;		/* index as tuplesort sees it */
	int			nkeyatts;
	Tuplesortstate *spool;		/* live entries; unique-checked if unique */
	Tuplesortstate *spool2;		/* dead entries of a unique build, or NULL */
	SortSupport mergekeys;		/* per key column, to merge the two spools */
	double		indtuples;		/* entries fed to the sorts */
	bool		havedead;		/* an entry went to spool2 */
	FbtLevelState *leaf;
	bool		allequalimage;	/* _fbt_allequalimage(), for the metapage */
	bool		deduplicate;	/* merge equal entries as they load */
	FbtDedupState dedup;		/* the pending posting list, its base a
								 * copy */
	BlockNumber pages_alloced;	/* blocks given out: the metapage's and
								 * the tree's */
	FbtBulkWriter writer;
} FbtBuildState;

/* Keys of a parallel build's entries in its DSM table of contents */
#define FBT_PARALLEL_KEY_SHARED			UINT64CONST(0xFB7B000000000001)
#define FBT_PARALLEL_KEY_TUPLESORT		UINT64CONST(0xFB7B000000000002)
#define FBT_PARALLEL_KEY_TUPLESORT_DEAD	UINT64CONST(0xFB7B000000000003)
#define FBT_PARALLEL_KEY_QUERY_TEXT		UINT64CONST(0xFB7B000000000004)
#define FBT_PARALLEL_KEY_WAL_USAGE		UINT64CONST(0xFB7B000000000005)
#define FBT_PARALLEL_KEY_BUFFER_USAGE	UINT64CONST(0xFB7B000000000006)

/*
 * The state of a parallel build in dynamic shared memory (nbtsort.c's
 * BTShared).  The first fields are set by the leader before the workers
 * start and not changed; the counts after mutex are added to by each
 * participant when its part of the scan and sort is done, under mutex, and
 * read by the leader once all have.  The parallel table scan's descriptor
 * follows, at FbtBuildSharedTableScan().
 */
typedef struct FbtBuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isunique;
	bool		nulls_not_distinct;
	bool		isconcurrent;
	int			scantuplesortstates;	/* participants' tuplesorts */
	int64		queryid;		/* reported by the workers */

	ConditionVariable workersdonecv;	/* signalled as each one is done */

	slock_t		mutex;
	int			nparticipantsdone;
	double		reltuples;		/* heap tuples scanned */
	double		indtuples;		/* entries fed to the sorts */
	bool		havedead;		/* a dead entry went to a dead spool */
	bool		brokenhotchain; /* a scan found a broken HOT chain */
} FbtBuildShared;

/* (BUFFERALIGN: shm_toc_allocate()'s alignment, which the scan may need) */
#define FbtBuildSharedTableScan(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + \
							  BUFFERALIGN(sizeof(FbtBuildShared))))

/* The leader's handle on a parallel build (nbtsort.c's BTLeader) */
typedef struct FbtBuildLeader
{
	ParallelContext *pcxt;
	int			nparticipants;	/* workers launched, plus the leader */
	FbtBuildShared *shared;
	Sharedsort *sharedsort;
	Sharedsort *sharedsort2;	/* the dead entries' sort, unique builds */
	Snapshot	snapshot;		/* the scan's: SnapshotAny, or registered
								 * MVCC for CONCURRENTLY */
	WalUsage   *walusage;		/* per worker */
	BufferUsage *bufferusage;	/* per worker */
} FbtBuildLeader;

/*
 * Allocate the next block and start an empty local page for it (blocks are
 * numbered in the order pages are started, as nbtree's build numbers them)
 */
static void
_fbt_build_newpage(FbtBuildState *bs, FbtLevelState *lvl)
{
	lvl->page = fbt_bulk_get_page(&bs->writer);
	_fbt_pageinit(lvl->page, lvl->level, lvl->level == 0 ? FBTP_LEAF : 0);
	lvl->blkno = bs->pages_alloced++;
}

static FbtLevelState *
_fbt_build_newlevel(FbtBuildState *bs, uint32 level)
{
	FbtLevelState *lvl = palloc0(sizeof(FbtLevelState));
	int			fillfactor = level == 0 ? FbtGetFillFactor(bs->index) :
		FBT_NONLEAF_FILLFACTOR;

	lvl->level = level;
	lvl->slack = BLCKSZ * (100 - fillfactor) / 100;
	/* the level's first page is its leftmost */
	lvl->lowkey = _fbt_pivot_minus_infinity(NULL);
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

/*
 * Add a data item at the end of lvl's page.  The first data item of an
 * internal page keeps only its downlink: it is minus infinity.
 */
static void
_fbt_build_append(FbtBuildState *bs, FbtLevelState *lvl, IndexTuple itup)
{
	if (lvl->level > 0 && PageGetMaxOffsetNumber(lvl->page) == 0)
	{
		IndexTuple	minusinf = _fbt_pivot_minus_infinity(itup);

		_fbt_build_additem(bs->index, lvl->page, minusinf);
		pfree(minusinf);
	}
	else
		_fbt_build_additem(bs->index, lvl->page, itup);
}

/*
 * Whether lvl's page must be finished before itup is added: the rule of
 * nbtree's build, so that each page holds the items btree's would.  The
 * page is full if itup does not fit in the room left (on a leaf, with 8
 * bytes to spare for the heap TID that the high key made from itup may
 * need), or, once it holds two items, if the page is already past its
 * fillfactor, counting as free the posting list bytes of its last item
 * (which its high key would not keep).  The room is what btree's page
 * would have: the free space less the line pointers of itup and of the
 * high key to come, plus the 8 bytes of special space btree's page does
 * not spend.  So btree's page can hold 8 bytes more than ours, and when
 * it does, ours is finished a tuple earlier: itup must fit for real, and
 * so must the high key it would become as the page's last item.
 */
static bool
_fbt_build_pagefull(FbtBuildState *bs, FbtLevelState *lvl, IndexTuple itup)
{
	Page		page = lvl->page;
	OffsetNumber nitems = PageGetMaxOffsetNumber(page);
	bool		isleaf = lvl->level == 0;
	Size		itupsz = MAXALIGN(IndexTupleSize(itup));
	Size		tidsz = isleaf ? MAXALIGN(sizeof(ItemPointerData)) : 0;
	Size		gap;
	Size		room;

	/* a page keeps at least one item after its last moves right */
	if (nitems < 2)
		return false;

	gap = ((PageHeader) page)->pd_upper - ((PageHeader) page)->pd_lower;
	room = gap + FBT_BUILD_SPECIAL_EXTRA;
	room = room > 2 * sizeof(ItemIdData) ? room - 2 * sizeof(ItemIdData) : 0;
	if (room < itupsz + tidsz || room + lvl->lastextra < lvl->slack)
		return true;

	/* our page's own room, for itup and for the high key replacing it */
	if (gap < itupsz + sizeof(ItemIdData))
		return true;
	if (isleaf && gap < itupsz + tidsz + sizeof(ItemIdData))
	{
		IndexTuple	prev = (IndexTuple)
			PageGetItem(page, PageGetItemId(page, nitems));
		IndexTuple	hikey = _fbt_truncate(bs->index, prev, itup);
		bool		fits;

		fits = gap >= MAXALIGN(IndexTupleSize(hikey)) + sizeof(ItemIdData);
		pfree(hikey);
		if (!fits)
			return true;
	}
	return false;
}

static void _fbt_buildadd(FbtBuildState *bs, FbtLevelState *lvl,
						  IndexTuple itup);

/*
 * Finish lvl's page, which holds two or more items.  Its last item moves
 * to a new page, the next on the level, and makes the finished page's high
 * key: on a leaf the shortest pivot that separates it from the item before
 * it; on an internal page the item itself, whose downlink goes with it to
 * the new page, where it is minus infinity.  The finished page is linked
 * to the new one and written, its downlink (from its low key) goes to the
 * parent level, made now if this is the level's first page to finish, and
 * its high key becomes the new page's low key.  Blocks are allocated in
 * the order nbtree's build allocates them.
 */
static void
_fbt_build_finishpage(FbtBuildState *bs, FbtLevelState *lvl)
{
	Page		opage = lvl->page;
	BlockNumber oblkno = lvl->blkno;
	OffsetNumber lastoff = PageGetMaxOffsetNumber(opage);
	IndexTuple	moved;
	IndexTuple	hikey;

	Assert(lastoff >= 2);
	moved = CopyIndexTuple((IndexTuple)
						   PageGetItem(opage, PageGetItemId(opage, lastoff)));
	if (lvl->level == 0)
		hikey = _fbt_truncate(bs->index, (IndexTuple)
							  PageGetItem(opage,
										  PageGetItemId(opage, lastoff - 1)),
							  moved);
	else
	{
		hikey = CopyIndexTuple(moved);
		FbtPivotSetDownLink(hikey, InvalidBlockNumber);
	}
	/* the pagefull test kept room for the high key in the item's place */
	PageIndexTupleDelete(opage, lastoff);
	if (PageAddItem(opage, (Item) hikey, MAXALIGN(IndexTupleSize(hikey)),
					P_HIKEY, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add high key to the index page of \"%s\"",
			 RelationGetRelationName(bs->index));

	_fbt_build_newpage(bs, lvl);
	_fbt_build_append(bs, lvl, moved);
	pfree(moved);
	FbtPageGetOpaque(opage)->fbto_next = lvl->blkno;
	FbtPageGetOpaque(lvl->page)->fbto_prev = oblkno;

	if (lvl->parent == NULL)
		lvl->parent = _fbt_build_newlevel(bs, lvl->level + 1);
	FbtPivotSetDownLink(lvl->lowkey, oblkno);
	_fbt_buildadd(bs, lvl->parent, lvl->lowkey);
	pfree(lvl->lowkey);
	lvl->lowkey = hikey;

	/* (the bulk writer frees the page) */
	fbt_bulk_write(&bs->writer, oblkno, opage);
}

/*
 * Add one tuple (a leaf tuple, or a pivot with a downlink) at the end of
 * the level, finishing the current page first if it is full.
 */
static void
_fbt_buildadd(FbtBuildState *bs, FbtLevelState *lvl, IndexTuple itup)
{
	if (_fbt_build_pagefull(bs, lvl, itup))
		_fbt_build_finishpage(bs, lvl);
	_fbt_build_append(bs, lvl, itup);
	lvl->lastextra = lvl->level == 0 && FbtTupleIsPosting(itup) ?
		IndexTupleSize(itup) - FbtTupleGetPostingOffset(itup) : 0;
}

/*
 * Finish the build: from the leaves up, post each level's last (rightmost)
 * page to the level above, if any, and write it; the top level's single
 * page is the root, which the metapage points to.
 */
static void
_fbt_build_finish(FbtBuildState *bs)
{
	FbtLevelState *lvl = bs->leaf;
	BlockNumber root = P_NONE;
	uint32		rootlevel = 0;
	Page		metapage;

	while (lvl != NULL)
	{
		FbtLevelState *parent;

		/* posting may finish pages above, even add the top level */
		if (lvl->parent != NULL)
		{
			FbtPivotSetDownLink(lvl->lowkey, lvl->blkno);
			_fbt_buildadd(bs, lvl->parent, lvl->lowkey);
		}
		else
		{
			FbtPageGetOpaque(lvl->page)->fbto_flags |= FBTP_ROOT;
			root = lvl->blkno;
			rootlevel = lvl->level;
		}
		fbt_bulk_write(&bs->writer, lvl->blkno, lvl->page);
		parent = lvl->parent;
		pfree(lvl->lowkey);
		pfree(lvl);
		lvl = parent;
	}

	metapage = fbt_bulk_get_page(&bs->writer);
	_fbt_initmetapage(metapage, root, rootlevel, bs->allequalimage);
	fbt_bulk_write(&bs->writer, FBT_METAPAGE, metapage);
	fbt_bulk_finish(&bs->writer);
}

/*
 * _fbt_build_sortrel() -- the relation tuplesort is given as the index.
 *
 * PostgreSQL 15's tuplesort has exactly one sort of index tuples by an
 * index's support procedures, tuplesort_begin_index_btree(): it prepares
 * each column's comparator with PrepareSortSupportFromIndexRel(), which takes
 * the sortsupport procedure (support proc 2) of the column's operator family
 * and falls back to a shim over proc 1 -- exactly the order we want, since
 * our support procedures are numbered as btree's -- but first refuses any
 * relation whose relam is not btree's.  The other entry points cannot do it:
 * tuplesort_begin_heap() and _datum() want btree ordering operators (what
 * made CREATE INDEX fail for operator classes of operators that belong to
 * no btree family), _cluster() checks relam the same way, and _index_gist()
 * wants GiST's support proc 11.
 *
 * So tuplesort gets a read-only alias of the index: a shallow copy of its
 * relcache entry with a private pg_class form whose relam is btree's.  What
 * tuplesort reads through it (the tuple descriptor, rd_index, rd_opfamily,
 * rd_opcintype, rd_indoption, rd_indcollation, and proc 1 through
 * index_getprocinfo()) is the real entry's index support data, which stays
 * where it is for the whole build: the index is open (its reference count
 * keeps the entry) and locked, and relcache invalidation of an open index
 * reloads it in place (RelationReloadIndexInfo) without freeing that data.
 * Copying the pg_class form, rather than setting relam in the real entry
 * around the tuplesort_begin_index_btree() call, keeps the alias immune to
 * such a reload, which any catalog access in between could trigger.  Proc
 * 1 of every key column is looked up (and opclass options read) on the real
 * entry first, so tuplesort's lookups through the alias only read shared
 * caches.  The alias has no storage manager handle and no AM cache; it is
 * never opened, locked, reference-counted, or used for I/O, and is freed by
 * fbtbuild() after tuplesort_end().
 */
static Relation
_fbt_build_sortrel(Relation index)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	Relation	sortrel;
	int			i;

	for (i = 0; i < nkeyatts; i++)
		(void) index_getprocinfo(index, i + 1, FBTORDER_PROC);

	sortrel = (Relation) palloc(sizeof(RelationData));
	memcpy(sortrel, index, sizeof(RelationData));
	sortrel->rd_rel = (Form_pg_class) palloc(CLASS_TUPLE_SIZE);
	memcpy(sortrel->rd_rel, index->rd_rel, CLASS_TUPLE_SIZE);
	sortrel->rd_rel->relam = BTREE_AM_OID;
	sortrel->rd_smgr = NULL;
	sortrel->rd_amcache = NULL;
	return sortrel;
}

/*
 * Load the pending posting list of a deduplicating build (build-time
 * deduplication, as nbtree's build does it: runs of equal entries, in
 * sorted order, merged up to the posting list size limit), if any.
 */
static void
_fbt_build_flush_pending(FbtBuildState *bs)
{
	IndexTuple	merged;

	if (bs->dedup.base == NULL)
		return;
	merged = _fbt_dedup_form_pending(&bs->dedup);
	_fbt_buildadd(bs, bs->leaf, merged ? merged : bs->dedup.base);
	if (merged)
		pfree(merged);
	pfree(bs->dedup.base);
	bs->dedup.base = NULL;
}

/* table_index_build_scan() callback: feed one entry to a sort */
static void
_fbt_build_callback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *state)
{
	FbtBuildState *bs = (FbtBuildState *) state;

	/* dead entries are exempt from the unique check, as in btree */
	if (tupleIsAlive || bs->spool2 == NULL)
		tuplesort_putindextuplevalues(bs->spool, index, tid, values, isnull);
	else
	{
		tuplesort_putindextuplevalues(bs->spool2, index, tid, values, isnull);
		bs->havedead = true;
	}
	bs->indtuples += 1;
}

/*
 * Order of two entries from different spools, in index order: the key
 * columns through the index's own comparators (the ones tuplesort sorted
 * each spool with), then the heap TID.
 */
static int
_fbt_build_cmp(FbtBuildState *bs, IndexTuple a, IndexTuple b)
{
	TupleDesc	desc = RelationGetDescr(bs->index);
	int			i;

	for (i = 0; i < bs->nkeyatts; i++)
	{
		Datum		va,
					vb;
		bool		na,
					nb;
		int			r;

		va = index_getattr(a, i + 1, desc, &na);
		vb = index_getattr(b, i + 1, desc, &nb);
		r = ApplySortComparator(va, na, vb, nb, &bs->mergekeys[i]);
		if (r != 0)
			return r;
	}
	return ItemPointerCompare(&a->t_tid, &b->t_tid);
}

/* Comparators to merge the spools of a unique build, as tuplesort's */
static SortSupport
_fbt_build_mergekeys(Relation index)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	SortSupport keys = palloc0(sizeof(SortSupportData) * nkeyatts);
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		SortSupport ssup = &keys[i];

		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = index->rd_indcollation[i];
		ssup->ssup_nulls_first =
			(index->rd_indoption[i] & INDOPTION_NULLS_FIRST) != 0;
		ssup->ssup_reverse = (index->rd_indoption[i] & INDOPTION_DESC) != 0;
		ssup->ssup_attno = i + 1;
		ssup->abbreviate = false;
		_fbt_prepare_sortsupport_col(index, i, ssup);
	}
	return keys;
}

/*
 * Begin the sorts of one build participant: the live entries' (checked for
 * uniqueness if unique) in sortmem kB, and for a unique index the dead
 * entries' in sortmem2 kB.  coordinate and coordinate2 are the parallel
 * sort's coordination for each, or NULL for a serial build.
 */
static void
_fbt_build_begin_spools(FbtBuildState *bs, bool unique,
						bool nulls_not_distinct, int sortmem, int sortmem2,
						SortCoordinate coordinate, SortCoordinate coordinate2)
{
	bs->spool = tuplesort_begin_index_btree(bs->heap, bs->sortrel, unique,
											nulls_not_distinct, sortmem,
											coordinate, TUPLESORT_NONE);
	if (unique)
		bs->spool2 = tuplesort_begin_index_btree(bs->heap, bs->sortrel,
												 false, false, sortmem2,
												 coordinate2,
												 TUPLESORT_NONE);
}

/* A participant's or the leader's coordination of one shared sort */
static SortCoordinate
_fbt_build_coordinate(Sharedsort *sharedsort, bool isworker,
					  int nparticipants)
{
	SortCoordinate coordinate;

	if (sharedsort == NULL)
		return NULL;
	coordinate = (SortCoordinate) palloc0(sizeof(SortCoordinateData));
	coordinate->isWorker = isworker;
	coordinate->nParticipants = isworker ? -1 : nparticipants;
	coordinate->sharedsort = sharedsort;
	return coordinate;
}

/*
 * One participant's part of a parallel build (the leader's or a worker's):
 * join the parallel heap scan, sort what it reads into the participant's
 * part of the shared sorts, in sortmem kB, then add its counts to shared
 * and wake the leader.  progress: report the scan and sort phases (the
 * leader only).  No buffer pins or locks held on entry or return.  Errors
 * are the serial build's, raised in the participant (a worker's reaches the
 * leader through the parallel context).
 */
static void
_fbt_parallel_scan_and_sort(Relation heap, Relation index,
							FbtBuildShared *shared, Sharedsort *sharedsort,
							Sharedsort *sharedsort2, int sortmem,
							bool progress)
{
	FbtBuildState ws;
	IndexInfo  *indexInfo;
	TableScanDesc scan;
	double		reltuples;

	memset(&ws, 0, sizeof(ws));
	ws.heap = heap;
	ws.index = index;
	ws.sortrel = _fbt_build_sortrel(index);
	/* (a worker's dead spool: work_mem, unless its share is smaller) */
	_fbt_build_begin_spools(&ws, shared->isunique, shared->nulls_not_distinct,
							sortmem, Min(sortmem, work_mem),
							_fbt_build_coordinate(sharedsort, true, -1),
							_fbt_build_coordinate(sharedsort2, true, -1));

	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;
	scan = table_beginscan_parallel(heap, FbtBuildSharedTableScan(shared));
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   _fbt_build_callback, &ws, scan);

	if (progress)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 FBT_PHASE_SORT);
	tuplesort_performsort(ws.spool);
	if (ws.spool2 != NULL)
	{
		if (progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
										 FBT_PHASE_SORT_DEAD);
		tuplesort_performsort(ws.spool2);
	}

	SpinLockAcquire(&shared->mutex);
	shared->nparticipantsdone++;
	shared->reltuples += reltuples;
	shared->indtuples += ws.indtuples;
	if (ws.havedead)
		shared->havedead = true;
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableSignal(&shared->workersdonecv);

	/* the sorted runs are in the shared file set: the states can go */
	tuplesort_end(ws.spool);
	if (ws.spool2 != NULL)
		tuplesort_end(ws.spool2);
	pfree(ws.sortrel->rd_rel);
	pfree(ws.sortrel);
}

/*
 * The number of parallel workers to ask for to build index over heap:
 * core's count where core makes it (FBT_CORE_PLANS_BUILD_WORKERS), else
 * plan_create_index_workers() under the conditions index_build() puts on it
 * for btree: normal processing mode, and a heap with blocks (index_build()'s
 * other caller that asks for no workers, the truncation of a table created
 * or rewritten in the same transaction, rebuilds an empty heap, which the
 * table's parallel_workers or min_parallel_table_scan_size = 0 could
 * otherwise give workers).
 */
static int
_fbt_build_workers(Relation heap, Relation index, IndexInfo *indexInfo)
{
	int			nworkers;

	if (FBT_CORE_PLANS_BUILD_WORKERS || indexInfo->ii_ParallelWorkers > 0)
		return indexInfo->ii_ParallelWorkers;
	if (!IsNormalProcessingMode() || RelationGetNumberOfBlocks(heap) == 0)
		return 0;
	nworkers = plan_create_index_workers(RelationGetRelid(heap),
										 RelationGetRelid(index));
	/* index_build() said "serially", as it did not ask */
	if (nworkers > 0)
		ereport(DEBUG1,
				(errmsg_internal("building index \"%s\" on table \"%s\" with request for %d parallel workers",
								 RelationGetRelationName(index),
								 RelationGetRelationName(heap), nworkers)));
	return nworkers;
}

/*
 * Shut a parallel build down: wait for the workers to exit, count their
 * WAL and buffer usage into the leader's, release the scan's snapshot,
 * destroy the parallel context (and with it the shared sorts' files) and
 * leave parallel mode.  Called after the leader has read all it needs from
 * the shared sorts.
 */
static void
_fbt_end_parallel(FbtBuildLeader *leader)
{
	int			i;

	WaitForParallelWorkersToFinish(leader->pcxt);
	for (i = 0; i < leader->pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&leader->bufferusage[i],
								&leader->walusage[i]);
	if (IsMVCCSnapshot(leader->snapshot))
		UnregisterSnapshot(leader->snapshot);
	DestroyParallelContext(leader->pcxt);
	ExitParallelMode();
}

/*
 * Start a parallel build of bs->index with up to request workers (nbtsort.c's
 * _bt_begin_parallel): set up the shared state and sorts in DSM, launch the
 * workers, take part in the scan and sort as one of the participants, and make
 * sure every launched worker has attached.  Returns the leader's handle, or
 * NULL, out of parallel mode, when no DSM or no worker could be had: the
 * caller then builds serially.  isconcurrent: CREATE INDEX CONCURRENTLY, whose
 * scan takes an MVCC snapshot (SnapshotAny otherwise, as the serial scan
 * does).
 */
static FbtBuildLeader *
_fbt_begin_parallel(FbtBuildState *bs, bool unique, bool nulls_not_distinct,
					bool isconcurrent, int request)
{
	ParallelContext *pcxt;
	FbtBuildLeader *leader;
	FbtBuildShared *shared;
	Sharedsort *sharedsort;
	Sharedsort *sharedsort2 = NULL;
	Snapshot	snapshot;
	Size		estshared;
	Size		estsort;
	int			scantuplesortstates = request + 1;	/* and the leader */
	int			querylen = 0;

	EnterParallelMode();
	pcxt = CreateParallelContext("$libdir/fastbtree",
								 "_fbt_parallel_build_main", request);

	snapshot = isconcurrent ?
		RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	estshared = add_size(BUFFERALIGN(sizeof(FbtBuildShared)),
						 table_parallelscan_estimate(bs->heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	estsort = tuplesort_estimate_shared(scantuplesortstates);
	shm_toc_estimate_chunk(&pcxt->estimator, estsort);
	if (unique)
	{
		shm_toc_estimate_chunk(&pcxt->estimator, estsort);
		shm_toc_estimate_keys(&pcxt->estimator, 3);
	}
	else
		shm_toc_estimate_keys(&pcxt->estimator, 2);
	shm_toc_estimate_chunk(&pcxt->estimator,
						   mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator,
						   mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	if (debug_query_string)
	{
		querylen = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return NULL;
	}

	shared = (FbtBuildShared *) shm_toc_allocate(pcxt->toc, estshared);
	shared->heaprelid = RelationGetRelid(bs->heap);
	shared->indexrelid = RelationGetRelid(bs->index);
	shared->isunique = unique;
	shared->nulls_not_distinct = nulls_not_distinct;
	shared->isconcurrent = isconcurrent;
	shared->scantuplesortstates = scantuplesortstates;
	shared->queryid = pgstat_get_my_query_id();
	ConditionVariableInit(&shared->workersdonecv);
	SpinLockInit(&shared->mutex);
	shared->nparticipantsdone = 0;
	shared->reltuples = 0;
	shared->indtuples = 0;
	shared->havedead = false;
	shared->brokenhotchain = false;
	table_parallelscan_initialize(bs->heap, FbtBuildSharedTableScan(shared),
								  snapshot);
	shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_SHARED, shared);

	sharedsort = (Sharedsort *) shm_toc_allocate(pcxt->toc, estsort);
	tuplesort_initialize_shared(sharedsort, scantuplesortstates, pcxt->seg);
	shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_TUPLESORT, sharedsort);
	if (unique)
	{
		sharedsort2 = (Sharedsort *) shm_toc_allocate(pcxt->toc, estsort);
		tuplesort_initialize_shared(sharedsort2, scantuplesortstates,
									pcxt->seg);
		shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_TUPLESORT_DEAD,
					   sharedsort2);
	}
	if (debug_query_string)
	{
		char	   *query = shm_toc_allocate(pcxt->toc, querylen + 1);

		memcpy(query, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_QUERY_TEXT, query);
	}

	leader = (FbtBuildLeader *) palloc0(sizeof(FbtBuildLeader));
	leader->walusage = shm_toc_allocate(pcxt->toc,
										mul_size(sizeof(WalUsage),
												 pcxt->nworkers));
	shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_WAL_USAGE, leader->walusage);
	leader->bufferusage = shm_toc_allocate(pcxt->toc,
										   mul_size(sizeof(BufferUsage),
													pcxt->nworkers));
	shm_toc_insert(pcxt->toc, FBT_PARALLEL_KEY_BUFFER_USAGE,
				   leader->bufferusage);

	LaunchParallelWorkers(pcxt);
	leader->pcxt = pcxt;
	leader->nparticipants = pcxt->nworkers_launched + 1;
	leader->shared = shared;
	leader->sharedsort = sharedsort;
	leader->sharedsort2 = sharedsort2;
	leader->snapshot = snapshot;

	if (pcxt->nworkers_launched == 0)
	{
		_fbt_end_parallel(leader);
		pfree(leader);
		return NULL;
	}

	/*
	 * The leader's share of maintenance_work_mem is larger than a worker's
	 * when fewer workers started than were asked for (as in nbtsort.c).
	 */
	_fbt_parallel_scan_and_sort(bs->heap, bs->index, shared, sharedsort,
								sharedsort2,
								maintenance_work_mem / leader->nparticipants,
								true);

	/* a worker that failed to start must not be waited for forever */
	WaitForParallelWorkersToAttach(pcxt);
	return leader;
}

/*
 * The leader's wait for every participant's part of the scan and sort of a
 * parallel build.  Returns the heap tuples scanned, and sets *indtuples,
 * *havedead and *brokenhotchain from the participants' counts.
 */
static double
_fbt_parallel_heapscan(FbtBuildLeader *leader, double *indtuples,
					   bool *havedead, bool *brokenhotchain)
{
	FbtBuildShared *shared = leader->shared;
	double		reltuples;

	for (;;)
	{
		SpinLockAcquire(&shared->mutex);
		if (shared->nparticipantsdone == leader->nparticipants)
		{
			reltuples = shared->reltuples;
			*indtuples = shared->indtuples;
			*havedead = shared->havedead;
			*brokenhotchain = shared->brokenhotchain;
			SpinLockRelease(&shared->mutex);
			break;
		}
		SpinLockRelease(&shared->mutex);
		ConditionVariableSleep(&shared->workersdonecv,
							   WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();
	return reltuples;
}

/*
 * _fbt_parallel_build_main() -- entry point of a parallel build's worker
 * (CreateParallelContext() in _fbt_begin_parallel names it; the parallel
 * worker machinery calls it with the build's DSM segment and its table of
 * contents).  Opens the heap and the index with the locks the leader's
 * command holds (so it waits for none), scans and sorts its share, reports
 * its WAL and buffer usage, and closes them.  Errors are raised here and
 * re-raised in the leader.
 */
void
_fbt_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	FbtBuildShared *shared;
	Sharedsort *sharedsort;
	Sharedsort *sharedsort2 = NULL;
	Relation	heap;
	Relation	index;
	LOCKMODE	heaplock;
	LOCKMODE	indexlock;
	WalUsage   *walusage;
	BufferUsage *bufferusage;

	debug_query_string = shm_toc_lookup(toc, FBT_PARALLEL_KEY_QUERY_TEXT,
										true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	shared = shm_toc_lookup(toc, FBT_PARALLEL_KEY_SHARED, false);
	pgstat_report_query_id(shared->queryid, false);

	/* the modes index.c takes for a plain and a concurrent build */
	if (!shared->isconcurrent)
	{
		heaplock = ShareLock;
		indexlock = AccessExclusiveLock;
	}
	else
	{
		heaplock = ShareUpdateExclusiveLock;
		indexlock = RowExclusiveLock;
	}
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, indexlock);

	sharedsort = shm_toc_lookup(toc, FBT_PARALLEL_KEY_TUPLESORT, false);
	tuplesort_attach_shared(sharedsort, seg);
	if (shared->isunique)
	{
		sharedsort2 = shm_toc_lookup(toc, FBT_PARALLEL_KEY_TUPLESORT_DEAD,
									 false);
		tuplesort_attach_shared(sharedsort2, seg);
	}

	InstrStartParallelQuery();
	_fbt_parallel_scan_and_sort(heap, index, shared, sharedsort, sharedsort2,
								maintenance_work_mem /
								shared->scantuplesortstates,
								false);
	bufferusage = shm_toc_lookup(toc, FBT_PARALLEL_KEY_BUFFER_USAGE, false);
	walusage = shm_toc_lookup(toc, FBT_PARALLEL_KEY_WAL_USAGE, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber],
						  &walusage[ParallelWorkerNumber]);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}

/*
 * fbtbuild() -- ambuild: build a new index over heap.
 *
 * index must be empty (no blocks).  Scans the heap (reporting progress in
 * pg_stat_progress_create_index), sorts, loads, and writes the metapage in
 * block 0.  Scans and sorts in parallel when workers are to be had (see
 * _fbt_build_workers(); PostgreSQL's own GUCs and the table's
 * parallel_workers decide), and loads the sorted entries alone.  Holds no
 * buffer locks while scanning or sorting, so the build can be cancelled.
 * Returns heap and index tuple counts.  Errors: 23505 "could not create unique
 * index" (raised by tuplesort, as for btree), 54000 for an oversized row,
 * 0A000 for a pattern operator class under a nondeterministic collation
 * (_fbt_check_index_collations).  For a unique index, a NOTICE says that
 * INSERT ... ON CONFLICT cannot use it where core accepts only btree indexes
 * as arbiters (PostgreSQL 15; FBT_CORE_UNIQUE_NEEDS_BTREE).
 */
IndexBuildResult *
fbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	FbtBuildState bs;
	double		reltuples;
	double		loaded = 0;
	IndexTuple	itup;
	IndexTuple	itup2 = NULL;
	int			nworkers;
	FbtBuildLeader *leader = NULL;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	_fbt_check_index_collations(index);

	memset(&bs, 0, sizeof(bs));
	bs.heap = heap;
	bs.index = index;
	bs.nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	bs.allequalimage = _fbt_allequalimage(index, true);
	/* unique indexes merge only version churn, later: btree's rule */
	bs.deduplicate = bs.allequalimage && !indexInfo->ii_Unique &&
		FbtGetDeduplicateItems(index);
	if (bs.deduplicate)
	{
		bs.dedup.maxpostingsize = FBT_BUILD_MAX_POSTING_SIZE;
		bs.dedup.htids = palloc(bs.dedup.maxpostingsize);
	}

	/* block 0: the metapage, written last */
	bs.pages_alloced = FBT_METAPAGE + 1;
	fbt_bulk_start(&bs.writer, index);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 FBT_PHASE_TABLESCAN);
	bs.sortrel = _fbt_build_sortrel(index);
	nworkers = _fbt_build_workers(heap, index, indexInfo);
	if (nworkers > 0)
		leader = _fbt_begin_parallel(&bs, indexInfo->ii_Unique,
									 indexInfo->ii_NullsNotDistinct,
									 indexInfo->ii_Concurrent, nworkers);

	/*
	 * The spools, sized as btree's: the live one may use all of
	 * maintenance_work_mem; the dead one, expected to be small, work_mem.
	 * In a parallel build they merge the participants' sorted runs (the
	 * participants are done with their memory by the time the merge needs
	 * its own).
	 */
	_fbt_build_begin_spools(&bs, indexInfo->ii_Unique,
							indexInfo->ii_NullsNotDistinct,
							maintenance_work_mem, work_mem,
							leader ? _fbt_build_coordinate(leader->sharedsort, false,
														   leader->nparticipants) : NULL,
							leader ? _fbt_build_coordinate(leader->sharedsort2, false,
														   leader->nparticipants) : NULL);
	if (indexInfo->ii_Unique)
		bs.mergekeys = _fbt_build_mergekeys(index);

	if (leader == NULL)
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   _fbt_build_callback, &bs, NULL);
	else
		reltuples = _fbt_parallel_heapscan(leader, &bs.indtuples,
										   &bs.havedead,
										   &indexInfo->ii_BrokenHotChain);

	/*
	 * The next phase's target, and the scan's block counts cleared, as
	 * nbtree reports them
	 */
	{
		const int	progress_index[] = {PROGRESS_CREATEIDX_TUPLES_TOTAL,
		PROGRESS_SCAN_BLOCKS_TOTAL, PROGRESS_SCAN_BLOCKS_DONE};
		const int64 progress_vals[] = {(int64) bs.indtuples, 0, 0};

		pgstat_progress_update_multi_param(3, progress_index, progress_vals);
	}

	/* no dead entry: the dead spool is not needed (nbtree's rule) */
	if (bs.spool2 != NULL && !bs.havedead)
	{
		tuplesort_end(bs.spool2);
		bs.spool2 = NULL;
	}

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBT_PHASE_SORT);
	tuplesort_performsort(bs.spool);
	if (bs.spool2 != NULL)
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 FBT_PHASE_SORT_DEAD);
		tuplesort_performsort(bs.spool2);
	}

	{
		const int	progress_index[] = {PROGRESS_CREATEIDX_SUBPHASE,
		PROGRESS_CREATEIDX_TUPLES_DONE};
		const int64 progress_vals[] = {FBT_PHASE_LEAF_LOAD, 0};

		pgstat_progress_update_multi_param(2, progress_index, progress_vals);
	}

	/*
	 * Load in index order, merging the dead entries of a unique build in.
	 * A tuple returned by tuplesort_getindextuple() stays valid until the
	 * next fetch from the same sort, so the head of the spool not taken
	 * from survives.
	 */
	itup = tuplesort_getindextuple(bs.spool, true);
	if (bs.spool2 != NULL)
		itup2 = tuplesort_getindextuple(bs.spool2, true);
	while (itup != NULL || itup2 != NULL)
	{
		bool		fromfirst;
		IndexTuple	next;

		CHECK_FOR_INTERRUPTS();
		fromfirst = itup2 == NULL ||
			(itup != NULL && _fbt_build_cmp(&bs, itup, itup2) <= 0);
		next = fromfirst ? itup : itup2;

		_fbt_check_item_size(index, heap, next);
		if (bs.leaf == NULL)
			bs.leaf = _fbt_build_newlevel(&bs, 0);
		if (!bs.deduplicate)
			_fbt_buildadd(&bs, bs.leaf, next);
		else if (bs.dedup.base != NULL &&
				 _fbt_keys_image_equal(index, bs.dedup.base, next) &&
				 _fbt_dedup_save_htid(&bs.dedup, next))
		{
			/* merged into the pending posting list */
		}
		else
		{
			_fbt_build_flush_pending(&bs);
			/* the sort's tuple lasts only until its next fetch */
			_fbt_dedup_start_pending(&bs.dedup, CopyIndexTuple(next),
									 InvalidOffsetNumber);
		}

		if (fromfirst)
			itup = tuplesort_getindextuple(bs.spool, true);
		else
			itup2 = tuplesort_getindextuple(bs.spool2, true);

		if (((int64) ++loaded % 1024) == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
										 (int64) loaded);
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
								 (int64) loaded);
	if (bs.deduplicate)
	{
		_fbt_build_flush_pending(&bs);
		pfree(bs.dedup.htids);
	}
	tuplesort_end(bs.spool);
	if (bs.spool2 != NULL)
		tuplesort_end(bs.spool2);
	if (leader != NULL)
		_fbt_end_parallel(leader);
	pfree(bs.sortrel->rd_rel);
	pfree(bs.sortrel);

	_fbt_build_finish(&bs);

	/* the relcache's cached metapage, if any, predates the build */
	if (index->rd_amcache != NULL)
	{
		pfree(index->rd_amcache);
		index->rd_amcache = NULL;
	}

	/* once the build has succeeded: a duplicate key raised its error first */
	if (FBT_CORE_UNIQUE_NEEDS_BTREE && indexInfo->ii_Unique &&
		(index->rd_createSubid != InvalidSubTransactionId ||
		 indexInfo->ii_Concurrent))
		ereport(NOTICE,
				(errmsg("unique index \"%s\" cannot be used by INSERT ... ON CONFLICT",
						RelationGetRelationName(index)),
				 errdetail("PostgreSQL 15 accepts only btree indexes as ON CONFLICT arbiters, and rejects every INSERT ... ON CONFLICT on a table with a unique index of another access method."),
				 errhint("Use a btree unique index on tables that need INSERT ... ON CONFLICT.")));

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * fbtbuildempty() -- ambuildempty: write the init fork of an unlogged
 * index, an empty metapage, WAL-logged and synced as core's AMs do
 * (fbt_write_init_fork_page, fbtcompat.h).
 */
void
fbtbuildempty(Relation index)
{
	Page		metapage = (Page) palloc(BLCKSZ);

	_fbt_initmetapage(metapage, P_NONE, 0, _fbt_allequalimage(index, false));
	fbt_write_init_fork_page(index, FBT_METAPAGE, metapage);
	pfree(metapage);
}
