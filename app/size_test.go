package app_test

import (
	"testing"

	"github.com/tollperf/toll/app"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in      string
		want    app.ByteSize
		wantStr string
		wantErr bool
	}{
		{in: "0", want: 0, wantStr: "0"},
		{in: "1000", want: 1000, wantStr: "1000"},
		{in: "512B", want: 512, wantStr: "512"},
		{in: "64KiB", want: 64 << 10, wantStr: "64KiB"},
		{in: " 2 MiB ", want: 2 << 20, wantStr: "2MiB"},
		{in: "1GiB", want: 1 << 30, wantStr: "1GiB"},
		{in: "1536KiB", want: 1536 << 10, wantStr: "1536KiB"},
		{in: "100KB", want: 100_000, wantStr: "100000"},
		{in: "", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "1.5MiB", wantErr: true},
		{in: "64kb", wantErr: true},
		{in: "KiB", wantErr: true},
		{in: "99999999999999999GiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := app.ParseByteSize(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseByteSize(%q) = %d, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseByteSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
			}
			if s := got.String(); s != tt.wantStr {
				t.Errorf("String() = %q, want %q", s, tt.wantStr)
			}
			var b app.ByteSize
			if err := b.Set(got.String()); err != nil || b != got {
				t.Errorf("Set(String()) = %d, %v, want %d", b, err, got)
			}
		})
	}
}
