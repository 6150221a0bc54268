/*-------------------------------------------------------------------------
 *
 * fbtscan.c
 *	  Index scans for fastbtree: the amgettuple, amgetbitmap and
 *	  mark/restore callbacks, reading a leaf page at a time, and marking
 *	  the entries the executor found dead (kill_prior_tuple).
 *
 * Scans read a leaf page at a time: under one share lock every matching
 * item is copied to backend memory (and, for index-only scans, the tuple
 * itself); then the lock is released and the pin kept while the executor
 * visits the heap (nbtree README, "Scans").  Positioning a scan is the
 * descent of fbtsearch.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/predicate.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "fastbtree.h"

static bool _fbt_first(IndexScanDesc scan, ScanDirection dir);
static bool _fbt_next(IndexScanDesc scan, ScanDirection dir);
static bool _fbt_steppage(IndexScanDesc scan, ScanDirection dir);
static bool _fbt_readnextpage(IndexScanDesc scan, BlockNumber blkno,
							  BlockNumber lastcurr, ScanDirection dir);

/*
 * Parallel scans (nbtree's design, nbtree.c's _bt_parallel_seize et al.).
 *
 * The participants of a parallel index scan read the leaves one at a time,
 * each page by one of them, in key order.  The shared state says which page
 * comes next: a participant "seizes" the scan (status ADVANCING: the others
 * wait on the condition variable), reads the page it was given, and as soon
 * as it has read that page's sibling link it "releases" the scan with the
 * next page (status IDLE), before it collects the page's matches, so that
 * another participant can read the next page meanwhile.  The first
 * participant to seize a scan not yet started finds no page to read
 * (InvalidBlockNumber) and descends the tree; the others wait for its
 * release.  Going forward the next page is the right-link of the page read;
 * going backward it is the left-link, with the page read (lastCurrPage) to
 * walk left from as _fbt_walk_left() does, since the left-link may be stale
 * by the time the next participant follows it.  A participant that finds
 * the end of the matches (or of the level) marks the scan DONE, and a later
 * release does not undo that: whatever lies beyond the end cannot match.
 *
 * Scans with arrays divide their primitive scans too, as nbtree's do.
 *
 *	- Array mode (one pass along the leaves, fbtarray.c; nbtree 17's
 *	  design, nbtree.c's _bt_parallel_primscan_schedule): every participant
 *	  keeps its own arrays, moved by the tuples it reads.  Arrays behind a
 *	  page handed out are moved on by its tuples (every tuple before the
 *	  page was read by some participant: no element before them can match
 *	  further on), and arrays ahead of it only pass over tuples that no
 *	  element can match.  When a page asks for a new descent, the
 *	  participant that read it schedules one (status NEED_PRIMSCAN, its
 *	  arrays' positions written to the shared state by
 *	  _fbt_array_serialize()) if nobody has taken the page's sibling
 *	  meanwhile; the next participant in _fbt_first() takes the descent
 *	  with those positions.  If somebody has, the scan goes on along the
 *	  leaves from there, as correct and only slower; the participant that
 *	  asked goes back to taking pages.  A participant stepping right (or
 *	  left) that finds a descent scheduled goes to _fbt_first() too.
 *	- One descent per element combination (arrays not all required, or
 *	  fastbtree.skip_scan off; nbtree 15's design): every participant steps
 *	  through the combinations in the same order, and the shared state
 *	  counts the primitive scans begun (primScanGen), each divided page by
 *	  page.  A participant behind the count passes over combinations
 *	  others have run; the first to move past a finished one (DONE) starts
 *	  the next (NOT_STARTED, the count plus one).
 *
 * A scheduled descent's positions need shared space, sized for the index
 * by _fbt_array_serial_bound() since 18 (amestimateparallelscan sees the
 * index), FBT_PARALLEL_ARRAY_SPACE bytes before.  Positions that do not
 * fit (by-reference skip values of several columns, before 18) are not
 * scheduled: the scan goes on along the leaves.
 */
typedef enum FbtParallelStatus
{
	FBT_PARALLEL_NOT_STARTED,	/* nobody has descended yet */
	FBT_PARALLEL_NEED_PRIMSCAN, /* a descent is scheduled (array mode) */
	FBT_PARALLEL_ADVANCING,		/* a participant holds the scan */
	FBT_PARALLEL_IDLE,			/* nextPage is free to be read */
	FBT_PARALLEL_DONE			/* no more pages to hand out */
} FbtParallelStatus;

typedef struct FbtParallelScanDescData
{
	slock_t		mutex;			/* protects the four fields below */
	FbtParallelStatus status;
	BlockNumber nextPage;		/* the page to read next (IDLE), or P_NONE */
	BlockNumber lastCurrPage;	/* the page read last, to walk left from */
	int			primScanGen;	/* primitive scans begun (one descent per
								 * element combination) */
	ConditionVariable cv;		/* signalled when status leaves ADVANCING */

	/*
	 * A scheduled descent's array positions (NEED_PRIMSCAN), written by
	 * the participant that schedules it while it holds the scan
	 * (ADVANCING), read by the one that takes it, also while holding it
	 */
	char		arrays[FLEXIBLE_ARRAY_MEMBER];
} FbtParallelScanDescData;

typedef FbtParallelScanDescData *FbtParallelScanDesc;

/* shared bytes for array positions when the index is not known (< 18) */
#define FBT_PARALLEL_ARRAY_SPACE	8192

/* the room for array positions in index rel's parallel scans, in bytes */
static inline Size
_fbt_parallel_array_space(Relation rel)
{
#if FBT_PARALLELSCAN_SEES_INDEX
	return _fbt_array_serial_bound(rel);
#else
	return FBT_PARALLEL_ARRAY_SPACE;
#endif
}

/* the shared state of a parallel scan, or NULL */
static inline FbtParallelScanDesc
_fbt_parallel_state(IndexScanDesc scan)
{
	if (scan->parallel_scan == NULL)
		return NULL;
	return (FbtParallelScanDesc) FbtParallelScanAm(scan->parallel_scan);
}

/*
 * fbtestimateparallelscan() -- amestimateparallelscan: bytes of shared
 * memory fastbtree's part of a parallel index scan descriptor needs (the
 * index and key counts are passed since 18).
 */
Size
fbtestimateparallelscan(FBT_ESTIMATE_PARALLELSCAN_ARGS)
{
	return add_size(offsetof(FbtParallelScanDescData, arrays),
					_fbt_parallel_array_space(FBT_ESTIMATE_PARALLELSCAN_INDEX));
}

/*
 * fbtinitparallelscan() -- aminitparallelscan: initialize target (in
 * dynamic shared memory, fbtestimateparallelscan() bytes) for a scan not
 * yet started.
 */
void
fbtinitparallelscan(void *target)
{
	FbtParallelScanDesc ps = (FbtParallelScanDesc) target;

	SpinLockInit(&ps->mutex);
	ps->status = FBT_PARALLEL_NOT_STARTED;
	ps->nextPage = InvalidBlockNumber;
	ps->lastCurrPage = InvalidBlockNumber;
	ps->primScanGen = 0;
	ConditionVariableInit(&ps->cv);
}

/*
 * fbtparallelrescan() -- amparallelrescan: start the shared scan over
 * (called by the leader, with no worker attached).
 */
void
fbtparallelrescan(IndexScanDesc scan)
{
	FbtParallelScanDesc ps = (FbtParallelScanDesc)
		FbtParallelScanAm(scan->parallel_scan);

	SpinLockAcquire(&ps->mutex);
	ps->status = FBT_PARALLEL_NOT_STARTED;
	ps->nextPage = InvalidBlockNumber;
	ps->lastCurrPage = InvalidBlockNumber;
	ps->primScanGen = 0;
	SpinLockRelease(&ps->mutex);
}

/*
 * Seize the shared scan, waiting while another participant holds it.
 * Returns false if the scan is done, if this participant is behind the
 * primitive scans begun (it passes on to its next element combination),
 * or, when first is not set, if a descent is scheduled (so->needPrimScan
 * is then set: fbtgettuple() calls _fbt_first()).  Else the caller holds
 * the scan and must release it (or mark it done): *blkno is the page to
 * read next (going backward: the left-link of *lastcurr, the page read
 * last), P_NONE at the end of the level, or InvalidBlockNumber when first
 * is set and nobody has descended yet or a descent is scheduled, for the
 * caller to descend (with the scheduled positions of the arrays).
 */
static bool
_fbt_parallel_seize(IndexScanDesc scan, FbtParallelScanDesc ps, bool first,
					BlockNumber *blkno, BlockNumber *lastcurr)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		seized = false;
	bool		stop = false;
	bool		scheduled = false;

	/* a descent follows this participant's page: it takes no other page */
	if (!first && so->needPrimScan)
		return false;

	for (;;)
	{
		SpinLockAcquire(&ps->mutex);
		if (ps->primScanGen != so->primScanGen || ps->status == FBT_PARALLEL_DONE)
			stop = true;
		else if (ps->status == FBT_PARALLEL_NEED_PRIMSCAN)
		{
			if (first)
			{
				ps->status = FBT_PARALLEL_ADVANCING;
				*blkno = InvalidBlockNumber;
				*lastcurr = InvalidBlockNumber;
				seized = true;
			}
			else
				stop = true;
			scheduled = true;
		}
		else if (!first && ps->status == FBT_PARALLEL_NOT_STARTED)
		{
			/* only _fbt_first() may find it so: nobody would wake us */
			SpinLockRelease(&ps->mutex);
			elog(ERROR, "parallel scan of index \"%s\" stepped before it started",
				 RelationGetRelationName(scan->indexRelation));
		}
		else if (ps->status == FBT_PARALLEL_IDLE ||
				 (first && ps->status == FBT_PARALLEL_NOT_STARTED))
		{
			*blkno = ps->status == FBT_PARALLEL_IDLE ?
				ps->nextPage : InvalidBlockNumber;
			*lastcurr = ps->lastCurrPage;
			ps->status = FBT_PARALLEL_ADVANCING;
			seized = true;
		}
		SpinLockRelease(&ps->mutex);
		if (seized || stop)
			break;
		ConditionVariableSleep(&ps->cv, WAIT_EVENT_BTREE_PAGE);
	}
	ConditionVariableCancelSleep();

	if (scheduled)
	{
		if (!seized)
		{
			so->needPrimScan = true;
			return false;
		}
		/*
		 * The positions are ours to read while we hold the scan: only the
		 * holder writes them, and DONE, which others may set meanwhile, is
		 * final in array mode (no new primitive scan follows it).  Every
		 * participant runs in array mode alike (the same keys, and
		 * fastbtree.skip_scan is the leader's).
		 */
		Assert(so->arrayMode);
		_fbt_array_restore(scan, ps->arrays);
	}
	return seized;
}

/*
 * Release the seized scan with blkno to read next and lastcurr the page
 * just read (see _fbt_parallel_seize), and wake one waiter.  A scan marked
 * done meanwhile stays done, and so does the next primitive scan another
 * participant may have begun after that (one descent per combination).
 */
static void
_fbt_parallel_release(IndexScanDesc scan, FbtParallelScanDesc ps,
					  BlockNumber blkno, BlockNumber lastcurr)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	SpinLockAcquire(&ps->mutex);
	if (ps->status != FBT_PARALLEL_DONE &&
		ps->primScanGen == so->primScanGen)
	{
		ps->status = FBT_PARALLEL_IDLE;
		ps->nextPage = blkno;
		ps->lastCurrPage = lastcurr;
	}
	SpinLockRelease(&ps->mutex);
	ConditionVariableSignal(&ps->cv);
}

/*
 * Mark the shared scan done, and wake every waiter; not while a descent
 * follows this participant's page (the scan goes on), nor when the
 * participant is behind the primitive scans begun (the current one is not
 * its own).
 */
static void
_fbt_parallel_done(IndexScanDesc scan, FbtParallelScanDesc ps)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		changed = false;

	if (so->needPrimScan)
		return;
	SpinLockAcquire(&ps->mutex);
	if (ps->status != FBT_PARALLEL_DONE && ps->primScanGen == so->primScanGen)
	{
		ps->status = FBT_PARALLEL_DONE;
		changed = true;
	}
	SpinLockRelease(&ps->mutex);
	if (changed)
		ConditionVariableBroadcast(&ps->cv);
}

/* A descent found nothing: a parallel scan is done (else a no-op) */
static inline void
_fbt_parallel_end(IndexScanDesc scan)
{
	FbtParallelScanDesc ps = _fbt_parallel_state(scan);

	if (ps != NULL)
		_fbt_parallel_done(scan, ps);
}

/*
 * Array mode: the page currpage, just read, asks for a new descent (its
 * release left the scan IDLE with lastCurrPage currpage): schedule it with
 * the arrays' positions if nobody has taken the next page since and the
 * positions fit.  Else nothing: the scan goes on along the leaves.
 */
static void
_fbt_parallel_primscan_schedule(IndexScanDesc scan, FbtParallelScanDesc ps,
								BlockNumber currpage)
{
	bool		mine = false;

	Assert(((FbtScanOpaque) scan->opaque)->arrayMode);
	if (_fbt_array_serial_size(scan) >
		_fbt_parallel_array_space(scan->indexRelation))
		return;
	SpinLockAcquire(&ps->mutex);
	if (ps->status == FBT_PARALLEL_IDLE && ps->lastCurrPage == currpage &&
		ps->primScanGen == ((FbtScanOpaque) scan->opaque)->primScanGen)
	{
		/* hold the scan while writing the positions */
		ps->status = FBT_PARALLEL_ADVANCING;
		ps->nextPage = InvalidBlockNumber;
		ps->lastCurrPage = InvalidBlockNumber;
		mine = true;
	}
	SpinLockRelease(&ps->mutex);
	if (!mine)
		return;
	_fbt_array_serialize(scan, ps->arrays);
	SpinLockAcquire(&ps->mutex);
	if (ps->status == FBT_PARALLEL_ADVANCING)
		ps->status = FBT_PARALLEL_NEED_PRIMSCAN;
	SpinLockRelease(&ps->mutex);
	ConditionVariableSignal(&ps->cv);
}

/*
 * One descent per element combination: this participant moved its arrays
 * to its next combination.  If the primitive scan the shared state is on
 * is finished, start the next one (see "Parallel scans" above).
 */
static void
_fbt_parallel_next_primscan(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtParallelScanDesc ps = _fbt_parallel_state(scan);

	if (ps == NULL)
		return;
	so->primScanGen++;
	SpinLockAcquire(&ps->mutex);
	if (ps->status == FBT_PARALLEL_DONE)
	{
		ps->status = FBT_PARALLEL_NOT_STARTED;
		ps->nextPage = InvalidBlockNumber;
		ps->lastCurrPage = InvalidBlockNumber;
		ps->primScanGen++;
	}
	SpinLockRelease(&ps->mutex);
}

/*
 * How far from a tuple's start the fixed-width attributes of a tuple
 * without NULLs reach (header, then each attribute aligned in turn: the
 * layout index_form_tuple() gives it); *hasvarlen says whether the
 * descriptor also has varlena or cstring attributes.
 */
static int
_fbt_fixed_extent(TupleDesc desc, bool *hasvarlen)
{
	uint32		off = MAXALIGN(sizeof(IndexTupleData));
	int			i;

	*hasvarlen = false;
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen < 0)
			*hasvarlen = true;
		else
			off = att_align_nominal(off, att->attalign) + att->attlen;
	}
	return off;
}

static void
_fbt_invalidate_pos(FbtScanPos pos)
{
	if (BufferIsValid(pos->buf))
		ReleaseBuffer(pos->buf);
	pos->buf = InvalidBuffer;
	pos->currPage = InvalidBlockNumber;
}

/* Drop the copied mark, if any (markPos is allocated at its first copy) */
static inline void
_fbt_invalidate_mark(FbtScanOpaque so)
{
	if (so->markPos != NULL)
		_fbt_invalidate_pos(so->markPos);
}

/*
 * After reading a page: release the content lock, and the pin too when it
 * is safe (see FbtScanPosData).
 */
static inline bool
_fbt_leaf_pin_dropped(IndexScanDesc scan)
{
	return IsMVCCSnapshot(scan->xs_snapshot) &&
		RelationNeedsWAL(scan->indexRelation) && !scan->xs_want_itup;
}

static void
_fbt_drop_lock_and_maybe_pin(IndexScanDesc scan, FbtScanPos pos)
{
	LockBuffer(pos->buf, BUFFER_LOCK_UNLOCK);
	if (_fbt_leaf_pin_dropped(scan))
	{
		ReleaseBuffer(pos->buf);
		pos->buf = InvalidBuffer;
	}
}

/*
 * Were all TIDs of posting (on the page, in the killed item's TID range)
 * reported dead?  They are the items saved from the same offset as
 * items[itemIndex], contiguous, ascending or (backward scans) descending,
 * and must match the posting list TID for TID (it may have changed if we
 * kept only the pin).
 */
static bool
_fbt_posting_all_killed(FbtScanPos pos, const bool *killedset, int itemIndex,
						IndexTuple posting)
{
	OffsetNumber offset = pos->items[itemIndex].indexOffset;
	int			first = itemIndex;
	int			n = FbtTupleGetNPosting(posting);
	bool		descending;
	int			j;

	while (first > pos->firstItem && pos->items[first - 1].indexOffset == offset)
		first--;
	if (first + n - 1 > pos->lastItem)
		return false;
	descending = ItemPointerCompare(&pos->items[first].heapTid,
									&pos->items[first + 1].heapTid) > 0;
	for (j = 0; j < n; j++)
	{
		if (pos->items[first + j].indexOffset != offset ||
			!killedset[first + j] ||
			!ItemPointerEquals(&pos->items[first + j].heapTid,
							   FbtTupleGetPostingN(posting,
												   descending ? n - 1 - j : j)))
			return false;
	}
	return true;
}

/*
 * _fbt_killitems() -- mark the items of currPos that the executor reported
 * dead (kill_prior_tuple) as LP_DEAD, so later scans skip them.
 *
 * A hint: done under a share lock and logged only as a hint (nbtree README,
 * "Marking dead items").  If we kept the pin, items may have moved right
 * within the page (inserts) or off it (splits), so each is looked for from
 * its old offset rightwards; deletion before a split (fbtdelete.c) moves
 * them left, and then they are not found and not marked, which is only a
 * lost hint.  If we dropped the pin, the page must not have changed at all
 * since we read it (same LSN), else nothing is marked.
 */
static pg_noinline void
_fbt_killitems(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtScanPos	pos = &so->currPos;
	Relation	rel = scan->indexRelation;
	bool		droppedpin = !BufferIsValid(pos->buf);
	Buffer		buf;
	Page		page;
	OffsetNumber maxoff;
	bool		killed = false;
	bool	   *killedset;
	int			i;

	if (so->numKilled == 0 || !FbtScanPosIsValid(*pos))
	{
		so->numKilled = 0;
		return;
	}

	if (droppedpin)
	{
		buf = _fbt_getbuf(rel, pos->currPage, FBT_READ);
		if (BufferGetLSNAtomic(buf) != pos->lsn)
		{
			UnlockReleaseBuffer(buf);
			so->numKilled = 0;
			return;
		}
	}
	else
	{
		buf = pos->buf;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	}

	page = BufferGetPage(buf);
	maxoff = PageGetMaxOffsetNumber(page);
	killedset = palloc0(sizeof(bool) * FBT_MAX_TIDS_PER_PAGE);
	for (i = 0; i < so->numKilled; i++)
	{
		int			itemIndex = so->killedItems[i];

		if (itemIndex >= pos->firstItem && itemIndex <= pos->lastItem)
			killedset[itemIndex] = true;
	}
	for (i = 0; i < so->numKilled; i++)
	{
		int			itemIndex = so->killedItems[i];
		FbtScanPosItem *item;
		OffsetNumber offnum;

		if (itemIndex < pos->firstItem || itemIndex > pos->lastItem)
			continue;
		item = &pos->items[itemIndex];
		for (offnum = item->indexOffset; offnum <= maxoff; offnum++)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup = _fbt_getitem(rel, buf, offnum);
			bool		match;

			if (FbtTupleIsPosting(itup))
			{
				/*
				 * A posting list is marked only when every one of its TIDs
				 * was killed: those are items around this one, saved from
				 * the same offset, ascending.
				 */
				if (!_fbt_posting_ok(itup))
					_fbt_corrupt_item(rel, buf, offnum,
									  "The posting list extends past the end of its tuple");
				if (ItemPointerCompare(&item->heapTid,
									   FbtTupleGetHeapTID(itup)) < 0 ||
					ItemPointerCompare(&item->heapTid,
									   FbtTupleGetMaxHeapTID(itup)) > 0)
					continue;
				match = _fbt_posting_all_killed(pos, killedset, itemIndex,
												itup);
				if (!match)
					break;
			}
			else
				match = ItemPointerEquals(&itup->t_tid, &item->heapTid);
			if (match)
			{
				if (!ItemIdIsDead(iid))
				{
					/* hints only on leaves: inner pages are read unlocked */
					Assert(P_ISLEAF(FbtPageGetOpaque(page)));
					/* the flag first: a page written meanwhile has both */
					FbtPageGetOpaque(page)->fbto_flags |= FBTP_HAS_GARBAGE;
					ItemIdMarkDead(iid);
					killed = true;
				}
				break;
			}
		}
	}
	pfree(killedset);
	if (killed)
		MarkBufferDirtyHint(buf, true);

	if (droppedpin)
		UnlockReleaseBuffer(buf);
	else
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	so->numKilled = 0;
}

/* Leave the current page: apply pending kills, drop the pin */
static void
_fbt_release_curr(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	if (unlikely(so->currApin != FBT_APIN_NONE))
	{
		/*
		 * An error left _fbt_start_at()'s read of a leaf pinned atomically;
		 * the resource owner released that pin (no scan is used after an
		 * error, but a buffer we do not own must never reach bufmgr)
		 */
		so->currPos.buf = InvalidBuffer;
		so->currPos.currPage = InvalidBlockNumber;
		so->currApin = FBT_APIN_NONE;
		so->numKilled = 0;
	}
	if (so->numKilled > 0)
		_fbt_killitems(scan);
	_fbt_invalidate_pos(&so->currPos);
}

/*
 * One scan's private state kept for the next (backend-local): a scan is
 * begun and ended per statement (point queries, foreign-key checks), and
 * its state, larger than a memory context's chunk limit because of the
 * page's item array, would otherwise cost a malloc() and a free() each
 * time.  At most one scan at a time uses the kept state (so_lent); nested
 * or concurrent scans allocate their own as before.  The state lives in
 * TopMemoryContext.  A scan ended by an error never reaches amendscan, so
 * at the end of each transaction (fbt_xact_callback(); no scan survives its
 * transaction) a state still lent is taken back.
 */
static FbtScanOpaque so_kept = NULL;	/* free for the next scan */
static FbtScanOpaque so_lent = NULL;	/* in use by a scan */
static char *so_keys_kept = NULL;	/* so_kept's per-key arrays */
static Size so_keys_size = 0;	/* their size in bytes */

/*
 * _fbt_scan_cache_reset() -- at the end of a transaction: a kept scan state
 * still lent belonged to a scan an error ended; it is free again.  No
 * errors, no locks.
 */
void
_fbt_scan_cache_reset(void)
{
	if (so_lent != NULL)
	{
		so_kept = so_lent;
		so_lent = NULL;
	}
}

/*
 * fbtbeginscan() -- ambeginscan: allocate a scan on index rel.
 *
 * nkeys, norderbys: counts of scan keys (no ORDER BY operators are
 * supported: amcanorderbyop is false).  Returns the scan descriptor; no
 * pins or locks are taken until the first fetch.
 */
IndexScanDesc
fbtbeginscan(Relation rel, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	FbtScanOpaque so;

	Assert(norderbys == 0);
	scan = RelationGetIndexScan(rel, nkeys, norderbys);

	/*
	 * Not palloc0: the position arrays are large and filled before use.
	 * The kept state when no other scan uses it (so_kept).
	 */
	if (so_lent == NULL)
	{
		if (so_kept == NULL)
			so_kept = MemoryContextAlloc(TopMemoryContext,
										 sizeof(FbtScanOpaqueData));
		so = so_lent = so_kept;
		so_kept = NULL;
		so->kept = true;
	}
	else
	{
		so = (FbtScanOpaque) palloc(sizeof(FbtScanOpaqueData));
		so->kept = false;
	}
	so->scanCxt = CurrentMemoryContext;
	so->currApin = FBT_APIN_NONE;
	so->keysPrepared = false;
	so->qual_ok = true;
	so->numberOfKeys = 0;
	so->primScanGen = 0;
	so->prefetch.decided = false;
	so->prefetch.enabled = false;
	so->prefetch.vmbuffer = InvalidBuffer;
	so->prefetch.peekCap = 0;
	so->prefetch.peek = NULL;
	/*
	 * The per-key arrays, in one allocation: a scan is begun and ended per
	 * statement (point queries, foreign-key checks), where a dozen pallocs
	 * and pfrees would cost more than the descent.
	 */
	{
		/* room for a skip array key on every column but the last */
		int			n = Max(nkeys +
							IndexRelationGetNumberOfKeyAttributes(rel) - 1, 1);
		Size		sizes[10] = {
			sizeof(ScanKeyData) * n, sizeof(StrategyNumber) * n,
			sizeof(FmgrInfo) * n, sizeof(uint8) * n, sizeof(uint8) * n,
			sizeof(SortSupportData) * n, sizeof(bool) * n,
			sizeof(int64) * n, sizeof(double) * n,
			sizeof(FbtArrayKeyInfo) * n
		};
		void	   *parts[10];
		Size		total = 0;
		char	   *p;
		int			i;

		for (i = 0; i < lengthof(sizes); i++)
			total += MAXALIGN(sizes[i]);
		if (so->kept)
		{
			/* the kept state's arrays, grown when too small */
			if (so_keys_size < total)
			{
				if (so_keys_kept != NULL)
					pfree(so_keys_kept);
				/* (nothing dangling if the allocation fails) */
				so_keys_kept = NULL;
				so_keys_size = 0;
				so_keys_kept = MemoryContextAlloc(TopMemoryContext,
												  Max(total, 1024));
				so_keys_size = Max(total, 1024);
			}
			p = so_keys_kept;
			memset(p, 0, total);
		}
		else
			p = palloc0(total);
		for (i = 0; i < lengthof(sizes); i++)
		{
			parts[i] = p;
			p += MAXALIGN(sizes[i]);
		}
		so->keyData = parts[0];
		so->keyStrategy = parts[1];
		so->keyOrderProc = parts[2];
		so->keyCmpKind = parts[3];
		so->keyArgWidth = parts[4];
		so->keySortSupport = parts[5];
		so->keyHasSortSupport = parts[6];
		so->keyIarg = parts[7];
		so->keyFarg = parts[8];
		so->arrayKeys = parts[9];
	}
	so->sortContext = NULL;
	so->numArrayKeys = 0;
	so->numFilterArrays = 0;
	so->arrayContext = NULL;
	so->arrayMode = false;
	so->needPrimScan = false;
	so->rowMembers = NULL;
	so->rowNMembers = NULL;
	so->currTuples = NULL;
	so->markTuples = NULL;
	so->killedItems = NULL;
	so->numKilled = 0;
	so->currPos.buf = InvalidBuffer;
	so->currPos.currPage = InvalidBlockNumber;
	so->markPos = NULL;
	so->markItemIndex = -1;
	so->pins.npins = 0;
	so->checkTuples = false;
	/*
	 * Where the fixed-width attributes of a tuple without NULLs end; used
	 * only without varlena attributes (see _fbt_readitem).
	 */
	so->fixedExtent = _fbt_fixed_extent(RelationGetDescr(rel),
										&so->hasVarlenAtts);
	scan->xs_itupdesc = RelationGetDescr(rel);
	scan->opaque = so;
	return scan;
}

/*
 * fbtrescan() -- amrescan: (re)start a scan with new keys.
 *
 * scankey: nscankeys keys to copy into the scan (or NULL to keep the old
 * ones).  Releases any pins the scan held; preprocesses the keys once, so
 * that no catalog lookups happen per tuple.
 */
void
fbtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		  ScanKey orderbys, int norderbys)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	_fbt_release_curr(scan);
	_fbt_invalidate_mark(so);
	so->markItemIndex = -1;
	so->primScanGen = 0;
	_fbt_prefetch_start(scan);

	if (scan->xs_want_itup && so->currTuples == NULL)
	{
		so->currTuples = (char *) palloc(BLCKSZ * 2);
		so->markTuples = so->currTuples + BLCKSZ;
	}

	/*
	 * Leaf items are checked attribute by attribute where a damaged length
	 * could send a reader outside the page: when the executor deforms
	 * index-only tuples, and when the index has variable-length columns
	 * that the quals may decode.
	 */
	so->checkTuples = scan->xs_want_itup || so->hasVarlenAtts;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey,
				scan->numberOfKeys * sizeof(ScanKeyData));
	_fbt_preprocess_keys(scan);
}

/*
 * fbtendscan() -- amendscan: release pins and memory of a scan.
 */
void
fbtendscan(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	_fbt_release_curr(scan);
	_fbt_invalidate_mark(so);
	_fbt_release_scan_pins(&so->pins);
	_fbt_prefetch_end(scan);
	if (so->prefetch.peek != NULL)
		pfree(so->prefetch.peek);
	if (so->killedItems != NULL)
		pfree(so->killedItems);
	if (so->arrayContext != NULL)
		MemoryContextDelete(so->arrayContext);
	if (so->rowMembers != NULL)
	{
		int			i;

		for (i = 0; i < scan->numberOfKeys; i++)
			if (so->rowMembers[i] != NULL)
				pfree(so->rowMembers[i]);
		pfree(so->rowMembers);
		pfree(so->rowNMembers);
	}
	/* keyData starts the one allocation of every per-key array */
	if (!so->kept)
		pfree(so->keyData);
	if (so->sortContext != NULL)
		MemoryContextDelete(so->sortContext);
	if (so->markPos != NULL)
		pfree(so->markPos);
	if (so->currTuples != NULL)
		pfree(so->currTuples);
	if (so->kept)
	{
		/* kept for the next scan */
		if (so_lent == so)
			so_lent = NULL;
		so_kept = so;
	}
	else
		pfree(so);
}

/* Copy one matching item (and, for index-only scans, its tuple) */
static void
_fbt_saveitem(IndexScanDesc scan, int itemIndex, OffsetNumber offnum,
			  IndexTuple itup)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtScanPosItem *item = &so->currPos.items[itemIndex];

	/* the executor must never see offset 0 (asserted in index_getnext_tid) */
	if (unlikely(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) ==
				 InvalidOffsetNumber))
		_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
						  "The heap TID has offset number 0");
	item->heapTid = itup->t_tid;
	item->indexOffset = offnum;
	if (so->currTuples)
	{
		Size		itupsz = IndexTupleSize(itup);

		/* items sharing storage could add up to more than a page */
		if (so->currPos.nextTupleOffset + MAXALIGN(itupsz) > BLCKSZ)
			_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
							  "The matching items add up to more than a page");
		item->tupleOffset = so->currPos.nextTupleOffset;
		memcpy(so->currTuples + so->currPos.nextTupleOffset, itup, itupsz);
		so->currPos.nextTupleOffset += MAXALIGN(itupsz);
	}
}

/*
 * Copy the heap TIDs of a matching posting list tuple (and, for index-only
 * scans, its key once, shared by all of them) to items[first ..
 * first + n - 1], so that the scan returns them in ascending TID order
 * whichever its direction, as btree's scans do (posting lists themselves
 * come in scan order): ascending in items[] for a forward scan, descending
 * for a backward one, which reads items[] downward.  Returns n.
 * ERRCODE_INDEX_CORRUPTED if the TID array does not lie within the tuple
 * and the page.
 */
static int
_fbt_saveposting(IndexScanDesc scan, int first, OffsetNumber offnum,
				 Page page, IndexTuple itup, bool backward)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			n;
	int			j;
	LocationIndex tupleOffset = 0;

	if (unlikely(!FbtTupleIsPosting(itup) ||
				 !_fbt_itemid_ok(page, PageGetItemId(page, offnum)) ||
				 !_fbt_posting_ok(itup)))
		_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
						  "The posting list extends past the end of its tuple");
	n = FbtTupleGetNPosting(itup);
	if (unlikely(first < 0 || first + n > FBT_MAX_TIDS_PER_PAGE))
		_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
						  "The matching heap TIDs add up to more than a page holds");

	if (so->currTuples)
	{
		Size		keysz = FbtTupleGetPostingOffset(itup);
		IndexTuple	base;

		if (so->currPos.nextTupleOffset + MAXALIGN(keysz) > BLCKSZ)
			_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
							  "The matching items add up to more than a page");
		tupleOffset = so->currPos.nextTupleOffset;
		base = (IndexTuple) (so->currTuples + tupleOffset);
		memcpy(base, itup, keysz);
		base->t_info &= ~(INDEX_SIZE_MASK | INDEX_AM_RESERVED_BIT);
		base->t_info |= keysz;
		ItemPointerSetInvalid(&base->t_tid);
		so->currPos.nextTupleOffset += MAXALIGN(keysz);
	}
	for (j = 0; j < n; j++)
	{
		FbtScanPosItem *item = &so->currPos.items[first + j];

		item->heapTid = *FbtTupleGetPostingN(itup, backward ? n - 1 - j : j);
		if (unlikely(ItemPointerGetOffsetNumberNoCheck(&item->heapTid) ==
					 InvalidOffsetNumber))
			_fbt_corrupt_item(scan->indexRelation, so->currPos.buf, offnum,
							  "A heap TID of the posting list has offset number 0");
		item->indexOffset = offnum;
		item->tupleOffset = tupleOffset;
	}
	return n;
}

/*
 * The item at offnum of the leaf being read, bounds-checked (and its
 * attributes too where checkTuples says so): ERRCODE_INDEX_CORRUPTED for
 * a damaged one.  Offset P_HIKEY of a non-rightmost page is the high key,
 * a pivot; every other item is a data item.
 */
static pg_attribute_always_inline IndexTuple
_fbt_readitem(IndexScanDesc scan, Page page, OffsetNumber offnum)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	ItemId		iid = PageGetItemId(page, offnum);
	IndexTuple	itup;

	if (!so->hasVarlenAtts &&
		likely(ItemIdGetOffset(iid) <= BLCKSZ - so->fixedExtent))
	{
		/*
		 * Only fixed-width attributes and t_tid are read.  In a tuple
		 * without NULLs they end fixedExtent bytes from its start, so an
		 * item starting early enough cannot lead outside the page,
		 * whatever its lengths say.  A tuple with NULLs (whose attributes
		 * move with its bitmap) and an item that starts too late (damaged,
		 * or a tuple with NULLs stored last) get the full check below.
		 *
		 * An index-only scan also copies the tuple, IndexTupleSize() bytes
		 * of it, and the executor deforms the copy: the copy must stay
		 * within the page and hold every attribute.  For a plain tuple
		 * without NULLs that is two comparisons (what the full check below
		 * concludes attribute by attribute); posting lists, pivots and
		 * whatever sits at offset 1 (the high key, which must be a pivot,
		 * unless the page is rightmost) get the full check.
		 */
		itup = (IndexTuple) PageGetItem(page, iid);
		if (!so->checkTuples)
		{
			if (likely(!IndexTupleHasNulls(itup)))
				return itup;
		}
		else if (likely(!(itup->t_info &
						  (INDEX_NULL_MASK | INDEX_AM_RESERVED_BIT)) &&
						IndexTupleSize(itup) >= so->fixedExtent &&
						ItemIdGetOffset(iid) + IndexTupleSize(itup) <= BLCKSZ &&
						offnum > P_HIKEY))
			return itup;
	}
	if (unlikely(!_fbt_itemid_ok(page, iid)))
		_fbt_corrupt_item(rel, so->currPos.buf, offnum, NULL);
	itup = (IndexTuple) PageGetItem(page, iid);
	{
		if (unlikely(FbtTupleIsPivot(itup) !=
					 (offnum < P_FIRSTDATAKEY(FbtPageGetOpaque(page)))))
			_fbt_corrupt_item(rel, so->currPos.buf, offnum,
							  FbtTupleIsPivot(itup) ?
							  "A data item is marked as a pivot tuple" :
							  "The high key is not a pivot tuple");
		if (unlikely(!_fbt_tuple_attrs_ok(RelationGetDescr(rel), itup,
										  FbtTupleGetNAtts(itup, rel))))
			_fbt_corrupt_item(rel, so->currPos.buf, offnum,
							  "An attribute extends past the end of its tuple");
	}
	return itup;
}

/*
 * Save a matching leaf item (a posting list's TIDs one each) in
 * so->currPos.items: going forward at itemIndex and up, going backward
 * (backward) below itemIndex.  Returns the next free index.
 */
static inline int
_fbt_save_match(IndexScanDesc scan, int itemIndex, OffsetNumber offnum,
				Page page, IndexTuple itup, bool backward)
{
	if (likely(!(itup->t_info & INDEX_AM_RESERVED_BIT)))
	{
		if (backward)
			itemIndex--;
		_fbt_saveitem(scan, itemIndex, offnum, itup);
		return backward ? itemIndex : itemIndex + 1;
	}
	if (!backward)
		return itemIndex + _fbt_saveposting(scan, itemIndex, offnum, page,
											itup, false);
	itemIndex -= FbtTupleIsPosting(itup) ? FbtTupleGetNPosting(itup) : 1;
	(void) _fbt_saveposting(scan, itemIndex, offnum, page, itup, true);
	return itemIndex;
}

/*
 * An array-mode scan found the item at offnum before its target: every
 * item up to the first one that is not lies before it too (the items
 * before a target form a run in index order) and cannot match.  Returns
 * the offset of the last item of that run, found by probing 2, 4, 8 ...
 * items ahead in direction dir (no further than minoff / maxoff, and never
 * the first data item going left: it decides moreLeft) and then by binary
 * search, so that a target far along the page costs a few comparisons,
 * not one per item (nbtree 18 looks ahead within a page likewise).
 */
static OffsetNumber
_fbt_array_gallop(IndexScanDesc scan, Page page, OffsetNumber offnum,
				  OffsetNumber minoff, OffsetNumber maxoff, ScanDirection dir)
{
	int			natts = IndexRelationGetNumberOfAttributes(scan->indexRelation);
	int			fwd = ScanDirectionIsBackward(dir) ? -1 : 1;
	int			last = offnum;	/* an item before the target */
	int			limit = fwd > 0 ? maxoff : minoff + 1;
	int			probe;
	int			step = 2;

	/* probe ahead until an item is not before the target */
	for (;;)
	{
		probe = last + fwd * step;
		if (fwd > 0 ? probe > limit : probe < limit)
		{
			probe = limit + fwd;	/* past the last item that may be passed */
			break;
		}
		if (_fbt_array_check(scan, _fbt_readitem(scan, page, probe), natts,
							 dir, false) != FBT_ARR_BEFORE)
			break;
		last = probe;
		step *= 2;
	}
	/* between last (before) and probe (not, or out of range): bisect */
	while (fwd * (probe - last) > 1)
	{
		int			mid = last + (probe - last) / 2;

		if (_fbt_array_check(scan, _fbt_readitem(scan, page, mid), natts,
							 dir, false) == FBT_ARR_BEFORE)
			last = mid;
		else
			probe = mid;
	}
	return (OffsetNumber) last;
}

/*
 * The part of _fbt_readpage() for array-mode scans (fbtarray.c): collect
 * the items of the page from offnum on in direction dir that match the
 * target of the arrays, moving the arrays as the items go by.  Stops early
 * when the target moved past the page's last tuple in scan direction;
 * then, or when the page ends before the target, sets
 * so->currPos.needPrimScan (a new descent goes on) instead of
 * moreRight/moreLeft.  A high key that cannot tell (suffix-truncated
 * before the columns that decide) sends the scan to the sibling, as does
 * a page that ends before the target without the arrays having moved
 * since the descent (a new descent would land here again).
 */
static void
_fbt_readpage_arrays(IndexScanDesc scan, ScanDirection dir,
					 OffsetNumber offnum, Page page, FbtPageOpaque opaque,
					 OffsetNumber minoff, OffsetNumber maxoff)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			natts = IndexRelationGetNumberOfAttributes(rel);
	FbtArrayResult r = FBT_ARR_MATCH;
	bool		more = true;
	bool		primscan = false;
	int			nbefore = 0;	/* items before the target in a row */
	int			itemIndex;

	so->targetMoved = false;
	if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		offnum = Max(offnum, minoff);
		if (offnum < maxoff &&
			_fbt_array_page_spans(scan, _fbt_readitem(scan, page, offnum),
								  _fbt_readitem(scan, page, maxoff)))
		{
			/*
			 * Many values of the skipped column on this page: test each
			 * item with the keys alone, then let the last one move the
			 * arrays, as following them item by item would have.
			 */
			for (; offnum <= maxoff; offnum = OffsetNumberNext(offnum))
			{
				IndexTuple	itup;

				if (scan->ignore_killed_tuples &&
					ItemIdIsDead(PageGetItemId(page, offnum)))
					continue;
				itup = _fbt_readitem(scan, page, offnum);
				if (!_fbt_array_plain(scan, itup, natts, dir))
					continue;
				itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
											   false);
			}
			r = _fbt_array_check(scan, _fbt_readitem(scan, page, maxoff),
								 natts, dir, true);
			if (r == FBT_ARR_END)
				more = false;
		}
		else
		while (offnum <= maxoff)
		{
			IndexTuple	itup;

			if (scan->ignore_killed_tuples &&
				ItemIdIsDead(PageGetItemId(page, offnum)))
			{
				offnum = OffsetNumberNext(offnum);
				continue;
			}
			itup = _fbt_readitem(scan, page, offnum);
			r = _fbt_array_check(scan, itup, natts, dir, true);
			if (r == FBT_ARR_MATCH)
			{
				nbefore = 0;
				if (_fbt_array_filter(scan, itup, natts, dir))
				{
					itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
												   false);
				}
			}
			else if (r == FBT_ARR_END)
			{
				more = false;
				break;
			}
			else if (++nbefore >= 2)
			{
				/*
				 * A run of items before the target (a lone one, as between
				 * nearby elements, is just stepped over): if the target
				 * lies beyond this page, a descent goes there; else the
				 * run is galloped over.
				 */
				if (so->targetMoved && !P_RIGHTMOST(opaque))
				{
					IndexTuple	hikey = _fbt_readitem(scan, page, P_HIKEY);

					so->targetMoved = false;
					if (_fbt_array_check(scan, hikey,
										 FbtTupleGetNAtts(hikey, rel), dir,
										 false) == FBT_ARR_BEFORE)
					{
						more = false;
						primscan = true;
						break;
					}
				}
				offnum = _fbt_array_gallop(scan, page, offnum, minoff, maxoff,
										   dir);
				nbefore = 0;
			}
			offnum = OffsetNumberNext(offnum);
		}
		if (P_RIGHTMOST(opaque))
			more = false;
		else if (more)
		{
			IndexTuple	hikey = _fbt_readitem(scan, page, P_HIKEY);

			r = _fbt_array_check(scan, hikey, FbtTupleGetNAtts(hikey, rel),
								 dir, true);
			if (r == FBT_ARR_END)
				more = false;
			else if (r == FBT_ARR_BEFORE)
			{
				more = false;
				primscan = true;
			}
		}
		if (primscan && !so->arraysAdvanced)
		{
			primscan = false;
			more = true;
		}
		so->currPos.moreRight = more;
		so->currPos.firstItem = 0;
		so->currPos.lastItem = itemIndex - 1;
		so->currPos.itemIndex = 0;
	}
	else
	{
		itemIndex = FBT_MAX_TIDS_PER_PAGE;
		offnum = Min(offnum, maxoff);
		if (offnum > minoff &&
			_fbt_array_page_spans(scan, _fbt_readitem(scan, page, offnum),
								  _fbt_readitem(scan, page, minoff)))
		{
			/* as going forward, above */
			for (; offnum >= minoff; offnum = OffsetNumberPrev(offnum))
			{
				IndexTuple	itup;

				if (scan->ignore_killed_tuples &&
					ItemIdIsDead(PageGetItemId(page, offnum)))
					continue;
				itup = _fbt_readitem(scan, page, offnum);
				if (!_fbt_array_plain(scan, itup, natts, dir))
					continue;
				itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
											   true);
			}
			r = _fbt_array_check(scan, _fbt_readitem(scan, page, minoff),
								 natts, dir, true);
			if (r == FBT_ARR_END)
				more = false;
		}
		else
		while (offnum >= minoff)
		{
			bool		dead = scan->ignore_killed_tuples &&
				ItemIdIsDead(PageGetItemId(page, offnum));
			IndexTuple	itup;

			/* the first item is always looked at: it decides moreLeft */
			if (dead && offnum > minoff)
			{
				offnum = OffsetNumberPrev(offnum);
				continue;
			}
			itup = _fbt_readitem(scan, page, offnum);
			r = _fbt_array_check(scan, itup, natts, dir, true);
			if (r == FBT_ARR_MATCH)
			{
				nbefore = 0;
				if (!dead && _fbt_array_filter(scan, itup, natts, dir))
				{
					itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
												   true);
				}
			}
			else if (r == FBT_ARR_END)
			{
				more = false;
				break;
			}
			else if (++nbefore >= 2 && offnum > minoff)
			{
				/* as going forward, above */
				if (so->targetMoved)
				{
					IndexTuple	first = _fbt_readitem(scan, page, minoff);

					/* does the new target lie left of this page? */
					so->targetMoved = false;
					if (_fbt_array_check(scan, first, natts, dir, false) ==
						FBT_ARR_BEFORE)
					{
						more = false;
						primscan = true;
						break;
					}
				}
				offnum = _fbt_array_gallop(scan, page, offnum, minoff, maxoff,
										   dir);
				nbefore = 0;
			}
			offnum = OffsetNumberPrev(offnum);
		}
		if (P_LEFTMOST(opaque))
		{
			more = false;
			primscan = false;	/* nothing lies left of this page */
		}
		else if (more && r == FBT_ARR_BEFORE)
		{
			/* the first item lies before the target */
			more = false;
			primscan = true;
		}
		if (primscan && !so->arraysAdvanced)
		{
			primscan = false;
			more = !P_LEFTMOST(opaque);
		}
		so->currPos.moreLeft = more;
		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = FBT_MAX_TIDS_PER_PAGE - 1;
		so->currPos.itemIndex = FBT_MAX_TIDS_PER_PAGE - 1;
	}
	so->currPos.needPrimScan = primscan;
	so->needPrimScan = primscan;
}

/*
 * _fbt_readpage() -- collect the matching items of the leaf in
 * so->currPos.buf (pinned and share-locked), starting at offnum and going
 * in direction dir.  Sets moreRight/moreLeft from the required keys.
 * firstpage: the page is the one a descent landed on (not stepped onto).
 * Returns true if any item matched.  The lock is left to the caller.
 *
 * Entries marked dead are skipped without looking at their keys.  What
 * tells that a scan ends on this page then is, going right, the high key,
 * and going left, the first data item, whose keys are tested even when it
 * is dead (as nbtree does both): otherwise a scan whose last match sits
 * next to a dead entry at the page's edge would read a sibling for
 * nothing.
 */
/* items a scan reads on its first page before testing the page's far end */
#define FBT_PRECHECK_AFTER	8

static bool
_fbt_readpage(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum,
			  bool firstpage)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Page		page = BufferGetPage(so->currPos.buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			natts = IndexRelationGetNumberOfAttributes(scan->indexRelation);
	bool		continuescan = true;
	int			startikey = 0;
	bool		allkeysmet;		/* every item meets every key */
	int			nread = 0;		/* items read (first page) */
	int			itemIndex;
	FbtParallelScanDesc ps;

	if (!P_ISLEAF(opaque) || opaque->fbto_level != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a non-leaf page at block %u where a leaf was expected",
						RelationGetRelationName(scan->indexRelation),
						FbtBufferGetBlockNumber(so->currPos.buf))));

	/* the leaf may be pinned atomically (_fbt_start_at()) */
	so->currPos.currPage = FbtBufferGetBlockNumber(so->currPos.buf);
	so->currPos.lsn = FbtBufferGetLSNAtomic(so->currPos.buf);
	so->currPos.nextPage = opaque->fbto_next;
	so->currPos.prevPage = opaque->fbto_prev;
	so->currPos.nextTupleOffset = 0;
	so->currPos.dir = dir;
	so->currPos.needPrimScan = false;

	/* the sibling is known: another participant may read it meanwhile */
	if ((ps = _fbt_parallel_state(scan)) != NULL)
		_fbt_parallel_release(scan, ps, ScanDirectionIsForward(dir) ?
							  so->currPos.nextPage : so->currPos.prevPage,
							  so->currPos.currPage);

	/*
	 * A page the scan stepped onto has its first and last items tested
	 * once: the keys they show every item between them to satisfy are not
	 * tested per item (nbtree 18's rule).  On the page a descent landed on,
	 * where a point probe ends after an item or two, the same test waits
	 * until FBT_PRECHECK_AFTER items have been read (below), and then
	 * covers the items from there on.
	 */
	if (!so->arrayMode && !firstpage && minoff < maxoff)
		startikey = _fbt_set_startikey(scan, _fbt_readitem(scan, page, minoff),
									   _fbt_readitem(scan, page, maxoff));
	allkeysmet = startikey >= so->numberOfKeys;

	if (so->arrayMode)
	{
		_fbt_readpage_arrays(scan, dir, offnum, page, opaque, minoff, maxoff);
		if (so->needPrimScan && ps != NULL)
			_fbt_parallel_primscan_schedule(scan, ps, so->currPos.currPage);
	}
	else if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		offnum = Max(offnum, minoff);
		while (offnum <= maxoff)
		{
			IndexTuple	itup;

			/* entries marked dead are skipped (outside recovery) */
			if (scan->ignore_killed_tuples &&
				ItemIdIsDead(PageGetItemId(page, offnum)))
			{
				offnum = OffsetNumberNext(offnum);
				continue;
			}
			itup = _fbt_readitem(scan, page, offnum);
			if (allkeysmet ||
				_fbt_checkkeys(scan, itup, natts, dir, startikey,
							   &continuescan))
			{
				itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
											   false);
			}
			if (!continuescan)
				break;
			if (firstpage && ++nread == FBT_PRECHECK_AFTER && offnum < maxoff)
			{
				startikey = _fbt_set_startikey(scan, itup,
											   _fbt_readitem(scan, page, maxoff));
				allkeysmet = startikey >= so->numberOfKeys;
			}
			offnum = OffsetNumberNext(offnum);
		}

		/*
		 * The high key bounds the next page from below: if it fails a key
		 * that ends the scan, nothing to the right can match, and the next
		 * page need not be read (nbtree tests it for the same reason).
		 */
		if (continuescan && !P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = _fbt_readitem(scan, page, P_HIKEY);

			(void) _fbt_checkkeys(scan, hikey,
								  FbtTupleGetNAtts(hikey, scan->indexRelation),
								  dir, 0, &continuescan);
		}
		so->currPos.moreRight = continuescan && !P_RIGHTMOST(opaque);
		so->currPos.firstItem = 0;
		so->currPos.lastItem = itemIndex - 1;
		so->currPos.itemIndex = 0;
	}
	else
	{
		itemIndex = FBT_MAX_TIDS_PER_PAGE;
		offnum = Min(offnum, maxoff);
		while (offnum >= minoff)
		{
			bool		dead = scan->ignore_killed_tuples &&
				ItemIdIsDead(PageGetItemId(page, offnum));
			IndexTuple	itup;

			if (dead && offnum > minoff)
			{
				offnum = OffsetNumberPrev(offnum);
				continue;
			}
			itup = _fbt_readitem(scan, page, offnum);
			if ((allkeysmet ||
				 _fbt_checkkeys(scan, itup, natts, dir, startikey,
								&continuescan)) && !dead)
			{
				itemIndex = _fbt_save_match(scan, itemIndex, offnum, page, itup,
											   true);
			}
			if (!continuescan)
				break;
			if (firstpage && ++nread == FBT_PRECHECK_AFTER && offnum > minoff)
			{
				startikey = _fbt_set_startikey(scan,
											   _fbt_readitem(scan, page, minoff),
											   itup);
				allkeysmet = startikey >= so->numberOfKeys;
			}
			offnum = OffsetNumberPrev(offnum);
		}
		so->currPos.moreLeft = continuescan && !P_LEFTMOST(opaque);
		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = FBT_MAX_TIDS_PER_PAGE - 1;
		so->currPos.itemIndex = FBT_MAX_TIDS_PER_PAGE - 1;
	}

	PredicateLockPage(scan->indexRelation, so->currPos.currPage,
					  scan->xs_snapshot);

	/*
	 * (A page of one match before the rescan has handed out an item has
	 * nothing to prefetch, and no read ahead was made: the state
	 * _fbt_prefetch_start() left stands.)
	 */
	if (so->prefetch.enabled &&
		(so->prefetch.handedOut ||
		 so->currPos.firstItem < so->currPos.lastItem))
		_fbt_prefetch_page(scan);
	return so->currPos.firstItem <= so->currPos.lastItem;
}

/* Hand the current item to the executor */
static void
_fbt_return_item(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtScanPosItem *item = &so->currPos.items[so->currPos.itemIndex];

	scan->xs_heaptid = item->heapTid;
	if (so->currTuples)
		scan->xs_itup = (IndexTuple) (so->currTuples + item->tupleOffset);
	if (_fbt_prefetch_due(&so->prefetch, &so->currPos))
		_fbt_prefetch(scan);
}

/*
 * Read leaf buf (pinned and share-locked) from offnum in direction dir,
 * stepping to further pages if nothing matches there.  The lock is released
 * on return and the pin kept in so->currPos, or released as
 * _fbt_drop_lock_and_maybe_pin() decides.  apin: the atomic pin slot of
 * buf (only for a scan whose pin that drops, _fbt_leaf_pin_dropped()), or
 * FBT_APIN_NONE for a buffer-manager pin; _fbt_readpage() calls nothing
 * of bufmgr's that asserts a private pin on the leaf.  Returns true with
 * the scan on its first match, false at the end of the scan (no pins
 * held).
 */
static bool
_fbt_start_at(IndexScanDesc scan, ScanDirection dir, Buffer buf,
			  OffsetNumber offnum, int apin)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		found;

	so->currPos.buf = buf;
	so->currPos.moreLeft = true;
	so->currPos.moreRight = true;
	so->currApin = apin;
	found = _fbt_readpage(scan, dir, offnum, true);
	if (apin != FBT_APIN_NONE)
	{
		Assert(_fbt_leaf_pin_dropped(scan));
		so->currPos.buf = InvalidBuffer;
		so->currApin = FBT_APIN_NONE;
		_fbt_lockpin(buf, BUFFER_LOCK_UNLOCK, apin);
		_fbt_unpin(buf, apin);
	}
	else
		_fbt_drop_lock_and_maybe_pin(scan, &so->currPos);
	if (!found && !_fbt_steppage(scan, dir))
		return false;
	_fbt_return_item(scan);
	return true;
}

/*
 * Set column k of an insertion scankey: the search argument, its flags,
 * and a copy of the comparison proc's FmgrInfo that shares its fn_extra
 * and fn_mcxt (unlike ScanKeyEntryInitializeWithInfo(), which clears
 * them), so that a comparison that caches state there (record and array
 * comparisons) finds the cache a previous descent made.  procs[k]
 * remembers the original for _fbt_keep_proc_caches().
 */
static inline void
_fbt_set_inskey_col(FbtScanInsert inskey, FmgrInfo **procs, int k,
					int flags, AttrNumber attno, Oid subtype, Oid collation,
					FmgrInfo *proc, Datum argument)
{
	ScanKey		sk = &inskey->scankeys[k];

	sk->sk_flags = flags;
	sk->sk_attno = attno;
	sk->sk_strategy = InvalidStrategy;
	sk->sk_subtype = subtype;
	sk->sk_collation = collation;
	sk->sk_argument = argument;
	memcpy(&sk->sk_func, proc, sizeof(FmgrInfo));
	procs[k] = proc;
}

/*
 * After a descent with an insertion scankey of nkeys columns set by
 * _fbt_set_inskey_col(): a cache a comparison hung on a copy's fn_extra
 * (allocated in the original's fn_mcxt) goes to the original, for the next
 * descent.
 */
static void
_fbt_keep_proc_caches(FbtScanInsert inskey, FmgrInfo **procs, int nkeys)
{
	int			k;

	for (k = 0; k < nkeys; k++)
		if (procs[k]->fn_extra == NULL)
			procs[k]->fn_extra = inskey->scankeys[k].sk_func.fn_extra;
}

/*
 * The insertion scankey's column keysCount holds the first member of a row
 * comparison, members[0], which bounds the scan's start with strategy
 * *strat (index order).  Classify it, then append the later members that
 * continue the row on the next columns in the same direction and are not
 * NULL: a row "(a, b) > (1, 2)" starts where (a, b) > (1, 2), not at the
 * first a = 1.  If a member is left out, the prefix used includes its
 * equal tuples, so a strict bound becomes a non-strict one.  Returns the
 * new column count (nbtree's _bt_first does the same with row members).
 */
static int
_fbt_first_rowcompare(Relation rel, FbtScanInsert inskey, FmgrInfo **procs,
					  int keysCount, ScanKey members, StrategyNumber *strat)
{
	ScanKey		m = members;
	bool		used_all = (m->sk_flags & SK_ROW_END) != 0;

	_fbt_prepare_compare_col(rel, inskey, keysCount++);
	while (!(m->sk_flags & SK_ROW_END))
	{
		m++;
		if (m->sk_attno != keysCount + 1 ||
			m->sk_strategy != *strat ||
			(m->sk_flags & SK_ISNULL))
			break;
		_fbt_set_inskey_col(inskey, procs, keysCount,
							rel->rd_indoption[m->sk_attno - 1] << 24,
							m->sk_attno, m->sk_subtype, m->sk_collation,
							&m->sk_func, m->sk_argument);
		_fbt_prepare_compare_col(rel, inskey, keysCount++);
		if (m->sk_flags & SK_ROW_END)
			used_all = true;
	}
	if (!used_all)
	{
		if (*strat == BTLessStrategyNumber)
			*strat = BTLessEqualStrategyNumber;
		else if (*strat == BTGreaterStrategyNumber)
			*strat = BTGreaterEqualStrategyNumber;
	}
	return keysCount;
}

/*
 * _fbt_first() -- position a (primitive) scan on its first match.
 *
 * Builds an insertion scankey from the keys that bound the scan's start:
 * per column in order, an equality key, else the bound facing the scan
 * direction (then stop), as nbtree's _bt_first does.  Without such keys,
 * starts at the first or last leaf.  Returns false if nothing matches.
 */
static bool
_fbt_first(IndexScanDesc scan, ScanDirection dir)
{
	Relation	rel = scan->indexRelation;
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	FbtScanInsertData inskey;
	FmgrInfo   *procs[INDEX_MAX_KEYS];
	int			keysCount = 0;
	StrategyNumber strat_total = BTEqualStrategyNumber;
	bool		goback;
	bool		leafok;
	Buffer		buf;
	int			apin = FBT_APIN_NONE;
	OffsetNumber offnum;
	int			col;
	int			i;

	_fbt_release_curr(scan);
	so->needPrimScan = false;
	so->arraysAdvanced = false;

	/*
	 * A parallel scan descends once per primitive scan, in the participant
	 * that gets there first; the others start from the page the shared
	 * scan hands out.
	 */
	if (scan->parallel_scan != NULL)
	{
		FbtParallelScanDesc ps = _fbt_parallel_state(scan);
		BlockNumber blkno;
		BlockNumber lastcurr;

		if (!_fbt_parallel_seize(scan, ps, true, &blkno, &lastcurr))
			return false;
		if (blkno == P_NONE)
		{
			_fbt_parallel_done(scan, ps);
			return false;
		}
		if (blkno != InvalidBlockNumber)
		{
			/*
			 * Array mode: no descent with these arrays led here, so a
			 * page that ends before their target asks for one.
			 */
			so->arraysAdvanced = true;
			if (!_fbt_readnextpage(scan, blkno, lastcurr, dir))
				return false;
			_fbt_return_item(scan);
			return true;
		}
	}

	pgstat_count_index_scan(rel);
	fbt_count_index_search(scan);
	inskey.pivotsearch = false;

	for (col = 0; col < nkeyatts; col++)
	{
		int			chosen = -1;
		int			skipkey = -1;
		bool		skipafter = false;

		for (i = 0; i < so->numberOfKeys; i++)
		{
			StrategyNumber s = so->keyStrategy[i];

			if (so->keyData[i].sk_attno != col + 1)
				continue;
			if (so->keyData[i].sk_flags & FBT_SK_SKIP)
			{
				skipkey = i;
				continue;
			}
			if (s == BTEqualStrategyNumber)
			{
				chosen = i;
				break;
			}
			if (chosen < 0 &&
				(ScanDirectionIsBackward(dir) ?
				 (s == BTLessStrategyNumber || s == BTLessEqualStrategyNumber) :
				 (s == BTGreaterStrategyNumber ||
				  s == BTGreaterEqualStrategyNumber)))
				chosen = i;
		}

		/*
		 * A skip array (the column has no equality key) positions by its
		 * value, or past it ("> v" going forward), or, at the start of its
		 * range, by the column's bound like any column without one.
		 */
		if (skipkey >= 0)
		{
			FbtArrayKeyInfo *ak = &so->arrayKeys[so->colArray[col]];

			Assert(ak->skip && ak->scan_key == skipkey);
			if (ak->skip_state != FBT_SKIP_START)
			{
				chosen = skipkey;
				skipafter = (ak->skip_state == FBT_SKIP_AFTER);
			}
		}
		if (chosen < 0)
			break;

		{
			ScanKey		key = &so->keyData[chosen];
			bool		isrow = (key->sk_flags & SK_ROW_HEADER) != 0;
			ScanKey		src = isrow ?
				(ScanKey) DatumGetPointer(key->sk_argument) : key;

			/*
			 * A row comparison positions by its first member (not NULL),
			 * with the member's own proc.
			 */
			_fbt_set_inskey_col(&inskey, procs, keysCount,
								(src->sk_flags & SK_ISNULL) |
								(rel->rd_indoption[col] << 24),
								src->sk_attno, src->sk_subtype,
								src->sk_collation,
								isrow ? &src->sk_func :
								&so->keyOrderProc[chosen],
								src->sk_argument);
			if (isrow)
			{
				strat_total = so->keyStrategy[chosen];
				keysCount = _fbt_first_rowcompare(rel, &inskey, procs,
												  keysCount, src,
												  &strat_total);
				break;
			}
			/* a machine comparison was classified with the search key */
			if (so->keyCmpKind[chosen] != FBT_CMP_FMGR)
			{
				inskey.cmpkind[keysCount] = so->keyCmpKind[chosen];
				inskey.tcopy[keysCount] = NULL;
				inskey.iarg[keysCount] = so->keyIarg[chosen];
				inskey.farg[keysCount] = so->keyFarg[chosen];
			}
			else
			{
				_fbt_prepare_compare_col(rel, &inskey, keysCount);
				if (inskey.cmpkind[keysCount] == FBT_CMP_FMGR &&
					so->keyHasSortSupport[chosen])
				{
					inskey.cmpkind[keysCount] = FBT_CMP_SORTSUPPORT;
					inskey.ssup[keysCount] = &so->keySortSupport[chosen];
				}
			}
			keysCount++;
			strat_total = so->keyStrategy[chosen];
			if (skipafter)
				strat_total = ScanDirectionIsBackward(dir) ?
					BTLessStrategyNumber : BTGreaterStrategyNumber;
		}
		if (strat_total != BTEqualStrategyNumber)
			break;
	}

	if (keysCount == 0)
	{
		buf = _fbt_get_endpoint(rel, 0, ScanDirectionIsBackward(dir),
								&so->pins);
		if (!BufferIsValid(buf))
		{
			PredicateLockRelation(rel, scan->xs_snapshot);
			_fbt_parallel_end(scan);
			return false;
		}
		offnum = ScanDirectionIsBackward(dir) ?
			PageGetMaxOffsetNumber(BufferGetPage(buf)) :
			P_FIRSTDATAKEY(FbtPageGetOpaque(BufferGetPage(buf)));
		return _fbt_start_at(scan, dir, buf, offnum, FBT_APIN_NONE);
	}

	/*
	 * Forward: first item >= key (> key for a ">" bound).  Backward: last
	 * item <= key (< key for a "<" bound), found as one before the first
	 * item > key (>= key).
	 */
	switch (strat_total)
	{
		case BTLessStrategyNumber:
			inskey.nextkey = false;
			goback = true;
			break;
		case BTLessEqualStrategyNumber:
			inskey.nextkey = true;
			goback = true;
			break;
		case BTEqualStrategyNumber:
			inskey.nextkey = ScanDirectionIsBackward(dir);
			goback = ScanDirectionIsBackward(dir);
			break;
		case BTGreaterEqualStrategyNumber:
			inskey.nextkey = false;
			goback = false;
			break;
		case BTGreaterStrategyNumber:
			inskey.nextkey = true;
			goback = false;
			break;
		default:
			elog(ERROR, "unrecognized strategy number: %d", (int) strat_total);
			goback = false;		/* keep compiler quiet */
	}
	inskey.scantid = NULL;
	inskey.keysz = keysCount;

	/*
	 * A scan that drops its leaf pin after reading the leaf lets the descent
	 * pin the leaf atomically (README.design, "Pins"); parallel scans
	 * (whose leaf goes to other participants' bookkeeping) do not.
	 */
	leafok = scan->parallel_scan == NULL && _fbt_leaf_pin_dropped(scan);
	(void) _fbt_search(rel, &inskey, &buf, FBT_READ, &offnum, &so->pins,
					   leafok ? &apin : NULL);
	_fbt_keep_proc_caches(&inskey, procs, keysCount);

	/*
	 * A text argument detoasted for the descent is not needed any more:
	 * free it now, so that scans rescanned many times with toasted keys
	 * (nested loops, exclusion checks) do not keep a copy per rescan in
	 * the executor's memory until the statement ends.
	 */
	for (i = 0; i < keysCount; i++)
		if (inskey.tcopy[i] != NULL)
			pfree(inskey.tcopy[i]);

	if (!BufferIsValid(buf))
	{
		PredicateLockRelation(rel, scan->xs_snapshot);
		_fbt_parallel_end(scan);
		return false;
	}

	if (goback)
		offnum = OffsetNumberPrev(offnum);
	return _fbt_start_at(scan, dir, buf, offnum, apin);
}

/*
 * Find the page left of obknum, the page the scan just left, starting from
 * lblkno (obknum's left-link when the scan read it), as nbtree's
 * _bt_walk_left().  If lblkno split since, its right halves lie between:
 * move right (at most four hops) to the page whose right-link is obknum.
 * If none is found, obknum itself may have been deleted since (its range
 * then belongs to its first live right sibling, whose left sibling is the
 * page wanted) or its left sibling deleted (its left-link then changed):
 * look at obknum again and retry from there.  Deleted pages are passed
 * over; a half-dead page is returned (it is still linked), and the caller
 * steps over it.  Returns the page pinned and share-locked, or
 * InvalidBuffer if obknum is leftmost.  Errors: ERRCODE_INDEX_CORRUPTED
 * when the links contradict each other.
 */
static Buffer
_fbt_walk_left(Relation rel, BlockNumber obknum, BlockNumber lblkno)
{
	for (;;)
	{
		Buffer		buf;
		FbtPageOpaque opaque;
		int			tries = 0;

		if (lblkno == P_NONE)
			return InvalidBuffer;
		buf = _fbt_getbuf(rel, lblkno, FBT_READ);
		for (;;)
		{
			opaque = FbtPageGetOpaque(BufferGetPage(buf));
			if (!P_ISDELETED(opaque) && opaque->fbto_next == obknum)
				return buf;
			if (P_RIGHTMOST(opaque) || ++tries > 4)
				break;
			buf = _fbt_relandgetbuf(rel, buf, opaque->fbto_next, FBT_READ);
		}

		/* back to the page we left, to see what happened */
		buf = _fbt_relandgetbuf(rel, buf, obknum, FBT_READ);
		opaque = FbtPageGetOpaque(BufferGetPage(buf));
		if (P_ISDELETED(opaque))
		{
			/* its range went right: step left from the page that took it */
			do
			{
				if (P_RIGHTMOST(opaque))
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("deleted block %u of index \"%s\" is rightmost",
									BufferGetBlockNumber(buf),
									RelationGetRelationName(rel))));
				buf = _fbt_relandgetbuf(rel, buf, opaque->fbto_next,
										FBT_READ);
				opaque = FbtPageGetOpaque(BufferGetPage(buf));
			} while (P_ISDELETED(opaque));
			obknum = BufferGetBlockNumber(buf);
		}
		else if (opaque->fbto_prev == lblkno)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("could not find left sibling of block %u in index \"%s\"",
							obknum, RelationGetRelationName(rel))));
		lblkno = opaque->fbto_prev;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * _fbt_steppage() -- move the scan to the next leaf in direction dir that
 * has matches: the current page's sibling, or in a parallel scan the page
 * the shared scan hands out next.  Drops the pin on the current page
 * (keeping one for a pending mark).  Returns false, holding no pins, at
 * the end of the scan.
 */
static bool
_fbt_steppage(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtParallelScanDesc ps = _fbt_parallel_state(scan);
	BlockNumber blkno;
	BlockNumber lastcurr;
	bool		more;

	/*
	 * Array mode: the page decided whether a new descent follows it in the
	 * direction it was read in.  A scan that turned starts its arrays over
	 * in the new direction: the pages it reads move them where they belong
	 * (every tuple between here and the next match has been found not to
	 * match, in either direction).
	 */
	if (so->arrayMode)
	{
		if (so->currPos.dir != dir)
			(void) _fbt_start_array_keys(scan, dir);
		else
			so->needPrimScan = so->currPos.needPrimScan;
	}

	/* a mark on this page must survive our leaving it */
	if (so->markItemIndex >= 0)
	{
		_fbt_invalidate_mark(so);
		if (so->markPos == NULL)
			so->markPos = MemoryContextAlloc(so->scanCxt,
											 sizeof(FbtScanPosData));
		if (BufferIsValid(so->currPos.buf))
			IncrBufferRefCount(so->currPos.buf);
		memcpy(so->markPos, &so->currPos, sizeof(FbtScanPosData));
		so->markPos->itemIndex = so->markItemIndex;
		if (so->currTuples)
			memcpy(so->markTuples, so->currTuples,
				   so->currPos.nextTupleOffset);
		so->markItemIndex = -1;
	}

	if (ScanDirectionIsForward(dir))
	{
		blkno = so->currPos.nextPage;
		more = so->currPos.moreRight;
	}
	else
	{
		blkno = so->currPos.prevPage;
		more = so->currPos.moreLeft;
	}
	lastcurr = so->currPos.currPage;
	_fbt_release_curr(scan);
	if (!more)
	{
		if (ps != NULL)
			_fbt_parallel_done(scan, ps);
		return false;
	}
	if (ps != NULL && !_fbt_parallel_seize(scan, ps, false, &blkno, &lastcurr))
		return false;
	return _fbt_readnextpage(scan, blkno, lastcurr, dir);
}

/*
 * _fbt_readnextpage() -- read leaves in direction dir, starting with blkno
 * (going backward: the page left of lastcurr, the page the scan left,
 * whose left-link blkno was, found as _fbt_walk_left() finds it), until one
 * has matches.  In a parallel scan the caller has seized the scan: each
 * page read releases it (_fbt_readpage), and after a page without matches
 * the scan is seized again for the next page to read.  Returns true with
 * the scan on the page's matches (the page pinned, not locked), false at
 * the end of the scan (no pins held; a parallel scan marked done).
 */
static bool
_fbt_readnextpage(IndexScanDesc scan, BlockNumber blkno, BlockNumber lastcurr,
				  ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	FbtParallelScanDesc ps = _fbt_parallel_state(scan);

	while (blkno != P_NONE)
	{
		Page		page;
		FbtPageOpaque opaque;
		bool		more;

		CHECK_FOR_INTERRUPTS();
		if (ScanDirectionIsForward(dir))
		{
			so->currPos.buf = _fbt_getbuf(rel, blkno, FBT_READ);
			so->currPos.moreLeft = true;
		}
		else
		{
			so->currPos.buf = _fbt_walk_left(rel, lastcurr, blkno);
			if (!BufferIsValid(so->currPos.buf))
				break;
			so->currPos.moreRight = true;
		}
		page = BufferGetPage(so->currPos.buf);
		opaque = FbtPageGetOpaque(page);
		if (P_IGNORE(opaque))
		{
			/*
			 * Going right, deleted or half-dead: empty, its range went
			 * right.  Going left, half-dead (deleted pages are passed over
			 * by _fbt_walk_left): empty and still linked; go on left of it.
			 * A parallel scan stays seized meanwhile.
			 */
			lastcurr = BufferGetBlockNumber(so->currPos.buf);
			blkno = ScanDirectionIsForward(dir) ? opaque->fbto_next :
				opaque->fbto_prev;
			UnlockReleaseBuffer(so->currPos.buf);
			so->currPos.buf = InvalidBuffer;
			continue;
		}
		if (_fbt_readpage(scan, dir,
						  ScanDirectionIsForward(dir) ? P_FIRSTDATAKEY(opaque) :
						  PageGetMaxOffsetNumber(page),
						  false))
		{
			_fbt_drop_lock_and_maybe_pin(scan, &so->currPos);
			return true;
		}
		if (ScanDirectionIsForward(dir))
		{
			more = so->currPos.moreRight;
			blkno = so->currPos.nextPage;
		}
		else
		{
			more = so->currPos.moreLeft;
			blkno = so->currPos.prevPage;
		}
		lastcurr = so->currPos.currPage;
		UnlockReleaseBuffer(so->currPos.buf);
		so->currPos.buf = InvalidBuffer;
		so->currPos.currPage = InvalidBlockNumber;
		if (!more)
			break;
		if (ps != NULL && !_fbt_parallel_seize(scan, ps, false, &blkno, &lastcurr))
			return false;
	}
	if (ps != NULL)
		_fbt_parallel_done(scan, ps);
	return false;
}

/* Advance to the next match; false at the end of the primitive scan */
static bool
_fbt_next(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	if (ScanDirectionIsForward(dir))
	{
		if (++so->currPos.itemIndex > so->currPos.lastItem &&
			!_fbt_steppage(scan, dir))
			return false;
	}
	else
	{
		if (--so->currPos.itemIndex < so->currPos.firstItem &&
			!_fbt_steppage(scan, dir))
			return false;
	}
	_fbt_return_item(scan);
	return true;
}

/*
 * fbtgettuple() -- amgettuple: return the next matching heap TID.
 *
 * dir: scan direction; may change between calls (cursors).  Sets
 * scan->xs_heaptid (and xs_itup for index-only scans); results never need
 * a recheck.  Holds a pin on the current leaf between calls, no locks.
 * = ANY(array) keys run in array mode (one pass, fbtarray.c) or one
 * primitive scan per element combination.
 */
bool
fbtgettuple(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		res;

	scan->xs_recheck = false;

	if (!FbtScanPosIsValid(so->currPos) && !_fbt_start_array_keys(scan, dir))
		return false;

	/* array mode: one pass, a new descent where the page asks for one */
	if (so->arrayMode)
	{
		if (!FbtScanPosIsValid(so->currPos))
			res = _fbt_first(scan, dir);
		else
		{
			if (scan->kill_prior_tuple)
			{
				if (so->killedItems == NULL)
					so->killedItems = (int *)
						palloc(FBT_MAX_TIDS_PER_PAGE * sizeof(int));
				if (so->numKilled < FBT_MAX_TIDS_PER_PAGE)
					so->killedItems[so->numKilled++] = so->currPos.itemIndex;
			}
			res = _fbt_next(scan, dir);
		}
		while (!res && so->needPrimScan)
		{
			CHECK_FOR_INTERRUPTS();
			res = _fbt_first(scan, dir);
		}
		return res;
	}

	for (;;)
	{
		if (!FbtScanPosIsValid(so->currPos))
			res = _fbt_first(scan, dir);
		else
		{
			/* the executor found the last returned tuple dead to all */
			if (scan->kill_prior_tuple)
			{
				if (so->killedItems == NULL)
					so->killedItems = (int *)
						palloc(FBT_MAX_TIDS_PER_PAGE * sizeof(int));
				if (so->numKilled < FBT_MAX_TIDS_PER_PAGE)
					so->killedItems[so->numKilled++] = so->currPos.itemIndex;
			}
			res = _fbt_next(scan, dir);
		}
		if (res || so->numArrayKeys == 0 ||
			!_fbt_advance_array_keys(scan, dir))
			break;
		/* the next element combination */
		_fbt_parallel_next_primscan(scan);
	}

	return res;
}

/*
 * fbtgetbitmap() -- amgetbitmap: add every matching heap TID to tbm.
 *
 * Returns the number of TIDs added.  Holds at most one pin between pages,
 * none on return.
 */
int64
fbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (!_fbt_start_array_keys(scan, ForwardScanDirection))
		return 0;

	do
	{
		CHECK_FOR_INTERRUPTS();
		if (_fbt_first(scan, ForwardScanDirection))
		{
			do
			{
				int			i;

				for (i = so->currPos.itemIndex; i <= so->currPos.lastItem; i++)
				{
					tbm_add_tuples(tbm, &so->currPos.items[i].heapTid, 1, false);
					ntids++;
				}
			} while (_fbt_steppage(scan, ForwardScanDirection));
		}
	} while (so->arrayMode ? so->needPrimScan :
			 (so->numArrayKeys > 0 &&
			  _fbt_advance_array_keys(scan, ForwardScanDirection)));

	return ntids;
}

/*
 * fbtmarkpos() -- ammarkpos: remember the current scan position.
 *
 * The mark is kept lazily as an item index on the current page, and
 * copied (with its own pin) only when the scan leaves the page.
 */
void
fbtmarkpos(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	_fbt_invalidate_mark(so);
	so->markItemIndex = FbtScanPosIsValid(so->currPos) ?
		so->currPos.itemIndex : -1;
	_fbt_mark_array_keys(scan);
}

/*
 * fbtrestrpos() -- amrestrpos: go back to the position of the last mark.
 *
 * Restoring a mark taken while the scan was not positioned leaves it
 * unpositioned, so the next fetch starts over.
 */
void
fbtrestrpos(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	_fbt_restore_array_keys(scan);
	if (so->markItemIndex >= 0)
	{
		so->currPos.itemIndex = so->markItemIndex;
		return;
	}

	_fbt_release_curr(scan);
	if (so->markPos != NULL && FbtScanPosIsValid(*so->markPos))
	{
		if (BufferIsValid(so->markPos->buf))
			IncrBufferRefCount(so->markPos->buf);
		memcpy(&so->currPos, so->markPos, sizeof(FbtScanPosData));
		if (so->currTuples)
			memcpy(so->currTuples, so->markTuples,
				   so->markPos->nextTupleOffset);
		if (so->prefetch.enabled)
			_fbt_prefetch_restored(scan);
	}
}
