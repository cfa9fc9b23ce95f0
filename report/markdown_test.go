package report

import "testing"

// TestEscape checks what escape changes in a line of report.md: what could
// change the line's meaning, and nothing else.
func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"+42.3% [+38.6%, +46.0%]: the in-band cost", "+42.3% [+38.6%, +46.0%]: the in-band cost"},
		{"[a]: http://x", `[a\]: http://x`},
		{"   [a]: http://x", `   [a\]: http://x`},
		{"[+5.6%, +36.2%]", "[+5.6%, +36.2%]"},
		{"see [a](b) and [c][d]", `see [a\](b) and [c\][d]`},
		{"a|b *c* _d_ http_req", `a\|b \*c\* \_d\_ http_req`},
		{"<b>&", "&lt;b&gt;&amp;"},
	} {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
