package jvm

import (
	"strings"
	"testing"
)

// FuzzParseNMT feeds the reader of jcmd's VM.native_memory summary
// arbitrary output: never a panic, and a figure it reads is one the text
// holds (the heap's committed memory is part of the total's).
func FuzzParseNMT(f *testing.F) {
	f.Add("Native Memory Tracking:\n\nTotal: reserved=1442470KB, committed=149370KB\n-                 Java Heap (reserved=262144KB, committed=65536KB)\n")
	f.Add("Total: reserved=1GB, committed=2MB\n- Java Heap (reserved=1GB, committed=1MB)\n")
	f.Add("Native memory tracking is not enabled\n")
	f.Add("Total: reserved=18446744073709551615GB, committed=18446744073709551615GB\n")
	f.Add("Total: committed=\n")
	f.Fuzz(func(t *testing.T, out string) {
		n, err := ParseNMT(strings.NewReader(out))
		if err != nil {
			return
		}
		if n.Committed > 0 && !strings.Contains(out, "committed=") {
			t.Fatalf("read %+v from output without a committed figure", n)
		}
		_ = n.OffHeap()
	})
}
