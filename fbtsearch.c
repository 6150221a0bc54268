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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
						BufferGetBlockNumber(buf), level),
				 errhint("Please REINDEX it.")));
}

/*
 * Step from the page in buf (pinned and locked, not rightmost) to its right
 * sibling, locked in mode access; the sibling must be on the same level.
 */
static inline Buffer
_fbt_moveright_one(Relation rel, Buffer buf, int access)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(BufferGetPage(buf));
	uint32		level = opaque->fbto_level;

	buf = _fbt_relandgetbuf(rel, buf, opaque->fbto_next, access);
	_fbt_check_level(rel, buf, level, blkno);
	return buf;
}

/*
 * Finish the incomplete split of the page in buf (pinned and locked in mode
 * access, on the level whose parents are in stack), then read the same
 * block again in mode access.  Only inserters finish splits: the downlink
 * they add needs the parent entries of the descent.
 */
static Buffer
_fbt_finish_split_and_reread(Relation rel, Buffer buf, FbtStack stack,
							 int access)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);

	if (access == FBT_READ)
	{
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBuffer(buf, FBT_WRITE);
	}
	/* somebody may have finished it while we had no lock */
	if (P_INCOMPLETE_SPLIT(FbtPageGetOpaque(BufferGetPage(buf))))
		_fbt_finish_split(rel, buf, stack);
	else
		UnlockReleaseBuffer(buf);
	return _fbt_getbuf(rel, blkno, access);
}

/*
 * _fbt_search() -- descend to the leaf page where key belongs.
 *
 * key: an insertion scankey (nextkey chooses first >= or first > key).
 * access: FBT_READ for scans, FBT_WRITE for inserts.  With FBT_WRITE an
 * empty index gets a root, incomplete splits met on the way are finished,
 * and the descent stack (parent block and downlink offset per level) is
 * returned; with FBT_READ the result is NULL.
 *
 * leafoffP: if not NULL, *leafoffP is set to the binary-search position of
 * key on the leaf returned (first item >= key, or > key with nextkey;
 * possibly one past the last item).
 *
 * On return *bufP is the leaf, pinned and locked in mode access, or
 * InvalidBuffer if the index is empty and access is FBT_READ.  Internal
 * pages are share-locked one at a time.  Raises ERRCODE_INDEX_CORRUPTED
 * when a downlink leads to a page of the wrong level.
 *
 * Move-right test.  A page whose high key is < key (<= key with nextkey)
 * cannot hold key: a split moved that range right.  Where the page is
 * binary-searched anyway (internal pages, and the leaf when the caller
 * wants the position), the high key is compared only when the search
 * ends at the page's right edge: an item the search stops before is
 * >= key (> key), and no item exceeds the high key, so the key is within
 * the page.  A leaf the caller searches itself (inserts, which search it
 * again with other keys) gets the high-key comparison directly.
 */
FbtStack
_fbt_search(Relation rel, FbtScanInsert key, Buffer *bufP, int access,
			OffsetNumber *leafoffP)
{
	FbtStack	stack = NULL;
	bool		forupdate = (access == FBT_WRITE);
	int			cmpval = key->nextkey ? 0 : 1;
	int			curaccess;

	*bufP = _fbt_getroot(rel, access, forupdate);
	if (!BufferIsValid(*bufP))
		return NULL;
	curaccess = P_ISLEAF(FbtPageGetOpaque(BufferGetPage(*bufP))) ?
		access : FBT_READ;

	for (;;)
	{
		Page		page = BufferGetPage(*bufP);
		FbtPageOpaque opaque = FbtPageGetOpaque(page);
		bool		isleaf = P_ISLEAF(opaque);
		OffsetNumber offnum;
		BlockNumber parentblk;
		BlockNumber child;
		uint32		level;

		if (forupdate && P_INCOMPLETE_SPLIT(opaque))
		{
			*bufP = _fbt_finish_split_and_reread(rel, *bufP, stack,
												 curaccess);
			continue;
		}

		if (isleaf && leafoffP == NULL)
		{
			if (!P_RIGHTMOST(opaque) &&
				_fbt_compare(rel, key, *bufP, P_HIKEY) >= cmpval)
			{
				*bufP = _fbt_moveright_one(rel, *bufP, curaccess);
				continue;
			}
			break;
		}

		offnum = _fbt_binsrch(rel, key, *bufP);
		if (!P_RIGHTMOST(opaque) &&
			(isleaf ? offnum > PageGetMaxOffsetNumber(page) :
			 offnum >= PageGetMaxOffsetNumber(page)) &&
			_fbt_compare(rel, key, *bufP, P_HIKEY) >= cmpval)
		{
			*bufP = _fbt_moveright_one(rel, *bufP, curaccess);
			continue;
		}
		if (isleaf)
		{
			*leafoffP = offnum;
			break;
		}

		child = FbtPivotGetDownLink(_fbt_getitem_header(rel, *bufP, offnum));
		parentblk = BufferGetBlockNumber(*bufP);
		level = opaque->fbto_level;

		if (forupdate)
		{
			FbtStack	entry = palloc(sizeof(FbtStackData));

			entry->fbts_blkno = parentblk;
			entry->fbts_offset = offnum;
			entry->fbts_parent = stack;
			stack = entry;
		}

		curaccess = (level == 1) ? access : FBT_READ;
		*bufP = _fbt_relandgetbuf(rel, *bufP, child, curaccess);
		_fbt_check_level(rel, *bufP, level - 1, parentblk);
	}
	return stack;
}

/*
 * _fbt_get_endpoint() -- the leftmost or rightmost page of a level.
 *
 * level: 0 for leaves.  Returns the page pinned and share-locked, or
 * InvalidBuffer if the index is empty.  Raises ERRCODE_INDEX_CORRUPTED if
 * the tree has no such level or a downlink leads to the wrong level.
 */
Buffer
_fbt_get_endpoint(Relation rel, uint32 level, bool rightmost)
{
	Buffer		buf;
	bool		refreshed = false;

	buf = _fbt_getroot(rel, FBT_READ, false);
	for (;;)
	{
		Page		page;
		FbtPageOpaque opaque;
		OffsetNumber offnum;
		BlockNumber blkno;
		uint32		curlevel;

		if (!BufferIsValid(buf))
			return InvalidBuffer;
		page = BufferGetPage(buf);
		opaque = FbtPageGetOpaque(page);

		while (rightmost && !P_RIGHTMOST(opaque))
		{
			buf = _fbt_moveright_one(rel, buf, FBT_READ);
			page = BufferGetPage(buf);
			opaque = FbtPageGetOpaque(page);
		}

		curlevel = opaque->fbto_level;
		if (curlevel == level)
			return buf;
		if (curlevel < level)
		{
			/* the metapage was read before a root split: read it again */
			UnlockReleaseBuffer(buf);
			if (refreshed)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" has no level %u",
								RelationGetRelationName(rel), level)));
			(void) _fbt_getmeta(rel, true);
			refreshed = true;
			buf = _fbt_getroot(rel, FBT_READ, false);
			continue;
		}

		offnum = rightmost ? PageGetMaxOffsetNumber(page) :
			P_FIRSTDATAKEY(opaque);
		blkno = BufferGetBlockNumber(buf);
		buf = _fbt_relandgetbuf(rel, buf,
								FbtPivotGetDownLink(_fbt_getitem(rel, buf,
																 offnum)),
								FBT_READ);
		_fbt_check_level(rel, buf, curlevel - 1, blkno);
	}
}
