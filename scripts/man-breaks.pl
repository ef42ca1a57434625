#!/usr/bin/perl
# man-breaks.pl <PAGE >OUT: a Chinese man page made breakable. groff (1.22) does not break
# lines between Chinese characters, so a paragraph of them runs past the terminal's edge; this
# puts groff's zero-width break point \: after every Wide character that is followed by one
# more, except before the closing punctuation that must not begin a line (，。、；：！？）」』”’),
# and asks for left-adjusted text without hyphenation (justification would put spaces between
# Chinese characters). Comment lines stay as they are. The build runs it on doc/zh_CN/evtop.1.
use strict;
use warnings;
binmode(STDIN, ':encoding(UTF-8)');
binmode(STDOUT, ':encoding(UTF-8)');
my $wide = qr/[\p{East_Asian_Width=Wide}\p{East_Asian_Width=Fullwidth}]/;
my $closing = qr/[，。、；：！？）」』”’》〉】]/;
while (my $l = <STDIN>) {
	if ($l !~ /^\.\\"/) {
		$l =~ s/($wide)(?=[^\s\\])(?!$closing)/$1\\:/g;
	}
	print $l;
	print ".ad l\n.nh\n" if $l =~ /^\.TH /;
}
