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
 *	  may change: a server replaying older WAL would misread it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FBTXLOG_H
#define FBTXLOG_H

#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "storage/off.h"

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

/*
 * XLOG_FBT_INSERT_*: main data xl_fbt_insert; block 0 the page the tuple
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

#define SizeOfFbtInsert		(offsetof(xl_fbt_insert, postingoff) + sizeof(uint16))

/*
 * XLOG_FBT_SPLIT_L / _R: main data xl_fbt_split.  Block 0 is the page that
 * split, which keeps the left half; its block data is the new tuple (as
 * the inserter formed it, before any posting list split) followed by the
 * left page's new high key.  Redo rebuilds the left page from the page as
 * it was, as the primary did (_fbt_split_items(), _fbt_split_fill_left()).
 * Block 1 is the new right page, logged as a full image.  Block 2, when
 * the page had a right sibling, is that sibling, whose left-link becomes
 * block 1; block 3, when the split page is internal and this insertion
 * completes a child's split, is that child (FBTP_INCOMPLETE_SPLIT
 * cleared).
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
} xl_fbt_split;

#define SizeOfFbtSplit		(offsetof(xl_fbt_split, postingoff) + sizeof(uint16))

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
