/*-------------------------------------------------------------------------
 *
 * fbtprefetch.c
 *	  Heap prefetch from index scans: advise the kernel of the heap blocks
 *	  the scan is about to return, so that a cold scan of uncorrelated rows
 *	  overlaps its random reads instead of waiting for one at a time.
 *
 * No released btree does this: the executor fetches each heap tuple only
 * when the index hands out its TID.  A leaf read collects all of the page's
 * matches at once (fbtscan.c), so the TIDs after the one being returned are
 * known; as each is returned, PrefetchBuffer() is called for the heap
 * blocks of the next ones, up to a distance.  PrefetchBuffer() only looks
 * the block up in shared buffers and, if it is not there, asks the kernel
 * to read it (posix_fadvise(WILLNEED)): no pin, no lock, no buffer is held
 * or changed for a prefetched block, so prefetch is advice only and cannot
 * change what a scan returns.
 *
 * The distance adapts, as a bitmap heap scan's does: it starts at 1, from
 * the second item a rescan hands out (an ORDER BY ... LIMIT 1 prefetches
 * nothing, LIMIT 2 at most one block), doubles each time a
 * prefetched block was neither in shared buffers nor in the kernel's page
 * cache (FBT_PREFETCH_CACHED_US), up to the heap tablespace's
 * effective_io_concurrency (looked up at the first such block, so that a warm
 * scan does not pay for it), and shrinks by one each time it was.  At 0 the
 * scan only probes one block ahead every so many rows, the interval doubling
 * while the probes keep finding their blocks in shared buffers, so that a warm
 * scan pays a buffer lookup every thousand rows or so.  Consecutive TIDs on
 * one heap block are prefetched once.  Index-only scans prefetch only blocks
 * whose visibility map bit is not set (the blocks the executor will visit); a
 * set bit counts as a hit.  Bitmap scans (the bitmap heap scan prefetches for
 * itself) and scans without a heap relation prefetch nothing.
 *
 * With fastbtree.prefetch_read_ahead on (off by default: it measured slower
 * on the storage of the machine it was written on, README.md), when the
 * distance reaches past the current leaf's last match and the scan goes on
 * to the sibling leaf, the sibling is read ahead: pinned and share-
 * locked for a moment (nothing else locked meanwhile), the heap TIDs of its
 * first matches copied, the lock and pin released, and those TIDs prefetched
 * as the distance comes to them (_fbt_prefetch_peek).  The scan reads the
 * sibling as ever when it steps onto it, and its prefetch picks up after
 * the matches read ahead: nothing the scan returns or marks LP_DEAD comes
 * from the read ahead, so it stays advice.  The sibling's index block itself
 * is prefetched when the leaf before it is read.  Not in array mode (the
 * next leaf may be skipped by a new descent) nor in parallel scans (the
 * next leaf may go to another participant).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/sdir.h"
#include "access/visibilitymap.h"
#include "storage/bufmgr.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/spccache.h"

#include "fastbtree.h"

/* items between probes at distance 0: the first interval and the largest */
#define FBT_PREFETCH_PROBE_MIN	16
#define FBT_PREFETCH_PROBE_MAX	1024

/*
 * A PrefetchBuffer() that misses shared buffers and returns within this
 * many microseconds found its block in the kernel's page cache: its
 * posix_fadvise() issued no read (about 2 us here, against 5-30 us for one
 * that queued a read).  Such a block counts as a hit: there is no read to
 * overlap, and each further advice would cost a system call per row for
 * nothing (a 1,000-row scan of a heap in the page cache but not in shared
 * buffers advised 526 blocks, one per row that missed; with this, 55).  On
 * storage where queuing a read takes less than that, misses count as hits
 * too and a cold scan prefetches less (btree's behaviour, not worse).
 * prefetch_hits counts shared-buffer hits only.  Assertion builds can
 * change it (fastbtree.debug_prefetch_cached_us) for the tests, which
 * cannot empty the page cache: 0 counts every miss as a read.
 */
#define FBT_PREFETCH_CACHED_US	4
#ifdef USE_ASSERT_CHECKING
int			fbt_debug_prefetch_cached_us = FBT_PREFETCH_CACHED_US;
#define PREFETCH_CACHED_US	fbt_debug_prefetch_cached_us
#else
#define PREFETCH_CACHED_US	FBT_PREFETCH_CACHED_US
#endif

/* fastbtree.prefetch (fastbtree.c) */
bool		fbt_prefetch = true;
/* fastbtree.prefetch_read_ahead (fastbtree.c) */
bool		fbt_prefetch_read_ahead = false;

/*
 * _fbt_prefetch_start() -- set up scan's prefetch at a rescan: none for a
 * scan without a heap relation (bitmap scans) or with fastbtree.prefetch
 * off (both decided once per scan, not per rescan), else a distance of
 * one to start with.  No locks or pins.
 */
void
_fbt_prefetch_start(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtPrefetchState *ps = &so->prefetch;

	if (!ps->decided)
	{
		ps->decided = true;
		ps->enabled = fbt_prefetch && scan->heapRelation != NULL;
		ps->maxDistance = -1;
	}
	ps->distance = ps->enabled ? 1 : 0;
	ps->ahead = -1;
	ps->pageStart = false;
	ps->handedOut = false;
	ps->lastBlock = InvalidBlockNumber;
	ps->probeEvery = FBT_PREFETCH_PROBE_MIN;
	ps->probeIn = FBT_PREFETCH_PROBE_MIN;
	ps->peeked = false;
	ps->peekBlock = InvalidBlockNumber;
	ps->peekCount = 0;
	ps->peekUsed = 0;
}

/*
 * Whether the scan may read ahead into the sibling of pos (see the top):
 * fastbtree.prefetch_read_ahead on, and the scan goes on there
 */
static inline bool
_fbt_prefetch_may_peek(IndexScanDesc scan, FbtScanPos pos)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	BlockNumber blkno;

	if (!fbt_prefetch_read_ahead || so->arrayMode || scan->parallel_scan != NULL)
		return false;
	if (ScanDirectionIsForward(pos->dir) ? !pos->moreRight : !pos->moreLeft)
		return false;
	blkno = ScanDirectionIsForward(pos->dir) ? pos->nextPage : pos->prevPage;

	/*
	 * A damaged link is the scan's own step to report (ERRCODE_INDEX_
	 * CORRUPTED): neither ReadBuffer() nor PrefetchBuffer() may see
	 * InvalidBlockNumber or a block past the end (each raises its own error,
	 * and ReadBuffer() would extend the index on P_NEW).  One size lookup
	 * per leaf, in scans that miss the cache only.
	 */
	return blkno != P_NONE && blkno != InvalidBlockNumber &&
		blkno < RelationGetNumberOfBlocks(scan->indexRelation);
}

/*
 * _fbt_prefetch_page() -- the scan has read a new leaf into so->currPos:
 * prefetching starts over from the item the scan returns first.
 */
void
_fbt_prefetch_page(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	FbtPrefetchState *ps = &so->prefetch;
	FbtScanPos	pos = &so->currPos;
	bool		forward = ScanDirectionIsForward(pos->dir);

	ps->ahead = forward ? pos->firstItem : pos->lastItem;
	ps->pageStart = true;

	/*
	 * The leaf read ahead, unchanged since (same LSN): its first matches'
	 * blocks are prefetched already.  (Changed, its matches are prefetched
	 * afresh; a prefetch of the read ahead was at worst wasted.)
	 */
	if (pos->currPage == ps->peekBlock && pos->lsn == ps->peekLsn &&
		ps->peekUsed > 0)
	{
		ps->ahead = forward ?
			Min(pos->firstItem + ps->peekUsed - 1, pos->lastItem) :
			Max(pos->lastItem - ps->peekUsed + 1, pos->firstItem);
		ps->pageStart = false;
	}
	ps->peeked = false;
	ps->peekBlock = InvalidBlockNumber;
	ps->peekCount = 0;
	ps->peekUsed = 0;

	/*
	 * A scan whose heap blocks miss shared buffers likely misses on the
	 * index too: start reading the sibling, for the read ahead or the step
	 * onto it, whichever comes first.
	 */
	if (ps->distance > 0 && pos->firstItem <= pos->lastItem &&
		_fbt_prefetch_may_peek(scan, pos))
		(void) PrefetchBuffer(scan->indexRelation, MAIN_FORKNUM,
							  forward ? pos->nextPage : pos->prevPage);
}

/*
 * _fbt_prefetch_restored() -- so->currPos was replaced by a marked
 * position (fbtrestrpos): prefetching goes on from its current item, and
 * forgets a read ahead made from the position left.
 */
void
_fbt_prefetch_restored(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtPrefetchState *ps = &so->prefetch;

	ps->peekBlock = InvalidBlockNumber;
	_fbt_prefetch_page(scan);
	ps->ahead = so->currPos.itemIndex;
}

/*
 * Read ahead the sibling leaf the scan steps onto next: copy to ps->peek
 * the heap TIDs of its first matches (in the order the scan will return
 * them, posting list TIDs one each) until ps->peekCap of them, the end of
 * the page or a key ends the scan.  The sibling is pinned and share-locked
 * while it is read, with no other lock held (the scan's current leaf may
 * stay pinned); both are released before returning.  A page that is not a
 * live leaf (deleted since, or damaged) or an item that does not pass the
 * bounds checks ends the read ahead without an error: the scan's own read
 * of the page reports damage.  Errors: ReadBuffer()'s (a read or checksum
 * failure of the sibling, which the scan would read next) and the keys'
 * comparison functions'.  Nothing when maxDistance is not known yet.
 */
static void
_fbt_prefetch_peek(IndexScanDesc scan, FbtPrefetchState *ps, FbtScanPos pos)
{
	Relation	rel = scan->indexRelation;
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = IndexRelationGetNumberOfAttributes(rel);
	bool		forward = ScanDirectionIsForward(pos->dir);
	BlockNumber blkno = forward ? pos->nextPage : pos->prevPage;
	Buffer		buf;
	Page		page;
	FbtPageOpaque opaque;
	OffsetNumber minoff;
	OffsetNumber maxoff;
	OffsetNumber offnum;
	int			n = 0;

	if (ps->maxDistance <= 0)
		return;					/* (not looked up yet: nothing to copy) */
	if (ps->peekCap < ps->maxDistance)
	{
		if (ps->peek != NULL)
			pfree(ps->peek);
		ps->peek = MemoryContextAlloc(((FbtScanOpaque) scan->opaque)->scanCxt,
									  sizeof(ItemPointerData) * ps->maxDistance);
		ps->peekCap = ps->maxDistance;
	}

	buf = ReadBuffer(rel, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	fbt_stats.prefetch_read_ahead++;
	page = BufferGetPage(buf);
	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)))
		goto done;
	opaque = FbtPageGetOpaque(page);
	if (!P_ISLEAF(opaque) || opaque->fbto_level != 0 || P_IGNORE(opaque))
		goto done;
	minoff = P_FIRSTDATAKEY(opaque);
	maxoff = PageGetMaxOffsetNumber(page);
	offnum = forward ? minoff : maxoff;
	while (offnum >= minoff && offnum <= maxoff && n < ps->peekCap)
	{
		ItemId		iid = PageGetItemId(page, offnum);
		IndexTuple	itup;
		bool		continuescan = true;

		if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
		{
			offnum = forward ? OffsetNumberNext(offnum) :
				OffsetNumberPrev(offnum);
			continue;
		}
		if (!_fbt_itemid_ok(page, iid))
			break;
		itup = (IndexTuple) PageGetItem(page, iid);
		if (FbtTupleIsPivot(itup) || !_fbt_tuple_attrs_ok(desc, itup, natts))
			break;
		if (_fbt_checkkeys(scan, itup, natts, pos->dir, 0, &continuescan))
		{
			if (FbtTupleIsPosting(itup))
			{
				int			np;
				int			j;

				if (!_fbt_posting_ok(itup))
					break;
				np = FbtTupleGetNPosting(itup);
				for (j = 0; j < np && n < ps->peekCap; j++)
					ps->peek[n++] = *FbtTupleGetPostingN(itup, j);
			}
			else
				ps->peek[n++] = itup->t_tid;
		}
		if (!continuescan)
			break;
		offnum = forward ? OffsetNumberNext(offnum) : OffsetNumberPrev(offnum);
	}
	ps->peekBlock = blkno;
	ps->peekLsn = BufferGetLSNAtomic(buf);
done:
	UnlockReleaseBuffer(buf);
	ps->peekCount = n;
}

/* Prefetch the heap block of tid, and adapt the distance to the answer */
static void
_fbt_prefetch_tid(IndexScanDesc scan, FbtPrefetchState *ps, ItemPointer tid)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	BlockNumber blkno = ItemPointerGetBlockNumberNoCheck(tid);
	bool		hit;

	if (blkno == ps->lastBlock)
		return;
	ps->lastBlock = blkno;

	/*
	 * An index-only scan visits the heap only where the bit is not set: a
	 * block with the bit set counts as one already in shared buffers, so
	 * that a scan of an all-visible range soon only probes.
	 */
	if (so->currTuples != NULL &&
		VM_ALL_VISIBLE(scan->heapRelation, blkno, &ps->vmbuffer))
		hit = true;
	else
	{
		PrefetchBufferResult r;
		instr_time	start;
		instr_time	took;

		INSTR_TIME_SET_CURRENT(start);
		r = PrefetchBuffer(scan->heapRelation, MAIN_FORKNUM, blkno);
		fbt_stats.prefetch_issued++;
		hit = BufferIsValid(r.recent_buffer);
		if (hit)
			fbt_stats.prefetch_hits++;
		else
		{
			/* (in the kernel's page cache: see FBT_PREFETCH_CACHED_US) */
			INSTR_TIME_SET_CURRENT(took);
			INSTR_TIME_SUBTRACT(took, start);
			hit = INSTR_TIME_GET_MICROSEC(took) < PREFETCH_CACHED_US;
		}
	}
	if (hit)
	{
		/* in shared buffers (or not to be read): nothing to overlap */
		if (ps->distance > 0)
			ps->distance--;
		else
			ps->probeEvery = Min(ps->probeEvery * 2, FBT_PREFETCH_PROBE_MAX);
	}
	else
	{
		/*
		 * The bound is looked up at the first block found missing: a warm
		 * scan never pays the tablespace lookup (a catalog read in a new
		 * session).  0 turns prefetching off for the rest of the scan.
		 */
		if (ps->maxDistance < 0)
		{
			ps->maxDistance = get_tablespace_io_concurrency(
				scan->heapRelation->rd_rel->reltablespace);
			if (ps->maxDistance <= 0)
			{
				ps->enabled = false;
				ps->distance = 0;
				return;
			}
		}
		ps->distance = Min(Max(ps->distance * 2, 2), ps->maxDistance);
		ps->probeEvery = FBT_PREFETCH_PROBE_MIN;
	}
	ps->probeIn = ps->probeEvery;
	fbt_stats.prefetch_distance = ps->distance;
}

/*
 * _fbt_prefetch() -- the scan is about to return so->currPos's item
 * itemIndex, and _fbt_prefetch_due() said so: prefetch the heap blocks of
 * the items after it (in the direction the page was read), up to the
 * distance, or probe one item ahead when the distance is 0 and the probe
 * is due.  No locks; no pins
 * but the visibility map page of an index-only scan, kept until the scan
 * ends (_fbt_prefetch_end).
 */
void
_fbt_prefetch(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	FbtPrefetchState *ps = &so->prefetch;
	FbtScanPos pos = &so->currPos;
	int			cur = pos->itemIndex;
	int			target;

	/*
	 * Nothing for the first item a rescan hands out: a scan that stops
	 * there (ORDER BY ... LIMIT 1, the planner's probe of an index's end
	 * value, a unique probe) costs what it costs btree, no buffer lookup
	 * and, in an index-only scan, no visibility map pin of its own.
	 */
	if (!ps->handedOut)
	{
		ps->handedOut = true;
		ps->pageStart = false;
		return;
	}

	/*
	 * On a leaf just read by a scan that has been prefetching (not a first
	 * leaf), the block of the item handed out first goes first, so that
	 * the executor's read of it does not queue behind the prefetches of
	 * the others.
	 */
	if (ps->pageStart)
	{
		ps->pageStart = false;
		if (ps->distance > 1)
			_fbt_prefetch_tid(scan, ps, &pos->items[cur].heapTid);
	}

	if (ps->distance > 0)
		target = ps->distance;
	else if (ps->probeIn > 0)
		return;					/* (a new leaf, no probe due) */
	else
	{
		/* (the next probe is due probeEvery items on, hit or not) */
		ps->probeIn = ps->probeEvery;
		target = 1;
	}

	if (ScanDirectionIsForward(pos->dir))
	{
		int			end = Min(cur + target, pos->lastItem);
		int			i;

		for (i = Max(ps->ahead, cur) + 1; i <= end; i++)
		{
			_fbt_prefetch_tid(scan, ps, &pos->items[i].heapTid);
			ps->ahead = i;
		}
	}
	else
	{
		int			end = Max(cur - target, pos->firstItem);
		int			i;

		for (i = Min(ps->ahead, cur) - 1; i >= end; i--)
		{
			_fbt_prefetch_tid(scan, ps, &pos->items[i].heapTid);
			ps->ahead = i;
		}
	}

	/*
	 * The distance reaches past the leaf's last match: the sibling's first
	 * matches make up the rest, read ahead once per leaf.
	 */
	if (ps->distance > 0)
	{
		int			beyond = ScanDirectionIsForward(pos->dir) ?
			cur + ps->distance - pos->lastItem :
			pos->firstItem - (cur - ps->distance);

		if (beyond > 0 && !ps->peeked)
		{
			/* (decided once per leaf, whether it reads ahead or not) */
			ps->peeked = true;
			if (_fbt_prefetch_may_peek(scan, pos))
				_fbt_prefetch_peek(scan, ps, pos);
		}
		while (ps->peekUsed < Min(beyond, ps->peekCount) && ps->enabled)
			_fbt_prefetch_tid(scan, ps, &ps->peek[ps->peekUsed++]);
	}
}

/*
 * _fbt_prefetch_end() -- release what prefetching holds: the visibility
 * map page of an index-only scan, kept across rescans (as the executor
 * keeps its own) so that a nested loop pins it once.  At endscan.
 */
void
_fbt_prefetch_end(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	if (BufferIsValid(so->prefetch.vmbuffer))
	{
		ReleaseBuffer(so->prefetch.vmbuffer);
		so->prefetch.vmbuffer = InvalidBuffer;
	}
}
