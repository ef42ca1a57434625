#!/usr/bin/perl
# escscan.pl MODE FILE: what a program wrote to a terminal (a tmux pipe-pane capture),
# taken apart into its escape sequences.
#   escscan.pl seqs FILE    the distinct control sequences, one per line, as text (ESC as
#                           \e): CSI ones that move the cursor or erase with their numbers
#                           replaced by N (they depend on the content), every other one
#                           exactly (SGR colours and attributes, modes, charset selection)
#   escscan.pl check FILE   exit 1, saying why, if the stream holds anything a curses
#                           program has no business sending: an OSC (title, hyperlink,
#                           clipboard), a DCS/APC/PM/SOS string, BEL, a C1 control (raw 0x80-
#                           0x9F or U+0080-U+009F), a device status or attribute request
#                           (CSI n, CSI c: the terminal would type an answer), invalid UTF-8
#                           outside the sequences, or a C0 control curses does not use.
use strict;
use warnings;

my ($mode, $file) = @ARGV;
open(my $fh, '<:raw', $file) or die "escscan: $file: $!\n";
local $/;
my $d = <$fh>;
$d = '' unless defined $d;
my %seen;
my @bad;
pos($d) = 0;
my $len = length($d);
while (pos($d) < $len) {
	if ($d =~ /\G\e\[([0-?]*)([ -\/]*)([@-~])/gc) {
		my ($p, $i, $f) = ($1, $2, $3);
		if ($f eq 'n' || $f eq 'c') {
			push @bad, "a device status/attribute request \\e[$p$i$f";
		}
		my $shape = $f =~ /[HfABCDEFGdXK\@PLMJrSTZ`]/ ? "\\e[" . ($p =~ s/\d+/N/gr) . "$i$f" : "\\e[$p$i$f";
		$seen{$shape}++;
		next;
	}
	if ($d =~ /\G\e([\]PX^_])/gc) {
		push @bad, "an escape string (\\e$1: OSC/DCS/SOS/PM/APC)";
		next;
	}
	if ($d =~ /\G\e([ -\/]*[0-~])/gc) {
		$seen{"\\e$1"}++;
		next;
	}
	next if $d =~ /\G[\x08\x09\x0A\x0D\x0F\x0E\x20-\x7E]+/gc;
	next if $d =~ /\G(?:\xC2[\xA0-\xBF]|[\xC3-\xDF][\x80-\xBF])/gc;
	next if $d =~ /\G(?:\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}|\xED[\x80-\x9F][\x80-\xBF])/gc;
	next if $d =~ /\G(?:\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})/gc;
	my $c = ord(substr($d, pos($d), 1));
	push @bad, $c == 0x07 ? 'BEL' : $c == 0x9B ? 'a raw 0x9B (CSI)'
	         : ($c == 0xC2) ? 'a C1 control (U+0080-U+009F)'
	         : $c < 0x20 || $c == 0x7F ? sprintf('control byte 0x%02X', $c) : sprintf('invalid UTF-8 (0x%02X)', $c);
	pos($d) = pos($d) + 1;
}
if ($mode eq 'seqs') {
	print "$_\n" for sort keys %seen;
	exit 0;
}
my %n;
$n{$_}++ for @bad;
print "$_ (x$n{$_})\n" for sort keys %n;
exit(@bad ? 1 : 0);
