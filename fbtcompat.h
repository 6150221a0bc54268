/*-------------------------------------------------------------------------
 *
 * fbtcompat.h
 *	  The seams between the PostgreSQL majors fastbtree builds against
 *	  (15, 18): every PG_VERSION_NUM test of the source tree is here, as a
 *	  macro or an inline function named for what it does, so that the
 *	  modules read the same on every major.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FBTCOMPAT_H
#define FBTCOMPAT_H

#include "access/genam.h"
#include "commands/vacuum.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"

/*
 * The physical identity of a relation, as ReadRecentBuffer() takes it:
 * RelFileNode rd_node until 15, RelFileLocator rd_locator since 16.
 */
#if PG_VERSION_NUM >= 160000
#define FbtRelFileId(rel)	((rel)->rd_locator)
#else
#define FbtRelFileId(rel)	((rel)->rd_node)
#endif

/*
 * A function that never returns: pg_attribute_noreturn() until 17,
 * pg_noreturn (placed first, as C11's _Noreturn) since 18.
 */
#if PG_VERSION_NUM >= 180000
#define FBT_NORETURN	pg_noreturn
#else
#define FBT_NORETURN	pg_attribute_noreturn()
#endif

/* vacuum_delay_point() says whether it is called by ANALYZE since 18 */
#if PG_VERSION_NUM >= 180000
#define fbt_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define fbt_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * index_beginscan() takes the caller's scan instrumentation since 18; the
 * probe benchmark has none.
 */
#if PG_VERSION_NUM >= 180000
#define fbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
#else
#define fbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

/*
 * Whether collation coll (valid) orders text byte by byte, as "C" and
 * "POSIX" do: lc_collate_is_c() until 16; since 17, the collation's
 * pg_locale_t says it (lc_collate_is_c() is gone).
 */
static inline bool
fbt_collation_is_c(Oid coll)
{
#if PG_VERSION_NUM >= 170000
	return pg_newlocale_from_collation(coll)->collate_is_c;
#else
	return lc_collate_is_c(coll);
#endif
}

/*
 * Access-method callbacks and flags that exist only on some majors, set by
 * fbthandler().  Since 18 the planner learns an ordered AM's sort order by
 * translating its strategy numbers (without it, every fastbtree index has
 * no sort order: no ORDER BY, merge joins or correlation estimate, and
 * btcostestimate() dereferences the missing reverse_sort array); ours are
 * btree's, so btree's own translation functions serve.  18 also asks the
 * AM for its tree height (fbtgettreeheight()) and whether equality and
 * ordering are consistent within an opfamily, as btree's are.
 */
#if PG_VERSION_NUM >= 180000
#include "access/cmptype.h"
extern CompareType bttranslatestrategy(StrategyNumber strategy, Oid opfamily);
extern StrategyNumber bttranslatecmptype(CompareType cmptype, Oid opfamily);
#define FBT_SET_VERSION_CALLBACKS(amroutine) \
	do { \
		(amroutine)->amconsistentequality = true; \
		(amroutine)->amconsistentordering = true; \
		(amroutine)->amtranslatestrategy = bttranslatestrategy; \
		(amroutine)->amtranslatecmptype = bttranslatecmptype; \
		(amroutine)->amgettreeheight = fbtgettreeheight; \
	} while (0)
#else
#define FBT_SET_VERSION_CALLBACKS(amroutine)	((void) 0)
#endif

#endif							/* FBTCOMPAT_H */
