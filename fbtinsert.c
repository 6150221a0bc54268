/*-------------------------------------------------------------------------
 *
 * fbtinsert.c
 *	  Insertion for fastbtree: uniqueness checks, Lehman & Yao page splits
 *	  with suffix-truncated pivots, insertion of downlinks into parents,
 *	  root splits, and recovery of incomplete splits.
 *
 * Locking follows the nbtree README ("Page splits"): the leaf is locked
 * exclusively; a split holds the left page while it locks the new right
 * page and the old right sibling, writes all three (plus, for an internal
 * page, the child whose split this completes) in one generic WAL record
 * with the left page marked INCOMPLETE_SPLIT, then locks the parent while
 * still holding the left page and inserts the new downlink in a second
 * record that also clears the flag.  Locks are taken left to right on a
 * level and bottom-up between levels, never top-down while holding one, so
 * writers cannot deadlock; readers hold one lock at a time.  A crash
 * between the two records leaves the right page reachable by its
 * right-link; the next inserter that meets the flag finishes the split.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "fastbtree.h"
#include "fbtxlog.h"

#ifdef USE_ASSERT_CHECKING
/* fastbtree.debug_split_image (fastbtree.c) */
bool		fbt_debug_split_image = false;
#endif

static TransactionId _fbt_check_unique(Relation rel, IndexTuple itup,
									   Relation heapRel, Buffer buf,
									   FbtScanInsert key,
									   IndexUniqueCheck checkUnique,
									   bool *is_unique,
									   uint32 *speculativeToken,
									   bool *sawdup);
static int	_fbt_find_posting(Relation rel, FbtScanInsert key, Buffer buf,
							  OffsetNumber newitemoff);
static Buffer _fbt_findinsertloc(Relation rel, FbtScanInsert key, Buffer buf,
								 FbtStack stack, OffsetNumber *newitemoff);
static void _fbt_insert_logged(Relation rel, Buffer buf, Buffer cbuf,
							   IndexTuple origitup, IndexTuple itup,
							   IndexTuple nposting, OffsetNumber newitemoff,
							   int postingoff);
static void _fbt_insertonpg(Relation rel, Buffer buf, Buffer cbuf,
							FbtStack stack, IndexTuple itup,
							OffsetNumber newitemoff, int postingoff);
static void _fbt_insert_parent(Relation rel, Buffer buf, Buffer rbuf,
							   FbtStack stack, bool isroot,
							   IndexTuple lefthikey);

/*
 * _fbt_item_size_error() -- raise btree's error for a leaf tuple too large
 * for the tree (_fbt_check_item_size() in fastbtree.h decides): itup the
 * tuple, heapRel names the table.  Raises ERRCODE_PROGRAM_LIMIT_EXCEEDED
 * with our access method's name; does not return.
 */
void
_fbt_item_size_error(Relation rel, Relation heapRel, IndexTuple itup)
{
	Size		itemsz = MAXALIGN(IndexTupleSize(itup));

	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("index row size %zu exceeds fastbtree version %u maximum %zu for index \"%s\"",
					itemsz, FBT_VERSION, (Size) FBT_MAX_ITEM_SIZE,
					RelationGetRelationName(rel)),
			 errdetail("Index row references tuple (%u,%u) in relation \"%s\".",
					   ItemPointerGetBlockNumber(&itup->t_tid),
					   ItemPointerGetOffsetNumber(&itup->t_tid),
					   heapRel ? RelationGetRelationName(heapRel) : "?"),
			 errhint("Values larger than 1/3 of a buffer page cannot be indexed.\n"
					 "Consider a function index of an MD5 hash of the value, "
					 "or use full text indexing."),
			 heapRel ? errtableconstraint(heapRel,
										  RelationGetRelationName(rel)) : 0));
}

/*
 * The rightmost-leaf fastpath (nbtree's, _bt_search_insert(), PostgreSQL
 * 11 and later): ascending keys all go to the rightmost leaf, so an
 * inserter that last left an entry there remembers the block (the
 * relation's target block, RelationSetTargetBlock(), which core resets
 * whenever the relation's storage changes), and the next insert locks it
 * directly, without a descent, when it still is the rightmost leaf, has
 * room for the new entry without a split, and the key sorts after its
 * first entry.  The first condition makes it the only page where the key
 * can go (Lehman and Yao: a rightmost page's range is unbounded above),
 * and the last that no equal key of a unique check lies to its left.  The
 * lock is taken conditionally: a page another inserter holds is a hot
 * page, and the descent then costs little more than waiting.  Only in
 * trees of at least FBT_FASTPATH_MIN_LEVEL levels, as nbtree: in smaller
 * ones the descent is short and the root leaf splits often.
 */
#define FBT_FASTPATH_MIN_LEVEL	2

/*
 * The remembered rightmost leaf, exclusively locked, if key (an entry of
 * itemsz bytes, MAXALIGN'd) can go there with no split; else
 * InvalidBuffer, nothing held, and the block is forgotten.  Errors:
 * _fbt_checkpage()'s on a damaged page.
 */
static Buffer
_fbt_fastpath_leaf(Relation rel, FbtScanInsert key, Size itemsz)
{
	BlockNumber blkno = RelationGetTargetBlock(rel);
	Buffer		buf;
	Page		page;
	FbtPageOpaque opaque;

	if (!BlockNumberIsValid(blkno))
		return InvalidBuffer;
	buf = ReadBuffer(rel, blkno);
	if (ConditionalLockBuffer(buf))
	{
		_fbt_checkpage(rel, buf);
		_fbt_heal_version(buf);
		page = BufferGetPage(buf);
		opaque = FbtPageGetOpaque(page);
		if (P_ISLEAF(opaque) && P_RIGHTMOST(opaque) && !P_IGNORE(opaque) &&
			!P_INCOMPLETE_SPLIT(opaque) &&
			PageGetFreeSpace(page) > itemsz &&
			PageGetMaxOffsetNumber(page) >= P_FIRSTDATAKEY(opaque) &&
			_fbt_compare(rel, key, buf, P_FIRSTDATAKEY(opaque)) > 0)
			return buf;
		UnlockReleaseBuffer(buf);
	}
	else
		ReleaseBuffer(buf);
	RelationSetTargetBlock(rel, InvalidBlockNumber);
	return InvalidBuffer;
}

/*
 * fbtinsert() -- aminsert: insert one index entry.
 *
 * values/isnull: the index columns; ht_ctid: the heap TID; checkUnique:
 * UNIQUE_CHECK_NO, _YES (error on a live duplicate, waiting for
 * in-progress inserters first), _PARTIAL (never wait or error: report a
 * possible duplicate by returning false) or _EXISTING (recheck of an entry
 * already inserted: error on a duplicate, insert nothing), exactly as
 * btree.  indexUnchanged: the executor's hint that the entry is a
 * logically unchanged copy of an existing one (a non-HOT UPDATE).  A full
 * target leaf first has its dead entries deleted, if any can be
 * (fbtdelete.c), and is split only if that frees too little.  Returns
 * false only for a possible duplicate under _PARTIAL.
 * Holds no locks or pins on return.  Errors: 23505 unique_violation with
 * btree's text, 54000 for an oversized row.
 */
bool
fbtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
		  Relation heapRel, IndexUniqueCheck checkUnique,
		  bool indexUnchanged, IndexInfo *indexInfo)
{
	IndexTuple	itup;
	FbtScanInsertData keydata;
	FbtScanInsert key = &keydata;
	bool		checkingunique = (checkUnique != UNIQUE_CHECK_NO);
	bool		is_unique = true;
	bool		sawdup = false;

	itup = index_form_tuple(RelationGetDescr(rel), values, isnull);
	itup->t_tid = *ht_ctid;

	_fbt_check_item_size(rel, heapRel, itup);

	_fbt_fill_scankey(rel, itup, IndexRelationGetNumberOfKeyAttributes(rel),
					  key);

	/* NULLs never conflict, unless NULLS NOT DISTINCT */
	if (checkingunique && !rel->rd_index->indnullsnotdistinct)
	{
		int			i;

		for (i = 0; i < key->keysz; i++)
			if (key->scankeys[i].sk_flags & SK_ISNULL)
				checkingunique = false;
	}

	for (;;)
	{
		FbtStack	stack;
		Buffer		buf;
		OffsetNumber newitemoff;
		int			postingoff;

		key->scantid = checkingunique ? NULL : &itup->t_tid;
		buf = _fbt_fastpath_leaf(rel, key, MAXALIGN(IndexTupleSize(itup)));
		if (BufferIsValid(buf))
			stack = NULL;
		else
			stack = _fbt_search(rel, key, &buf, FBT_WRITE, NULL, NULL, NULL);

		if (checkingunique)
		{
			TransactionId xwait;
			uint32		speculativeToken = 0;

			xwait = _fbt_check_unique(rel, itup, heapRel, buf, key,
									  checkUnique, &is_unique,
									  &speculativeToken, &sawdup);
			if (TransactionIdIsValid(xwait))
			{
				/* wait for the other inserter, then start over */
				UnlockReleaseBuffer(buf);
				if (speculativeToken)
					SpeculativeInsertionWait(xwait, speculativeToken);
				else
					XactLockTableWait(xwait, rel, &itup->t_tid,
									  XLTW_InsertIndex);
				_fbt_freestack(stack);
				continue;
			}
			key->scantid = &itup->t_tid;
		}

		if (checkUnique == UNIQUE_CHECK_EXISTING)
		{
			UnlockReleaseBuffer(buf);
			_fbt_freestack(stack);
			break;
		}

		CheckForSerializableConflictIn(rel, NULL, BufferGetBlockNumber(buf));
		buf = _fbt_findinsertloc(rel, key, buf, stack, &newitemoff);
		if (!BufferIsValid(buf))
		{
			/* finished somebody's incomplete split: recheck from scratch */
			_fbt_freestack(stack);
			continue;
		}

		/*
		 * A full leaf: delete dead entries, or merge duplicates, rather than
		 * split, if that makes room (fbtdelete.c).
		 */
		if (PageGetFreeSpace(BufferGetPage(buf)) <
			MAXALIGN(IndexTupleSize(itup)) &&
			_fbt_delete_before_split(rel, heapRel, buf, itup,
									 MAXALIGN(IndexTupleSize(itup)),
									 checkingunique, sawdup, indexUnchanged))
			newitemoff = _fbt_binsrch(rel, key, buf);

		postingoff = _fbt_find_posting(rel, key, buf, newitemoff);
		if (postingoff < 0)
		{
			/*
			 * The TID falls inside a posting list marked dead: delete the
			 * dead entries (that one among them) and search again.
			 */
			(void) _fbt_delete_lp_dead(rel, heapRel, buf);
			newitemoff = _fbt_binsrch(rel, key, buf);
			postingoff = _fbt_find_posting(rel, key, buf, newitemoff);
			if (postingoff < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" keeps a posting list marked dead at offset %u of block %u after deleting dead entries",
								RelationGetRelationName(rel), newitemoff,
								BufferGetBlockNumber(buf))));
		}

		_fbt_insertonpg(rel, buf, InvalidBuffer, stack, itup, newitemoff,
						postingoff);
		_fbt_freestack(stack);
		break;
	}

	_fbt_free_scankey_args(key);
	pfree(itup);
	return is_unique;
}

/*
 * _fbt_check_unique() -- look for a conflicting live entry.
 *
 * buf: the leaf where key (no scantid) first could be, exclusively locked
 * by the caller, who keeps it locked across the check so that a concurrent
 * inserter of the same key must wait for it (nbtree README, "unique
 * checking").  Equal entries may continue on pages to the right; those
 * are share-locked one at a time.  Entries already marked LP_DEAD are
 * skipped; an entry whose heap versions turn out to be dead to every
 * snapshot is marked LP_DEAD (an unlogged hint, see the loop), so churned
 * keys do not send every later check to the heap again.
 *
 * *sawdup is set when any entry with an equal key is met (live or dead):
 * a hint for deletion before a split (fbtdelete.c).
 *
 * Returns the xid to wait for (with *speculativeToken) if an equal entry's
 * inserter or deleter is still in progress; otherwise
 * InvalidTransactionId, having raised 23505 for a live duplicate, or, for
 * UNIQUE_CHECK_PARTIAL, set *is_unique = false instead.  On return only
 * buf is locked (unless an error was raised, which releases everything
 * first).
 */
static TransactionId
_fbt_check_unique(Relation rel, IndexTuple itup, Relation heapRel,
				  Buffer buf, FbtScanInsert key, IndexUniqueCheck checkUnique,
				  bool *is_unique, uint32 *speculativeToken, bool *sawdup)
{
	SnapshotData SnapshotDirty;
	Buffer		nbuf = InvalidBuffer;
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber offset;
	OffsetNumber maxoff;
	bool		found = false;

	InitDirtySnapshot(SnapshotDirty);

	offset = _fbt_binsrch(rel, key, buf);
	maxoff = PageGetMaxOffsetNumber(page);

	for (;;)
	{
		if (offset <= maxoff)
		{
			ItemId		curitemid = PageGetItemId(page, offset);
			Buffer		curbuf = BufferIsValid(nbuf) ? nbuf : buf;
			IndexTuple	curitup;
			ItemPointer htids;
			int			nhtids;
			bool		tuple_all_dead = true;
			int			j;

			if (_fbt_compare(rel, key, curbuf, offset) != 0)
				break;			/* past the equal entries */
			*sawdup = true;

			curitup = (IndexTuple) PageGetItem(page, curitemid);
			if (FbtTupleIsPosting(curitup))
			{
				if (!_fbt_posting_ok(curitup))
					_fbt_corrupt_item(rel, curbuf, offset,
									  "The posting list extends past the end of its tuple");
				htids = FbtTupleGetPosting(curitup);
				nhtids = FbtTupleGetNPosting(curitup);
			}
			else
			{
				htids = &curitup->t_tid;
				nhtids = 1;
			}

			/* every heap tuple the entry stands for, in TID order */
			for (j = 0; j < nhtids; j++)
			{
				ItemPointerData htid = htids[j];
				bool		all_dead = false;

				if (checkUnique == UNIQUE_CHECK_EXISTING &&
					ItemPointerCompare(&htid, &itup->t_tid) == 0)
				{
					found = true;
					tuple_all_dead = false;
				}
				else if (ItemIdIsDead(curitemid))
				{
					/* known dead to all, by a scan or an earlier check */
					break;
				}
				else if (table_index_fetch_tuple_check(heapRel, &htid,
													   &SnapshotDirty,
													   &all_dead))
				{
					TransactionId xwait;

					if (checkUnique == UNIQUE_CHECK_PARTIAL)
					{
						*is_unique = false;
						goto done;
					}

					xwait = TransactionIdIsValid(SnapshotDirty.xmin) ?
						SnapshotDirty.xmin : SnapshotDirty.xmax;
					if (TransactionIdIsValid(xwait))
					{
						if (BufferIsValid(nbuf))
							UnlockReleaseBuffer(nbuf);
						*speculativeToken = SnapshotDirty.speculativeToken;
						return xwait;
					}

					/*
					 * A definite conflict, unless the row we are indexing is
					 * itself dead by now (CREATE INDEX CONCURRENTLY can
					 * insert entries for such rows).
					 */
					htid = itup->t_tid;
					if (!table_index_fetch_tuple_check(heapRel, &htid,
													   SnapshotSelf, NULL))
						goto done;

					CheckForSerializableConflictIn(rel, NULL,
												   BufferGetBlockNumber(buf));

					/* release locks before catalog access for the message */
					if (BufferIsValid(nbuf))
						UnlockReleaseBuffer(nbuf);
					UnlockReleaseBuffer(buf);
					{
						Datum		values[INDEX_MAX_KEYS];
						bool		isnull[INDEX_MAX_KEYS];
						char	   *key_desc;

						index_deform_tuple(itup, RelationGetDescr(rel),
										   values, isnull);
						key_desc = BuildIndexValueDescription(rel, values,
															  isnull);
						ereport(ERROR,
								(errcode(ERRCODE_UNIQUE_VIOLATION),
								 errmsg("duplicate key value violates unique constraint \"%s\"",
										RelationGetRelationName(rel)),
								 key_desc ? errdetail("Key %s already exists.",
													  key_desc) : 0,
								 errtableconstraint(heapRel,
													RelationGetRelationName(rel))));
					}
				}
				else if (!all_dead)
					tuple_all_dead = false;
			}

			if (!ItemIdIsDead(curitemid) && tuple_all_dead)
			{
				/*
				 * Every version the entry points to (each TID of a posting
				 * list) is dead to every snapshot, so no later check needs
				 * to fetch them again: mark it LP_DEAD, as _fbt_killitems()
				 * does for scans.  This is only a hint (nbtree README,
				 * "Marking dead items"): the page we are on is locked (buf
				 * exclusively, a right sibling nbuf in share mode, which
				 * suffices because every hint writer sets the same bits),
				 * and the change is not WAL-logged.  Leaves only, so
				 * optimistic inner-page readers never see a hint write.
				 */
				Assert(P_ISLEAF(opaque));
				opaque->fbto_flags |= FBTP_HAS_GARBAGE;
				ItemIdMarkDead(curitemid);
				MarkBufferDirtyHint(curbuf, true);
			}
			offset = OffsetNumberNext(offset);
		}
		else
		{
			BlockNumber nblkno;

			/*
			 * Equal entries may continue right only if the high key is
			 * equal.  A deleted or half-dead page (met moving right) is
			 * empty and has no usable high key: step over it.
			 */
			if (P_IGNORE(opaque))
				_fbt_ignored_page_not_rightmost(rel,
												BufferGetBlockNumber(BufferIsValid(nbuf) ? nbuf : buf),
												opaque);
			else if (P_RIGHTMOST(opaque) ||
					 _fbt_compare(rel, key, BufferIsValid(nbuf) ? nbuf : buf,
								  P_HIKEY) != 0)
				break;
			nblkno = opaque->fbto_next;
			nbuf = _fbt_relandgetbuf(rel, nbuf, nblkno, FBT_READ);
			page = BufferGetPage(nbuf);
			opaque = FbtPageGetOpaque(page);
			maxoff = PageGetMaxOffsetNumber(page);
			offset = P_IGNORE(opaque) ? OffsetNumberNext(maxoff) :
				P_FIRSTDATAKEY(opaque);
		}
	}

done:
	if (BufferIsValid(nbuf))
		UnlockReleaseBuffer(nbuf);

	if (checkUnique == UNIQUE_CHECK_EXISTING && !found)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("failed to re-find tuple within index \"%s\"",
						RelationGetRelationName(rel)),
				 errhint("This may be because of a non-immutable index expression."),
				 errtableconstraint(heapRel, RelationGetRelationName(rel))));

	return InvalidTransactionId;
}

/*
 * _fbt_find_posting() -- does the new entry's heap TID (key->scantid) fall
 * inside the TID range of a posting list at newitemoff, the insert offset
 * on the leaf buf (exclusively locked)?  Returns 0 if not, else its
 * position in the posting list (> 0), or -1 if that posting list is
 * marked LP_DEAD (_fbt_posting_position()).
 */
static int
_fbt_find_posting(Relation rel, FbtScanInsert key, Buffer buf,
				  OffsetNumber newitemoff)
{
	IndexTuple	itup;

	if (newitemoff > PageGetMaxOffsetNumber(BufferGetPage(buf)))
		return 0;
	itup = _fbt_getitem(rel, buf, newitemoff);
	if (!FbtTupleIsPosting(itup) ||
		_fbt_compare(rel, key, buf, newitemoff) != 0)
		return 0;
	return _fbt_posting_position(rel, buf, newitemoff, key->scantid);
}

/*
 * _fbt_findinsertloc() -- find the page and offset for key (with scantid).
 *
 * buf: the exclusively locked leaf from the descent.  Moves right while the
 * high key is < key, locking the right page before releasing the left one,
 * so a concurrent unique check cannot slip between.  Returns the target
 * leaf exclusively locked with *newitemoff set, or InvalidBuffer (nothing
 * held) after finishing an incomplete split met on the way, in which case
 * the caller starts over.
 */
static Buffer
_fbt_findinsertloc(Relation rel, FbtScanInsert key, Buffer buf,
				   FbtStack stack, OffsetNumber *newitemoff)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		FbtPageOpaque opaque = FbtPageGetOpaque(page);
		Buffer		rbuf;

		if (P_INCOMPLETE_SPLIT(opaque))
		{
			_fbt_finish_split(rel, buf, stack);
			return InvalidBuffer;
		}
		/* a deleted or half-dead leaf (met moving right) takes nothing */
		if (P_IGNORE(opaque))
			_fbt_ignored_page_not_rightmost(rel, BufferGetBlockNumber(buf),
											opaque);
		else if (P_RIGHTMOST(opaque) ||
				 _fbt_compare(rel, key, buf, P_HIKEY) <= 0)
			break;

		rbuf = _fbt_getbuf(rel, opaque->fbto_next, FBT_WRITE);
		if (!P_ISLEAF(FbtPageGetOpaque(BufferGetPage(rbuf))))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a right-link from leaf block %u to block %u, which is not a leaf",
							RelationGetRelationName(rel),
							BufferGetBlockNumber(buf), opaque->fbto_next),
					 errhint("Please REINDEX it.")));
		UnlockReleaseBuffer(buf);
		buf = rbuf;
	}

	*newitemoff = _fbt_binsrch(rel, key, buf);
	return buf;
}

/*
 * Choose where to split: the index in items[] of the first item that goes
 * right.  nitems >= 2 items of sizes itemsz[] (MAXALIGN'd).  The left page
 * also needs room for its new high key (bounded by the first right item's
 * size plus a heap TID on leaves), the right page for the old high key
 * (hikeysz, 0 if rightmost).  Appends to the rightmost page leave the left
 * page fillfactor-full (leaves) or FBT_NONLEAF_FILLFACTOR-full (internal
 * pages), so ascending inserts pack pages as a bulk load would; a leaf
 * holding a single value whose entries continue nowhere else (singleval)
 * leaves it FBT_SINGLEVAL_FILLFACTOR full, since that value's new entries
 * (ever larger heap TIDs) all go right, as nbtree's "single value"
 * strategy does; otherwise the split balances free space (nbtree README,
 * "page splits"), on leaves among the points nearest the balance
 * preferring the one that leaves the shortest high key (see below).
 * items[]: the items themselves, for those comparisons, their attributes
 * checked by the caller.
 */
/* leaf split points weighed for suffix truncation (nbtree uses 9) */
#define FBT_SPLIT_INTERVAL	9

static int
_fbt_findsplitloc(Relation rel, bool isleaf, bool rightmost_append,
				  bool singleval, IndexTuple *items, Size *itemsz, int nitems,
				  Size hikeysz)
{
	Size		pagespace = BLCKSZ - SizeOfPageHeaderData -
		MAXALIGN(sizeof(FbtPageOpaqueData));
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	Size		total = 0;
	Size		leftsz = 0;
	int		   *cand;
	double	   *delta;
	int			ncand = 0;
	int			best;
	int			bestpenalty;
	double		fillfactor;
	int			i;
	int			j;

	for (i = 0; i < nitems; i++)
		total += itemsz[i] + sizeof(ItemIdData);

	fillfactor = isleaf ? FbtGetFillFactor(rel) : FBT_NONLEAF_FILLFACTOR;
	if (singleval)
	{
		/* packed as a bulk load of the value would be */
		rightmost_append = true;
		fillfactor = FBT_SINGLEVAL_FILLFACTOR;
	}

	/* every feasible split point, with its distance from the ideal one */
	cand = palloc(sizeof(int) * nitems);
	delta = palloc(sizeof(double) * nitems);
	for (i = 1; i < nitems; i++)
	{
		Size		newhikey;
		Size		leftneed;
		Size		rightneed;

		leftsz += itemsz[i - 1] + sizeof(ItemIdData);
		/* a posting list's TIDs do not go into the high key */
		newhikey = (isleaf && FbtTupleIsPosting(items[i]) ?
					MAXALIGN(FbtTupleGetPostingOffset(items[i])) : itemsz[i]) +
			(isleaf ? MAXALIGN(sizeof(ItemPointerData)) : 0);
		leftneed = leftsz + newhikey + sizeof(ItemIdData);
		rightneed = total - leftsz +
			(hikeysz ? hikeysz + sizeof(ItemIdData) : 0);
		if (!isleaf)
		{
			/* the first right item loses its key (minus infinity) */
			rightneed -= itemsz[i] - MAXALIGN(sizeof(IndexTupleData));
		}
		if (leftneed > pagespace || rightneed > pagespace)
			continue;

		cand[ncand] = i;
		if (rightmost_append)
			delta[ncand++] = fabs((double) leftsz - pagespace * fillfactor / 100.0);
		else
			delta[ncand++] = fabs((double) leftneed - (double) rightneed);
	}
	if (ncand == 0)
		elog(ERROR, "could not find a feasible split point for index \"%s\"",
			 RelationGetRelationName(rel));

	best = 0;
	for (j = 1; j < ncand; j++)
		if (delta[j] < delta[best])
			best = j;
	if (!isleaf || rightmost_append)
	{
		i = cand[best];
		pfree(cand);
		pfree(delta);
		return i;
	}

	/*
	 * A leaf split in the middle: among the FBT_SPLIT_INTERVAL candidates
	 * nearest the balanced point, take the one whose high key keeps the
	 * fewest attributes (suffix truncation), the nearest of those; if each
	 * of them would need a heap TID, the nearest candidate anywhere that
	 * separates two distinct keys, so that a run of duplicates is not cut
	 * when the page holds another value (nbtree README, "page splits";
	 * nbtsplitloc.c's default and "many duplicates" strategies).
	 */
	bestpenalty = _fbt_keep_natts(rel, items[cand[best] - 1], items[cand[best]]);
	{
		int			lo = best;
		int			hi = best;
		int			k;

		/* widen around best by delta order: the nearest candidates */
		for (k = 1; k < FBT_SPLIT_INTERVAL; k++)
		{
			int			pick;
			int			penalty;

			if (lo > 0 && (hi == ncand - 1 || delta[lo - 1] <= delta[hi + 1]))
				pick = --lo;
			else if (hi < ncand - 1)
				pick = ++hi;
			else
				break;
			penalty = _fbt_keep_natts(rel, items[cand[pick] - 1],
									  items[cand[pick]]);
			if (penalty < bestpenalty ||
				(penalty == bestpenalty && delta[pick] < delta[best]))
			{
				best = pick;
				bestpenalty = penalty;
			}
		}
	}
	if (bestpenalty > nkeyatts &&
		_fbt_keep_natts(rel, items[0], items[nitems - 1]) <= nkeyatts)
	{
		int			alt = -1;

		for (j = 0; j < ncand; j++)
		{
			if ((alt < 0 || delta[j] < delta[alt]) &&
				_fbt_keep_natts(rel, items[cand[j] - 1],
								items[cand[j]]) <= nkeyatts)
				alt = j;
		}
		if (alt >= 0)
			best = alt;
	}
	i = cand[best];
	pfree(cand);
	pfree(delta);
	return i;
}

/*
 * Does a splitting leaf hold one value only, with no equal entries on the
 * right sibling?  items[0 .. nitems - 1]: its data items with the new one;
 * buf: the leaf (locked), for its high key.  The value continues right
 * when the high key kept every key attribute and they are equal to it.
 */
static bool
_fbt_split_singleval(Relation rel, Buffer buf, IndexTuple *items, int nitems,
					 bool isrightmost)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	IndexTuple	hikey;

	_fbt_check_attrs(rel, buf, items[0]);
	_fbt_check_attrs(rel, buf, items[nitems - 1]);
	if (_fbt_keep_natts(rel, items[0], items[nitems - 1]) <= nkeyatts)
		return false;
	if (isrightmost)
		return true;
	hikey = _fbt_getitem(rel, buf, P_HIKEY);
	if (FbtTupleGetNAtts(hikey, rel) < nkeyatts)
		return true;
	_fbt_check_attrs(rel, buf, hikey);
	return _fbt_keep_natts(rel, hikey, items[0]) <= nkeyatts;
}

/*
 * _fbt_split_items() -- the data items of a page being split, in key
 * order, with newitem inserted before the item at newitemoff (or last) and
 * nposting, when not NULL, in place of the posting list at newitemoff - 1.
 *
 * items and itemsz have room for PageGetMaxOffsetNumber(page) -
 * P_FIRSTDATAKEY + 2 entries; returns how many were filled.  Sizes are
 * MAXALIGN'd.  rel and buf: the primary's index and locked page, whose
 * items are read bounds-checked (_fbt_getitem(), ERRCODE_INDEX_CORRUPTED);
 * rel NULL: redo (fbtxlog.c), which reads them as they are.  The tuples
 * are pointers into page (or newitem/nposting), not copies.
 */
int
_fbt_split_items(Relation rel, Buffer buf, Page page,
				 OffsetNumber newitemoff, IndexTuple newitem,
				 IndexTuple nposting, IndexTuple *items, Size *itemsz)
{
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	int			i = 0;

	for (off = P_FIRSTDATAKEY(opaque); off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (off == newitemoff)
		{
			items[i] = newitem;
			itemsz[i++] = MAXALIGN(IndexTupleSize(newitem));
		}
		if (nposting != NULL && off == OffsetNumberPrev(newitemoff))
		{
			/* the posting list the new entry split (same size) */
			items[i] = nposting;
			itemsz[i++] = MAXALIGN(IndexTupleSize(nposting));
			continue;
		}
		if (rel != NULL)
			items[i] = _fbt_getitem(rel, buf, off);
		else
			items[i] = (IndexTuple) PageGetItem(page, iid);
		itemsz[i++] = MAXALIGN(ItemIdGetLength(iid));
	}
	if (newitemoff > maxoff)
	{
		items[i] = newitem;
		itemsz[i++] = MAXALIGN(IndexTupleSize(newitem));
	}
	return i;
}

/*
 * _fbt_split_fill_left() -- the page edit that makes the left half of a
 * split: left (BLCKSZ bytes, overwritten) becomes a page of the original's
 * level and flags (FBTP_ROOT, FBTP_HAS_GARBAGE and FBTP_SPLIT_END cleared,
 * FBTP_INCOMPLETE_SPLIT set) with vacuum cycle id cycleid, linked from the
 * original's left sibling and to rightblk, holding hikey and items[0 ..
 * firstright - 1].  oopaque is the original page's special space (left
 * must be another buffer).
 *
 * Run by the primary (into the generic WAL image, or in compact mode a
 * temporary page then copied over the shared one) and by redo of
 * XLOG_FBT_SPLIT_L/_R (cycleid 0: not logged), with the items of
 * _fbt_split_items().  Returns false if an item does not fit; raises no
 * error.
 */
bool
_fbt_split_fill_left(Page left, const FbtPageOpaqueData *oopaque,
					 BlockNumber rightblk, uint16 cycleid, IndexTuple hikey,
					 IndexTuple *items, Size *itemsz, int firstright)
{
	FbtPageOpaque lopaque;
	int			i;

	_fbt_pageinit(left, oopaque->fbto_level,
				  (oopaque->fbto_flags &
				   ~(FBTP_ROOT | FBTP_HAS_GARBAGE | FBTP_SPLIT_END)) |
				  FBTP_INCOMPLETE_SPLIT);
	lopaque = FbtPageGetOpaque(left);
	lopaque->fbto_prev = oopaque->fbto_prev;
	lopaque->fbto_next = rightblk;
	lopaque->fbto_cycleid = cycleid;
	if (PageAddItem(left, (Item) hikey, MAXALIGN(IndexTupleSize(hikey)),
					P_HIKEY, false, false) == InvalidOffsetNumber)
		return false;
	for (i = 0; i < firstright; i++)
		if (PageAddItem(left, (Item) items[i], itemsz[i], InvalidOffsetNumber,
						false, false) == InvalidOffsetNumber)
			return false;
	return true;
}

/*
 * _fbt_split_logged() -- compact mode: write a split built in temporary
 * pages and log XLOG_FBT_SPLIT_L (the new tuple went left) or _R.
 *
 * limg and rimg: the left and right pages, complete; buf (the original,
 * becoming the left page), rbuf (the new right page), sbuf (the old right
 * sibling, whose left-link becomes rbuf; InvalidBuffer on the rightmost
 * page) and cbuf (a child whose split this one completes, or
 * InvalidBuffer) exclusively locked, and left so.  xlrec, lognewitem (the
 * new tuple as the inserter formed it) and hikey make the left page's
 * part of the record, which redo rebuilds with _fbt_split_items() and
 * _fbt_split_fill_left().  The right page goes as its tuple area, or, if
 * rtuples is false (an item's line pointer length is not the MAXALIGN'd
 * size of its tuple, so redo could not tell it from the area), as a full
 * image.
 */
static void
_fbt_split_logged(Relation rel, Buffer buf, Buffer rbuf, Buffer sbuf,
				  Buffer cbuf, Page limg, Page rimg, xl_fbt_split *xlrec,
				  bool onleft, IndexTuple lognewitem, IndexTuple hikey,
				  bool rtuples)
{
	XLogRecPtr	recptr = InvalidXLogRecPtr;
	uint32		lversion;
	uint32		rversion;

	START_CRIT_SECTION();
	lversion = _fbt_edit_begin(buf);
	rversion = _fbt_edit_begin(rbuf);
	if (BufferIsValid(sbuf))
		(void) _fbt_edit_begin(sbuf);
	if (BufferIsValid(cbuf))
		(void) _fbt_edit_begin(cbuf);
	_fbt_edit_replace(buf, limg, lversion);
	_fbt_edit_replace(rbuf, rimg, rversion);
	MarkBufferDirty(buf);
	MarkBufferDirty(rbuf);
	if (BufferIsValid(sbuf))
	{
		FbtPageGetOpaque(BufferGetPage(sbuf))->fbto_prev =
			BufferGetBlockNumber(rbuf);
		MarkBufferDirty(sbuf);
	}
	if (BufferIsValid(cbuf))
	{
		_fbt_apply_clear_incomplete_split(BufferGetPage(cbuf));
		MarkBufferDirty(cbuf);
	}
	if (RelationNeedsWAL(rel))
	{
		XLogBeginInsert();
		XLogRegisterData((char *) xlrec, SizeOfFbtSplit);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) lognewitem, IndexTupleSize(lognewitem));
		XLogRegisterBufData(0, (char *) hikey, IndexTupleSize(hikey));
		if (rtuples)
		{
			PageHeader	rhdr = (PageHeader) rimg;

			XLogRegisterBuffer(1, rbuf, REGBUF_WILL_INIT | REGBUF_STANDARD);
			XLogRegisterBufData(1, (char *) rimg + rhdr->pd_upper,
								rhdr->pd_special - rhdr->pd_upper);
		}
		else
			XLogRegisterBuffer(1, rbuf, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		if (BufferIsValid(sbuf))
			XLogRegisterBuffer(2, sbuf, REGBUF_STANDARD);
		if (BufferIsValid(cbuf))
			XLogRegisterBuffer(3, cbuf, REGBUF_STANDARD);
		recptr = XLogInsert(FBT_RMGR_ID,
							onleft ? XLOG_FBT_SPLIT_L : XLOG_FBT_SPLIT_R);
	}
	_fbt_edit_end(buf, recptr);
	_fbt_edit_end(rbuf, recptr);
	if (BufferIsValid(sbuf))
		_fbt_edit_end(sbuf, recptr);
	if (BufferIsValid(cbuf))
		_fbt_edit_end(cbuf, recptr);
	END_CRIT_SECTION();
}

/*
 * _fbt_split() -- split page buf to make room for newitem at newitemoff.
 *
 * nposting, if not NULL, replaces the posting list just before newitemoff
 * (a posting list split at postingoff, _fbt_insertonpg(); origitup is the
 * new tuple before the split swapped its TID, which compact WAL logs;
 * otherwise origitup is newitem).  buf is exclusively locked; cbuf, if valid, is a child whose
 * INCOMPLETE_SPLIT flag this insertion clears.  Writes the left page (in
 * place, keeping its block), a new right page and the old right sibling's
 * left-link in one WAL record, marks the left page INCOMPLETE_SPLIT, and
 * returns the right page exclusively locked; buf stays locked, cbuf is
 * released.  *lefthikey receives the left page's new high key (a palloc'd
 * pivot, suffix-truncated on leaves), which becomes the right page's
 * downlink.
 */
static Buffer
_fbt_split(Relation rel, Buffer buf, Buffer cbuf, OffsetNumber newitemoff,
		   IndexTuple newitem, IndexTuple nposting, IndexTuple origitup,
		   int postingoff, IndexTuple *lefthikey)
{
	Page		origpage = BufferGetPage(buf);
	FbtPageOpaque oopaque = FbtPageGetOpaque(origpage);
	bool		isleaf = P_ISLEAF(oopaque);
	bool		isrightmost = P_RIGHTMOST(oopaque);
	OffsetNumber firstdata = P_FIRSTDATAKEY(oopaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(origpage);
	int			nitems = maxoff - firstdata + 2;
	IndexTuple *items;
	Size	   *itemsz;
	Size		hikeysz = 0;
	int			firstright;
	int			i;
	IndexTuple	hikey;
	IndexTuple	rightfirst = NULL;
	Buffer		rbuf;
	Buffer		sbuf = InvalidBuffer;
	BlockNumber origblk = BufferGetBlockNumber(buf);
	BlockNumber rightblk;
	FbtWal		wal;
	Page		limg;
	Page		rimg;
	FbtPageOpaque ropaque;
	bool		rtuples = true;
	uint16		cycleid;

	Assert(!P_INCOMPLETE_SPLIT(oopaque));

	items = palloc(sizeof(IndexTuple) * nitems);
	itemsz = palloc(sizeof(Size) * nitems);
	i = _fbt_split_items(rel, buf, origpage, newitemoff, newitem, nposting,
						 items, itemsz);
	Assert(i == nitems);

	if (!isrightmost)
		hikeysz = MAXALIGN(ItemIdGetLength(PageGetItemId(origpage, P_HIKEY)));

	if (isleaf)
	{
		/* the split point's comparisons decode every key attribute */
		for (i = 0; i < nitems; i++)
			_fbt_check_attrs(rel, buf, items[i]);
	}
	firstright = _fbt_findsplitloc(rel, isleaf,
								   isrightmost && newitemoff > maxoff,
								   isleaf &&
								   _fbt_split_singleval(rel, buf, items,
														nitems, isrightmost),
								   items, itemsz, nitems, hikeysz);

	if (isleaf)
	{
		/* suffix truncation decodes and compares both tuples' keys */
		_fbt_check_attrs(rel, buf, items[firstright - 1]);
		_fbt_check_attrs(rel, buf, items[firstright]);
		hikey = _fbt_truncate(rel, items[firstright - 1], items[firstright]);
	}
	else
	{
		hikey = CopyIndexTuple(items[firstright]);
		FbtPivotSetDownLink(hikey, InvalidBlockNumber);
		rightfirst = _fbt_pivot_minus_infinity(items[firstright]);
	}

	/*
	 * New right page, the cycle id of a VACUUM pass running (read with both
	 * halves locked: _fbt_vacuum_cycleid()), and the old right sibling
	 * whose left-link changes
	 */
	rbuf = _fbt_allocbuf_recycle(rel);
	rightblk = BufferGetBlockNumber(rbuf);
	cycleid = _fbt_vacuum_cycleid(rel);
	if (!isrightmost)
	{
		sbuf = _fbt_getbuf(rel, oopaque->fbto_next, FBT_WRITE);
		if (FbtPageGetOpaque(BufferGetPage(sbuf))->fbto_prev != origblk)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("right sibling's left-link doesn't match: block %u links to %u instead of expected %u in index \"%s\"",
							oopaque->fbto_next,
							FbtPageGetOpaque(BufferGetPage(sbuf))->fbto_prev,
							origblk, RelationGetRelationName(rel))));
	}

	if (fbt_wal_compact)
	{
		/* built in temporary pages, copied in by _fbt_split_logged() */
		limg = palloc(BLCKSZ);
		rimg = palloc(BLCKSZ);
	}
	else
	{
		_fbt_wal_start(&wal, rel);
		limg = _fbt_wal_register(&wal, buf, false);
		rimg = _fbt_wal_register(&wal, rbuf, true);
	}

	/* left page: rebuilt in the image from the unchanged shared page */
	if (!_fbt_split_fill_left(limg, oopaque, rightblk, cycleid, hikey,
							  items, itemsz, firstright))
		goto addfailed;

	/*
	 * Right page.  FBTP_SPLIT_END when the old right sibling has another
	 * cycle id, as nbtree's: then it holds nothing that was on this page
	 * when the pass began, and the pass need not follow the chain there.
	 */
	_fbt_pageinit(rimg, oopaque->fbto_level,
				  oopaque->fbto_flags & ~(FBTP_ROOT | FBTP_HAS_GARBAGE |
										  FBTP_INCOMPLETE_SPLIT |
										  FBTP_SPLIT_END));
	ropaque = FbtPageGetOpaque(rimg);
	ropaque->fbto_prev = origblk;
	ropaque->fbto_next = oopaque->fbto_next;
	ropaque->fbto_cycleid = cycleid;
	if (BufferIsValid(sbuf) &&
		FbtPageGetOpaque(BufferGetPage(sbuf))->fbto_cycleid != cycleid)
		ropaque->fbto_flags |= FBTP_SPLIT_END;
	if (!isrightmost)
	{
		IndexTuple	rhikey = _fbt_getitem(rel, buf, P_HIKEY);

		if (PageAddItem(rimg, (Item) rhikey, hikeysz, P_HIKEY,
						false, false) == InvalidOffsetNumber)
			goto addfailed;
		rtuples &= (MAXALIGN(IndexTupleSize(rhikey)) == hikeysz);
	}
	for (i = firstright; i < nitems; i++)
	{
		IndexTuple	it = (i == firstright && rightfirst) ? rightfirst : items[i];
		Size		sz = (i == firstright && rightfirst) ?
			MAXALIGN(IndexTupleSize(rightfirst)) : itemsz[i];

		if (PageAddItem(rimg, (Item) it, sz, InvalidOffsetNumber,
						false, false) == InvalidOffsetNumber)
			goto addfailed;
		rtuples &= (MAXALIGN(IndexTupleSize(it)) == sz);
	}

	if (isleaf)
		PredicateLockPageSplit(rel, origblk, rightblk);

	if (fbt_wal_compact)
	{
		xl_fbt_split xlrec;
		bool		onleft = false;

		for (i = 0; i < firstright; i++)
			if (items[i] == newitem)
				onleft = true;
		xlrec.level = oopaque->fbto_level;
		xlrec.firstright = (uint16) firstright;
		xlrec.newitemoff = newitemoff;
		xlrec.postingoff = (uint16) postingoff;
		/* cycle ids are not logged, nor FBTP_SPLIT_END, as nbtree's */
		xlrec.rightflags = ropaque->fbto_flags & ~FBTP_SPLIT_END;
#ifdef USE_ASSERT_CHECKING
		if (fbt_debug_split_image)
			rtuples = false;
#endif
		_fbt_split_logged(rel, buf, rbuf, sbuf, cbuf, limg, rimg, &xlrec,
						  onleft, origitup, hikey, rtuples);
		pfree(limg);
		pfree(rimg);
	}
	else
	{
		if (BufferIsValid(sbuf))
		{
			Page		simg = _fbt_wal_register(&wal, sbuf, false);

			FbtPageGetOpaque(simg)->fbto_prev = rightblk;
		}
		_fbt_wal_finish_completing(&wal, cbuf);
	}

	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	if (BufferIsValid(cbuf))
		UnlockReleaseBuffer(cbuf);
	pfree(items);
	pfree(itemsz);
	*lefthikey = hikey;
	return rbuf;

addfailed:
	if (!fbt_wal_compact)
		_fbt_wal_abort(&wal);
	elog(ERROR, "failed to add item to split page %u of index \"%s\"",
		 origblk, RelationGetRelationName(rel));
	return InvalidBuffer;		/* keep compiler quiet */
}

/*
 * _fbt_insert_apply() -- the page edit of an insertion that fits: put itup
 * at offnum, after replacing the posting list at offnum - 1 with nposting
 * when that is not NULL (a posting list split: same size, fbtdedup.c).
 *
 * Run by the primary on the locked page (in compact mode the shared page,
 * in its critical section; in generic mode the WAL image) and by redo of
 * XLOG_FBT_INSERT_* (fbtxlog.c), so both make the same bytes: the line
 * pointer's length is MAXALIGN(IndexTupleSize(itup)) on both.  Returns
 * false when the page cannot take the tuple (no room, offset out of
 * range); the posting list may then already be replaced.  Raises no
 * error.
 */
bool
_fbt_insert_apply(Page page, OffsetNumber offnum, IndexTuple itup,
				  IndexTuple nposting)
{
	if (nposting != NULL &&
		!PageIndexTupleOverwrite(page, OffsetNumberPrev(offnum),
								 (Item) nposting,
								 MAXALIGN(IndexTupleSize(nposting))))
		return false;
	return PageAddItem(page, (Item) itup, MAXALIGN(IndexTupleSize(itup)),
					   offnum, false, false) != InvalidOffsetNumber;
}

/*
 * _fbt_insert_logged() -- compact mode: insert itup at newitemoff on buf,
 * which has room for it, and log XLOG_FBT_INSERT_LEAF, _UPPER (cbuf valid:
 * the child whose split this downlink completes) or _POST (postingoff > 0:
 * nposting replaces the posting list at newitemoff - 1, and origitup is
 * the tuple before _fbt_swap_posting() gave it the list's last TID; redo
 * repeats that swap).  Buffers stay locked and pinned.
 */
static void
_fbt_insert_logged(Relation rel, Buffer buf, Buffer cbuf,
				   IndexTuple origitup, IndexTuple itup, IndexTuple nposting,
				   OffsetNumber newitemoff, int postingoff)
{
	Page		page = BufferGetPage(buf);
	bool		isleaf = P_ISLEAF(FbtPageGetOpaque(page));
	XLogRecPtr	recptr = InvalidXLogRecPtr;

	START_CRIT_SECTION();
	_fbt_edit_begin(buf);
	if (BufferIsValid(cbuf))
		_fbt_edit_begin(cbuf);
	if (!_fbt_insert_apply(page, newitemoff, itup, nposting))
		elog(PANIC, "failed to add new item to block %u in index \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	MarkBufferDirty(buf);
	if (BufferIsValid(cbuf))
	{
		_fbt_apply_clear_incomplete_split(BufferGetPage(cbuf));
		MarkBufferDirty(cbuf);
	}
	if (RelationNeedsWAL(rel))
	{
		xl_fbt_insert xlrec;
		IndexTuple	logged = postingoff > 0 ? origitup : itup;
		uint8		info;

		xlrec.offnum = newitemoff;
		xlrec.postingoff = (uint16) postingoff;
		if (postingoff > 0)
			info = XLOG_FBT_INSERT_POST;
		else if (isleaf)
			info = XLOG_FBT_INSERT_LEAF;
		else
			info = XLOG_FBT_INSERT_UPPER;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec,
						 postingoff > 0 ? SizeOfFbtInsertPost : SizeOfFbtInsert);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (BufferIsValid(cbuf))
			XLogRegisterBuffer(1, cbuf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) logged, IndexTupleSize(logged));
		recptr = XLogInsert(FBT_RMGR_ID, info);
	}
	_fbt_edit_end(buf, recptr);
	if (BufferIsValid(cbuf))
		_fbt_edit_end(cbuf, recptr);
	END_CRIT_SECTION();
}

/*
 * _fbt_insertonpg() -- put itup at newitemoff on page buf, splitting it
 * if it is full.
 *
 * buf: exclusively locked target; cbuf: the child whose incomplete split
 * this (downlink) insertion completes, or InvalidBuffer; stack: buf's
 * parent entries.  Releases buf and cbuf, and any page a split touched.
 */
static void
_fbt_insertonpg(Relation rel, Buffer buf, Buffer cbuf, FbtStack stack,
				IndexTuple itup, OffsetNumber newitemoff, int postingoff)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	Size		itemsz = MAXALIGN(IndexTupleSize(itup));
	IndexTuple	origitup = itup;
	IndexTuple	nposting = NULL;

	if (postingoff > 0)
	{
		/*
		 * A posting list split: the posting list at newitemoff takes the
		 * new TID and gives up its last one, which the entry inserted right
		 * after it carries instead (fbtdedup.c).  Same sizes as before.
		 */
		IndexTuple	oposting = _fbt_getitem(rel, buf, newitemoff);

		itup = CopyIndexTuple(itup);
		nposting = _fbt_swap_posting(itup, oposting, postingoff);
		newitemoff = OffsetNumberNext(newitemoff);
	}

	if (PageGetFreeSpace(page) < itemsz)
	{
		bool		isroot = P_ISROOT(opaque);
		IndexTuple	lefthikey;
		Buffer		rbuf;

		/* a remembered rightmost leaf stops being one */
		if (P_ISLEAF(opaque) &&
			RelationGetTargetBlock(rel) == BufferGetBlockNumber(buf))
			RelationSetTargetBlock(rel, InvalidBlockNumber);

		if (P_INCOMPLETE_SPLIT(opaque))
			elog(ERROR, "cannot split block %u of index \"%s\": its previous split is incomplete",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		rbuf = _fbt_split(rel, buf, cbuf, newitemoff, itup, nposting,
						  origitup, postingoff, &lefthikey);
		_fbt_insert_parent(rel, buf, rbuf, stack, isroot, lefthikey);
		if (nposting != NULL)
		{
			pfree(nposting);
			pfree(itup);
		}
		return;
	}
	else if (fbt_wal_compact)
		_fbt_insert_logged(rel, buf, cbuf, origitup, itup, nposting,
						   newitemoff, postingoff);
	else
	{
		FbtWal		wal;
		Page		img;

		_fbt_wal_start(&wal, rel);
		img = _fbt_wal_register(&wal, buf, false);
		if (!_fbt_insert_apply(img, newitemoff, itup, nposting))
		{
			_fbt_wal_abort(&wal);
			elog(ERROR, "failed to add new item to block %u in index \"%s\"",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		}
		_fbt_wal_finish_completing(&wal, cbuf);
	}

	/* an entry left on the rightmost leaf: remember it for the next one */
	if (P_ISLEAF(opaque) && P_RIGHTMOST(opaque) && !P_ISROOT(opaque) &&
		RelationGetTargetBlock(rel) != BufferGetBlockNumber(buf) &&
		_fbt_getrootheight(rel) >= FBT_FASTPATH_MIN_LEVEL)
		RelationSetTargetBlock(rel, BufferGetBlockNumber(buf));

	UnlockReleaseBuffer(buf);
	if (BufferIsValid(cbuf))
		UnlockReleaseBuffer(cbuf);
	if (nposting != NULL)
	{
		pfree(nposting);
		pfree(itup);
	}
}

/*
 * _fbt_newroot() -- after the root (lbuf) split into lbuf and rbuf, make a
 * new root one level up holding their two downlinks, point the metapage at
 * it, and clear lbuf's INCOMPLETE_SPLIT, all in one WAL record.  lbuf and
 * rbuf are exclusively locked on entry and released on return.
 */
static void
_fbt_newroot(Relation rel, Buffer lbuf, Buffer rbuf, IndexTuple lefthikey)
{
	Page		lpage = BufferGetPage(lbuf);
	uint32		level = FbtPageGetOpaque(lpage)->fbto_level + 1;
	Buffer		rootbuf;
	Buffer		metabuf;
	IndexTuple	leftitem;
	IndexTuple	rightitem;
	FbtWal		wal;
	Page		rootimg;
	Page		metaimg;

	leftitem = _fbt_pivot_minus_infinity(NULL);
	FbtPivotSetDownLink(leftitem, BufferGetBlockNumber(lbuf));
	rightitem = CopyIndexTuple(lefthikey);
	FbtPivotSetDownLink(rightitem, BufferGetBlockNumber(rbuf));

	rootbuf = _fbt_allocbuf(rel);
	metabuf = _fbt_getbuf(rel, FBT_METAPAGE, FBT_WRITE);

	_fbt_newroot_start(rel, &wal, rootbuf, metabuf, &rootimg, &metaimg);
	_fbt_pageinit(rootimg, level, FBTP_ROOT);
	if (PageAddItem(rootimg, (Item) leftitem, MAXALIGN(IndexTupleSize(leftitem)),
					P_HIKEY, false, false) == InvalidOffsetNumber ||
		PageAddItem(rootimg, (Item) rightitem,
					MAXALIGN(IndexTupleSize(rightitem)),
					P_FIRSTKEY, false, false) == InvalidOffsetNumber)
	{
		_fbt_newroot_abort(&wal);
		elog(ERROR, "failed to add downlinks to new root page of index \"%s\"",
			 RelationGetRelationName(rel));
	}
	FbtPageGetMeta(metaimg)->fbtm_root = BufferGetBlockNumber(rootbuf);
	FbtPageGetMeta(metaimg)->fbtm_level = level;

	_fbt_newroot_finish(rel, &wal, rootbuf, rootimg, metabuf, metaimg, lbuf);

	UnlockReleaseBuffer(metabuf);
	UnlockReleaseBuffer(rootbuf);
	UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(rbuf);
	pfree(leftitem);
	pfree(rightitem);

	/* our cached root is now a plain page; look again next time */
	if (rel->rd_amcache != NULL)
	{
		pfree(rel->rd_amcache);
		rel->rd_amcache = NULL;
	}
}

/*
 * _fbt_getstackbuf() -- find and exclusively lock the parent page holding
 * the downlink to child, starting where the stack entry says it was and
 * moving right (splits only move downlinks right).  Finishes an incomplete
 * split of the parent level first.  Updates the entry to the downlink's
 * current position.  Returns InvalidBuffer if the downlink is nowhere.
 * Used by splits (the child's lock held) and by page deletion
 * (fbtpagedel.c, the empty leaf's lock held): child before parent, the
 * order every writer follows.  The downlink may also have moved left on
 * the same page, by a page deletion that removed an item before it, and
 * a deleted parent page is stepped over to its right sibling, which took
 * over its range.
 */
Buffer
_fbt_getstackbuf(Relation rel, FbtStack stack, BlockNumber child)
{
	BlockNumber blkno = stack->fbts_blkno;
	OffsetNumber start = stack->fbts_offset;

	for (;;)
	{
		Buffer		buf = _fbt_getbuf(rel, blkno, FBT_WRITE);
		Page		page = BufferGetPage(buf);
		FbtPageOpaque opaque = FbtPageGetOpaque(page);
		OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off;

		/* a deleted page (page deletion) holds no downlinks: go right */
		if (P_IGNORE(opaque))
		{
			_fbt_ignored_page_not_rightmost(rel, blkno, opaque);
			blkno = opaque->fbto_next;
			start = InvalidOffsetNumber;
			UnlockReleaseBuffer(buf);
			CHECK_FOR_INTERRUPTS();
			continue;
		}

		if (P_INCOMPLETE_SPLIT(opaque))
		{
			_fbt_finish_split(rel, buf, stack->fbts_parent);
			continue;
		}

		if (start < minoff || start > maxoff)
			start = minoff;
		for (off = start; off <= maxoff; off++)
		{
			IndexTuple	itup = _fbt_getitem(rel, buf, off);

			if (FbtPivotGetDownLink(itup) == child)
			{
				stack->fbts_blkno = blkno;
				stack->fbts_offset = off;
				return buf;
			}
		}
		for (off = start; off > minoff;)
		{
			IndexTuple	itup;

			off = OffsetNumberPrev(off);
			itup = _fbt_getitem(rel, buf, off);
			if (FbtPivotGetDownLink(itup) == child)
			{
				stack->fbts_blkno = blkno;
				stack->fbts_offset = off;
				return buf;
			}
		}

		if (P_RIGHTMOST(opaque))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		blkno = opaque->fbto_next;
		start = InvalidOffsetNumber;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * _fbt_insert_parent() -- insert the downlink for rbuf, the new right half
 * of buf, into the parent, completing the split.
 *
 * buf and rbuf are exclusively locked; both are released.  isroot: buf was
 * the root, so a new root is made instead.  stack: buf's parent entries;
 * if NULL (the descent started below the current root), the parent level
 * is searched from its leftmost page.
 */
static void
_fbt_insert_parent(Relation rel, Buffer buf, Buffer rbuf, FbtStack stack,
				   bool isroot, IndexTuple lefthikey)
{
	BlockNumber bknum = BufferGetBlockNumber(buf);
	BlockNumber rbknum = BufferGetBlockNumber(rbuf);
	FbtStackData fakestack;
	IndexTuple	newitem;
	Buffer		pbuf;

	if (isroot)
	{
		_fbt_newroot(rel, buf, rbuf, lefthikey);
		pfree(lefthikey);
		return;
	}

	if (stack == NULL)
	{
		uint32		level = FbtPageGetOpaque(BufferGetPage(buf))->fbto_level;
		Buffer		lmbuf = _fbt_get_endpoint(rel, level + 1, false, NULL);

		if (!BufferIsValid(lmbuf))
			elog(ERROR, "index \"%s\" has no level %u above block %u",
				 RelationGetRelationName(rel), level + 1, bknum);
		fakestack.fbts_blkno = BufferGetBlockNumber(lmbuf);
		fakestack.fbts_offset = InvalidOffsetNumber;
		fakestack.fbts_parent = NULL;
		stack = &fakestack;
		UnlockReleaseBuffer(lmbuf);
	}

	newitem = lefthikey;
	FbtPivotSetDownLink(newitem, rbknum);

	UnlockReleaseBuffer(rbuf);
	pbuf = _fbt_getstackbuf(rel, stack, bknum);
	if (!BufferIsValid(pbuf))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("failed to re-find parent key in index \"%s\" for split pages %u/%u",
						RelationGetRelationName(rel), bknum, rbknum)));

	_fbt_insertonpg(rel, pbuf, buf, stack->fbts_parent, newitem,
					OffsetNumberNext(stack->fbts_offset), 0);
	pfree(newitem);
}

/*
 * _fbt_finish_split() -- complete a split whose downlink insertion never
 * happened (the splitting backend crashed or failed in between).
 *
 * lbuf: the left half, exclusively locked, with INCOMPLETE_SPLIT set;
 * stack: its parent entries, or NULL.  Inserts the right page's downlink
 * (or makes a new root if lbuf is still the metapage's root).  lbuf is
 * released on return.
 */
void
_fbt_finish_split(Relation rel, Buffer lbuf, FbtStack stack)
{
	Page		lpage = BufferGetPage(lbuf);
	FbtPageOpaque lopaque = FbtPageGetOpaque(lpage);
	Buffer		rbuf;
	Buffer		metabuf;
	bool		wasroot;
	IndexTuple	lefthikey;

	Assert(P_INCOMPLETE_SPLIT(lopaque));
	if (P_RIGHTMOST(lopaque))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("block %u of index \"%s\" is marked incompletely split but has no right sibling",
						BufferGetBlockNumber(lbuf), RelationGetRelationName(rel))));

	rbuf = _fbt_getbuf(rel, lopaque->fbto_next, FBT_WRITE);
	metabuf = _fbt_getbuf(rel, FBT_METAPAGE, FBT_READ);
	wasroot = FbtPageGetMeta(BufferGetPage(metabuf))->fbtm_root ==
		BufferGetBlockNumber(lbuf);
	UnlockReleaseBuffer(metabuf);

	lefthikey = CopyIndexTuple(_fbt_getitem(rel, lbuf, P_HIKEY));
	_fbt_insert_parent(rel, lbuf, rbuf, stack, wasroot, lefthikey);
}
