#!/usr/bin/perl
# termsafe.pl [--tab] FILE...: is what evtop wrote safe for a terminal? Each file must be
# valid UTF-8 holding no C0 control but '\n' (and '\t' with --tab), no DEL, no C1 control
# (U+0080-U+009F: U+009B is the 8-bit CSI) and no bidi override or isolate. A byte 0x9B is
# fine inside a multi-byte character (the continuation byte of U+241B "␛" itself), which is
# why a plain grep for 0x9B cannot tell. Prints the first offence of each file with its
# offset and the bytes around it; exits 1 if any file has one.
use strict;
use warnings;

my $tab = 0;
if (@ARGV && $ARGV[0] eq '--tab') {
	$tab = 1;
	shift @ARGV;
}
my $bad = 0;
for my $f (@ARGV) {
	open(my $fh, '<:raw', $f) or die "termsafe: $f: $!\n";
	local $/;
	my $d = <$fh>;
	$d = '' unless defined $d;
	close $fh;
	my $plain = $tab ? qr/[\x09\x0A\x20-\x7E]+/ : qr/[\x0A\x20-\x7E]+/;
	pos($d) = 0;
	my $why;
	while (pos($d) < length($d)) {
		next if $d =~ /\G$plain/gc;
		# U+00A0-U+07FF (not the C1 controls U+0080-U+009F).
		next if $d =~ /\G(?:\xC2[\xA0-\xBF]|[\xC3-\xDF][\x80-\xBF])/gc;
		# The bidi marks and overrides: U+061C, U+200E/F, U+202A-E, U+2066-9.
		if ($d =~ /\G(?:\xD8\x9C|\xE2\x80[\x8E\x8F\xAA-\xAE]|\xE2\x81[\xA6-\xA9])/gc) {
			$why = 'a bidi control';
			pos($d) -= length($&);
			last;
		}
		next if $d =~ /\G(?:\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}|\xED[\x80-\x9F][\x80-\xBF])/gc;
		next if $d =~ /\G(?:\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})/gc;
		my $c = ord(substr($d, pos($d), 1));
		$why = $c == 0x1B ? 'ESC' : $c == 0x07 ? 'BEL' : $c == 0x9B ? 'a raw 0x9B (CSI)'
		     : $c < 0x20 || $c == 0x7F ? sprintf('control byte 0x%02X', $c)
		     : ($c == 0xC2 && pos($d) + 1 < length($d)) ? 'a C1 control' : 'invalid UTF-8';
		last;
	}
	next unless defined $why;
	my $at = pos($d);
	my $from = $at > 16 ? $at - 16 : 0;
	my $ctx = join(' ', map { sprintf('%02x', ord) } split(//, substr($d, $from, 32)));
	print "$f: $why at byte $at: $ctx\n";
	$bad = 1;
}
exit $bad;
