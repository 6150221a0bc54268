#!/usr/bin/env bash
#
# scripts/testlib.sh
#	Sourced by scripts/test.sh and scripts/core-regress.sh, which both
#	install an assertion build into the system's PostgreSQL directories and
#	run servers as an unprivileged user: the settings they must agree on,
#	and the steps they share.  The caller defines log and die, and sets
#	WORK and PG_BINDIR before calling as_user.

# shellcheck disable=SC2034 # used by the scripts that source this file
TEST_USER=fbtest
# shellcheck disable=SC2034
TEST_CFLAGS="-Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers -Werror -DUSE_ASSERT_CHECKING"
# one install directory per machine: runs wait for each other
LOCK_FILE=/run/lock/fastbtree-test.lock

# as_user COMMAND...: run COMMAND as $TEST_USER with the server's tools on
# PATH
as_user()
{
	runuser -u "$TEST_USER" -- env \
		HOME="$WORK" \
		PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" \
		LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		"$@"
}

# ensure_test_user: create the OS user $TEST_USER if missing
ensure_test_user()
{
	command -v runuser >/dev/null 2>&1 || die "runuser not found (package util-linux)"
	id -u "$TEST_USER" >/dev/null 2>&1 && return 0
	log "creating OS user $TEST_USER"
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$TEST_USER" ||
		id -u "$TEST_USER" >/dev/null 2>&1 ||	# created meanwhile by a concurrent run
		die "useradd $TEST_USER failed"
}

# take_test_lock: hold $LOCK_FILE (file descriptor 9) until exit, waiting
# for another run that holds it
take_test_lock()
{
	exec 9>"$LOCK_FILE" || die "cannot open $LOCK_FILE"
	if ! flock -n 9; then
		log "another test run holds $LOCK_FILE; waiting for it"
		flock 9 || die "cannot lock $LOCK_FILE"
	fi
}
