package runtimes

import "testing"

// TestWellFormed: every runtime's name and metrics are well formed and no
// cost is named twice.
func TestWellFormed(t *testing.T) {
	if err := All().Check(); err != nil {
		t.Fatal(err)
	}
}
