/*-------------------------------------------------------------------------
 *
 * fbtvacuum.c
 *	  VACUUM support for fastbtree: remove index entries whose heap tuples
 *	  are dead, and report index statistics.
 *
 * The index is scanned in physical order.  Each leaf is cleaned under a
 * cleanup lock, which waits out every scan holding a pin on it, so a scan
 * can never return a heap TID that VACUUM has since made reusable (nbtree
 * README, "VACUUM").  A leaf left empty is then deleted (fbtpagedel.c),
 * and pages deleted by earlier passes that no snapshot can still reach go
 * to the free space map, for splits to reuse.
 *
 * Splits during the pass, as nbtree handles them (nbtree README, "VACUUM";
 * btvacuumpage()): each pass gets a vacuum cycle id, kept on the metapage
 * (fbtpage.c, _fbt_start_vacuum()), and a split while it runs stamps that
 * id on both halves.  A right half on a new block lies beyond the scan,
 * which rereads the relation's size until it stops growing; one on a
 * recycled block behind the scan is found from its left half: a leaf
 * with the pass's id whose right-link leads back sends the pass there
 * ("backtracking"), and on along the chain of right halves until one is
 * marked FBTP_SPLIT_END or has another id.
 *
 * *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"

#include "fastbtree.h"

/*
 * Clean one leaf: delete entries the callback reports dead, and the dead
 * TIDs of posting lists (the list rewritten without them, or deleted when
 * none is left); count the live heap TIDs.  buf is pinned and
 * cleanup-locked by the caller.
 */
static void
_fbt_vacuum_leaf(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state,
				 Buffer buf)
{
	Relation	rel = info->index;
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable = 0;
	OffsetNumber updatable[MaxIndexTuplesPerPage];
	IndexTuple	updated[MaxIndexTuplesPerPage];
	int			nupdated = 0;
	bool		remove[FBT_MAX_TIDS_PER_PAGE];
	double		nlive = 0;
	double		ndead = 0;
	OffsetNumber off;
	int			i;

	for (off = minoff; off <= maxoff; off++)
	{
		IndexTuple	itup = _fbt_getitem(rel, buf, off);

		if (FbtTupleIsPosting(itup))
		{
			int			n = FbtTupleGetNPosting(itup);
			int			nrem = 0;
			int			j;

			if (!_fbt_posting_ok(itup))
				_fbt_corrupt_item(rel, buf, off,
								  "The posting list extends past the end of its tuple");
			for (j = 0; j < n; j++)
			{
				remove[j] = callback(FbtTupleGetPostingN(itup, j),
									 callback_state);
				if (remove[j])
					nrem++;
			}
			if (nrem == n)
				deletable[ndeletable++] = off;
			else if (nrem > 0)
			{
				updatable[nupdated] = off;
				updated[nupdated++] = _fbt_posting_remove(itup, remove);
			}
			ndead += nrem;
			nlive += n - nrem;
		}
		else if (callback(&itup->t_tid, callback_state))
		{
			deletable[ndeletable++] = off;
			ndead++;
		}
		else
			nlive++;
	}

	if (ndeletable > 0 || nupdated > 0)
	{
		_fbt_delete_items(rel, NULL, buf, true,
						  InvalidTransactionId, deletable, ndeletable,
						  updatable, updated, nupdated);
		for (i = 0; i < nupdated; i++)
			pfree(updated[i]);
	}
	stats->tuples_removed += ndead;
	stats->num_index_tuples += nlive;
}

/* What one pass carries from page to page */
typedef struct FbtVacState
{
	IndexVacuumInfo *info;
	IndexBulkDeleteResult *stats;
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	uint16		cycleid;		/* this pass's vacuum cycle id */
} FbtVacState;

/*
 * Vacuum block scanblkno, the next of the physical-order scan, and the
 * right halves of splits made during the pass that it leads back to
 * (btvacuumpage()'s backtracking).  Holds one page lock at a time.
 */
static void
_fbt_vacuum_page(FbtVacState *vstate, BlockNumber scanblkno)
{
	IndexVacuumInfo *info = vstate->info;
	IndexBulkDeleteResult *stats = vstate->stats;
	Relation	rel = info->index;
	BlockNumber blkno = scanblkno;

	for (;;)
	{
		Buffer		buf;
		Page		page;
		FbtPageOpaque opaque;
		BlockNumber backtrack_to = P_NONE;

		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);

		if (blkno != scanblkno)
		{
			/*
			 * Backtracking: a right-link of a leaf split during this pass
			 * led here, behind the scan.  Only a live leaf that split
			 * during this pass needs a visit; a page with another cycle id
			 * was already seen as it is, or has nothing from the pages
			 * that sent us here.  Anything but a leaf is damage, reported
			 * and skipped, as nbtree does, rather than failing the VACUUM.
			 */
			_fbt_checkpage(rel, buf);
			opaque = FbtPageGetOpaque(page);
			if (!P_ISLEAF(opaque) || P_ISHALFDEAD(opaque))
			{
				ereport(LOG,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg_internal("right sibling %u of block %u of index \"%s\" is not a live leaf",
										 blkno, scanblkno,
										 RelationGetRelationName(rel))));
				UnlockReleaseBuffer(buf);
				return;
			}
			if (opaque->fbto_cycleid != vstate->cycleid || P_ISDELETED(opaque))
			{
				UnlockReleaseBuffer(buf);
				return;
			}
		}
		else if (PageIsNew(page))
		{
			/*
			 * Extended by a backend that failed before using it (its
			 * creator locks it before anyone can see it: _fbt_allocbuf()):
			 * free, and counted as deleted too, as btree counts it (so
			 * that pages_deleted - pages_free stays the deleted pages not
			 * yet reusable)
			 */
			RecordFreeIndexPage(rel, blkno);
			stats->pages_deleted++;
			stats->pages_free++;
			UnlockReleaseBuffer(buf);
			return;
		}
		else
		{
			_fbt_checkpage(rel, buf);
			opaque = FbtPageGetOpaque(page);
			if (P_ISDELETED(opaque))
			{
				FullTransactionId safexid;

				/*
				 * Deleted by an earlier pass: free for splits to reuse once
				 * no snapshot can still hold a link to it (a page deleted
				 * in this pass waits for the next one)
				 */
				stats->pages_deleted++;
				if (_fbt_page_recyclable(page, &safexid))
				{
					RecordFreeIndexPage(rel, blkno);
					stats->pages_free++;
				}
				UnlockReleaseBuffer(buf);
				return;
			}
			if (!P_ISLEAF(opaque))
			{
#ifdef USE_ASSERT_CHECKING
				if (fbt_debug_vacuum_cleanup_internal)
				{
					/* testing only: wait for every other pin to go */
					LockBuffer(buf, BUFFER_LOCK_UNLOCK);
					LockBufferForCleanup(buf);
				}
#endif
				UnlockReleaseBuffer(buf);
				return;
			}
		}

		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBufferForCleanup(buf);
		_fbt_checkpage(rel, buf);
		/* still a live leaf: only VACUUM deletes pages */
		opaque = FbtPageGetOpaque(page);

		/*
		 * A split during this pass may have moved entries from here to a
		 * block the scan has passed: go there next.  Decided under the
		 * cleanup lock, so that no split of this page is in progress.
		 */
		if (vstate->cycleid != 0 &&
			opaque->fbto_cycleid == vstate->cycleid &&
			!(opaque->fbto_flags & FBTP_SPLIT_END) &&
			!P_RIGHTMOST(opaque) &&
			opaque->fbto_next < scanblkno)
			backtrack_to = opaque->fbto_next;

		_fbt_vacuum_leaf(info, stats, vstate->callback,
						 vstate->callback_state, buf);
		opaque = FbtPageGetOpaque(page);
		if (blkno == scanblkno &&
			(P_ISHALFDEAD(opaque) ||
			 (!P_RIGHTMOST(opaque) &&
			  PageGetMaxOffsetNumber(page) < P_FIRSTDATAKEY(opaque))))
		{
			/*
			 * Empty now (or half-dead since a crash): delete it.  Not when
			 * backtracking, as nbtree: deletion is a scanblkno matter.
			 */
			_fbt_pagedel(rel, buf, stats);
			ReleaseBuffer(buf);
		}
		else
			UnlockReleaseBuffer(buf);

		if (backtrack_to == P_NONE)
			return;
		blkno = backtrack_to;
		fbt_vacuum_delay_point();
	}
}

/*
 * Scan the whole index in physical order, deleting the entries the
 * callback reports dead, with cycle id cycleid (_fbt_start_vacuum()).
 * Fills num_pages, num_index_tuples, tuples_removed.
 */
static void
_fbt_vacuumscan(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state,
				uint16 cycleid)
{
	Relation	rel = info->index;
	bool		needLock = !RELATION_IS_LOCAL(rel);
	BlockNumber blkno = FBT_METAPAGE + 1;
	BlockNumber num_pages;
	FbtVacState vstate;

	vstate.info = info;
	vstate.stats = stats;
	vstate.callback = callback;
	vstate.callback_state = callback_state;
	vstate.cycleid = cycleid;

	/* counted afresh by each pass (pages_newly_deleted accumulates) */
	stats->num_index_tuples = 0;
	stats->estimated_count = false;
	stats->pages_deleted = 0;
	stats->pages_free = 0;

	for (;;)
	{
		/*
		 * The extension lock waits out an extension in progress; its new
		 * page is then locked by its creator (_fbt_allocbuf()), and our
		 * lock on it waits until the creator has written it.
		 */
		if (needLock)
			LockRelationForExtension(rel, ExclusiveLock);
		num_pages = RelationGetNumberOfBlocks(rel);
		if (needLock)
			UnlockRelationForExtension(rel, ExclusiveLock);

		if (info->report_progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
										 num_pages);
		if (blkno >= num_pages)
			break;

		for (; blkno < num_pages; blkno++)
		{
			fbt_vacuum_delay_point();
#ifdef USE_ASSERT_CHECKING
			if (blkno == (BlockNumber) fbt_debug_stall_vacuum_block)
				FBT_DEBUG_STALL(fbt_debug_stall_vacuum);
#endif
			_fbt_vacuum_page(&vstate, blkno);
			if (info->report_progress)
				pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
											 blkno);
		}
	}
	stats->num_pages = num_pages;
}

/* the callback of a cleanup-only scan: nothing is dead */
static bool
_fbt_nothing_dead(ItemPointer itemptr, void *state)
{
	return false;
}

/*
 * fbtbulkdelete() -- ambulkdelete: delete every entry whose heap TID the
 * callback reports dead.
 *
 * stats: NULL on the first call of a VACUUM, else the previous result.
 * Takes a cleanup lock on each leaf in turn (waiting for scans pinned on
 * it), and deletes the leaves it leaves empty with the internal pages
 * left without a child (fbtpagedel.c, which locks their parents and
 * siblings); holds no lock on return.  Returns the
 * (possibly new) statistics, pages_deleted and pages_newly_deleted
 * included.
 * Also used by CREATE INDEX CONCURRENTLY's validation, whose callback sees
 * every entry.
 */
IndexBulkDeleteResult *
fbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	uint16		cycleid;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	cycleid = _fbt_start_vacuum(info->index);
	_fbt_vacuumscan(info, stats, callback, callback_state, cycleid);
	_fbt_end_vacuum(info->index, stats->pages_deleted - stats->pages_free);
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
}

/*
 * fbtvacuumcleanup() -- amvacuumcleanup: final statistics of a VACUUM.
 *
 * stats: the result of fbtbulkdelete(), or NULL if it did not run.  With
 * no bulk delete, the index is scanned only when the last pass left more
 * than a twentieth of it deleted and not yet reusable (btree's rule), to
 * put those pages in the free space map; otherwise, like btree when no
 * cleanup is due, return NULL and leave the index's statistics as they
 * are, without touching a page.  Also returns stats unchanged for
 * ANALYZE-only calls.  Locks as fbtbulkdelete().
 */
IndexBulkDeleteResult *
fbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	uint16		cycleid;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		BlockNumber num_delpages = _fbt_get_num_delpages(info->index);

		/*
		 * No bulk delete ran.  Scan anyway (deleting nothing) if the last
		 * pass left more deleted pages than a twentieth of the index
		 * waiting to be reusable, so that they reach the free space map:
		 * btree's rule (_bt_vacuum_needs_cleanup()).
		 */
		if (num_delpages == 0 ||
			num_delpages <= RelationGetNumberOfBlocks(info->index) / 20)
			return NULL;
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		cycleid = _fbt_start_vacuum(info->index);
		_fbt_vacuumscan(info, stats, _fbt_nothing_dead, NULL, cycleid);
		_fbt_end_vacuum(info->index, stats->pages_deleted - stats->pages_free);
		IndexFreeSpaceMapVacuum(info->index);
		stats->estimated_count = info->estimated_count;
		return stats;
	}

	/* a concurrent split may have counted entries twice */
	if (!info->estimated_count &&
		stats->num_index_tuples > info->num_heap_tuples)
		stats->num_index_tuples = info->num_heap_tuples;

	return stats;
}
