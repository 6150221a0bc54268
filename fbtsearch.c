/*-------------------------------------------------------------------------
 *
 * fbtsearch.c
 *	  Descent for fastbtree: from the root to the leaf where a key belongs,
 *	  with Lehman & Yao move-right, and to the ends of a level.  The scan
 *	  callbacks that use it live in fbtscan.c, the binary search within a
 *	  page in fbtcompare.c.
 *
 * Readers hold one page lock at a time: a page is released before its child
 * is locked, so a concurrent split of the child can move our key range to
 * the child's right sibling between the two.  The child's high key tells:
 * a key above it belongs further right, and the right-link leads there
 * (Lehman & Yao; nbtree README, "Lehman and Yao Algorithm").
 *
 * Internal pages are mostly read with no lock at all: searched
 * optimistically and validated by the page version, and reached through
 * the scan's lifetime pins or recent-buffer hints instead of a buffer
 * lookup.  README.design ("Locks and pins of every path", "Pins",
 * "Optimistic reads") states the rules and why they are safe.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lock.h"
#include "utils/rel.h"

#include "fastbtree.h"

/*
 * _fbt_freestack() -- free a descent stack.
 */
void
_fbt_freestack(FbtStack stack)
{
	while (stack != NULL)
	{
		FbtStack	parent = stack->fbts_parent;

		pfree(stack);
		stack = parent;
	}
}

/*
 * The page in buf (pinned and locked), reached from block fromblk through
 * a downlink or a right-link, must be on level: a damaged link to another
 * level would otherwise be followed with the wrong lock mode (writers
 * share-lock internal pages) or searched as the wrong kind of page; the
 * metapage is never a target.  ERRCODE_INDEX_CORRUPTED otherwise.
 */
static inline void
_fbt_check_level(Relation rel, Buffer buf, uint32 level, BlockNumber fromblk)
{
	FbtPageOpaque opaque = FbtPageGetOpaque(BufferGetPage(buf));

	if (unlikely(opaque->fbto_level != level ||
				 (opaque->fbto_flags & FBTP_META) ||
				 P_ISLEAF(opaque) != (level == 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a link from block %u to block %u, which is not a page of level %u",
						RelationGetRelationName(rel), fromblk,
						FbtBufferGetBlockNumber(buf), level),
				 errhint("Please REINDEX it.")));
}

/*
 * Where a descent stands: the page it is on, whether it holds that page's
 * content lock, whether the pin belongs to the scan's lifetime pins (then
 * it is not released here), and whether it is an atomic pin (apin, its
 * slot: fbtpin.c) or a buffer-manager pin (FBT_APIN_NONE).  atomic_ok:
 * internal pages may be pinned atomically (the descent never hands them to
 * code that expects a buffer-manager pin).  blkno: the block buf holds
 * (kept, not asked of the buffer header at every step).
 */
typedef struct FbtDescPos
{
	Buffer		buf;
	BlockNumber blkno;			/* the block in buf */
	bool		locked;
	bool		borrowed;
	bool		atomic_ok;
	bool		leaf_atomic;	/* leaves through _fbt_pinleaf() */
	int			apin;
} FbtDescPos;

/* Start pos on no page */
static inline void
_fbt_desc_init(FbtDescPos *pos, bool atomic_ok)
{
	pos->buf = InvalidBuffer;
	pos->locked = pos->borrowed = false;
	pos->atomic_ok = atomic_ok;
	pos->leaf_atomic = false;
	pos->apin = FBT_APIN_NONE;
}

/* Release the page of pos: unlock it if locked, unpin it unless borrowed */
static pg_attribute_always_inline void
_fbt_desc_release(FbtDescPos *pos)
{
	if (pos->locked)
		_fbt_lockpin(pos->buf, BUFFER_LOCK_UNLOCK, pos->apin);
	if (!pos->borrowed)
		_fbt_unpin(pos->buf, pos->apin);
	pos->buf = InvalidBuffer;
	pos->locked = pos->borrowed = false;
	pos->apin = FBT_APIN_NONE;
}

/*
 * Leave the page of pos for good: unlock it if locked, and release its pin,
 * taking it out of the scan's pins if it is one of them (a page that
 * failed the root check: pins hold internal pages only)
 */
static void
_fbt_desc_drop(FbtScanPins *pins, FbtDescPos *pos)
{
	if (pos->locked)
		_fbt_lockpin(pos->buf, BUFFER_LOCK_UNLOCK, pos->apin);
	_fbt_drop_pin(pins, pos->buf, pos->borrowed, pos->apin);
	pos->buf = InvalidBuffer;
	pos->locked = pos->borrowed = false;
	pos->apin = FBT_APIN_NONE;
}

/*
 * Put pos on the root, pinned and locked by _fbt_getroot() (access,
 * create: as there); pos->buf is InvalidBuffer for an empty index
 */
static void
_fbt_desc_getroot(Relation rel, int access, bool create, FbtScanPins *pins,
				  FbtDescPos *pos)
{
	pos->buf = _fbt_getroot(rel, access, create, pins, &pos->borrowed,
							pos->atomic_ok ? &pos->apin : NULL);
	pos->locked = BufferIsValid(pos->buf);
	if (pos->locked)
		pos->blkno = FbtBufferGetBlockNumber(pos->buf);
}

/* Lock the page of pos in mode access and run the per-visit checks */
static pg_attribute_always_inline void
_fbt_desc_lock(Relation rel, FbtDescPos *pos, int access, uint32 level,
			   BlockNumber fromblk)
{
	_fbt_lockpin(pos->buf, access, pos->apin);
	pos->locked = true;
	_fbt_checkpage(rel, pos->buf);
	if (fromblk != InvalidBlockNumber)
		_fbt_check_level(rel, pos->buf, level, fromblk);
	if (level > 0)
		_fbt_heal_version(pos->buf);
}

/*
 * Step from the page of pos to block blkno, which must be a page of level
 * level (a right sibling or a child of the page at fromblk).  The old page
 * is released first, then interrupts are checked (none can be serviced
 * under a content lock), then blkno is pinned (through the scan's pins
 * when it is an internal page) and, unless access is FBT_NOLOCK, locked in
 * mode access and checked.  With FBT_NOLOCK the caller reads the internal
 * page optimistically; its level is then checked from what that read
 * validates.
 */
#define FBT_NOLOCK	(-1)

static pg_attribute_always_inline void
_fbt_desc_goto(Relation rel, FbtScanPins *pins, FbtDescPos *pos,
			   BlockNumber blkno, uint32 level, int access,
			   BlockNumber fromblk)
{
	_fbt_desc_release(pos);
	CHECK_FOR_INTERRUPTS();
	if (level == 0 && pos->leaf_atomic)
	{
		pos->buf = _fbt_pinleaf(rel, blkno, &pos->apin);
		pos->borrowed = false;
#ifdef USE_ASSERT_CHECKING
		/* testing: hold the atomic leaf pin, no lock (t/020) */
		if (fbt_debug_stall_lock != 0 && fbt_debug_stall_level == 0 &&
			pos->apin != FBT_APIN_NONE)
			_fbt_debug_stall_at(fbt_debug_stall_lock);
#endif
	}
	else
		pos->buf = _fbt_pinbuf(rel, pins, blkno, level > 0, &pos->borrowed,
							   pos->atomic_ok ? &pos->apin : NULL);
	pos->blkno = blkno;
	if (access != FBT_NOLOCK)
		_fbt_desc_lock(rel, pos, access, level, fromblk);
}

#ifdef USE_ASSERT_CHECKING
int			fbt_debug_stall_lock = 0;
int			fbt_debug_stall_level = 1;

/*
 * Testing only (builds with assertions): stall an optimistic reader between
 * its two version reads, where it holds a pin and no lock, until the
 * advisory lock fastbtree.debug_stall_lock (the int8 key of
 * pg_advisory_lock()) can be had in share mode; a test holding it
 * exclusively meanwhile changes the page.  The wait shows as a lock wait,
 * which isolation tests detect.
 */
static void
_fbt_debug_stall(void)
{
	_fbt_debug_stall_at(fbt_debug_stall_lock);
}
#endif

/*
 * Search the internal page of pos (pinned, not locked) without its lock,
 * validating the answer with the page's version (README.design,
 * "Optimistic reads"): the version is read, must be even, the page is
 * searched (_fbt_search_inner_unlocked), the version is read again and the
 * answer used only if it is unchanged.  A version that moved is retried a
 * few times.  Returns true with *step filled in when validated and the
 * page is on level; false when the caller must take the share lock (the
 * version was odd, kept moving, or the bytes, unchanged, failed the bounds
 * checks, are of another level, need a locked comparison, or show a split
 * that the inserter (forupdate) must finish), with the reason counted in
 * fbt_stats.
 */
#define FBT_UNLOCKED_TRIES	3

static bool
_fbt_desc_unlocked(FbtScanInsert key, FbtDescPos *pos, uint32 level,
				   bool forupdate, FbtInnerStep *step)
{
	const char *page = (const char *) BufferGetPage(pos->buf);
	/* at the fixed place, whatever the (unlocked) pd_special says */
	const volatile uint32 *version = (const volatile uint32 *)
		(page + BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)) +
		 offsetof(FbtPageOpaqueData, fbto_version));
	int			tries;

	for (tries = 0; tries < FBT_UNLOCKED_TRIES; tries++)
	{
		uint32		v1 = *version;
		FbtUnlockedResult res;

		if (v1 & 1)
		{
			fbt_stats.opt_fallback_odd++;
			return false;
		}
		pg_read_barrier();
		res = _fbt_search_inner_unlocked(key, page, step);
#ifdef USE_ASSERT_CHECKING
		if (fbt_debug_stall_lock != 0 && step->level == fbt_debug_stall_level)
			_fbt_debug_stall();
#endif
		pg_read_barrier();
		if (*version != v1)
		{
			fbt_stats.opt_retried++;
			continue;
		}
		switch (res)
		{
			case FBT_UNLOCKED_OK:
				/* a page of another level is damage: the lock tells */
				if (step->level != level)
				{
					fbt_stats.opt_fallback_bounds++;
					return false;
				}
				/* only an inserter finishes a split, under the lock */
				if (forupdate && (step->flags & FBTP_INCOMPLETE_SPLIT))
				{
					fbt_stats.opt_fallback_unsupported++;
					return false;
				}
				fbt_stats.opt_validated++;
				return true;
			case FBT_UNLOCKED_BOUNDS:
				fbt_stats.opt_fallback_bounds++;
				return false;
			case FBT_UNLOCKED_UNSUPPORTED:
				fbt_stats.opt_fallback_unsupported++;
				return false;
		}
	}
	/* the retries counted each move; this counts the give-up */
	fbt_stats.opt_fallback_changed++;
	return false;
}

/*
 * Finish the incomplete split of the page of pos (pinned and locked in
 * mode access, on the level whose parents are in stack; never a scan pin:
 * only inserters get here), then read the same block again in mode access.
 * Only inserters finish splits: the downlink they add needs the parent
 * entries of the descent.
 */
static void
_fbt_finish_split_and_reread(Relation rel, FbtDescPos *pos, FbtStack stack,
							 int access)
{
	Buffer		buf = pos->buf;
	BlockNumber blkno = pos->blkno;

	Assert(!pos->borrowed);
	if (pos->apin != FBT_APIN_NONE)
	{
		/* _fbt_finish_split() needs a buffer-manager pin */
		_fbt_desc_release(pos);
		buf = _fbt_getbuf(rel, blkno, FBT_WRITE);
	}
	else if (access == FBT_READ)
	{
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBuffer(buf, FBT_WRITE);
	}
	/* somebody may have finished it while we had no lock */
	if (P_INCOMPLETE_SPLIT(FbtPageGetOpaque(BufferGetPage(buf))))
		_fbt_finish_split(rel, buf, stack);
	else
		UnlockReleaseBuffer(buf);
	pos->buf = _fbt_getbuf(rel, blkno, access);
	pos->blkno = blkno;
	pos->locked = true;
	pos->borrowed = false;
	pos->apin = FBT_APIN_NONE;
}

/* Push the parent entry (blkno, offnum) of a writer's descent */
static inline FbtStack
_fbt_push(FbtStack stack, BlockNumber blkno, OffsetNumber offnum)
{
	FbtStack	entry = palloc(sizeof(FbtStackData));

	entry->fbts_blkno = blkno;
	entry->fbts_offset = offnum;
	entry->fbts_parent = stack;
	return entry;
}

/*
 * _fbt_search() -- descend to the leaf page where key belongs.
 *
 * key: an insertion scankey (nextkey chooses first >= or first > key).
 * access: FBT_READ for scans, FBT_WRITE for inserts.  With FBT_WRITE an
 * empty index gets a root, incomplete splits met on the way are finished,
 * and the descent stack (parent block and downlink offset per level) is
 * returned; with FBT_READ the result is NULL.  pins: the scan's lifetime
 * pins (fbtscan.c), or NULL.
 *
 * leafoffP: if not NULL, *leafoffP is set to the binary-search position of
 * key on the leaf returned (first item >= key, or > key with nextkey;
 * possibly one past the last item).
 *
 * leafapin: NULL, or (FBT_READ only) where to return the atomic pin slot
 * of the leaf: its caller then may get the leaf pinned atomically through
 * a leaf hint (_fbt_pinleaf(); not in recovery), locks and releases it
 * only with _fbt_lockpin() and _fbt_unpin(), and hands it to no bufmgr
 * function (fbtpin.c's rules); *leafapin is FBT_APIN_NONE for a
 * buffer-manager pin.
 *
 * On return *bufP is the leaf, pinned (never one of pins) and locked in
 * mode access, or InvalidBuffer if the index is empty and access is
 * FBT_READ; nothing else is locked, and nothing else is pinned but pins.
 * Internal pages are read one at a time: without a lock when
 * fastbtree.optimistic_reads is on, recovery is not in progress and every
 * key column is a fixed-width machine comparison (validated by the page
 * version; README.design, "Optimistic reads"), else share-locked.  A
 * deleted or half-dead page met on any level (reached through a link read
 * before its deletion) is stepped over to its right sibling, which took
 * over its range (README.design, "Deleted internal pages and the lock-free
 * descent").  Raises ERRCODE_INDEX_CORRUPTED when a downlink or right-link
 * leads to a page of the wrong level.
 *
 * Move-right test (Lehman & Yao).  A page whose high key is < key (<= key
 * with nextkey) cannot hold key: a split moved that range right.  Where
 * the page is binary-searched anyway (internal pages, and the leaf when
 * the caller wants the position), the high key is compared only when the
 * search ends at the page's right edge: an item the search stops before
 * is >= key (> key), and no item exceeds the high key, so the key is
 * within the page.  A leaf the caller searches itself (inserts, which
 * search it again with other keys) gets the high-key comparison directly.
 */
FbtStack
_fbt_search(Relation rel, FbtScanInsert key, Buffer *bufP, int access,
			OffsetNumber *leafoffP, FbtScanPins *pins, int *leafapin)
{
	FbtStack	stack = NULL;
	bool		forupdate = (access == FBT_WRITE);
	int			cmpval = key->nextkey ? 0 : 1;
	bool		unlocked;
	bool		inrecovery;
	bool		refresh = false;
	FbtDescPos	pos;
	uint32		level = 0;
	BlockNumber fromblk;

	fbt_stats.descents++;
	_fbt_prepare_unlocked(rel, key);
	inrecovery = RecoveryInProgress();
	unlocked = key->unlocked_ok && fbt_optimistic_reads && !inrecovery;

	Assert(leafapin == NULL || access == FBT_READ);
	if (leafapin != NULL)
		*leafapin = FBT_APIN_NONE;

restart:
	_fbt_desc_init(&pos, true);
	pos.leaf_atomic = leafapin != NULL && access == FBT_READ && !inrecovery;
	fromblk = InvalidBlockNumber;
	if (unlocked)
	{
		FbtMetaPageData *metad = (rel->rd_amcache != NULL && !refresh) ?
			(FbtMetaPageData *) rel->rd_amcache : _fbt_getmeta(rel, refresh);

		/* an empty index and a root leaf take the locked path */
		if (metad->fbtm_root != P_NONE && metad->fbtm_level > 0)
		{
			level = metad->fbtm_level;
			pos.buf = _fbt_pinbuf(rel, pins, metad->fbtm_root, true,
								  &pos.borrowed, &pos.apin);
			pos.blkno = metad->fbtm_root;
		}
	}
	if (!BufferIsValid(pos.buf))
	{
		_fbt_desc_getroot(rel, access, forupdate, pins, &pos);
		if (!BufferIsValid(pos.buf))
		{
			*bufP = InvalidBuffer;
			return NULL;
		}
		level = FbtPageGetOpaque(BufferGetPage(pos.buf))->fbto_level;
	}

	for (;;)
	{
		Page		page;
		FbtPageOpaque opaque;
		OffsetNumber offnum;
		BlockNumber blkno;
		BlockNumber child;

		if (!pos.locked)
		{
			FbtInnerStep step;
			bool		ok = _fbt_desc_unlocked(key, &pos, level, forupdate,
												&step);

			if (ok && fromblk == InvalidBlockNumber &&
				!_fbt_root_ok(step.flags, step.level, step.prev, step.next,
							  level, refresh))
			{
				/* the cached root split or moved: read the metapage */
				_fbt_desc_drop(pins, &pos);
				if (refresh)
				{
					/* let the locked path (_fbt_getroot) sort it out */
					unlocked = false;
				}
				refresh = true;
				goto restart;
			}
			if (ok)
			{
				blkno = pos.blkno;
				if (step.moveright)
				{
					_fbt_desc_goto(rel, pins, &pos, step.next, level,
								   FBT_NOLOCK, blkno);
					fromblk = blkno;
					continue;
				}
				if (forupdate)
					stack = _fbt_push(stack, blkno, step.offnum);
				level--;
				_fbt_desc_goto(rel, pins, &pos, step.child, level,
							   level > 0 ? FBT_NOLOCK :
							   access, blkno);
				fromblk = blkno;
				continue;
			}

			/* take the share lock and do it the usual way */
			_fbt_desc_lock(rel, &pos, FBT_READ, level, fromblk);
			if (fromblk == InvalidBlockNumber)
			{
				opaque = FbtPageGetOpaque(BufferGetPage(pos.buf));
				if (!_fbt_root_ok(opaque->fbto_flags, opaque->fbto_level,
								  opaque->fbto_prev, opaque->fbto_next,
								  level, refresh))
				{
					/*
					 * As above; a root just named by the metapage may
					 * also have been deleted since, which _fbt_getroot()
					 * steps over
					 */
					_fbt_desc_drop(pins, &pos);
					if (refresh)
						unlocked = false;
					refresh = true;
					goto restart;
				}
			}
		}

		page = BufferGetPage(pos.buf);
		opaque = FbtPageGetOpaque(page);
		blkno = pos.blkno;

		if (P_IGNORE(opaque))
		{
			/* a deleted or half-dead page: its range went right */
			_fbt_ignored_page_not_rightmost(rel, blkno, opaque);
			_fbt_desc_goto(rel, pins, &pos, opaque->fbto_next, level,
						   level == 0 ? access :
						   unlocked ? FBT_NOLOCK : FBT_READ, blkno);
			fromblk = blkno;
			continue;
		}

		if (forupdate && P_INCOMPLETE_SPLIT(opaque))
		{
			_fbt_finish_split_and_reread(rel, &pos, stack,
										 level == 0 ? access : FBT_READ);
			continue;
		}

		if (level == 0 && leafoffP == NULL)
		{
			if (!P_RIGHTMOST(opaque) &&
				_fbt_compare(rel, key, pos.buf, P_HIKEY) >= cmpval)
			{
				_fbt_desc_goto(rel, pins, &pos, opaque->fbto_next, 0,
							   access, blkno);
				continue;
			}
			break;
		}

		if (level > 0)
			fbt_stats.locked_inner++;
		offnum = _fbt_binsrch(rel, key, pos.buf);
		if (!P_RIGHTMOST(opaque) &&
			(level == 0 ? offnum > PageGetMaxOffsetNumber(page) :
			 offnum >= PageGetMaxOffsetNumber(page)) &&
			_fbt_compare(rel, key, pos.buf, P_HIKEY) >= cmpval)
		{
			_fbt_desc_goto(rel, pins, &pos, opaque->fbto_next, level,
						   level == 0 ? access :
						   unlocked ? FBT_NOLOCK : FBT_READ, blkno);
			fromblk = blkno;
			continue;
		}
		if (level == 0)
		{
			*leafoffP = offnum;
			break;
		}

		child = FbtPivotGetDownLink(_fbt_getitem_header(rel, pos.buf,
														offnum));
		if (forupdate)
			stack = _fbt_push(stack, blkno, offnum);
		level--;
		_fbt_desc_goto(rel, pins, &pos, child, level,
					   level == 0 ? access :
					   unlocked ? FBT_NOLOCK : FBT_READ, blkno);
		fromblk = blkno;
	}
	Assert(pos.locked && !pos.borrowed);
	Assert(pos.apin == FBT_APIN_NONE || leafapin != NULL);
	*bufP = pos.buf;
	if (leafapin != NULL)
		*leafapin = pos.apin;
	return stack;
}

/*
 * _fbt_get_endpoint() -- the leftmost or rightmost page of a level.
 *
 * level: 0 for leaves.  pins: the scan's lifetime pins, or NULL.  Returns
 * the page pinned and share-locked (a leaf is never one of pins; a caller
 * asking for an internal level passes NULL), or InvalidBuffer if the index
 * is empty.  Internal pages on the way are share-locked one at a time;
 * deleted and half-dead pages on any level are stepped over.  Raises ERRCODE_INDEX_CORRUPTED if the tree has no such level or a link
 * leads to the wrong level.
 */
Buffer
_fbt_get_endpoint(Relation rel, uint32 level, bool rightmost,
				  FbtScanPins *pins)
{
	FbtDescPos	pos;
	bool		refresh = false;

	Assert(pins == NULL || level == 0);
	/* a page of an internal level returned must have a bufmgr pin */
	_fbt_desc_init(&pos, level == 0);
	_fbt_desc_getroot(rel, FBT_READ, false, pins, &pos);
	for (;;)
	{
		Page		page;
		FbtPageOpaque opaque;
		OffsetNumber offnum;
		BlockNumber blkno;
		uint32		curlevel;

		if (!BufferIsValid(pos.buf))
			return InvalidBuffer;
		page = BufferGetPage(pos.buf);
		opaque = FbtPageGetOpaque(page);
		curlevel = opaque->fbto_level;

		if (rightmost && !P_RIGHTMOST(opaque))
		{
			_fbt_desc_goto(rel, pins, &pos, opaque->fbto_next, curlevel,
						   FBT_READ, pos.blkno);
			continue;
		}

		if (P_IGNORE(opaque))
		{
			/* a deleted or half-dead page: step over it */
			_fbt_ignored_page_not_rightmost(rel, pos.blkno, opaque);
			_fbt_desc_goto(rel, pins, &pos, opaque->fbto_next, curlevel,
						   FBT_READ, pos.blkno);
			continue;
		}
		if (curlevel == level)
		{
			Assert(!pos.borrowed && pos.apin == FBT_APIN_NONE);
			return pos.buf;
		}
		if (curlevel < level)
		{
			/* the metapage was read before a root split: read it again */
			_fbt_desc_release(&pos);
			if (refresh)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" has no level %u",
								RelationGetRelationName(rel), level)));
			(void) _fbt_getmeta(rel, true);
			refresh = true;
			_fbt_desc_getroot(rel, FBT_READ, false, pins, &pos);
			continue;
		}

		offnum = rightmost ? PageGetMaxOffsetNumber(page) :
			P_FIRSTDATAKEY(opaque);
		blkno = pos.blkno;
		_fbt_desc_goto(rel, pins, &pos,
					   FbtPivotGetDownLink(_fbt_getitem(rel, pos.buf,
														offnum)),
					   curlevel - 1, FBT_READ, blkno);
	}
}
