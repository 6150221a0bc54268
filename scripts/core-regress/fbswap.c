/*-------------------------------------------------------------------------
 *
 * fbswap.c
 *	  Testing only (scripts/core-regress.sh): a preloadable module that
 *	  makes CREATE INDEX build fastbtree wherever it would build btree, so
 *	  that PostgreSQL's own regression suite runs against fastbtree.
 *
 * A ProcessUtility hook rewrites the access method of an IndexStmt that
 * names btree (written, or the default when USING is omitted) to
 * fastbtree.  The indexes of PRIMARY KEY and UNIQUE constraints declared
 * in CREATE TABLE reach the hook as subcommands (IndexStmt.isconstraint)
 * and are rewritten only with fbswap.constraints on; those that ALTER
 * TABLE ... ADD creates go to DefineIndex without passing through
 * ProcessUtility, and stay btree.  The indexes of partitions follow their
 * parent's access method.  fbswap.enabled = off turns the rewrite off, for
 * the baseline run.
 *
 * Not part of the extension: never installed by "make install".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static bool fbswap_enabled = true;
static bool fbswap_constraints = false;

/*
 * The hook: a copy of the statement with fastbtree as its access method
 * replaces a btree IndexStmt; everything else passes through unchanged.
 */
static void
fbswap_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	IndexStmt  *stmt = IsA(parsetree, IndexStmt) ? (IndexStmt *) parsetree : NULL;

	if (fbswap_enabled && stmt != NULL && stmt->accessMethod != NULL &&
		strcmp(stmt->accessMethod, "btree") == 0 &&
		(fbswap_constraints || !(stmt->isconstraint || stmt->primary)))
	{
		pstmt = copyObject(pstmt);
		((IndexStmt *) pstmt->utilityStmt)->accessMethod = pstrdup("fastbtree");
		readOnlyTree = false;
	}

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/*
 * Module load: define the two settings (superuser-only, so the regression
 * suite's unprivileged roles cannot change them) and install the hook.
 */
void
_PG_init(void)
{
	DefineCustomBoolVariable("fbswap.enabled",
							 "Build fastbtree where CREATE INDEX would build btree.",
							 NULL, &fbswap_enabled, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("fbswap.constraints",
							 "Also rewrite the indexes of PRIMARY KEY and UNIQUE constraints.",
							 NULL, &fbswap_constraints, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("fbswap");

	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = fbswap_ProcessUtility;
}
