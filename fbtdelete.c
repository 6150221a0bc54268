/*-------------------------------------------------------------------------
 *
 * fbtdelete.c
 *	  Deletion of dead entries from a full leaf, tried before the leaf is
 *	  split (nbtree README, "Simple deletion" and "Bottom-Up deletion"),
 *	  and the recovery-conflict record that must precede any removal of
 *	  entries that a standby query might still need.
 *
 * Simple deletion removes the entries marked LP_DEAD by scans
 * (kill_prior_tuple) and by unique checks, plus, in passing, unmarked
 * entries whose heap tuples the table AM finds dead while it visits the
 * same heap blocks anyway.  Bottom-up deletion is for version churn: when
 * the executor says the incoming entry is a logically unchanged copy of
 * an existing one (a non-HOT UPDATE that did not change this index's
 * columns), or when a unique index already holds an equal key, every entry
 * of the leaf is offered to the table AM, those in runs of equal keys
 * marked "promising", and the table AM deletes what it can cheaply prove
 * dead until a target amount of space is free.  Both leave the decision
 * of what is dead to the table AM (table_index_delete_tuples()), which
 * also reports the newest xid among the deleted entries' heap tuples: the
 * snapshot-conflict horizon.
 *
 * Hot standby.  A standby that replayed the removal without a conflict
 * could run a query whose snapshot still sees the deleted heap tuples
 * (they need not have been pruned from the heap yet) through an index
 * that no longer holds them, and return too few rows.  In compact mode
 * the XLOG_FBT_DELETE record carries the horizon and its redo resolves
 * the conflict first, as nbtree's XLOG_BTREE_DELETE.  A generic record has
 * no room for one, so in generic mode _fbt_log_conflict_horizon() first
 * logs btree's own conflict-only record, XLOG_BTREE_REUSE_PAGE: its redo
 * changes no page, it only cancels (or waits out, per
 * max_standby_streaming_delay) the standby queries whose snapshots could
 * see an xid up to the horizon, exactly what replaying btree's own
 * deletion record does.  It needs no preloaded library: the btree resource
 * manager is always present.  See README.design, "Hot standby".
 *
 * Locking: the caller holds the leaf exclusively locked throughout, as
 * nbtree's deletion does; no cleanup lock is needed because no heap TID
 * that a deleted entry pointed to can be reused before VACUUM, which takes
 * a cleanup lock on every leaf.  A scan that still holds a position on the
 * leaf has copied its entries; its later LP_DEAD marking looks each one up
 * by heap TID (fbtscan.c), so entries that moved left are at worst not
 * marked.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtxlog.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "fastbtree.h"
#include "fbtxlog.h"

static void _fbt_log_conflict_horizon(Relation rel, Relation heapRel,
									  BlockNumber blkno,
									  TransactionId horizon);

/*
 * Clear FBTP_HAS_GARBAGE on a leaf image that has no LP_DEAD entry left.
 * The flag must stay set while any entry is LP_DEAD: fbtpage.c relies on
 * it to carry the hints in WAL records.
 */
static void
_fbt_update_has_garbage(Page img)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(img);
	OffsetNumber off;

	for (off = FirstOffsetNumber; off <= maxoff; off++)
		if (ItemIdIsDead(PageGetItemId(img, off)))
			return;
	FbtPageGetOpaque(img)->fbto_flags &= ~FBTP_HAS_GARBAGE;
}

/*
 * _fbt_delete_items_apply() -- the page edit of a deletion, on the primary
 * and in redo (XLOG_FBT_VACUUM, _DELETE, and generic records): replace the
 * posting lists at updatable[0..nupdated-1] with updated[] (the same
 * posting lists without some of their TIDs, _fbt_posting_remove()), then
 * remove the entries at deletable[0..n-1] (offsets, ascending), and clear
 * FBTP_HAS_GARBAGE if no LP_DEAD entry is left.  A replaced posting list
 * keeps its line pointer's flags (PageIndexTupleOverwrite()): one marked
 * LP_DEAD stays so, which is true of its remaining TIDs too.  page: the
 * exclusively (VACUUM: cleanup-) locked shared page inside the caller's
 * critical section, or a generic WAL image of it.  Returns false if a
 * replacement does not fit its slot (the page is then partly changed;
 * never for a list that only lost TIDs).  Errors: bufpage.c's checks of
 * a damaged page (a PANIC in a critical section, as in nbtree).
 */
bool
_fbt_delete_items_apply(Page page, OffsetNumber *deletable, int n,
						OffsetNumber *updatable, IndexTuple *updated,
						int nupdated)
{
	int			i;

	/* replacements first: deletion renumbers the items after it */
	for (i = 0; i < nupdated; i++)
	{
		if (!PageIndexTupleOverwrite(page, updatable[i], (Item) updated[i],
									 MAXALIGN(IndexTupleSize(updated[i]))))
			return false;
	}
	if (n > 0)
		PageIndexMultiDelete(page, deletable, n);
	_fbt_update_has_garbage(page);
	return true;
}

/* The heap TIDs of a leaf entry: a posting list's, or the one of a plain entry */
static ItemPointer
_fbt_entry_tids(IndexTuple itup, int *ntids)
{
	if (FbtTupleIsPosting(itup))
	{
		*ntids = FbtTupleGetNPosting(itup);
		return FbtTupleGetPosting(itup);
	}
	*ntids = 1;
	return &itup->t_tid;
}

/*
 * The xl_fbt_update of one replaced posting list: the positions in
 * oposting (the list on the page) of the TIDs that updated (the same list
 * without them, TIDs in the same order) lacks.  Appended to upd.
 */
static void
_fbt_append_update(StringInfo upd, IndexTuple oposting, IndexTuple updated)
{
	int			nold;
	int			nnew;
	ItemPointer old = _fbt_entry_tids(oposting, &nold);
	ItemPointer new = _fbt_entry_tids(updated, &nnew);
	uint16		ndeletedtids = (uint16) (nold - nnew);
	int			j;
	int			k = 0;

	appendBinaryStringInfo(upd, (char *) &ndeletedtids, sizeof(uint16));
	for (j = 0; j < nold; j++)
	{
		if (k < nnew && ItemPointerEquals(&old[j], &new[k]))
			k++;
		else
		{
			uint16		pos = (uint16) j;

			appendBinaryStringInfo(upd, (char *) &pos, sizeof(uint16));
		}
	}
	Assert(k == nnew);
}

/*
 * Compact mode: apply the deletion to buf and log XLOG_FBT_VACUUM (vacuum)
 * or XLOG_FBT_DELETE with horizon; see _fbt_delete_items().
 */
static void
_fbt_delete_logged(Relation rel, Relation heapRel, Buffer buf, bool vacuum,
				   TransactionId horizon,
				   OffsetNumber *deletable, int n,
				   OffsetNumber *updatable, IndexTuple *updated,
				   int nupdated)
{
	Page		page = BufferGetPage(buf);
	StringInfoData upd;
	XLogRecPtr	recptr = InvalidXLogRecPtr;
	int			i;

	/* the removed TIDs' positions, from the page before the edit */
	initStringInfo(&upd);
	for (i = 0; i < nupdated; i++)
		_fbt_append_update(&upd,
						   (IndexTuple) PageGetItem(page,
													PageGetItemId(page, updatable[i])),
						   updated[i]);

	START_CRIT_SECTION();
	_fbt_edit_begin(buf);
	if (!_fbt_delete_items_apply(page, deletable, n, updatable, updated,
								 nupdated))
		elog(PANIC, "failed to update a posting list of block %u in index \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_fbt_delete xlrec;

		xlrec.horizon = vacuum ? InvalidTransactionId : horizon;
		xlrec.ndeleted = (uint16) n;
		xlrec.nupdated = (uint16) nupdated;
		xlrec.isCatalogRel = !vacuum && fbt_is_catalog_rel(heapRel);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfFbtDelete);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (n > 0)
			XLogRegisterBufData(0, (char *) deletable,
								n * sizeof(OffsetNumber));
		if (nupdated > 0)
		{
			XLogRegisterBufData(0, (char *) updatable,
								nupdated * sizeof(OffsetNumber));
			XLogRegisterBufData(0, upd.data, upd.len);
		}
		recptr = XLogInsert(FBT_RMGR_ID,
							vacuum ? XLOG_FBT_VACUUM : XLOG_FBT_DELETE);
	}
	_fbt_edit_end(buf, recptr);
	END_CRIT_SECTION();
	pfree(upd.data);
}

/*
 * _fbt_delete_items() -- remove the entries at deletable[0..n-1] (offsets,
 * ascending) from the leaf buf, and replace the posting lists at
 * updatable[0..nupdated-1] with updated[] (_fbt_delete_items_apply()),
 * WAL-logged.
 *
 * rel, heapRel: the index and its table (heapRel may be NULL for VACUUM);
 * buf: the leaf, exclusively locked for deletion before a split and
 * cleanup-locked by VACUUM; it stays so.  vacuum: VACUUM's removal of
 * entries whose heap tuples it found dead, which needs no conflict with
 * standby queries (the heap's pruning records carry it); otherwise
 * deletion before a split, and horizon is the newest xid among the
 * removed entries' heap tuples (table_index_delete_tuples()).  Compact
 * mode logs XLOG_FBT_VACUUM or XLOG_FBT_DELETE, the horizon in the latter;
 * generic mode logs the horizon first in btree's conflict-only record
 * (_fbt_log_conflict_horizon()), then a generic record.
 * Errors: those of WAL insertion; a posting list replacement that does
 * not fit (impossible: a list that loses TIDs shrinks) is an ERROR before
 * anything changed in generic mode, a PANIC in compact mode.
 */
void
_fbt_delete_items(Relation rel, Relation heapRel, Buffer buf, bool vacuum,
				  TransactionId horizon,
				  OffsetNumber *deletable, int n,
				  OffsetNumber *updatable, IndexTuple *updated, int nupdated)
{
	FbtWal		wal;
	Page		img;

	if (fbt_wal_compact)
	{
		_fbt_delete_logged(rel, heapRel, buf, vacuum, horizon,
						   deletable, n, updatable, updated, nupdated);
		return;
	}

	if (!vacuum)
		_fbt_log_conflict_horizon(rel, heapRel, BufferGetBlockNumber(buf),
								  horizon);
	_fbt_wal_start(&wal, rel);
	img = _fbt_wal_register(&wal, buf, false);
	if (!_fbt_delete_items_apply(img, deletable, n, updatable, updated,
								 nupdated))
	{
		_fbt_wal_abort(&wal);
		elog(ERROR, "failed to update a posting list of block %u in index \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	}
	START_CRIT_SECTION();
	_fbt_wal_finish(&wal);
	END_CRIT_SECTION();
}

/*
 * The full (epoch-qualified) form of xid, which must be a normal xid that
 * is not in the future: the horizon table_index_delete_tuples() returned.
 */
static FullTransactionId
_fbt_full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	/* an xid numerically above next's belongs to the previous epoch */
	if (xid > XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, xid);
}

/*
 * _fbt_log_conflict_horizon() -- WAL-log a recovery conflict for standby
 * queries whose snapshots may still see heap tuples up to horizon, before
 * index entries (or pages) pointing to them are removed.
 *
 * rel: the index; heapRel: its table; blkno: the index block about to
 * change (for pg_waldump only); horizon: the newest xid among the removed
 * entries' heap tuples, as table_index_delete_tuples() returns it
 * (InvalidTransactionId: nothing to conflict with, no record).  Logs
 * btree's XLOG_BTREE_REUSE_PAGE record, whose redo only resolves the
 * conflict (see the file header), and only when a standby could be
 * running queries: wal_level replica or higher and a WAL-logged relation.
 * Call it before the record that removes the entries, holding whatever
 * locks that change needs; it takes none.  Errors: those of XLogInsert().
 */
static void
_fbt_log_conflict_horizon(Relation rel, Relation heapRel, BlockNumber blkno,
						  TransactionId horizon)
{
	if (!TransactionIdIsNormal(horizon) || !XLogStandbyInfoActive() ||
		!RelationNeedsWAL(rel))
		return;
	_fbt_log_conflict_full(rel, heapRel, blkno, _fbt_full_xid(horizon));
}

/*
 * _fbt_log_conflict_full() -- _fbt_log_conflict_horizon() for a horizon
 * already in full form: a deleted page's safexid, logged before the page
 * is reused (fbtpage.c), as nbtree logs it.  Compact mode logs
 * XLOG_FBT_REUSE_PAGE, generic mode btree's XLOG_BTREE_REUSE_PAGE; their
 * redo is the same.  heapRel may be NULL: the index's table is then
 * opened without a lock (the caller's statement holds one) where the
 * record needs it (isCatalogRel, 16+).
 */
void
_fbt_log_conflict_full(Relation rel, Relation heapRel, BlockNumber blkno,
					   FullTransactionId horizon)
{
	Relation	opened = NULL;

	if (!FullTransactionIdIsNormal(horizon) || !XLogStandbyInfoActive() ||
		!RelationNeedsWAL(rel))
		return;
	if (heapRel == NULL && FBT_REUSE_PAGE_NEEDS_HEAP)
		heapRel = opened = table_open(rel->rd_index->indrelid, NoLock);

	if (fbt_wal_compact)
	{
		xl_fbt_reuse_page xlrec;

		memset(&xlrec, 0, sizeof(xlrec));
		xlrec.locator = FbtRelFileId(rel);
		xlrec.block = blkno;
		xlrec.safexid = horizon;
		xlrec.isCatalogRel = fbt_is_catalog_rel(heapRel);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfFbtReusePage);
		XLogInsert(FBT_RMGR_ID, XLOG_FBT_REUSE_PAGE);
	}
	else
	{
		xl_btree_reuse_page xlrec;

		memset(&xlrec, 0, sizeof(xlrec));
		fbt_fill_reuse_page(&xlrec, rel, heapRel, blkno, horizon);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfBtreeReusePage);
		XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
	}

	if (opened)
		table_close(opened, NoLock);
}

/* qsort comparator of block numbers */
static int
_fbt_blkno_cmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return (x > y) - (x < y);
}

/*
 * The candidates of one deletion pass: the table AM's request, and for
 * each candidate (by id) its TID's position in its posting list, or -1
 * for a plain entry.
 */
typedef struct FbtDelCandidates
{
	TM_IndexDeleteOp op;
	int16	   *postpos;
	int			ncand;			/* op.ndeltids before the table AM's call,
								 * which may shrink it */
} FbtDelCandidates;

static void
_fbt_candidates_init(FbtDelCandidates *cands, Relation rel, Buffer buf,
					 bool bottomup, Size bottomupfreespace)
{
	int			max = FBT_MAX_TIDS_PER_PAGE;

	cands->op.irel = rel;
	cands->op.iblknum = BufferGetBlockNumber(buf);
	cands->op.bottomup = bottomup;
	cands->op.bottomupfreespace = bottomupfreespace;
	cands->op.ndeltids = 0;
	cands->op.deltids = palloc(max * sizeof(TM_IndexDelete));
	cands->op.status = palloc(max * sizeof(TM_IndexStatus));
	cands->postpos = palloc(max * sizeof(int16));
	cands->ncand = 0;
}

static void
_fbt_candidates_free(FbtDelCandidates *cands)
{
	pfree(cands->op.deltids);
	pfree(cands->op.status);
	pfree(cands->postpos);
}

/*
 * Add one heap TID of the entry at offnum: tid, at position pos of its
 * posting list (-1: a plain entry); freespace: the bytes its removal
 * would free.  knowndead: marked LP_DEAD (simple deletion only);
 * promising: among equal keys (bottom-up only).
 */
static void
_fbt_add_candidate(FbtDelCandidates *cands, OffsetNumber offnum,
				   ItemPointer tid, int pos, Size freespace,
				   bool knowndead, bool promising)
{
	TM_IndexDeleteOp *delstate = &cands->op;
	int			n = delstate->ndeltids;

	delstate->deltids[n].tid = *tid;
	delstate->deltids[n].id = n;
	delstate->status[n].idxoffnum = offnum;
	delstate->status[n].knowndeletable = knowndead;
	delstate->status[n].promising = promising;
	delstate->status[n].freespace = freespace;
	cands->postpos[n] = pos;
	delstate->ndeltids++;
	cands->ncand++;
}

/*
 * Add every heap TID of the entry itup at offnum (all of a posting list's,
 * whose bounds the caller checked).
 */
static void
_fbt_add_entry(FbtDelCandidates *cands, Page page, OffsetNumber offnum,
			   IndexTuple itup, bool knowndead, bool promising)
{
	if (FbtTupleIsPosting(itup))
	{
		int			n = FbtTupleGetNPosting(itup);
		int			j;

		for (j = 0; j < n; j++)
			_fbt_add_candidate(cands, offnum, FbtTupleGetPostingN(itup, j), j,
							   sizeof(ItemPointerData), knowndead, promising);
	}
	else
		_fbt_add_candidate(cands, offnum, &itup->t_tid, -1,
						   ItemIdGetLength(PageGetItemId(page, offnum)) +
						   sizeof(ItemIdData), knowndead, promising);
}

/* The leaf item at offnum, with a posting list's TID array checked */
static IndexTuple
_fbt_getleafitem(Relation rel, Buffer buf, OffsetNumber offnum)
{
	IndexTuple	itup = _fbt_getitem(rel, buf, offnum);

	if (FbtTupleIsPosting(itup) && !_fbt_posting_ok(itup))
		_fbt_corrupt_item(rel, buf, offnum,
						  "The posting list extends past the end of its tuple");
	return itup;
}

/*
 * Ask the table AM which candidates are dead to every snapshot, then
 * delete those entries from the leaf buf (exclusively locked), or the
 * dead TIDs from posting lists, in one WAL record, after the conflict
 * record.  Returns the number of heap TIDs removed.
 */
static int
_fbt_delete_check_and_apply(Relation rel, Relation heapRel, Buffer buf,
							FbtDelCandidates *cands)
{
	TM_IndexDeleteOp *delstate = &cands->op;
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable = 0;
	OffsetNumber updatable[MaxIndexTuplesPerPage];
	IndexTuple	updated[MaxIndexTuplesPerPage];
	int			nupdated = 0;
	bool	   *remove;
	TransactionId horizon;
	int			nremoved = 0;
	int			i;
	int			j;

	if (delstate->ndeltids == 0)
		return 0;

	horizon = table_index_delete_tuples(heapRel, delstate);

	/*
	 * The status entries are in the order the candidates were added (the
	 * table AM reorders only deltids): by offset, and within a posting list
	 * by position.  Each offset's run is one entry.
	 */
	remove = palloc0(sizeof(bool) * FBT_MAX_TIDS_PER_PAGE);
	for (i = 0; i < cands->ncand; i = j)
	{
		OffsetNumber off = delstate->status[i].idxoffnum;
		int			nrem = 0;

		for (j = i; j < cands->ncand && delstate->status[j].idxoffnum == off;
			 j++)
		{
			if (!delstate->status[j].knowndeletable)
				continue;
			nrem++;
			if (cands->postpos[j] >= 0)
				remove[cands->postpos[j]] = true;
		}
		if (nrem == 0)
			continue;
		if (cands->postpos[i] < 0)
			deletable[ndeletable++] = off;
		else
		{
			IndexTuple	posting = _fbt_getleafitem(rel, buf, off);
			int			n = FbtTupleGetNPosting(posting);

			if (nrem == n)
				deletable[ndeletable++] = off;
			else
			{
				updatable[nupdated] = off;
				updated[nupdated++] = _fbt_posting_remove(posting, remove);
			}
			memset(remove, 0, sizeof(bool) * n);
		}
		nremoved += nrem;
	}
	pfree(remove);
	if (ndeletable == 0 && nupdated == 0)
		return 0;

	_fbt_delete_items(rel, heapRel, buf, false, horizon,
					  deletable, ndeletable, updatable, updated, nupdated);
	for (i = 0; i < nupdated; i++)
		pfree(updated[i]);
	return nremoved;
}

/*
 * Simple deletion: the LP_DEAD entries of the leaf, and as extras the
 * unmarked entries (single TIDs of posting lists) that point into the
 * same heap blocks.
 */
static int
_fbt_simple_delete(Relation rel, Relation heapRel, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	BlockNumber *deadblocks;
	int			ndeadblocks = 0;
	FbtDelCandidates cands;
	OffsetNumber off;
	int			ndeleted;

	deadblocks = palloc(sizeof(BlockNumber) * FBT_MAX_TIDS_PER_PAGE);
	for (off = minoff; off <= maxoff; off++)
	{
		if (ItemIdIsDead(PageGetItemId(page, off)))
		{
			IndexTuple	itup = _fbt_getleafitem(rel, buf, off);
			int			n = FbtTupleIsPosting(itup) ?
				FbtTupleGetNPosting(itup) : 1;
			int			j;

			for (j = 0; j < n; j++)
				deadblocks[ndeadblocks++] = ItemPointerGetBlockNumber(
					FbtTupleIsPosting(itup) ?
					FbtTupleGetPostingN(itup, j) : &itup->t_tid);
		}
	}
	if (ndeadblocks == 0)
	{
		pfree(deadblocks);
		return 0;
	}
	qsort(deadblocks, ndeadblocks, sizeof(BlockNumber), _fbt_blkno_cmp);

	_fbt_candidates_init(&cands, rel, buf, false, 0);
	for (off = minoff; off <= maxoff; off++)
	{
		IndexTuple	itup = _fbt_getleafitem(rel, buf, off);

		if (ItemIdIsDead(PageGetItemId(page, off)))
			_fbt_add_entry(&cands, page, off, itup, true, false);
		else if (FbtTupleIsPosting(itup))
		{
			int			n = FbtTupleGetNPosting(itup);
			int			j;

			for (j = 0; j < n; j++)
			{
				ItemPointer tid = FbtTupleGetPostingN(itup, j);
				BlockNumber hblk = ItemPointerGetBlockNumber(tid);

				if (bsearch(&hblk, deadblocks, ndeadblocks,
							sizeof(BlockNumber), _fbt_blkno_cmp) != NULL)
					_fbt_add_candidate(&cands, off, tid, j,
									   sizeof(ItemPointerData), false, false);
			}
		}
		else
		{
			BlockNumber hblk = ItemPointerGetBlockNumber(&itup->t_tid);

			if (bsearch(&hblk, deadblocks, ndeadblocks, sizeof(BlockNumber),
						_fbt_blkno_cmp) != NULL)
				_fbt_add_entry(&cands, page, off, itup, false, false);
		}
	}

	ndeleted = _fbt_delete_check_and_apply(rel, heapRel, buf, &cands);
	_fbt_candidates_free(&cands);
	pfree(deadblocks);
	return ndeleted;
}

/*
 * _fbt_delete_lp_dead() -- simple deletion alone, for an insertion whose
 * heap TID falls inside a posting list marked LP_DEAD (fbtinsert.c): every
 * LP_DEAD entry of the leaf buf (exclusively locked, as it stays) goes,
 * after the conflict record.  Returns true if any entry was deleted.
 */
bool
_fbt_delete_lp_dead(Relation rel, Relation heapRel, Buffer buf)
{
	return _fbt_simple_delete(rel, heapRel, buf) > 0;
}

/*
 * Bottom-up deletion: every entry of the leaf is a candidate, promising
 * when it is in a run of two or more equal keys (old versions of rows
 * whose indexed columns did not change).  The table AM stops once it has
 * freed max(BLCKSZ / 16, the new entry's size) bytes, or gives up.
 */
static int
_fbt_bottomup_delete(Relation rel, Relation heapRel, Buffer buf,
					 Size newitemsz)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	FbtDelCandidates cands;
	OffsetNumber off;
	OffsetNumber runstart = minoff;
	IndexTuple	prev = NULL;
	int			ndeleted;

	if (minoff > maxoff)
		return 0;

	_fbt_candidates_init(&cands, rel, buf, true,
						 Max(BLCKSZ / 16, newitemsz + sizeof(ItemIdData)));

	/*
	 * Find the runs of equal keys: off ends the run that began at runstart
	 * when its key differs from the previous entry's (or past the end).
	 */
	for (off = minoff; off <= maxoff + 1; off++)
	{
		IndexTuple	itup = NULL;

		if (off <= maxoff)
		{
			itup = _fbt_getleafitem(rel, buf, off);
			/* the comparison decodes every key attribute */
			_fbt_check_attrs(rel, buf, itup);
		}
		if (prev != NULL &&
			(itup == NULL || _fbt_keep_natts(rel, prev, itup) <= nkeyatts))
		{
			OffsetNumber o;

			/* a posting list is a run of equal keys by itself */
			for (o = runstart; o < off; o++)
			{
				IndexTuple	it = _fbt_getleafitem(rel, buf, o);

				_fbt_add_entry(&cands, page, o, it, false,
							   (off - runstart) > 1 || FbtTupleIsPosting(it));
			}
			runstart = off;
		}
		prev = itup;
	}

	ndeleted = _fbt_delete_check_and_apply(rel, heapRel, buf, &cands);
	_fbt_candidates_free(&cands);
	return ndeleted;
}

/*
 * _fbt_delete_before_split() -- try to make room for newitem, an entry of
 * newitemsz bytes (MAXALIGN'd, without its line pointer), on a full leaf
 * by deleting dead entries, or merging equal ones, instead of splitting it.
 *
 * rel, heapRel: the index and its table; buf: the target leaf, pinned and
 * exclusively locked by the caller, and still so on return.  checkingunique:
 * the insertion is into a unique index with non-NULL keys; uniquedup: its
 * unique check met an equal key; indexUnchanged: the executor's hint that
 * the entry is a logically unchanged copy (aminsert's argument).  First
 * simple deletion (nbtree README, "Simple deletion"), then, if that did not
 * free enough and the hints suggest version churn, bottom-up deletion
 * ("Bottom-Up deletion"), then, if the index may form posting lists and
 * a unique index has reason to expect duplicates, a deduplication pass
 * (fbtdedup.c), in the order and on the conditions of nbtree's
 * _bt_delete_or_dedup_one_page().  Returns true if the page changed (an
 * entry deleted, or posting lists formed): the caller must then search
 * the page again for the insert offset.
 * Errors: the table AM's corruption checks of the heap TIDs (index
 * corrupted), and those of WAL insertion.
 */
bool
_fbt_delete_before_split(Relation rel, Relation heapRel, Buffer buf,
						 IndexTuple newitem, Size newitemsz,
						 bool checkingunique, bool uniquedup,
						 bool indexUnchanged)
{
	Page		page = BufferGetPage(buf);
	int			ndeleted = 0;
	bool		bottomup = false;

	Assert(P_ISLEAF(FbtPageGetOpaque(page)));

	/* an unchanged copy means versions of the key, unique index or not */
	if (indexUnchanged)
		uniquedup = true;

	if (FbtPageGetOpaque(page)->fbto_flags & FBTP_HAS_GARBAGE)
	{
		ndeleted += _fbt_simple_delete(rel, heapRel, buf);
		if (PageGetFreeSpace(page) >= newitemsz)
			return ndeleted > 0;
		/* entries were marked dead: assume the key has versions too */
		uniquedup = true;
	}

	/* no reason to expect duplicates in a unique index: split */
	if (checkingunique && !uniquedup)
		return ndeleted > 0;
	if (indexUnchanged || uniquedup)
	{
		ndeleted += _fbt_bottomup_delete(rel, heapRel, buf, newitemsz);
		if (PageGetFreeSpace(page) >= newitemsz)
			return true;
		bottomup = true;
	}

	/* merge equal entries into posting lists, if the index may */
	if (_fbt_dedup_enabled(rel) &&
		_fbt_dedup_pass(rel, buf, newitem, newitemsz, bottomup))
		return true;
	return ndeleted > 0;
}
