package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// printable returns s with every control character but line breaks and
// tabs, every C1 control and every invalid byte written as \xNN: text
// from a service (the end of its log in a flag, a note) cannot then clear
// the terminal a report is printed to, set its title or move its cursor.
func printable(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) || (r == utf8.RuneError && size == 1) {
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports a character printable writes as \xNN: a C0 control
// but a line break or tab, DEL, or a C1 control.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\r' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	}
	return false
}

// printableWriter passes what is written through printable: the terminal
// table writes whole lines, so no character is split between writes.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, printable(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
