#!/usr/bin/perl
#
# bench/cgsum.pl
#	Read callgrind profiles (callgrind.out format, event Ir) and sum what
#	bench/callgrind.sh reports: total instructions, the part spent in
#	PostgreSQL's buffer manager and in the index layer, and call counts.
#
# Usage:
#	perl cgsum.pl FILE
#		prints the lines "total N", "bufmgr N", "bufmgr_formula N",
#		"index_layer N", "lwlocks N", "mapping_lookups N" and the census,
#		"census_spinlocks N", "census_lw_mapping N", "census_lw_content N",
#		"census_lw_other N", "census_pins N", "census_unpins N",
#		"census_sum N":
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
#		"calls=" lines.  Callgrind counts calls whether or not it is
#		collecting, and writes a call arc (caller -> callee) only if some
#		cost was collected on it: an arc taken both inside and outside the
#		collected functions carries the calls made outside too (the heap
#		fetch's LockBuffer -> LWLockAcquire in a run collecting only the
#		index layer), an arc taken only outside is missing.  Counts are
#		exact in a run that collects everything; a difference of two runs
#		that do the same outside the collected functions cancels the rest.
#
#		The census of serializing operations on shared cache lines (the
#		lines "census_NAME N"), from the call arcs as well:
#
#		  spinlocks: calls of LockBufHdr (buffer-header spinlock);
#		  lw_mapping: calls of BufTableLookup, each made under one
#		    buffer-mapping partition LWLock;
#		  lw_content: calls of LWLockAcquire and LWLockConditionalAcquire
#		    made by @CONTENT_LOCKERS below or by any function of the
#		    fastbtree shared object (fbt_atomic_lockbuf() takes the
#		    content lock of an atomically pinned page directly);
#		  lw_other: all LWLock acquisitions minus those two (the second,
#		    exclusive, mapping lock of a buffer miss included);
#		  pins: calls of ReadBufferExtended (ReadBuffer and
#		    ReleaseAndReadBuffer reach it by one call each, so it is the
#		    only one counted), ReadRecentBuffer and fbt_atomic_pin;
#		    IncrBufferRefCount is not counted (it changes only the
#		    backend-local reference count);
#		  unpins: calls of ReleaseBuffer, of UnlockReleaseBuffer other
#		    than those that call ReleaseBuffer, the release part of
#		    ReleaseAndReadBuffer (its calls of %UNPINNERS, or on 15,
#		    whose stripped binary names static functions by address, of
#		    the one address it calls: UnpinBuffer) and calls of
#		    fbt_atomic_unpin,
#		    minus the calls of IncrBufferRefCount: each adds a private
#		    reference that one more release drops (the executor's slot
#		    holding the heap tuple's buffer), so that pins and unpins
#		    count the same operations;
#		  sum: spinlocks + every LWLock acquisition + pins + unpins.
#
#		A pin or unpin call is at most one atomic operation on the buffer
#		header: none when the backend holds another pin on the buffer (its
#		private reference count changes only), or for a local buffer.
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
# the buffer manager's functions that take a buffer's content lock
my %CONTENT_LOCKERS = map { $_ => 1 } qw(LockBuffer ConditionalLockBuffer
  LockBufferForCleanup ConditionalLockBufferForCleanup);
# what ReleaseAndReadBuffer calls to drop its pin (UnpinBuffer inlined on
# 18: then UnpinBufferNoOwner, after ResourceOwnerForget, not counted)
my %UNPINNERS = map { $_ => 1 } qw(UnpinBuffer UnpinBufferNoOwner UnpinLocalBuffer);
# the shared object whose functions' LWLock acquisitions are content locks
my $FBT_OBJECT = 'fastbtree.so';

# parse(FILE) -> { self => {fn => cost}, calls => {fn => {callee => cost}},
#                  ncalls => {callee => number of calls},
#                  edges => {fn => {callee => number of calls}},
#                  total => N, object => {fn => object file} }
sub parse
{
	my ($file) = @_;
	my (%fn_name, %ob_name, %self, %calls, %ncalls, %edges, %object);
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
			$edges{$fn}{$cfn} += $1;
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
		edges => \%edges,
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

# edge_calls(PROFILE, CALLER, CALLEE): calls on one call arc
sub edge_calls
{
	my ($p, $caller, $callee) = @_;

	return $p->{edges}{$caller}{$callee} // 0;
}

# census(PROFILE) -> { spinlocks, lw_mapping, lw_content, lw_other, pins,
# unpins, sum }: the serializing operations on shared cache lines (see the
# file header)
sub census
{
	my ($p) = @_;
	my %c;
	my $lwlocks = ncalls($p, @LWLOCK_ACQUIRE);

	$c{spinlocks} = ncalls($p, 'LockBufHdr');
	$c{lw_mapping} = ncalls($p, 'BufTableLookup');
	$c{lw_content} = 0;
	for my $caller (keys %{ $p->{edges} })
	{
		my $ob = $p->{object}{$caller} // '';

		next unless $CONTENT_LOCKERS{$caller} || $ob =~ m{(?:^|/)\Q$FBT_OBJECT\E$};
		$c{lw_content} += edge_calls($p, $caller, $_) for @LWLOCK_ACQUIRE;
	}
	$c{lw_other} = $lwlocks - $c{lw_content} - $c{lw_mapping};

	$c{pins} = ncalls($p, qw(ReadBufferExtended ReadRecentBuffer fbt_atomic_pin));

	$c{unpins} = ncalls($p, qw(ReleaseBuffer fbt_atomic_unpin)) -
	  ncalls($p, 'IncrBufferRefCount');
	$c{unpins} += ncalls($p, 'UnlockReleaseBuffer') -
	  edge_calls($p, 'UnlockReleaseBuffer', 'ReleaseBuffer');
	for my $callee (keys %{ $p->{edges}{ReleaseAndReadBuffer} // {} })
	{
		next unless $UNPINNERS{$callee} || $callee =~ /^0x[0-9a-f]+$/;
		$c{unpins} += edge_calls($p, 'ReleaseAndReadBuffer', $callee);
	}

	$c{sum} = $c{spinlocks} + $lwlocks + $c{pins} + $c{unpins};
	return \%c;
}

my @CENSUS = qw(spinlocks lw_mapping lw_content lw_other pins unpins sum);

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
	my $c = census($p);
	print "census_$_ $c->{$_}\n" for @CENSUS;
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
