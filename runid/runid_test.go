package runid

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestParseString(t *testing.T) {
	tests := []struct {
		in   string
		want ID
		ok   bool
	}{
		{"4242@1735211", ID{4242, 1735211}, true},
		{"1@0", ID{1, 0}, true},
		{"4242", ID{}, false},
		{"@17", ID{}, false},
		{"0@17", ID{}, false},
		{"-3@17", ID{}, false},
		{"12@x", ID{}, false},
		{"", ID{}, false},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("Parse(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestParseStat(t *testing.T) {
	line := "123 (a) b) c) S 1 123 123 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 98765 1000 10 18446744073709551615\n"
	st, err := parseStat([]byte(line))
	if err != nil || st.state != 'S' || st.start != 98765 {
		t.Fatalf("parseStat = %+v, %v; want state S, start 98765", st, err)
	}
	if _, err := parseStat([]byte("123 (x) S 1 2")); err == nil {
		t.Error("a short line parsed")
	}
}

func TestFromEnviron(t *testing.T) {
	tests := []struct {
		env    string
		want   ID
		ok     bool
		hasErr bool
	}{
		{"A=1\x00TOLL_RUN=7@99\x00B=2\x00", ID{7, 99}, true, false},
		{"A=1\x00XTOLL_RUN=7@99\x00", ID{}, false, false},
		{"TOLL_RUN=bad\x00", ID{}, false, true},
		{"", ID{}, false, false},
	}
	for _, tt := range tests {
		id, ok, err := fromEnviron([]byte(tt.env))
		if id != tt.want || ok != tt.ok || (err != nil) != tt.hasErr {
			t.Errorf("fromEnviron(%q) = %v, %v, %v", tt.env, id, ok, err)
		}
	}
}

// TestAlive checks that a live process is alive under its own ID only, and
// that a process that has exited is not.
func TestAlive(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if !self.Alive() {
		t.Errorf("the test process %v is not alive", self)
	}
	reused := ID{Pid: self.Pid, Start: self.Start + 1}
	if reused.Alive() {
		t.Errorf("%v, the test's pid with another start time, is alive", reused)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	gone := ID{Pid: cmd.Process.Pid, Start: self.Start}
	if gone.Alive() {
		t.Errorf("%v, an exited process, is alive", gone)
	}
}

// TestFromEnvironOfChild reads the label of a real process.
func TestFromEnvironOfChild(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	cmd.Env = append(os.Environ(), ID{Pid: 11, Start: 22}.Env())
	if err := cmd.Start(); err != nil {
		t.Skip("cannot run sleep:", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// Start returns once exec has begun; the new environment is in place
	// a moment later.
	var id ID
	var ok bool
	var err error
	for end := time.Now().Add(time.Second); !ok && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		id, ok, err = FromEnviron(cmd.Process.Pid)
	}
	if err != nil || !ok || id != (ID{11, 22}) {
		t.Errorf("FromEnviron = %v, %v, %v; want 11@22", id, ok, err)
	}
}

func TestTreeOwner(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		id     ID
		legacy bool
		ok     bool
		inUse  bool
	}{
		{TreeName("load-5000", self), self, false, true, true},
		{TreeName("q", ID{self.Pid, self.Start + 1}), ID{self.Pid, self.Start + 1}, false, true, false},
		{"quickstart-1234567", ID{Pid: 1234567}, true, true, false},
		{"quickstart-" + strconv.Itoa(self.Pid), ID{Pid: self.Pid}, true, true, true},
		{"something", ID{}, false, false, true},
		{"x-y", ID{}, false, false, true},
	}
	for _, tt := range tests {
		id, legacy, ok := TreeOwner(tt.name)
		if id != tt.id || legacy != tt.legacy || ok != tt.ok {
			t.Errorf("TreeOwner(%q) = %v, %v, %v; want %v, %v, %v", tt.name, id, legacy, ok, tt.id, tt.legacy, tt.ok)
		}
		if got := TreeInUse(tt.name); got != tt.inUse {
			t.Errorf("TreeInUse(%q) = %v, want %v", tt.name, got, tt.inUse)
		}
	}
}

func TestLabel(t *testing.T) {
	id := ID{Pid: 5, Start: 6}
	got := Label([]string{"A=1", "TOLL_RUN=1@2", "B=2", "TOLL_RUNX=3"}, id)
	want := []string{"A=1", "B=2", "TOLL_RUNX=3", "TOLL_RUN=5@6"}
	if !slices.Equal(got, want) {
		t.Errorf("Label = %q, want %q", got, want)
	}
}
