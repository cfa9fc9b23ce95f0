package jvm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseNMT(t *testing.T) {
	fixture, err := os.ReadFile("testdata/nmt-summary-jdk17.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    NMT
		wantErr string
	}{
		// JDK 17's jcmd PID VM.native_memory summary, captured here.
		{"jdk17", string(fixture), NMT{Committed: 493074 << 10, HeapCommitted: 397312 << 10}, ""},
		{"scale MB", "Total: reserved=10MB, committed=8MB\n-  Java Heap (reserved=6MB, committed=5MB)\n",
			NMT{Committed: 8 << 20, HeapCommitted: 5 << 20}, ""},
		{"disabled", "12345:\nNative memory tracking is not enabled\n", NMT{}, "not enabled"},
		{"no heap line", "Total: reserved=10KB, committed=8KB\n", NMT{}, "no NMT summary"},
		{"not a summary", "12345:\nUnknown diagnostic command\n", NMT{}, "no NMT summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNMT(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseNMT = %+v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseNMT = %+v, %v; want %+v", got, err, tt.want)
			}
			if got.OffHeap() != tt.want.Committed-tt.want.HeapCommitted {
				t.Errorf("OffHeap = %d", got.OffHeap())
			}
		})
	}
	if _, err := ParseNMT(strings.NewReader("Native memory tracking is not enabled")); !errors.Is(err, ErrNMTDisabled) {
		t.Errorf("disabled: %v, want ErrNMTDisabled", err)
	}
}

// TestLiveNMT starts a JVM with and without Native Memory Tracking: the
// hsperfdata file tells them apart, and jcmd reads the first's summary.
func TestLiveNMT(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs; skipped with -short")
	}
	for _, tool := range []string{"java", "javac", "jcmd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs a JDK: %v", err)
		}
	}
	classes := t.TempDir()
	src := filepath.Join(classes, "TollPerfServer.java")
	if err := os.WriteFile(src, []byte(serverJava), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	for _, on := range []bool{true, false} {
		var flags []string
		if on {
			flags = []string{"-XX:NativeMemoryTracking=summary"}
		}
		j := startJVM(t, classes, flags...)
		path, err := Path(j.pid)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got := r.NMTEnabled(); got != on {
			t.Fatalf("NMTEnabled() = %v for a JVM started with %q", got, flags)
		}
		n, err := ReadNMT(ctx, j.pid)
		if !on {
			if !errors.Is(err, ErrNMTDisabled) {
				t.Errorf("ReadNMT without NMT: %+v, %v; want ErrNMTDisabled", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.Counters()
		if err != nil {
			t.Fatal(err)
		}
		// -Xmx64m: the heap committed is at most 64 MiB, and the JVM
		// commits well beyond its heap (metaspace, code cache, stacks).
		if n.HeapCommitted == 0 || n.HeapCommitted > 64<<20 || n.OffHeap() < 8<<20 {
			t.Errorf("NMT %+v: want a heap of at most 64 MiB and some off-heap", n)
		}
		if c.HeapCommitted > 0 && (n.HeapCommitted < c.HeapCommitted/2 || n.HeapCommitted > 2*c.HeapCommitted) {
			t.Errorf("NMT's heap committed %d, hsperfdata's %d: far apart", n.HeapCommitted, c.HeapCommitted)
		}
		t.Logf("NMT: %+v (off-heap %d MiB); hsperfdata heap committed %d", n, n.OffHeap()>>20, c.HeapCommitted)
	}
}
