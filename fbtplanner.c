/*-------------------------------------------------------------------------
 *
 * fbtplanner.c
 *	  The planner's view of fastbtree indexes: presented as btree indexes.
 *
 * Much of the planner recognises a B-tree by its access method OID or by
 * the OIDs of btree's operator families: unique indexes proving a join's
 * inner side unique (join removal, Inner Unique, semi-join reduction) match
 * btree families against a clause's merge opfamilies; LIKE prefixes, inet
 * subset operators and boolean columns become index ranges only for
 * btree's families; row comparisons, equivalence-class pruning of index
 * paths and the probe of an index's actual end values for selectivity ask
 * for BTREE_AM_OID.  fastbtree's operator families mirror btree's member
 * for member, so get_relation_info_hook (run by the planner at the end of
 * get_relation_info(), for every relation, once the relcache has loaded
 * this library) rewrites each fastbtree index's IndexOptInfo: btree's
 * equivalent family for every key column, and btree's AM OID.  That is a
 * faithful description of the index as long as every path the planner
 * then builds is one fastbtree executes, which the scan code sees to
 * (row comparisons, boolean, pattern and inet ranges are ordinary
 * inequality and equality keys of the mirrored families).  What the
 * executor reads from the catalog (the relcache's AM and families) is not
 * touched: it still builds scan keys from fastbtree's own families and
 * calls fastbtree's callbacks, which the IndexOptInfo carries as pointers.
 *
 * An index is rewritten only when every key column's family is mirrored:
 * the btree family the planner already found ordering that column
 * (IndexOptInfo.sortopfamily, from the family's "<" operator) must have
 * every operator of ours, with the same types and strategies, and ours a
 * comparison proc (support proc 1) for each of its operators' types, which
 * the scan keys of any qual the planner then builds need.  btree's family
 * may have more (an ALTER OPERATOR FAMILY ... USING btree ADD of a user's,
 * as PostgreSQL's own equivclass test does to integer_ops): the planner
 * could then match a qual whose operator fastbtree's family lacks, and
 * fastbtree cannot run it as a scan key, so fbtcostestimate() takes such
 * an IndexClause out of the path before pricing it
 * (_fbt_drop_foreign_indexclauses()): the qual stays a filter, as on an
 * index that had no such operator.  The answer is cached per (our family,
 * btree family) and forgotten whenever pg_amop or pg_amproc changes.
 * fastbtree.plan_as_btree = off leaves every IndexOptInfo as core built
 * it.
 *
 * Until PostgreSQL 17 the executor accepts a row comparison as an index
 * qual only from an index whose relcache entry says btree (nodeIndexscan.c,
 * "bogus RowCompare index qualification").  There, fbtcostestimate() turns
 * each row comparison the planner matched to a fastbtree index into the
 * range of its first column (">" relaxed to ">=", "<" to "<="), lossy, so
 * that the row comparison itself stays as a filter, before it prices the
 * path (_fbt_relax_rowcompares()).
 *
 * Since PostgreSQL 18 a unique fastbtree index serves as an INSERT ... ON
 * CONFLICT arbiter, but an inference clause that names an operator class,
 * ON CONFLICT (k, f text_pattern_ops), never matched it: parse analysis
 * looks the name up among btree's classes, and the planner's inference
 * (infer_arbiter_indexes()) compares that class's family with the index's
 * own.  planner_hook (_fbt_planner()) puts, in each such element, the
 * fastbtree class of the same name in its place when the table has a
 * unique fastbtree index with that class and no index with btree's, so
 * the same statement finds the same index as on a btree twin.  The hook
 * runs only once this library is loaded in the session (by any use of a
 * fastbtree index, or session_preload_libraries); README, "Differences".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/namespace.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "catalog/pg_opfamily.h"
#include "nodes/makefuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "optimizer/restrictinfo.h"
#include "utils/catcache.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "fastbtree.h"

bool		fbt_plan_as_btree = true;

/* GUC fastbtree.prefer: which of two twin indexes the planner may use */
typedef enum FbtPrefer
{
	FBT_PREFER_NONE,
	FBT_PREFER_BTREE,
	FBT_PREFER_FASTBTREE
} FbtPrefer;

static const struct config_enum_entry fbt_prefer_options[] = {
	{"none", FBT_PREFER_NONE, false},
	{"btree", FBT_PREFER_BTREE, false},
	{"fastbtree", FBT_PREFER_FASTBTREE, false},
	{NULL, 0, false}
};

static int	fbt_prefer = FBT_PREFER_NONE;

static get_relation_info_hook_type prev_get_relation_info_hook = NULL;

/*
 * The mirror cache: direct-mapped slots of (our family, btree family) ->
 * answer, valid while their generation is the current one.  A miss costs
 * two syscache list walks; a hit, for the planner of every statement that
 * touches a fastbtree index, a few instructions.
 */
#define FBT_MIRROR_SLOTS	64

typedef struct FbtFamilyMirror
{
	Oid			ourfamily;
	Oid			btfamily;
	uint64		generation;		/* valid while fbt_mirror_generation */
	bool		mirrors;
	bool		exact;			/* and btfamily has no operator more */
} FbtFamilyMirror;

static FbtFamilyMirror fbt_mirror_slots[FBT_MIRROR_SLOTS];
static uint64 fbt_mirror_generation = 1;

/* pg_amop or pg_amproc changed: every cached answer may be stale */
static void
_fbt_mirror_cache_inval(Datum arg, int cacheid, uint32 hashvalue)
{
	fbt_mirror_generation++;
}

/*
 * Does btree family btfamily hold every operator of our operator family
 * ourfamily (which has at least one), each under the same (left type,
 * right type, strategy), and ours a comparison proc for each operator's
 * types?  btfamily may hold more; *exact says it holds no more (the same
 * number of operators, ours mapping to distinct ones of its).  The member
 * lists come from the syscache.  No locks; errors only from the catalog
 * lookups.
 */
static bool
_fbt_family_mirrors_uncached(Oid ourfamily, Oid btfamily, bool *exact)
{
	CatCList   *ours;
	bool		mirrors;
	int			i;
	HeapTuple	famtup;
	Oid			btmethod;

	*exact = false;
	famtup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(btfamily));
	if (!HeapTupleIsValid(famtup))
		return false;
	btmethod = ((Form_pg_opfamily) GETSTRUCT(famtup))->opfmethod;
	ReleaseSysCache(famtup);
	if (btmethod != BTREE_AM_OID)
		return false;
	ours = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(ourfamily));
	mirrors = ours->n_members > 0;
	for (i = 0; mirrors && i < ours->n_members; i++)
	{
		Form_pg_amop amop = (Form_pg_amop) GETSTRUCT(&ours->members[i]->tuple);

		if (amop->amoppurpose != AMOP_SEARCH ||
			get_opfamily_member(btfamily, amop->amoplefttype,
								amop->amoprighttype, amop->amopstrategy) !=
			amop->amopopr ||
			!OidIsValid(get_opfamily_proc(ourfamily, amop->amoplefttype,
										  amop->amoprighttype,
										  FBTORDER_PROC)))
			mirrors = false;
	}
	if (mirrors)
	{
		CatCList   *theirs = SearchSysCacheList1(AMOPSTRATEGY,
												 ObjectIdGetDatum(btfamily));

		*exact = theirs->n_members == ours->n_members;
		ReleaseSysCacheList(theirs);
	}
	ReleaseSysCacheList(ours);
	return mirrors;
}

/* _fbt_family_mirrors_uncached(), remembered until pg_amop changes */
static bool
_fbt_family_mirrors(Oid ourfamily, Oid btfamily, bool *exact)
{
	FbtFamilyMirror *slot;
	uint64		generation = fbt_mirror_generation;
	bool		mirrors;

	slot = &fbt_mirror_slots[(ourfamily * 31 + btfamily) % FBT_MIRROR_SLOTS];
	if (slot->generation == generation && slot->ourfamily == ourfamily &&
		slot->btfamily == btfamily)
	{
		*exact = slot->exact;
		return slot->mirrors;
	}

	/* an invalidation during the lookups makes the answer unfit to keep */
	mirrors = _fbt_family_mirrors_uncached(ourfamily, btfamily, exact);
	if (fbt_mirror_generation == generation)
	{
		slot->ourfamily = ourfamily;
		slot->btfamily = btfamily;
		slot->mirrors = mirrors;
		slot->exact = *exact;
		slot->generation = generation;
	}
	return mirrors;
}

/*
 * Present one fastbtree index to the planner as btree, if every key
 * column's family has a btree mirror.  Where every one of those btree
 * families has no operator more than ours, no qual the planner can match
 * is foreign to the index, and its paths are priced by
 * fbtcostestimate_mirrored(), which does not look for such quals.
 */
static void
_fbt_plan_index_as_btree(IndexOptInfo *index)
{
	int			i;
	bool		allexact = true;

	/* plancat found no btree ordering for some column: not ours to map */
	if (index->sortopfamily == NULL)
		return;
	for (i = 0; i < index->nkeycolumns; i++)
	{
		bool		exact;

		if (!_fbt_family_mirrors(index->opfamily[i], index->sortopfamily[i],
								 &exact))
			return;
		allexact &= exact;
	}

	/* as plancat does for btree: one array serves both */
	index->opfamily = index->sortopfamily;
	index->relam = BTREE_AM_OID;
	if (allexact)
		index->amcostestimate = fbtcostestimate_mirrored;
}

/* Is index (as plancat built it) a fastbtree one? */
static inline bool
_fbt_index_is_ours(IndexOptInfo *index)
{
	return index->amcostestimate == fbtcostestimate ||
		index->amcostestimate == fbtcostestimate_mirrored;
}

/*
 * Are btree index bt and fastbtree index fbt of the same relation twins:
 * the same columns and expressions in the same order, INCLUDE columns,
 * predicate and uniqueness, and per key column the same input type,
 * collation, ordering (the btree family plancat found ordering ours, as
 * for bt, with DESC and NULLS FIRST alike)?  What the planner does not see
 * (fillfactor, deduplication, tablespace) does not matter here.  No
 * errors.
 */
static bool
_fbt_index_twins(IndexOptInfo *bt, IndexOptInfo *fbt)
{
	int			i;

	if (bt->ncolumns != fbt->ncolumns ||
		bt->nkeycolumns != fbt->nkeycolumns ||
		bt->unique != fbt->unique ||
		bt->sortopfamily == NULL || fbt->sortopfamily == NULL)
		return false;
	for (i = 0; i < bt->ncolumns; i++)
		if (bt->indexkeys[i] != fbt->indexkeys[i])
			return false;
	for (i = 0; i < bt->nkeycolumns; i++)
		if (bt->opcintype[i] != fbt->opcintype[i] ||
			bt->indexcollations[i] != fbt->indexcollations[i] ||
			bt->sortopfamily[i] != fbt->sortopfamily[i] ||
			bt->reverse_sort[i] != fbt->reverse_sort[i] ||
			bt->nulls_first[i] != fbt->nulls_first[i])
			return false;
	return equal(bt->indexprs, fbt->indexprs) &&
		equal(bt->indpred, fbt->indpred);
}

/*
 * fastbtree.prefer = btree or fastbtree: take out of rel's index list each
 * index of the other access method that has a twin of the preferred one
 * (_fbt_index_twins), so that a query can be planned on either side of a
 * pair (fastbtree_compare(), README "Side by side on your own queries").
 * Indexes without a twin stay.  No errors.
 */
static void
_fbt_apply_prefer(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);
		bool		ours = _fbt_index_is_ours(index);
		ListCell   *lc2;

		if (ours ? fbt_prefer != FBT_PREFER_BTREE :
			(index->relam != BTREE_AM_OID || fbt_prefer != FBT_PREFER_FASTBTREE))
			continue;
		foreach(lc2, rel->indexlist)
		{
			IndexOptInfo *other = (IndexOptInfo *) lfirst(lc2);

			if (ours ?
				(other->relam == BTREE_AM_OID && !_fbt_index_is_ours(other) &&
				 _fbt_index_twins(other, index)) :
				(_fbt_index_is_ours(other) && _fbt_index_twins(index, other)))
			{
				rel->indexlist = foreach_delete_current(rel->indexlist, lc);
				break;
			}
		}
	}
}

/*
 * get_relation_info_hook: after any earlier hook, drop the indexes
 * fastbtree.prefer sets aside, then rewrite the IndexOptInfo of each
 * fastbtree index of rel (recognised by its cost estimator, which is ours)
 * when fastbtree.plan_as_btree is on.  The relation and its
 * indexes are locked by the planner; no errors of its own.
 */
static void
_fbt_get_relation_info(PlannerInfo *root, Oid relationObjectId,
					   bool inhparent, RelOptInfo *rel)
{
	ListCell   *lc;

	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);
	if (fbt_prefer != FBT_PREFER_NONE)
		_fbt_apply_prefer(rel);
	if (!fbt_plan_as_btree)
		return;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);

		if (index->amcostestimate == fbtcostestimate &&
			index->relam != BTREE_AM_OID)
			_fbt_plan_index_as_btree(index);
	}
}

/* One IndexClause of _fbt_relax_rowcompares() */
static void
_fbt_relax_rowcompare(PlannerInfo *root, IndexOptInfo *index,
					  IndexClause *iclause)
{
	RestrictInfo *rinfo;
	RowCompareExpr *rc;
	int			strategy;
	Oid			lefttype;
	Oid			righttype;
	Oid			opno;
	Expr	   *op;

	if (list_length(iclause->indexquals) != 1)
		return;
	rinfo = linitial_node(RestrictInfo, iclause->indexquals);
	if (!IsA(rinfo->clause, RowCompareExpr))
		return;
	rc = (RowCompareExpr *) rinfo->clause;

	/* the planner put the index column on the left of every member */
	get_op_opfamily_properties(linitial_oid(rc->opnos),
							   index->opfamily[iclause->indexcol], false,
							   &strategy, &lefttype, &righttype);
	if (strategy == BTLessStrategyNumber)
		strategy = BTLessEqualStrategyNumber;
	else if (strategy == BTGreaterStrategyNumber)
		strategy = BTGreaterEqualStrategyNumber;
	opno = get_opfamily_member(index->opfamily[iclause->indexcol],
							   lefttype, righttype, strategy);
	if (!OidIsValid(opno))
		elog(ERROR, "missing operator %d(%u,%u) in opfamily %u",
			 strategy, lefttype, righttype,
			 index->opfamily[iclause->indexcol]);
	op = make_opclause(opno, BOOLOID, false,
					   copyObject(linitial(rc->largs)),
					   copyObject(linitial(rc->rargs)),
					   InvalidOid, linitial_oid(rc->inputcollids));
	iclause->indexquals = list_make1(make_simple_restrictinfo(root, op));
	iclause->indexcols = NIL;
	iclause->lossy = true;
}

/*
 * _fbt_relax_rowcompares() -- on PostgreSQL < 18 (see the file header),
 * replace each row comparison index qual of path, an index path on a
 * fastbtree index that the planner is building, with the lossy range of
 * the row's first column; the row comparison itself then stays as a
 * filter (createplan.c keeps the clause of a lossy IndexClause).  Called
 * by fbtcostestimate() before it prices the path, so that the cost is that
 * of the scan that runs, for every index path whoever builds it; the
 * IndexClauses may be shared with the index's other paths, which is
 * harmless: the change is the same for all and done once.  No locks.
 * Errors: a missing opfamily member (a broken operator class).
 */
void
_fbt_relax_rowcompares(PlannerInfo *root, IndexPath *path)
{
	ListCell   *lc;

	foreach(lc, path->indexclauses)
		_fbt_relax_rowcompare(root, path->indexinfo,
							  lfirst_node(IndexClause, lc));
}

/* Is every operator of indexqual rinfo, an index qual on column indexcol
 * (or the columns indexcols, for a row comparison), in irel's families? */
static bool
_fbt_qual_in_families(Relation irel, RestrictInfo *rinfo, int indexcol,
					  List *indexcols)
{
	Node	   *clause = (Node *) rinfo->clause;

	if (IsA(clause, OpExpr))
		return op_in_opfamily(((OpExpr *) clause)->opno,
							  irel->rd_opfamily[indexcol]);
	if (IsA(clause, ScalarArrayOpExpr))
		return op_in_opfamily(((ScalarArrayOpExpr *) clause)->opno,
							  irel->rd_opfamily[indexcol]);
	if (IsA(clause, RowCompareExpr))
	{
		RowCompareExpr *rc = (RowCompareExpr *) clause;
		ListCell   *lo;
		int			i = 0;

		foreach(lo, rc->opnos)
		{
			int			col = indexcols != NIL ?
				list_nth_int(indexcols, i) : indexcol;

			if (col < 0 || col >= IndexRelationGetNumberOfKeyAttributes(irel) ||
				!op_in_opfamily(lfirst_oid(lo), irel->rd_opfamily[col]))
				return false;
			i++;
		}
		return true;
	}
	/* IS NULL, IS NOT NULL: no operator */
	return true;
}

/*
 * _fbt_drop_foreign_indexclauses() -- take out of path, an index path on a
 * fastbtree index that the planner is building, every IndexClause with an
 * index qual whose operator is in the btree family the planner used
 * (fbtplanner.c presents the index with btree's families) but not in the
 * index's own family (see the file header).  Such a clause then stays a
 * filter of the scan (createplan.c filters with every restriction clause
 * not among the path's index clauses).  Called by fbtcostestimate() before
 * it prices the path; does nothing for an index the hook left alone.  The
 * path gets a list of its own; IndexClauses shared with other paths are not
 * changed.  The index is locked by the planner (opened with NoLock).  No
 * errors of its own.
 */
void
_fbt_drop_foreign_indexclauses(IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	Relation	irel;
	List	   *kept = NIL;
	bool		dropped = false;
	ListCell   *lc;

	if (index->relam != BTREE_AM_OID || index->hypothetical)
		return;
	irel = index_open(index->indexoid, NoLock);
	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		bool		ok = true;
		ListCell   *lq;

		foreach(lq, iclause->indexquals)
		{
			if (!_fbt_qual_in_families(irel, lfirst_node(RestrictInfo, lq),
									   iclause->indexcol, iclause->indexcols))
			{
				ok = false;
				break;
			}
		}
		if (ok)
			kept = lappend(kept, iclause);
		else
			dropped = true;
	}
	index_close(irel, NoLock);
	if (dropped)
		path->indexclauses = kept;
	else
		list_free(kept);
}

#if !FBT_CORE_UNIQUE_NEEDS_BTREE

static planner_hook_type prev_planner_hook = NULL;

/*
 * The fastbtree operator class standing for btree class btclass in an ON
 * CONFLICT inference element, or InvalidOid: same name and input type, in
 * btree's class's schema or else found through the search path (as the
 * class of a CREATE INDEX ... USING fastbtree naming it was).
 */
static Oid
_fbt_mirror_opclass(Oid btclass, Oid fbtam)
{
	HeapTuple	tup;
	Form_pg_opclass bt;
	Oid			result = InvalidOid;

	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(btclass));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	bt = (Form_pg_opclass) GETSTRUCT(tup);
	if (bt->opcmethod == BTREE_AM_OID)
	{
		HeapTuple	ours;

		ours = SearchSysCache3(CLAAMNAMENSP, ObjectIdGetDatum(fbtam),
							   NameGetDatum(&bt->opcname),
							   ObjectIdGetDatum(bt->opcnamespace));
		if (HeapTupleIsValid(ours))
		{
			result = ((Form_pg_opclass) GETSTRUCT(ours))->oid;
			ReleaseSysCache(ours);
		}
		else
			result = OpclassnameGetOpcid(fbtam, NameStr(bt->opcname));
		if (OidIsValid(result) && get_opclass_input_type(result) != bt->opcintype)
			result = InvalidOid;
	}
	ReleaseSysCache(tup);
	return result;
}

/* Does an index of indexoids have opclass among its columns' classes?
 * With unique_only, only unique indexes count. */
static bool
_fbt_some_index_has_opclass(List *indexoids, Oid opclass, bool unique_only)
{
	ListCell   *lc;

	foreach(lc, indexoids)
	{
		HeapTuple	tup;
		Form_pg_index idx;
		oidvector  *indclass;
		int			i;
		bool		found = false;

		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		if (!HeapTupleIsValid(tup))
			continue;
		idx = (Form_pg_index) GETSTRUCT(tup);
		if (!unique_only || idx->indisunique)
		{
			indclass = (oidvector *)
				DatumGetPointer(SysCacheGetAttrNotNull(INDEXRELID, tup,
													   Anum_pg_index_indclass));
			for (i = 0; i < idx->indnkeyatts && !found; i++)
				found = indclass->values[i] == opclass;
		}
		ReleaseSysCache(tup);
		if (found)
			return true;
	}
	return false;
}

/* The inference elements of query q, an INSERT ... ON CONFLICT (above) */
static void
_fbt_fix_inference(Query *q)
{
	RangeTblEntry *rte;
	Relation	rel;
	List	   *indexoids;
	Oid			fbtam = InvalidOid;
	ListCell   *lc;

	rte = rt_fetch(q->resultRelation, q->rtable);
	/* locked by parse analysis or AcquireRewriteLocks() */
	rel = table_open(rte->relid, NoLock);
	indexoids = RelationGetIndexList(rel);
	table_close(rel, NoLock);
	foreach(lc, q->onConflict->arbiterElems)
	{
		InferenceElem *elem = (InferenceElem *) lfirst(lc);
		Oid			ours;

		if (!IsA(elem, InferenceElem) || !OidIsValid(elem->inferopclass))
			continue;
		if (!OidIsValid(fbtam))
			fbtam = get_index_am_oid("fastbtree", false);
		ours = _fbt_mirror_opclass(elem->inferopclass, fbtam);
		if (OidIsValid(ours) &&
			!_fbt_some_index_has_opclass(indexoids, elem->inferopclass, false) &&
			_fbt_some_index_has_opclass(indexoids, ours, true))
			elem->inferopclass = ours;
	}
	list_free(indexoids);
}

/*
 * planner_hook: see the file header.  Looks at the statement and its WITH
 * queries (where a data-modifying statement may sit) for an INSERT ... ON
 * CONFLICT whose inference names an operator class, and fixes those
 * elements in place (the planner works on a copy of a cached query); then
 * plans through the hook installed before ours or standard_planner().
 * Errors: those of the planner.
 */
static PlannedStmt *
_fbt_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams)
{
	if (parse->commandType == CMD_INSERT && parse->onConflict != NULL &&
		parse->onConflict->arbiterElems != NIL)
		_fbt_fix_inference(parse);
	if (parse->hasModifyingCTE)
	{
		ListCell   *lc;

		foreach(lc, parse->cteList)
		{
			CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);
			Query	   *cq = (Query *) cte->ctequery;

			if (IsA(cq, Query) && cq->commandType == CMD_INSERT &&
				cq->onConflict != NULL && cq->onConflict->arbiterElems != NIL)
				_fbt_fix_inference(cq);
		}
	}
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions,
								 boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

#endif							/* !FBT_CORE_UNIQUE_NEEDS_BTREE */

/*
 * _fbt_planner_init() -- from _PG_init(): define fastbtree.plan_as_btree
 * and fastbtree.prefer,
 * install the get_relation_info and (since 18) planner hooks, chaining
 * those already installed, and the pg_amop and pg_amproc invalidation callbacks of the mirror cache.  No
 * errors.
 */
void
_fbt_planner_init(void)
{
	DefineCustomBoolVariable("fastbtree.plan_as_btree",
							 "Presents fastbtree indexes to the planner as the btree indexes they mirror.",
							 "Off: the planner treats fastbtree as a non-btree access method (no join removal through its unique indexes, no LIKE prefix, inet subset, boolean or row-comparison index conditions).",
							 &fbt_plan_as_btree,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("fastbtree.prefer",
							 "Which of two twin indexes, a btree and a fastbtree one on the same columns, the planner may use.",
							 "btree: fastbtree indexes that have a btree twin are ignored; fastbtree: btree indexes that have a fastbtree twin are; none: both are candidates.",
							 &fbt_prefer,
							 FBT_PREFER_NONE,
							 fbt_prefer_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = _fbt_get_relation_info;
#if !FBT_CORE_UNIQUE_NEEDS_BTREE
	prev_planner_hook = planner_hook;
	planner_hook = _fbt_planner;
#endif
	CacheRegisterSyscacheCallback(AMOPSTRATEGY, _fbt_mirror_cache_inval,
								  (Datum) 0);
	CacheRegisterSyscacheCallback(AMPROCNUM, _fbt_mirror_cache_inval,
								  (Datum) 0);
}
