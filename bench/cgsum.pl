#!/usr/bin/perl
#
# bench/cgsum.pl
#	Read callgrind profiles (callgrind.out format, event Ir) and sum what
#	bench/callgrind.sh reports: total instructions, the part spent in
#	PostgreSQL's buffer manager and in the index layer, and call counts.
#
# Usage:
#	perl cgsum.pl FILE
#		prints six lines "total N", "bufmgr N", "bufmgr_formula N",
#		"index_layer N", "lwlocks N", "mapping_lookups N":
#
#		bufmgr is the inclusive cost of every call that enters the buffer
#		manager's entry points (@BUFMGR below) from a function outside
#		them.  Nested entries (UnlockReleaseBuffer calling ReleaseBuffer,
#		ReleaseAndReadBuffer calling ReadBuffer) are counted once, and
#		everything below an entry point is included, static helpers such as
#		UnpinBuffer too.
#
#		bufmgr_formula is the sum the benchmark issue first described: the
#		inclusive cost of ReadBufferExtended, LockBuffer, ReleaseBuffer and
#		UnlockReleaseBuffer plus the self cost of ReleaseAndReadBuffer and
#		ReadBuffer.  It is printed for comparison with older measurements.
#
#		index_layer is the inclusive cost of every call into the index AM
#		interface (@INDEX_LAYER below: index_beginscan, index_rescan,
#		index_getnext_tid, index_endscan) from outside it, buffer manager
#		included, summed over call edges like bufmgr.
#
#		lwlocks is the number of calls of LWLockAcquire and
#		LWLockConditionalAcquire, mapping_lookups the number of calls of
#		BufTableLookup (the buffer-mapping hash lookup), read from the
#		"calls=" lines: only calls made while callgrind collected count.
#
#	perl cgsum.pl --per-probe N FILE1 FILE3
#		prints a markdown table row per function, "| name | self | incl |",
#		with the cost in FILE3 minus the cost in FILE1, divided by N, for
#		the functions whose self cost differs most; largest first.
#
# Debian's postgres binary is stripped, so its static functions appear as
# addresses ("0x000000000044a690"); exported ones keep their names.

use strict;
use warnings;

my @BUFMGR = qw(ReadBufferExtended ReadBuffer ReleaseAndReadBuffer
  ReadRecentBuffer LockBuffer ConditionalLockBuffer ReleaseBuffer
  UnlockReleaseBuffer IncrBufferRefCount);
my %in_bufmgr = map { $_ => 1 } @BUFMGR;
my @INDEX_LAYER = qw(index_beginscan index_rescan index_getnext_tid index_endscan);
my %in_index_layer = map { $_ => 1 } @INDEX_LAYER;
my @LWLOCK_ACQUIRE = qw(LWLockAcquire LWLockConditionalAcquire);

# parse(FILE) -> { self => {fn => cost}, calls => {fn => {callee => cost}},
#                  ncalls => {callee => number of calls},
#                  total => N, object => {fn => object file} }
sub parse
{
	my ($file) = @_;
	my (%fn_name, %ob_name, %self, %calls, %ncalls, %object);
	my ($fn, $cfn, $ob, $cob, $in_call, $total) = ('', '', '', '', 0, undef);

	open(my $fh, '<', $file) or die "cgsum.pl: cannot open $file: $!\n";
	while (my $line = <$fh>)
	{
		chomp $line;
		# Names are compressed: "(id) name" defines an id, "(id)" reuses it.
		if ($line =~ /^(fn|cfn)=\((\d+)\)(?: (.*))?$/)
		{
			$fn_name{$2} = $3 if defined $3;
			die "cgsum.pl: $file: undefined function id $2\n"
			  unless defined $fn_name{$2};
			if ($1 eq 'fn')
			{
				$fn = $fn_name{$2};
				$object{$fn} //= $ob;
				$cob = $ob;
			}
			else
			{
				$cfn = $fn_name{$2};
				$object{$cfn} //= $cob;
			}
		}
		elsif ($line =~ /^(ob|cob)=\((\d+)\)(?: (.*))?$/)
		{
			$ob_name{$2} = $3 if defined $3;
			if ($1 eq 'ob') { $ob = $ob_name{$2}; }
			else { $cob = $ob_name{$2}; }
		}
		elsif ($line =~ /^calls=(\d+)/)
		{
			$ncalls{$cfn} += $1;
			$in_call = 1;
		}
		elsif ($line =~ /^[0-9+*-]/)
		{
			# "position cost": the cost after a calls= line is the inclusive
			# cost of that call, any other is the current function's own.
			my (undef, $cost) = split ' ', $line;
			$cost //= 0;
			if ($in_call)
			{
				$calls{$fn}{$cfn} += $cost;
				$in_call = 0;
				$cob = $ob;
			}
			else
			{
				$self{$fn} += $cost;
			}
		}
		elsif ($line =~ /^(?:summary|totals): (\d+)/)
		{
			$total = $1;
		}
	}
	close($fh);
	die "cgsum.pl: $file: no summary line (not a callgrind profile?)\n"
	  unless defined $total;
	return {
		self => \%self,
		calls => \%calls,
		ncalls => \%ncalls,
		total => $total,
		object => \%object
	};
}

sub inclusive
{
	my ($p, $fn) = @_;
	my $sum = $p->{self}{$fn} // 0;

	$sum += $_ for values %{ $p->{calls}{$fn} // {} };
	return $sum;
}

# entry_edges(PROFILE, SET): the inclusive cost of the calls into the
# functions of SET (a hash of names) from functions outside it
sub entry_edges
{
	my ($p, $set) = @_;
	my $sum = 0;

	for my $caller (keys %{ $p->{calls} })
	{
		next if $set->{$caller};
		for my $callee (keys %{ $p->{calls}{$caller} })
		{
			$sum += $p->{calls}{$caller}{$callee} if $set->{$callee};
		}
	}
	return $sum;
}

# ncalls(PROFILE, NAME...): how many calls of these functions it recorded
sub ncalls
{
	my ($p, @names) = @_;
	my $n = 0;

	$n += $p->{ncalls}{$_} // 0 for @names;
	return $n;
}

sub bufmgr_formula
{
	my ($p) = @_;
	my $sum = 0;

	$sum += inclusive($p, $_)
	  for qw(ReadBufferExtended LockBuffer ReleaseBuffer UnlockReleaseBuffer);
	$sum += $p->{self}{$_} // 0 for qw(ReleaseAndReadBuffer ReadBuffer);
	return $sum;
}

sub short_object
{
	my ($path) = @_;

	return '' unless defined $path && $path ne '' && $path ne '???';
	$path =~ s{.*/}{};
	return " ($path)";
}

if (@ARGV == 1)
{
	my $p = parse($ARGV[0]);

	print "total $p->{total}\n";
	print "bufmgr ", entry_edges($p, \%in_bufmgr), "\n";
	print "bufmgr_formula ", bufmgr_formula($p), "\n";
	print "index_layer ", entry_edges($p, \%in_index_layer), "\n";
	print "lwlocks ", ncalls($p, @LWLOCK_ACQUIRE), "\n";
	print "mapping_lookups ", ncalls($p, 'BufTableLookup'), "\n";
}
elsif (@ARGV == 4 && $ARGV[0] eq '--per-probe' && $ARGV[1] =~ /^[1-9][0-9]*$/)
{
	my ($n, $p1, $p3) = ($ARGV[1], parse($ARGV[2]), parse($ARGV[3]));
	my %fns = map { $_ => 1 } keys %{ $p1->{self} }, keys %{ $p3->{self} };
	my %diff = map { $_ => (($p3->{self}{$_} // 0) - ($p1->{self}{$_} // 0)) / $n } keys %fns;

	for my $fn (sort { $diff{$b} <=> $diff{$a} || $a cmp $b } keys %diff)
	{
		last if $diff{$fn} < 1;
		printf "| %s%s | %.0f | %.0f |\n", $fn, short_object($p3->{object}{$fn}),
		  $diff{$fn}, (inclusive($p3, $fn) - inclusive($p1, $fn)) / $n;
	}
}
else
{
	die "usage: cgsum.pl FILE | cgsum.pl --per-probe N FILE1 FILE3\n";
}
