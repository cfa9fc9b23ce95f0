package report

import (
	"io"
	"testing"
)

// FuzzDecodeSummary feeds `toll report --from-summary` arbitrary
// summary.json contents: never a panic; one it accepts renders in the
// terminal.
func FuzzDecodeSummary(f *testing.F) {
	s := summary(f)
	good, err := JSON(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"schema_version": 999}`))
	f.Add([]byte(`{"schema_version": 0, "manifest": {}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sum, err := DecodeSummary(b)
		if err != nil {
			return
		}
		_ = Text(io.Discard, sum)
	})
}
