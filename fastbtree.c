/*-------------------------------------------------------------------------
 *
 * fastbtree.c
 *	  Access method handler for fastbtree, and the callbacks that need no
 *	  module of their own: reloptions, properties, build phase names, cost
 *	  estimation and index-only scan support.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>


#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "fastbtree.h"
#include "fbtxlog.h"

PG_MODULE_MAGIC;

static relopt_kind fbt_relopt_kind;

PGDLLEXPORT void _PG_init(void);

#ifndef FBT_BUILD_ID
#define FBT_BUILD_ID "unnamed"
#endif

/* fastbtree.build_id and fastbtree.expect_build_id (scripts/test.sh) */
static char *fbt_build_id = NULL;
static char *fbt_expect_build_id = NULL;

/*
 * _PG_init() -- register fastbtree's reloptions and GUCs when the library
 * loads.  Warns (no error: the library works) when fastbtree.expect_build_id
 * is set and is not this library's build id (scripts/test.sh).
 */
void
_PG_init(void)
{
	fbt_relopt_kind = add_reloption_kind();
	add_int_reloption(fbt_relopt_kind, "fillfactor",
					  "Packs fastbtree index pages only to this percentage",
					  FBT_DEFAULT_FILLFACTOR, FBT_MIN_FILLFACTOR, 100,
					  ShareUpdateExclusiveLock);
	add_real_reloption(fbt_relopt_kind, "vacuum_cleanup_index_scale_factor",
					   "Accepted as btree accepts it; has no effect (btree ignores it since PostgreSQL 14)",
					   -1, 0.0, 1e10, ShareUpdateExclusiveLock);
	_fbt_xlog_init();
	add_bool_reloption(fbt_relopt_kind, "deduplicate_items",
					   "Enables \"deduplicate items\" feature for this fastbtree index",
					   true, ShareUpdateExclusiveLock);

	DefineCustomBoolVariable("fastbtree.fast_compare",
							 "Compares keys of common fixed-width types and \"C\"-collated text as machine values.",
							 "Off: every comparison calls the operator class's support function, as btree does.",
							 &fbt_fast_compare,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomStringVariable("fastbtree.build_id",
							   "The build id of the loaded fastbtree library (make FBT_BUILD_ID=...).",
							   "scripts/test.sh names each build it tests, and checks this against it.",
							   &fbt_build_id,
							   FBT_BUILD_ID,
							   PGC_INTERNAL,
							   GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
							   NULL, NULL, NULL);
	DefineCustomStringVariable("fastbtree.expect_build_id",
							   "Testing: the build id the tests expect; a library of another build warns when it loads.",
							   "Empty (the default): no check.",
							   &fbt_expect_build_id,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);
	if (fbt_expect_build_id[0] != '\0' &&
		strcmp(fbt_expect_build_id, FBT_BUILD_ID) != 0)
		ereport(WARNING,
				(errmsg("fastbtree library of build \"%s\" loaded, but fastbtree.expect_build_id is \"%s\"",
						FBT_BUILD_ID, fbt_expect_build_id),
				 errdetail("Another build of fastbtree was installed over the one under test."),
				 errhint("Run the tests again when nothing else installs fastbtree.")));
	DefineCustomBoolVariable("fastbtree.recent_buffers",
							 "Pins internal pages through the buffer each was last found in, without a buffer-mapping lookup.",
							 "Off: every page is pinned through ReadBuffer(), as btree does.",
							 &fbt_recent_buffers,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.scan_pins",
							 "Keeps the internal pages an index scan visits pinned until the scan ends, for its rescans.",
							 "Off: every descent pins and unpins each page, as btree does.",
							 &fbt_scan_pins,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.optimistic_reads",
							 "Searches internal pages without their content lock, validated by the page version.",
							 "Off: every internal page is share-locked while it is searched, as btree does.",
							 &fbt_optimistic_reads,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.prefetch",
							 "Index scans prefetch the heap blocks of the rows they are about to return, up to effective_io_concurrency ahead.",
							 "Off: each heap block is read when the executor fetches its row, as with btree.  Takes effect at the next scan.",
							 &fbt_prefetch,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.prefetch_read_ahead",
							 "Prefetching index scans read the next leaf ahead when the prefetch distance reaches past the current one.",
							 "Off (the default): the heap blocks of a leaf's matches are prefetched once the scan has read the leaf.  Measured slower on the project's test machine (README.md, \"Heap prefetch\").",
							 &fbt_prefetch_read_ahead,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.skip_scan",
							 "Skip scan and array advancement: scans with = ANY(array) keys run in one pass along the leaves, and skip over the values of a column without an equality key that comes before a column with one.",
							 "Off: one descent per = ANY element combination, and a column without an equality key bounds the range read, later keys being tested on each tuple (PostgreSQL 15's btree).  Takes effect at the next rescan.",
							 &fbt_skip_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.atomic_pins",
							 "Pins hinted internal pages with one atomic operation on the buffer header, without its spinlock.",
							 "Off: hinted pages are pinned through ReadRecentBuffer(), which takes the buffer header's spinlock for a buffer the backend has not pinned (before PostgreSQL 19). Has no effect without fastbtree.recent_buffers, or on PostgreSQL 19 and later.",
							 &fbt_atomic_pins,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
#ifdef USE_ASSERT_CHECKING
	DefineCustomIntVariable("fastbtree.debug_prefetch_cached_us",
							"Testing only: a heap prefetch that misses shared buffers and takes less than this many microseconds counts as a hit (the block was in the kernel's page cache).",
							"0 counts every miss as a read.  Exists only in builds with assertions.",
							&fbt_debug_prefetch_cached_us,
							4, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_lock",
							"Testing only: optimistic readers take and release this advisory lock between their two version reads.",
							"0 (the default) disables the stall.  Exists only in builds with assertions.",
							&fbt_debug_stall_lock,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_level",
							"Testing only: the tree level whose pages fastbtree.debug_stall_lock stalls on.",
							"Level 0 stalls a scan on a leaf it pinned through a leaf hint, before locking it.",
							&fbt_debug_stall_level,
							1, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_extend",
							"Testing only: a backend that adds a page to the index takes and releases this advisory lock while it holds the new page locked.",
							"0 (the default) disables the stall.  Exists only in builds with assertions.",
							&fbt_debug_stall_extend,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_getroot",
							"Testing only: a reader that has just read the metapage afresh takes and releases this advisory lock before it pins the root.",
							"0 (the default) disables the stall.  Exists only in builds with assertions.",
							&fbt_debug_stall_getroot,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_vacuum",
							"Testing only: VACUUM takes and releases this advisory lock before it visits block fastbtree.debug_stall_vacuum_block.",
							"0 (the default) disables the stall.  Exists only in builds with assertions.",
							&fbt_debug_stall_vacuum,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_stall_vacuum_block",
							"Testing only: the block before which fastbtree.debug_stall_vacuum stalls VACUUM.",
							NULL,
							&fbt_debug_stall_vacuum_block,
							1, 1, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.debug_vacuum_cleanup_internal",
							 "Testing only: VACUUM also takes (and releases) a cleanup lock on every internal page it visits.",
							 "Shows that a backend waiting for a cleanup lock is woken when an atomic pin is released.  Exists only in builds with assertions.",
							 &fbt_debug_vacuum_cleanup_internal,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.debug_pagedel_halfdead_only",
							 "Testing only: VACUUM's page deletion stops after marking a leaf half-dead, as a crash between its two steps would leave it.",
							 "Exists only in builds with assertions.",
							 &fbt_debug_pagedel_halfdead_only,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("fastbtree.debug_pagedel_unlinks",
							"Testing only: VACUUM's page deletion stops after this many unlink steps each time it works on a half-dead leaf, as a crash between them would leave it.",
							"-1 (the default) sets no limit.  Exists only in builds with assertions.",
							&fbt_debug_pagedel_unlinks,
							-1, -1, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("fastbtree.debug_split_image",
							 "Testing only: in compact WAL mode, page splits log the new right page as a full image (the fallback form, and that of earlier builds' split records) instead of its tuples.",
							 "Exists only in builds with assertions.",
							 &fbt_debug_split_image,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
#endif
	_fbt_planner_init();
	MarkGUCPrefixReserved("fastbtree");

	RegisterXactCallback(fbt_xact_callback, NULL);
}

/*
 * fbtoptions() -- amoptions: parse and validate reloptions.
 *
 * reloptions: the text[] datum from pg_class; validate: raise errors for
 * unknown or out-of-range options (22023 invalid_parameter_value, with
 * core's messages).  The options are btree's three, with btree's bounds:
 * fillfactor (leaf pages, percent), deduplicate_items (posting lists,
 * fbtdedup.c), and vacuum_cleanup_index_scale_factor, accepted without
 * effect (see FbtOptions).
 * Returns a palloc'd FbtOptions, or NULL if none set.
 */
bytea *
fbtoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fillfactor", RELOPT_TYPE_INT, offsetof(FbtOptions, fillfactor)},
		{"vacuum_cleanup_index_scale_factor", RELOPT_TYPE_REAL,
		offsetof(FbtOptions, vacuum_cleanup_index_scale_factor)},
		{"deduplicate_items", RELOPT_TYPE_BOOL,
		offsetof(FbtOptions, deduplicate_items)}
	};

	return (bytea *) build_reloptions(reloptions, validate, fbt_relopt_kind,
									  sizeof(FbtOptions), tab, lengthof(tab));
}

/*
 * fbtproperty() -- amproperty: like btree, every column can return its
 * value (index-only scans); other properties follow from the handler's
 * flags through core's generic code (returns false to defer to it).
 */
bool
fbtproperty(Oid index_oid, int attno, IndexAMProperty prop,
			const char *propname, bool *res, bool *isnull)
{
	if (prop == AMPROP_RETURNABLE && attno != 0)
	{
		*res = true;
		return true;
	}
	return false;
}

/*
 * fbtbuildphasename() -- ambuildphasename: names of the sub-phases fbtbuild
 * reports in pg_stat_progress_create_index, btree's names for the same
 * phases.  Returns NULL for unknown numbers.
 */
char *
fbtbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case FBT_PHASE_TABLESCAN:
			return "scanning table";
		case FBT_PHASE_SORT:
			return "sorting live tuples";
		case FBT_PHASE_SORT_DEAD:
			return "sorting dead tuples";
		case FBT_PHASE_LEAF_LOAD:
			return "loading tuples in tree";
		default:
			return NULL;
	}
}

/*
 * fbtgettreeheight() -- amgettreeheight (PostgreSQL 18 and later): the
 * level of the root, 0 for an empty index or a root leaf, for the cost
 * model; from the cached metapage (a share lock on block 0 when it must be
 * read).  On earlier majors fbtcostestimate() asks _fbt_getrootheight()
 * itself.
 */
int
fbtgettreeheight(Relation rel)
{
	return (int) _fbt_getrootheight(rel);
}

/*
 * fbtcanreturn() -- amcanreturn: every attribute, key or INCLUDE, is stored
 * whole in leaf tuples, so index-only scans can return it.
 */
bool
fbtcanreturn(Relation index, int attno)
{
	return true;
}

/*
 * _fbt_bound_clauses() -- of an index path's clauses (IndexClause, in column
 * order), those that bound the range fastbtree's scan reads: the clauses
 * on each leading column that has an equality (=, = ANY, IS NULL), and on
 * the first one that has none (nbtree README, "scan keys"; _fbt_first).
 * Returns a new list (the clauses themselves are shared) and sets *nfilter
 * to the count of quals in the other clauses, which the scan tests on each
 * tuple.  No locks; no errors.
 */
static List *
_fbt_bound_clauses(IndexOptInfo *index, List *indexclauses, int *nfilter)
{
	List	   *bound = NIL;
	int			indexcol = 0;
	bool		eqhere = false;
	bool		done = false;
	ListCell   *lc;

	*nfilter = 0;
	foreach(lc, indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (!done && iclause->indexcol != indexcol)
		{
			/* the next column's quals bound the range only after an = */
			if (!eqhere || iclause->indexcol != indexcol + 1)
				done = true;
			indexcol = iclause->indexcol;
			eqhere = false;
		}
		if (done)
		{
			*nfilter += list_length(iclause->indexquals);
			continue;
		}
		bound = lappend(bound, iclause);
		foreach(lc2, iclause->indexquals)
		{
			Expr	   *clause = lfirst_node(RestrictInfo, lc2)->clause;
			Oid			opno = InvalidOid;

			if (IsA(clause, OpExpr))
				opno = ((OpExpr *) clause)->opno;
			else if (IsA(clause, ScalarArrayOpExpr))
				opno = ((ScalarArrayOpExpr *) clause)->opno;
			else if (IsA(clause, NullTest) &&
					 ((NullTest *) clause)->nulltesttype == IS_NULL)
				eqhere = true;
			if (OidIsValid(opno) &&
				get_op_opfamily_strategy(opno, index->opfamily[indexcol]) ==
				BTEqualStrategyNumber)
				eqhere = true;
		}
	}
	return bound;
}

/*
 * _fbt_equality_columns() -- of an index path's clauses (IndexClause),
 * mark in haseq[col] the columns with an equality (=, = ANY, IS NULL) and,
 * if hasarray is not NULL, in hasarray[col] those with an = ANY.  Returns
 * false at a row comparison (fbtarray.c runs none of them with skip
 * arrays).  No locks; no errors.
 */
static bool
_fbt_equality_columns(IndexOptInfo *index, List *indexclauses, bool *haseq,
					  bool *hasarray)
{
	ListCell   *lc;

	memset(haseq, 0, sizeof(bool) * INDEX_MAX_KEYS);
	if (hasarray != NULL)
		memset(hasarray, 0, sizeof(bool) * INDEX_MAX_KEYS);
	foreach(lc, indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			Expr	   *clause = lfirst_node(RestrictInfo, lc2)->clause;
			Oid			opno = InvalidOid;

			if (IsA(clause, RowCompareExpr))
				return false;
			if (IsA(clause, OpExpr))
				opno = ((OpExpr *) clause)->opno;
			else if (IsA(clause, ScalarArrayOpExpr) &&
					 ((ScalarArrayOpExpr *) clause)->useOr)
			{
				opno = ((ScalarArrayOpExpr *) clause)->opno;
				if (hasarray != NULL)
					hasarray[iclause->indexcol] = true;
			}
			else if (IsA(clause, NullTest) &&
					 ((NullTest *) clause)->nulltesttype == IS_NULL)
				haseq[iclause->indexcol] = true;
			if (OidIsValid(opno) &&
				get_op_opfamily_strategy(opno,
										 index->opfamily[iclause->indexcol]) ==
				BTEqualStrategyNumber)
				haseq[iclause->indexcol] = true;
		}
	}
	return true;
}

/*
 * _fbt_skip_applies() -- will fastbtree's scan of these index clauses
 * (IndexClause, in column order) skip (fbtarray.c): fastbtree.skip_scan
 * on, no row comparison, and a clause on a column after one without an
 * equality (=, = ANY, IS NULL)?  No locks; no errors.
 */
static bool
_fbt_skip_applies(IndexOptInfo *index, List *indexclauses)
{
	bool		haseq[INDEX_MAX_KEYS];
	bool		hasarray[INDEX_MAX_KEYS];
	int			col;
	ListCell   *lc;

	if (!fbt_skip_scan)
		return false;
	/* quals on the first column only (the usual case): nothing to skip */
	foreach(lc, indexclauses)
		if (lfirst_node(IndexClause, lc)->indexcol > 0)
			break;
	if (lc == NULL)
		return false;
	if (!_fbt_equality_columns(index, indexclauses, haseq, hasarray))
		return false;
	for (col = 0; col < index->nkeycolumns && haseq[col]; col++)
		;
	/* the first column without an equality; any later one skips */
	if (!FBT_ARRAY_FILTERS_IN_ONE_PASS)
	{
		int			c;

		/* before 17, not past an = ANY there (_fbt_add_skip_keys) */
		for (c = col + 1; c < index->nkeycolumns; c++)
			if (hasarray[c])
				return false;
	}
	foreach(lc, indexclauses)
		if (lfirst_node(IndexClause, lc)->indexcol > col)
			return true;
	return false;
}

/*
 * _fbt_skip_price() -- the price of a skip scan (fbtarray.c) of path's
 * clauses, for majors whose btcostestimate() knows no skip scan (before
 * 18).  The model is PostgreSQL 18's: a skipped column (without an
 * equality, before the last column with a clause) contributes as
 * many primitive scans as it has distinct values (from its statistics,
 * scaled by the selectivity of its range quals; one more without them, for
 * the first value), each bounded by the equality a skip array gives it.  So
 * a primitive scan is priced by btcostestimate() on a copy of the path
 * where each skipped column has "col = $n" (a parameter, so that its
 * selectivity is 1/ndistinct), and the scan costs that many of them.
 * Returns false, with nothing priced, where 18 would not count on skipping
 * either: a skipped column that is an expression or has no statistics,
 * or more primitive scans than the index has pages.  Sets the startup and
 * total cost and the pages read.  No locks; errors only from the
 * selectivity functions.
 */
#if !FBT_COST_MODEL_ASSUMES_SKIP_SCAN
static bool
_fbt_skip_price(PlannerInfo *root, IndexPath *path, IndexOptInfo *index,
				double loop_count, Cost *startup, Cost *total, double *pages)
{
	IndexPath	pathcopy = *path;
	List	   *clauses = NIL;
	bool		haseq[INDEX_MAX_KEYS];
	double		nscans = 1.0;
	int			lastkey = -1;
	int			col;
	ListCell   *lc;
	Selectivity sel;
	double		corr;
	RangeTblEntry *rte = planner_rt_fetch(index->rel->relid, root);

	(void) _fbt_equality_columns(index, path->indexclauses, haseq, NULL);
	foreach(lc, path->indexclauses)
		lastkey = Max(lastkey, lfirst_node(IndexClause, lc)->indexcol);

	for (col = 0; col <= lastkey; col++)
	{
		List	   *colquals = NIL;

		foreach(lc, path->indexclauses)
		{
			IndexClause *iclause = lfirst_node(IndexClause, lc);

			if (iclause->indexcol == col)
			{
				clauses = lappend(clauses, iclause);
				colquals = list_concat(colquals, iclause->indexquals);
			}
		}
		if (!haseq[col] && col < lastkey)
		{
			AttrNumber	attno = index->indexkeys[col];
			Oid			typid;
			int32		typmod;
			Oid			typcoll;
			Oid			eqop;
			Var		   *var;
			Param	   *param;
			Expr	   *eq;
			IndexClause *fake;
			VariableStatData vardata;
			double		ndistinct;
			bool		isdefault;

			if (attno == 0 || rte->rtekind != RTE_RELATION)
				return false;	/* an expression: no plain statistics */
			get_atttypetypmodcoll(rte->relid, attno, &typid, &typmod,
								  &typcoll);
			var = makeVar(index->rel->relid, attno, typid, typmod, typcoll, 0);
			examine_variable(root, (Node *) var, index->rel->relid, &vardata);
			ndistinct = get_variable_numdistinct(&vardata, &isdefault);
			ReleaseVariableStats(vardata);
			if (isdefault)
				return false;
			if (colquals != NIL)
				ndistinct = Max(rint(ndistinct *
									 clauselist_selectivity(root, colquals,
															index->rel->relid,
															JOIN_INNER, NULL)),
								1.0);
			else
				ndistinct += 1.0;
			nscans *= ndistinct;
			if (nscans > Max(index->pages, 1))
				return false;

			eqop = get_opfamily_member(index->opfamily[col],
									   index->opcintype[col],
									   index->opcintype[col],
									   BTEqualStrategyNumber);
			if (!OidIsValid(eqop))
				return false;
			param = makeNode(Param);
			param->paramkind = PARAM_EXEC;
			param->paramid = 0;
			param->paramtype = typid;
			param->paramtypmod = typmod;
			param->paramcollid = typcoll;
			param->location = -1;
			eq = make_opclause(eqop, BOOLOID, false, (Expr *) var,
							   (Expr *) param, InvalidOid,
							   index->indexcollations[col]);
			set_opfuncid((OpExpr *) eq);
			fake = makeNode(IndexClause);
			fake->rinfo = make_simple_restrictinfo(root, eq);
			fake->indexquals = list_make1(fake->rinfo);
			fake->lossy = false;
			fake->indexcol = col;
			fake->indexcols = NIL;
			clauses = lappend(clauses, fake);
		}
	}

	pathcopy.indexinfo = index;
	pathcopy.indexclauses = clauses;
	btcostestimate(root, &pathcopy, loop_count, startup, total, &sel, &corr,
				   pages);
	*total = *startup + (*total - *startup) * nscans;
	*pages = Min(*pages * nscans, Max(index->pages, 1));
	return true;
}
#endif

/*
 * _fbt_costestimate() -- cost a fastbtree index exactly as btree costs the
 * same index (fbtcostestimate(), fbtcostestimate_mirrored()).
 *
 * The planner fills IndexOptInfo.tree_height only for btree (-1 for other
 * AMs), and btcostestimate charges descent CPU by tree height; we supply
 * the height from our metapage on a copy of the path, so an identical
 * index is neither cheaper nor dearer than btree's.  On PostgreSQL 15 it
 * first turns the path's row comparisons into first-column ranges (15's
 * executor takes row comparisons from btree indexes only; fbtplanner.c),
 * so that the price is that of the scan that runs.  Reads the (cached)
 * metapage; holds no locks on return.
 */
static void
_fbt_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages, bool foreign_quals_possible)
{
	IndexOptInfo index = *path->indexinfo;
	IndexPath	pathcopy = *path;
	List	   *bound;
	int			nfilter = 0;

	/* quals on operators btree's family has and ours lacks stay filters */
	if (foreign_quals_possible)
		_fbt_drop_foreign_indexclauses(path);

	/* PostgreSQL 15's executor takes row comparisons from btree only */
	if (FBT_EXECUTOR_ROWCOMPARE_NEEDS_BTREE)
		_fbt_relax_rowcompares(root, path);

	/*
	 * A hypothetical index (an advisor's) has no pages to read:
	 * btcostestimate() then guesses the height from the page count.
	 */
	if (index.tree_height < 0 && !index.hypothetical)
	{
		index.tree_height = _fbt_cached_rootheight(index.indexoid);
		/* the index's other paths of this planning need not look again */
		path->indexinfo->tree_height = index.tree_height;
	}
	pathcopy.indexinfo = &index;
	btcostestimate(root, &pathcopy, loop_count, indexStartupCost,
				   indexTotalCost, indexSelectivity, indexCorrelation,
				   indexPages);

	/*
	 * Since PostgreSQL 18, btcostestimate() prices quals on a column after
	 * one without an equality as a skip scan would run them, and so does
	 * fastbtree run them (fbtarray.c), except with fastbtree.skip_scan
	 * off or a row comparison among the quals: then it reads the whole
	 * range that the leading quals bound, and tests the others on each
	 * tuple (as 15's btree and its cost model did).  Price that range
	 * instead, keeping the selectivity
	 * of all the quals (what the heap is read for), and add the per-tuple
	 * cost of the quals tested on the way (one operator each, over the
	 * table's tuples the bound quals select: boundsel is relative to the
	 * whole table and includes a partial index's predicate already).
	 */
#if !FBT_COST_MODEL_ASSUMES_SKIP_SCAN
	{
		/*
		 * Before 18, btree's model reads the range of the leading quals
		 * whole; where fastbtree skips, price the skip scan as 18 does, if
		 * that is cheaper (where it is not, the scan moves along the leaves
		 * rather than descend, and costs about the range read).
		 */
		Cost		startup;
		Cost		total;
		double		pages;

		if (_fbt_skip_applies(&index, path->indexclauses) &&
			_fbt_skip_price(root, path, &index, loop_count, &startup, &total,
							&pages) &&
			total < *indexTotalCost)
		{
			*indexStartupCost = startup;
			*indexTotalCost = total;
			*indexPages = pages;
		}
		return;
	}
#endif
	/* where fastbtree skips too, btree's price is the price */
	if (_fbt_skip_applies(&index, path->indexclauses))
		return;
	/* quals on the first column only all bound the range (the usual case) */
	{
		ListCell   *lc;
		bool		later = false;

		foreach(lc, path->indexclauses)
			if (lfirst_node(IndexClause, lc)->indexcol > 0)
				later = true;
		if (!later)
			return;
	}
	bound = _fbt_bound_clauses(&index, path->indexclauses, &nfilter);
	if (nfilter > 0)
	{
		Cost		startup;
		Cost		total;
		Selectivity boundsel;
		double		corr;
		double		pages;

		pathcopy.indexclauses = bound;
		btcostestimate(root, &pathcopy, loop_count, &startup, &total,
					   &boundsel, &corr, &pages);
		*indexStartupCost = startup;
		*indexTotalCost = total + nfilter * cpu_operator_cost *
			clamp_row_est(boundsel * index.rel->tuples);
		*indexPages = pages;
	}
	list_free(bound);
}

/*
 * fbtcostestimate() -- amcostestimate: cost a fastbtree index exactly as
 * btree costs the same index (see _fbt_costestimate() above).  Arguments
 * and results are amcostestimate's (costs in the planner's units,
 * selectivity a fraction, pages a count).  Reads the (cached) metapage;
 * holds no locks on return.
 */
void
fbtcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	_fbt_costestimate(root, path, loop_count, indexStartupCost,
					  indexTotalCost, indexSelectivity, indexCorrelation,
					  indexPages, true);
}

/*
 * fbtcostestimate_mirrored() -- fbtcostestimate() for an index that
 * fbtplanner.c presents as btree and whose btree families have no operator
 * more than its own (set as the IndexOptInfo's amcostestimate by that
 * hook): no index qual can be foreign to it, so none is looked for (an
 * index_open and a syscache lookup per qual saved for every path).
 * Arguments, results and locks as fbtcostestimate().
 */
void
fbtcostestimate_mirrored(PlannerInfo *root, IndexPath *path,
						 double loop_count, Cost *indexStartupCost,
						 Cost *indexTotalCost,
						 Selectivity *indexSelectivity,
						 double *indexCorrelation, double *indexPages)
{
	_fbt_costestimate(root, path, loop_count, indexStartupCost,
					  indexTotalCost, indexSelectivity, indexCorrelation,
					  indexPages, false);
}

FBT_FUNCTION_INFO_V1(fbthandler);

/*
 * fbthandler() -- the access method handler (SQL: fbthandler(internal)
 * returns index_am_handler).  Returns the IndexAmRoutine: btree's
 * capabilities (ordered, backward, unique, multi-column, INCLUDE,
 * = ANY(array), IS [NOT] NULL, clusterable, predicate locks, parallel
 * build and scans) with btree's strategy and support numbering.
 */
Datum
fbthandler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = FBTMaxStrategyNumber;
	amroutine->amsupport = FBTNProcs;
	amroutine->amoptsprocnum = FBTOPTIONS_PROC;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = true;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = true;
	amroutine->amclusterable = true;
	amroutine->ampredlocks = true;
	amroutine->amcanparallel = true;
	amroutine->amcaninclude = true;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_COND_CLEANUP;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = fbtbuild;
	amroutine->ambuildempty = fbtbuildempty;
	amroutine->aminsert = fbtinsert;
	amroutine->ambulkdelete = fbtbulkdelete;
	amroutine->amvacuumcleanup = fbtvacuumcleanup;
	amroutine->amcanreturn = fbtcanreturn;
	amroutine->amcostestimate = fbtcostestimate;
	amroutine->amoptions = fbtoptions;
	amroutine->amproperty = fbtproperty;
	amroutine->ambuildphasename = fbtbuildphasename;
	amroutine->amvalidate = fbtvalidate;
	amroutine->amadjustmembers = fbtadjustmembers;
	amroutine->ambeginscan = fbtbeginscan;
	amroutine->amrescan = fbtrescan;
	amroutine->amgettuple = fbtgettuple;
	amroutine->amgetbitmap = fbtgetbitmap;
	amroutine->amendscan = fbtendscan;
	amroutine->ammarkpos = fbtmarkpos;
	amroutine->amrestrpos = fbtrestrpos;
	amroutine->amestimateparallelscan = fbtestimateparallelscan;
	amroutine->aminitparallelscan = fbtinitparallelscan;
	amroutine->amparallelrescan = fbtparallelrescan;
	FBT_SET_VERSION_CALLBACKS(amroutine);
	FBT_SET_BUILD_PARALLEL(amroutine);

	PG_RETURN_POINTER(amroutine);
}
