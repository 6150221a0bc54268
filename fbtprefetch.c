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
 * The distance adapts, as a bitmap heap scan's does: it starts at 1 (an ORDER
 * BY ... LIMIT 1 prefetches at most one block), doubles each time a
 * prefetched block was not in shared buffers, up to the heap tablespace's
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
 * The prefetch stays within the current leaf's matches: the matches of the
 * next leaf are prefetched when the scan has read it, from its first one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/visibilitymap.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/spccache.h"

#include "fastbtree.h"

/* items between probes at distance 0: the first interval and the largest */
#define FBT_PREFETCH_PROBE_MIN	16
#define FBT_PREFETCH_PROBE_MAX	1024

/* fastbtree.prefetch (fastbtree.c) */
bool		fbt_prefetch = true;

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
	ps->lastBlock = InvalidBlockNumber;
	ps->probeEvery = FBT_PREFETCH_PROBE_MIN;
	ps->probeIn = FBT_PREFETCH_PROBE_MIN;
}

/*
 * _fbt_prefetch_page() -- the scan has read a new leaf into so->currPos:
 * prefetching starts over from the item the scan returns first.
 */
void
_fbt_prefetch_page(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	so->prefetch.ahead = ScanDirectionIsForward(so->currPos.dir) ?
		so->currPos.firstItem : so->currPos.lastItem;
	so->prefetch.pageStart = true;
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

		r = PrefetchBuffer(scan->heapRelation, MAIN_FORKNUM, blkno);
		fbt_stats.prefetch_issued++;
		hit = BufferIsValid(r.recent_buffer);
		if (hit)
			fbt_stats.prefetch_hits++;
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
}

/*
 * _fbt_prefetch_end() -- release what prefetching holds: the visibility
 * map page of an index-only scan.  At rescan and endscan.
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
