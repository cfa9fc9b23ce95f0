package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseV2CPUStat(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    v2CPUStat
		wantErr bool
	}{
		{name: "with cpu controller", in: fixture(t, "v2/cpu.stat"),
			want: v2CPUStat{UsageUsec: 1203498, UserUsec: 1002032, SystemUsec: 201466, NrPeriods: 24, NrThrottled: 23, ThrottledUsec: 1398547}},
		{name: "no cpu controller (captured, has nice_usec)", in: fixture(t, "v2/cpu.stat.nocontroller"),
			want: v2CPUStat{UsageUsec: 234524691, UserUsec: 176832660, SystemUsec: 57692031}},
		{name: "old kernel minimal", in: fixture(t, "v2/cpu.stat.old"),
			want: v2CPUStat{UsageUsec: 5000, UserUsec: 3000, SystemUsec: 2000}},
		{name: "empty", in: nil},
		{name: "no trailing newline", in: []byte("usage_usec 7\nnr_throttled 2"), want: v2CPUStat{UsageUsec: 7, NrThrottled: 2}},
		{name: "unknown keys ignored", in: []byte("future_usec 9\nusage_usec 1\n"), want: v2CPUStat{UsageUsec: 1}},
		{name: "bad value", in: []byte("usage_usec x1\n"), wantErr: true},
		{name: "negative", in: []byte("usage_usec -1\n"), wantErr: true},
		{name: "no value", in: []byte("usage_usec\n"), wantErr: true},
		{name: "overflow", in: []byte("usage_usec 18446744073709551616\n"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseV2CPUStat(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseV1CPUStat(t *testing.T) {
	got, err := parseV1CPUStat(fixture(t, "v1/cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (v1CPUStat{NrPeriods: 13, NrThrottled: 12, ThrottledNs: 598033219}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Older kernels have no burst fields; a cgroup that was never limited
	// has zeros.
	got, err = parseV1CPUStat([]byte("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"))
	if err != nil || got != (v1CPUStat{}) {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := parseV1CPUStat([]byte("nr_periods 1 2\n")); err == nil {
		t.Error("want error for malformed line")
	}
}

func TestParseV1CPUAcctStat(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    v1CPUAcctStat
		wantErr bool
	}{
		{name: "captured", in: fixture(t, "v1/cpuacct.stat"), want: v1CPUAcctStat{UserTicks: 60}},
		{name: "both", in: []byte("user 2180\nsystem 2191\n"), want: v1CPUAcctStat{UserTicks: 2180, SystemTicks: 2191}},
		{name: "missing system", in: []byte("user 5\n"), want: v1CPUAcctStat{UserTicks: 5}},
		{name: "garbage", in: []byte("user five\n"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseV1CPUAcctStat(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := ticks(60); got != 600*time.Millisecond {
		t.Errorf("ticks(60) = %v", got)
	}
}

func TestParseSingleAndLimit(t *testing.T) {
	tests := []struct {
		file      string
		single    uint64
		limit     uint64
		singleErr bool
	}{
		{file: "v1/cpuacct.usage", single: 609527572, limit: 609527572},
		{file: "v1/memory.usage_in_bytes", single: 262144, limit: 262144},
		{file: "v1/memory.max_usage_in_bytes", single: 520192, limit: 520192},
		{file: "v1/memory.limit_in_bytes", single: 9223372036854771712, limit: 0},
		{file: "v2/memory.current", single: 5623808, limit: 5623808},
		{file: "v2/memory.peak", single: 11587584, limit: 11587584},
		{file: "v2/memory.max", single: 268435456, limit: 268435456},
		{file: "v2/memory.max.unlimited", singleErr: true, limit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := fixture(t, tt.file)
			v, err := parseSingle(b)
			if (err != nil) != tt.singleErr || (!tt.singleErr && v != tt.single) {
				t.Errorf("parseSingle = %d, %v; want %d (err %v)", v, err, tt.single, tt.singleErr)
			}
			l, err := parseLimit(b)
			if err != nil || l != tt.limit {
				t.Errorf("parseLimit = %d, %v; want %d", l, err, tt.limit)
			}
		})
	}
	for _, bad := range []string{"", "\n", "12a\n", "1 2\n", "-1\n"} {
		if _, err := parseSingle([]byte(bad)); err == nil {
			t.Errorf("parseSingle(%q): want error", bad)
		}
	}
}

func TestParseV2CPUMax(t *testing.T) {
	tests := []struct {
		in      []byte
		quota   int64
		period  uint64
		wantErr bool
	}{
		{in: fixture(t, "v2/cpu.max"), quota: 50000, period: 100000},
		{in: fixture(t, "v2/cpu.max.unlimited"), quota: -1, period: 100000},
		{in: []byte("max\n"), wantErr: true},
		{in: []byte("1 2 3\n"), wantErr: true},
		{in: []byte("x 100000\n"), wantErr: true},
	}
	for _, tt := range tests {
		q, p, err := parseV2CPUMax(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseV2CPUMax(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && (q != tt.quota || p != tt.period) {
			t.Errorf("parseV2CPUMax(%q) = %d %d, want %d %d", tt.in, q, p, tt.quota, tt.period)
		}
	}
}

func TestParsePids(t *testing.T) {
	got, err := parsePids([]byte("12\n345\n\n"), nil)
	if err != nil || len(got) != 2 || got[0] != 12 || got[1] != 345 {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := parsePids([]byte("12\nx\n"), nil); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("want error naming the bad pid, got %v", err)
	}
}

func TestParsersDoNotAllocate(t *testing.T) {
	v2 := fixture(t, "v2/cpu.stat")
	v1 := fixture(t, "v1/cpu.stat")
	acct := fixture(t, "v1/cpuacct.stat")
	n := testing.AllocsPerRun(100, func() {
		_, _ = parseV2CPUStat(v2)
		_, _ = parseV1CPUStat(v1)
		_, _ = parseV1CPUAcctStat(acct)
		_, _ = parseSingle([]byte("123\n"))
	})
	if n != 0 {
		t.Errorf("parsers allocate %v times per run, want 0", n)
	}
}
