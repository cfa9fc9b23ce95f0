package sink

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestCountsFileShared counts into a file through one mapping and reads
// the counts through another, as toll reads a sink run in a process of its
// own.
func TestCountsFileShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counts")
	w, err := CreateCountsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := OpenCountsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	s := NewCounting(w)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	body := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(5)).MarshalProto())
	for range 3 {
		resp, err := testClient().Post(s.URL()+"/v1/traces", ctPB, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	want := Counts{Requests: 3, Bytes: 3 * uint64(len(body)), Spans: 15}
	if got := r.Counts(); got != want {
		t.Errorf("counts read through another mapping: %+v, want %+v", got, want)
	}
	if got := s.Counts(); got != want {
		t.Errorf("the sink's own counts: %+v, want %+v", got, want)
	}
}

// TestOpenCountsFileRefusesOtherFiles: a file that is not a counts file is
// refused, not mapped short.
func TestOpenCountsFileRefusesOtherFiles(t *testing.T) {
	if _, err := OpenCountsFile(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("an absent file opened")
	}
	path := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCountsFile(path); err == nil {
		t.Error("a 5-byte file opened as a counts file")
	}
}
