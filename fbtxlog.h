/*-------------------------------------------------------------------------
 *
 * fbtxlog.h
 *	  fastbtree's own WAL records, logged in compact mode (the library in
 *	  shared_preload_libraries): the resource manager's ID, the record
 *	  kinds and their layouts.  In generic mode (no preload) every change
 *	  is a generic WAL record instead (fbtpage.c), and none of these is
 *	  ever written.
 *
 *	  The layouts follow nbtree's (access/nbtxlog.h): a small fixed
 *	  struct as the record's main data, the pages as registered blocks,
 *	  tuples as block data.  Redo (fbtxlog.c) applies the same page-edit
 *	  functions the primary ran.
 *
 *	  Once WAL holding these records exists, neither the ID nor a layout
 *	  may change: a server replaying older WAL would misread it.  A
 *	  layout may only grow, with redo still reading the older form (as
 *	  xl_fbt_split did); a standby must then run the new build before its
 *	  primary does, as for core's WAL changes in a minor release.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FBTXLOG_H
#define FBTXLOG_H

#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "storage/off.h"

#include "fbtcompat.h"

/*
 * The resource manager ID: 251 = 0xFB.  Custom IDs are 128-255; 128 is for
 * development only, and the PostgreSQL wiki's registry
 * (wiki.postgresql.org/wiki/CustomWALResourceManagers) listed 129-139 and
 * 241 as taken when this was chosen.  It must be reserved there before a
 * release; two extensions with the same ID cannot be preloaded together
 * (RegisterCustomRmgr() refuses the second).
 */
#define FBT_RMGR_ID			251
#define FBT_RMGR_NAME		"fastbtree"

/*
 * Record kinds, in the high four bits of xl_info (the low four are
 * XLogInsert()'s).
 */
#define XLOG_FBT_INSERT_LEAF	0x00	/* add a tuple to a leaf */
#define XLOG_FBT_INSERT_UPPER	0x10	/* add a downlink to an internal page,
										 * completing a child's split */
#define XLOG_FBT_INSERT_POST	0x20	/* add a tuple to a leaf, splitting a
										 * posting list */
#define XLOG_FBT_SPLIT_L		0x30	/* page split, new tuple on the left */
#define XLOG_FBT_SPLIT_R		0x40	/* page split, new tuple on the right */
#define XLOG_FBT_DEDUP			0x50	/* deduplication pass on a leaf */
#define XLOG_FBT_NEWROOT		0x60	/* a new root, and the metapage */
#define XLOG_FBT_VACUUM			0x70	/* VACUUM removes entries from a leaf */
#define XLOG_FBT_DELETE			0x80	/* dead entries removed from a full
										 * leaf before a split */
#define XLOG_FBT_MARK_HALFDEAD	0x90	/* page deletion, step 1 */
#define XLOG_FBT_UNLINK			0xA0	/* page deletion, step 2 */
#define XLOG_FBT_REUSE_PAGE		0xB0	/* a deleted page is about to be
										 * reused: conflict only */
#define XLOG_FBT_META			0xC0	/* the metapage's VACUUM fields */

/*
 * XLOG_FBT_INSERT_*: main data xl_fbt_insert, without postingoff except in
 * INSERT_POST (SizeOfFbtInsert: 2 bytes, as nbtree's xl_btree_insert, so a
 * leaf insert record of an int4 key is as long as btree's); block 0 the page the tuple
 * goes to, its block data the tuple (for INSERT_POST the new tuple as the
 * inserter formed it, before the posting list split swapped its heap TID);
 * INSERT_UPPER has block 1, the child whose FBTP_INCOMPLETE_SPLIT the
 * downlink clears.
 */
typedef struct xl_fbt_insert
{
	OffsetNumber offnum;		/* where the tuple goes */
	uint16		postingoff;		/* INSERT_POST: the position of the new
								 * TID in the posting list at offnum - 1;
								 * 0 otherwise */
} xl_fbt_insert;

#define SizeOfFbtInsert		offsetof(xl_fbt_insert, postingoff)
#define SizeOfFbtInsertPost	(offsetof(xl_fbt_insert, postingoff) + sizeof(uint16))

/*
 * XLOG_FBT_SPLIT_L / _R: main data xl_fbt_split.  Block 0 is the page that
 * split, which keeps the left half; its block data is the new tuple (as
 * the inserter formed it, before any posting list split) followed by the
 * left page's new high key.  Redo rebuilds the left page from the page as
 * it was, as the primary did (_fbt_split_items(), _fbt_split_fill_left()).
 * Block 1 is the new right page, REGBUF_WILL_INIT: its block data is the
 * page's tuple area, pd_upper to the special space, as nbtree logs it
 * (each tuple takes MAXALIGN(IndexTupleSize()) bytes, the last item
 * first); redo adds them back in item order to a page of level and
 * rightflags, linked to blocks 0 and 2.  Should a right-page item's line
 * pointer length differ from that size, the page goes as a full image
 * instead (never seen: every tuple fastbtree stores has a MAXALIGN'd
 * size).  Block 2, when the page had a right sibling, is that sibling,
 * whose left-link becomes block 1; block 3, when the split page is
 * internal and this insertion completes a child's split, is that child
 * (FBTP_INCOMPLETE_SPLIT cleared).
 */
typedef struct xl_fbt_split
{
	uint32		level;			/* the split page's level */
	uint16		firstright;		/* how many of the page's data items,
								 * the new tuple counted, stay left */
	OffsetNumber newitemoff;	/* where the new tuple went among the
								 * page's items (before the item there) */
	uint16		postingoff;		/* as in xl_fbt_insert; the posting list
								 * is at newitemoff - 1 */
	uint16		rightflags;		/* the new right page's fbto_flags */
} xl_fbt_split;
#define SizeOfFbtSplit		(offsetof(xl_fbt_split, rightflags) + sizeof(uint16))
/*
 * Split records of builds before the right page was logged as tuples end
 * before rightflags, and always carry the right page as an image; redo
 * still replays them.
 */
#define SizeOfFbtSplitImage	offsetof(xl_fbt_split, rightflags)

/*
 * XLOG_FBT_DEDUP: main data xl_fbt_dedup; block 0 the leaf, its block data
 * the FbtDedupInterval array (fastbtree.h) of the runs merged, which redo
 * merges again with the primary's function (_fbt_dedup_apply()).
 */
typedef struct xl_fbt_dedup
{
	uint16		nintervals;
} xl_fbt_dedup;

#define SizeOfFbtDedup		(offsetof(xl_fbt_dedup, nintervals) + sizeof(uint16))

/*
 * XLOG_FBT_NEWROOT: main data xl_fbt_newroot.  Block 0 is the new root,
 * block 1 the metapage pointing to it, both logged as full images (a new
 * root holds two downlinks, or nothing when it is the first leaf, and the
 * metapage's data is a few dozen bytes: their images, hole removed, are
 * about nbtree's record size).  Block 2, when the root split, is the old
 * root (now the new root's left child), whose FBTP_INCOMPLETE_SPLIT is
 * cleared.
 */
typedef struct xl_fbt_newroot
{
	uint32		level;			/* the new root's level */
} xl_fbt_newroot;

#define SizeOfFbtNewroot	(offsetof(xl_fbt_newroot, level) + sizeof(uint32))

/*
 * XLOG_FBT_VACUUM / XLOG_FBT_DELETE: main data xl_fbt_delete; block 0 the
 * leaf.  Its block data: ndeleted offsets (OffsetNumber, ascending) of the
 * entries removed, then nupdated offsets of the posting lists that lose
 * some of their TIDs, then for each of those an xl_fbt_update: the count
 * and the positions (uint16, ascending) of the TIDs it loses.  Redo forms
 * each new posting list from the one on its page (_fbt_posting_remove())
 * and applies the primary's edit (_fbt_delete_items_apply()), as nbtree's
 * xl_btree_vacuum / xl_btree_delete.  VACUUM's redo takes a cleanup lock
 * on the leaf; DELETE's first resolves the conflict with standby queries
 * whose snapshots may see heap tuples up to horizon.
 */
typedef struct xl_fbt_delete
{
	TransactionId horizon;		/* DELETE: the snapshot-conflict horizon
								 * (InvalidTransactionId: none); VACUUM:
								 * InvalidTransactionId */
	uint16		ndeleted;
	uint16		nupdated;
	bool		isCatalogRel;	/* DELETE on 16+: the table is one logical
								 * decoding reads (conflicts with logical
								 * slots on a standby) */
} xl_fbt_delete;

#define SizeOfFbtDelete		(offsetof(xl_fbt_delete, isCatalogRel) + sizeof(bool))

typedef struct xl_fbt_update
{
	uint16		ndeletedtids;
	uint16		ptids[FLEXIBLE_ARRAY_MEMBER];
} xl_fbt_update;

#define SizeOfFbtUpdate		offsetof(xl_fbt_update, ptids)

/*
 * XLOG_FBT_MARK_HALFDEAD: main data xl_fbt_mark_halfdead.  Block 0 is the
 * empty leaf, which becomes half-dead and records topparent; block 1 the
 * subtree's parent, whose downlink at poff (to the subtree's top page)
 * takes over the right sibling's at poff + 1, which goes, so that the
 * subtree's key range passes to rightsib (fbtpagedel.c,
 * _fbt_halfdead_apply_parent() / _leaf()).
 */
typedef struct xl_fbt_mark_halfdead
{
	OffsetNumber poff;			/* the subtree's downlink in the parent */
	BlockNumber topparent;		/* the subtree's top internal page, or
								 * InvalidBlockNumber when it is the leaf */
	BlockNumber rightsib;		/* the top page's right sibling */
} xl_fbt_mark_halfdead;

#define SizeOfFbtMarkHalfdead	(offsetof(xl_fbt_mark_halfdead, rightsib) + sizeof(BlockNumber))

/*
 * XLOG_FBT_UNLINK: main data xl_fbt_unlink.  Block 0 is the page unlinked,
 * initialized by redo as a deleted page (_fbt_deleted_page_init()) that
 * keeps its siblings and safexid; block 1, when it had one, the left
 * sibling, whose right-link becomes rightsib; block 2 the right sibling,
 * whose left-link becomes leftsib; block 3, when the page unlinked is an
 * internal page above a half-dead leaf, that leaf, whose top-parent link
 * moves down to leaftopparent.
 */
typedef struct xl_fbt_unlink
{
	BlockNumber leftsib;		/* P_NONE when the page was leftmost */
	BlockNumber rightsib;
	uint32		level;			/* the page's level */
	FullTransactionId safexid;	/* recyclable once every snapshot passed
								 * it */
	BlockNumber leaftopparent;	/* block 3's new top-parent link */
} xl_fbt_unlink;

#define SizeOfFbtUnlink		(offsetof(xl_fbt_unlink, leaftopparent) + sizeof(BlockNumber))

/*
 * XLOG_FBT_REUSE_PAGE: main data xl_fbt_reuse_page, no block.  Logged
 * before a deleted page is reused by a split; redo changes no page and
 * only resolves the conflict with standby queries that may still reach
 * the page through links read before its deletion (its safexid), as
 * nbtree's XLOG_BTREE_REUSE_PAGE.
 */
typedef struct xl_fbt_reuse_page
{
	FbtRelFileIdData locator;	/* the index */
	BlockNumber block;
	FullTransactionId safexid;
	bool		isCatalogRel;	/* as in xl_fbt_delete */
} xl_fbt_reuse_page;

#define SizeOfFbtReusePage	(offsetof(xl_fbt_reuse_page, isCatalogRel) + sizeof(bool))

/*
 * XLOG_FBT_META: no main data; block 0 the metapage, as a full image (its
 * data is a few dozen bytes).  Logged when a VACUUM pass starts (a new
 * cycle id in fbtm_vacuum_cycle) and ends (fbtm_num_delpages recorded):
 * _fbt_start_vacuum(), _fbt_end_vacuum().
 */

/* fbtxlog.c */
extern bool fbt_wal_compact;
extern void _fbt_xlog_init(void);
extern void fbt_redo(XLogReaderState *record);
extern void fbt_desc(StringInfo buf, XLogReaderState *record);
extern const char *fbt_identify(uint8 info);
extern void fbt_xlog_startup(void);
extern void fbt_xlog_cleanup(void);
extern void fbt_mask(char *pagedata, BlockNumber blkno);

#endif							/* FBTXLOG_H */
