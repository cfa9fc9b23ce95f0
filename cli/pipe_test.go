package cli

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// TestPipeTolerant writes through pipeTolerant to a pipe whose reader has
// gone: every write reports success once the reader has gone, while any
// other error is passed on.
func TestPipeTolerant(t *testing.T) {
	keepRunningOnBrokenPipe()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	p := &pipeTolerant{w: w}
	for i := range 3 {
		if n, err := p.Write([]byte("progress\n")); n != 9 || err != nil {
			t.Errorf("write %d after the reader went: %d, %v; want 9, nil", i, n, err)
		}
	}
	if !p.gone.Load() {
		t.Error("the reader's going was not noticed")
	}

	var b bytes.Buffer
	ok := &pipeTolerant{w: &b}
	if _, err := ok.Write([]byte("line\n")); err != nil || b.String() != "line\n" {
		t.Errorf("write to a live writer: %v, %q", err, b.String())
	}
	full := errors.New("no space left on device")
	bad := &pipeTolerant{w: failing{full}}
	if _, err := bad.Write([]byte("x")); !errors.Is(err, full) {
		t.Errorf("another error: %v, want it passed on", err)
	}
}

// failing is a writer that fails with err.
type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }
