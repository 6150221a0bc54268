# t/FbtPgbench.pm
#	pgbench runs in the background for the concurrent TAP tests (t/003,
#	t/010), and the checks every such run must pass.  Not a test itself:
#	prove runs only t/*.pl.

package FbtPgbench;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(start_pgbench check_pgbench);

# start_pgbench(NODE, DIR, OPTS, SCRIPTS, OUT, ERR): start pgbench against
# database postgres of NODE with the options OPTS (one string, split on
# spaces) and the weighted scripts SCRIPTS (name => [weight, text]; each
# written to DIR/name.sql), its stdout and stderr going to the scalars OUT
# and ERR refer to.  Returns the IPC::Run harness; finish() waits for it.
sub start_pgbench
{
	my ($node, $dir, $opts, $scripts, $out, $err) = @_;
	my @args;

	for my $name (sort keys %$scripts)
	{
		my $file = "$dir/$name.sql";
		append_to_file($file, $scripts->{$name}[1]);
		push @args, '-f', "$file\@$scripts->{$name}[0]";
	}
	return IPC::Run::start(
		[
			'pgbench', '-n', split(/ /, $opts), @args,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', $out, '2>', $err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}

# check_pgbench(NAME, EXIT_OK, OUT, ERR, DURATION): the finished run NAME
# (EXIT_OK what finish() returned, OUT and ERR its output) exited
# successfully, with no failed transaction and no client error, and ran
# transactions; reports how many, per script, in DURATION seconds.
sub check_pgbench
{
	my ($name, $exit_ok, $out, $err, $duration) = @_;

	ok($exit_ok, "pgbench $name exits successfully");
	like($out, qr/number of failed transactions: 0 /,
		"pgbench $name: no failed transactions");
	unlike($err, qr/abort|error|ERROR/i, "pgbench $name: no client errors")
	  or diag("pgbench $name stderr:\n$err");
	my ($tx) = $out =~ /actually processed: (\d+)/;
	cmp_ok($tx // 0, '>', 0, "pgbench $name ran transactions");
	# per-script counts: " - 1234 transactions (..." after "SQL script N: path"
	my @per_script;
	while ($out =~ /SQL script \d+: \S+\/(\w+)\.sql\n.*?\n - (\d+) transactions/g)
	{
		push @per_script, "$1 $2";
	}
	diag("pgbench $name: " . ($tx // 0) . " transactions in ${duration}s ("
		  . join(', ', @per_script) . ')');
	return;
}

1;
