package jvm

import (
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// TestValuesInitTime: a JVM's init time is read only when its counters
// hold a start and a later end of initialisation.
func TestValuesInitTime(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name       string
		start, end time.Time
		want       float64
	}{
		{"both", start, start.Add(1500 * time.Millisecond), 1.5},
		{"no start", time.Time{}, start, 0},
		{"not done", start, time.Time{}, 0},
	}
	for _, tt := range tests {
		got := Values(Counters{VMStart: tt.start, VMInitDone: tt.end, GCTime: 2 * time.Second})
		if got["init_s"] != tt.want || got["gc_time"] != 2 {
			t.Errorf("%s: %v, want init %v s", tt.name, got, tt.want)
		}
	}
}

// TestValuesNameMetrics: every metric the JVM reads from its samples
// (not Own) has a value of that name, and a typed reading of an older
// trial file reads as the same values.
func TestValuesNameMetrics(t *testing.T) {
	c := Counters{HeapUsed: 1, HeapCommitted: 2, MetaspaceUsed: 3, MetaspaceCommitted: 4, ClassSpaceUsed: 5,
		ClassesLoaded: 6, ClassesUnloaded: 7, GCCount: 8, GCTime: 9 * time.Second, Threads: 10, PeakThreads: 11,
		JITCompiles: 12, JITTime: 13 * time.Second, VMStart: time.Unix(1, 0), VMInitDone: time.Unix(15, 0)}
	got := Values(c)
	for _, m := range (Runtime{}).Metrics() {
		if _, ok := got[m.Name]; !ok && !m.Own {
			t.Errorf("no value %s", m.Name)
		}
	}
	old := record.JVMSample{HeapUsed: 1, HeapCommitted: 2, MetaspaceUsed: 3, MetaspaceCommitted: 4, ClassSpaceUsed: 5,
		ClassesLoaded: 6, ClassesUnloaded: 7, GCCount: 8, GCTime: 9, Threads: 10, PeakThreads: 11,
		JITCompiles: 12, JITTime: 13, InitS: 14}
	want := old.Values()
	if len(got) != len(want) {
		t.Errorf("%d values, a typed reading %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, a typed reading %v", k, got[k], v)
		}
	}
}

// TestGCName names each collector by the names its counters carry, in the
// JDK versions that name them differently.
func TestGCName(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"Copy", "MSC"}, "Serial"},
		{[]string{"Serial young collection pauses", "Serial full collection pauses"}, "Serial"},
		{[]string{"PSScavenge", "PSParallelCompact"}, "Parallel"},
		{[]string{"Parallel young collection pauses", "Parallel full collection pauses"}, "Parallel"},
		{[]string{"G1 incremental collections", "G1 stop-the-world full collections", "G1 stop-the-world phases"}, "G1"},
		{[]string{"G1 young collection pauses", "G1 full collection pauses", "G1 concurrent cycle pauses"}, "G1"},
		{[]string{"Z concurrent cycle pauses"}, "Z"},
		{[]string{"ZGC Minor Pauses", "ZGC Major Pauses"}, "Z"},
		{[]string{"Shenandoah Pauses"}, "Shenandoah"},
		{[]string{"Mystery young", "Mystery old"}, "Mystery young+Mystery old"},
	} {
		if got := GCName(tt.names); got != tt.want {
			t.Errorf("GCName(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}
