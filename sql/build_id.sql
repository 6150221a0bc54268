-- The library the server loads is the build under test: scripts/test.sh
-- builds with its own FBT_BUILD_ID and sets fastbtree.expect_build_id to
-- it; a build installed over it during the run fails here (and warns when
-- it loads).
LOAD 'fastbtree';
SELECT current_setting('fastbtree.build_id') <> 'unnamed' AS named,
	   current_setting('fastbtree.build_id') =
	   current_setting('fastbtree.expect_build_id') AS this_build;
-- read-only
SET fastbtree.build_id = 'x';
