package pin

import (
	"os"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want CPUs
		str  string
		bad  bool
	}{
		{in: "0", want: CPUs{0}, str: "0"},
		{in: "1-3", want: CPUs{1, 2, 3}, str: "1-3"},
		{in: "0,2-3,7", want: CPUs{0, 2, 3, 7}, str: "0,2-3,7"},
		{in: "3-1", bad: true},
		{in: "a", bad: true},
		{in: "1,,2", bad: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("Parse(%q) accepted", tt.in)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) || got.String() != tt.str {
			t.Errorf("Parse(%q) = %v %q %v", tt.in, got, got.String(), err)
		}
	}
}

func TestProcessPinsAllThreads(t *testing.T) {
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	one := CPUs{online[len(online)-1]}
	defer online.Process(os.Getpid())
	if err := one.Process(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	got, err := Online()
	if err != nil || !reflect.DeepEqual(got, one) {
		t.Errorf("after pinning to %v the thread runs on %v (%v)", one, got, err)
	}
}
