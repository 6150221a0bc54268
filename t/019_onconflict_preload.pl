# t/019_onconflict_preload.pl
#	INSERT ... ON CONFLICT (k, f text_pattern_ops) on a table whose unique
#	index is fastbtree (PostgreSQL 18; issue 26, item 6): fastbtree's
#	planner hook finds the index for an inference clause that names an
#	operator class, once the library is loaded in the session.  A
#	session's very first statement, when it is such an INSERT and nothing
#	loaded fastbtree before, plans before the library is loaded and fails
#	as core fails it (README, "Differences");
#	session_preload_libraries = 'fastbtree' (or shared_preload_libraries)
#	makes it work from the first statement.  The btree twin works in
#	every case.  sql/onconflict_opclass.sql covers the statements.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('onconflict');

END
{
	local $?;
	$node->stop('immediate', fail_ok => 1) if $node;
}

$node->init;
$node->start;

if ($node->safe_psql('postgres', 'SHOW server_version_num') < 180000)
{
	plan skip_all => 'PostgreSQL 15 accepts only btree arbiters';
}

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION fastbtree;
CREATE TABLE oc_f (k int, f text);
CREATE TABLE oc_b (k int, f text);
CREATE UNIQUE INDEX ON oc_f USING fastbtree (k, f text_pattern_ops);
CREATE UNIQUE INDEX ON oc_b USING btree (k, f text_pattern_ops);
});

my $insert =
  q{INSERT INTO %s VALUES (1, 'a') ON CONFLICT (k, f text_pattern_ops) DO NOTHING};
my $preloaded = $node->safe_psql('postgres', 'SHOW shared_preload_libraries')
  =~ /fastbtree/;

# each psql call is a new session whose first statement is the INSERT
my ($ret, $out, $err) = $node->psql('postgres', sprintf($insert, 'oc_b'));
is($ret, 0, 'btree twin: the first statement of a session infers the index');
($ret, $out, $err) = $node->psql('postgres', sprintf($insert, 'oc_f'));
if ($preloaded)
{
	is($ret, 0, 'fastbtree, preloaded: the first statement infers the index');
}
else
{
	like(
		$err,
		qr/there is no unique or exclusion constraint matching the ON CONFLICT specification/,
		'fastbtree, not loaded: the first statement fails as documented');
}
($ret, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM oc_f; " . sprintf($insert, 'oc_f'));
is($ret, 0, 'fastbtree: after any use of the index in the session, it works')
  or diag($err);

$node->safe_psql('postgres',
	"ALTER SYSTEM SET session_preload_libraries = 'fastbtree'");
$node->reload;
($ret, $out, $err) = $node->psql('postgres', sprintf($insert, 'oc_f'));
is($ret, 0,
	'fastbtree with session_preload_libraries: the first statement works')
  or diag($err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM oc_f'),
	'1', 'one row, as in the btree twin');

done_testing();
