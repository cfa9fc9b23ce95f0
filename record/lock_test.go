package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLockRefusesASecondOwner locks a directory twice: the second is
// refused naming the first owner, and succeeds once the first releases.
func TestLockRefusesASecondOwner(t *testing.T) {
	d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	release, err := d.Lock("toll run 1@2 (pid 1)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lock("toll run 3@4 (pid 3)"); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "pid 1") {
		t.Errorf("second lock: %v, want ErrInUse naming pid 1", err)
	}
	release()
	again, err := d.Lock("toll run 3@4 (pid 3)")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
}

// TestReadTrialsLeavesOutUnreadable reads a directory holding one good
// trial file and several that cannot be read: the good one is returned,
// each bad one named with why.
func TestReadTrialsLeavesOutUnreadable(t *testing.T) {
	d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteTrial(&Trial{Index: 1, Variant: "baseline"}); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"0002-a.json": `{"index": 2, "vari`,
		"0003-a.json": ``,
		"0004-a.json": `{"index": "four"}`,
		"0005-a.json": `{"index": 5, "schema_version": 999}`,
		"0006-a.json": `{"index": 6, "schema_version": 0}`,
		"0007-a.json": `{"index": 7, "variant": "a"}`,
	}
	for name, body := range bad {
		if err := os.WriteFile(filepath.Join(d.Path, trialsDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trials, unreadable, err := d.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 1 || trials[0].Index != 1 {
		t.Errorf("trials %+v, want trial 1 alone", trials)
	}
	if len(unreadable) != len(bad) {
		t.Fatalf("unreadable %+v, want the %d bad files", unreadable, len(bad))
	}
	for _, u := range unreadable {
		if _, ok := bad[filepath.Base(u.File)]; !ok || u.Reason == "" {
			t.Errorf("unreadable %+v", u)
		}
		if filepath.Base(u.File) == "0005-a.json" && !strings.Contains(u.Reason, "schema version 999") {
			t.Errorf("%s: %s, want the schema version said", u.File, u.Reason)
		}
		if base := filepath.Base(u.File); (base == "0006-a.json" || base == "0007-a.json") && !strings.Contains(u.Reason, "schema_version 0 (or none)") {
			t.Errorf("%s: %s, want the schema version said", u.File, u.Reason)
		}
	}
}

// TestReadManifestChecksSchemaVersion reads manifests of every schema
// version: those of this toll are read, a newer one and one below 1 (no
// toll writes it; it was read silently) are refused naming the file.
func TestReadManifestChecksSchemaVersion(t *testing.T) {
	tests := []struct {
		body string
		want string // in the error; "" for none
	}{
		{`{"scenario": "s", "schema_version": 1}`, ""},
		{`{"scenario": "s", "schema_version": 999}`, "schema version 999 is newer than this toll reads"},
		{`{"scenario": "s", "schema_version": 0}`, "schema_version 0 (or none)"},
		{`{"scenario": "s", "schema_version": -3}`, "schema_version -3 (or none)"},
		{`{"scenario": "s"}`, "schema_version 0 (or none)"},
	}
	for _, tt := range tests {
		d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.Path, manifestFile), []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = d.ReadManifest()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.body, err)
		case tt.want == "":
		case err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), manifestFile):
			t.Errorf("%s: %v, want an error naming %s and saying %q", tt.body, err, manifestFile, tt.want)
		}
	}
}

// TestLockRefusesWhatIsNotARegularFile plants a symbolic link to another
// file, a FIFO and a directory where the lock file goes: each is refused
// at once, and the link's target is left as it was.
func TestLockRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, lock, victim string)
		want  string
	}{
		{"symlink to a file", func(t *testing.T, lock, victim string) {
			if err := os.Symlink(victim, lock); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"dangling symlink", func(t *testing.T, lock, victim string) {
			if err := os.Symlink(victim+".absent", lock); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"fifo", func(t *testing.T, lock, _ string) {
			if err := unix.Mkfifo(lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"directory", func(t *testing.T, lock, _ string) {
			if err := os.Mkdir(lock, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
			if err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, filepath.Join(d.Path, lockFile), victim)
			release, err := d.Lock("toll run 1@2 (pid 1)")
			if err == nil {
				release()
				t.Fatal("locked, want a refusal")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the link's target now holds %q", b)
			}
			if _, err := os.Stat(victim + ".absent"); err == nil {
				t.Error("the dangling link's target was created")
			}
		})
	}
}

// TestSetAside sets two trials aside, one with a latency log and one
// without, twice under the same indices (a run that went from every
// variant at once to pairs, and then to one at a time): each is kept in
// its own folder, and ReadTrials reads only the trial left in place.
func TestSetAside(t *testing.T) {
	d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, why := range []string{"together", "duet"} {
		a, b := &Trial{Index: 1, Variant: "baseline"}, &Trial{Index: 2, Variant: "extra"}
		for _, tr := range []*Trial{a, b} {
			if err := d.WriteTrial(tr); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.WriteFile("trials/0001-baseline.hlog", []byte(why)); err != nil {
			t.Fatal(err)
		}
		for _, tr := range []*Trial{a, b} {
			if err := d.SetAside(tr, why); err != nil {
				t.Fatalf("%s: %v", why, err)
			}
		}
	}
	if err := d.WriteTrial(&Trial{Index: 1, Variant: "baseline"}); err != nil {
		t.Fatal(err)
	}
	for _, why := range []string{"together", "duet"} {
		for _, f := range []string{"0001-baseline.json", "0002-extra.json"} {
			if _, err := os.Stat(filepath.Join(d.Path, AsideDir, why, f)); err != nil {
				t.Errorf("%s/%s not kept: %v", why, f, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(d.Path, AsideDir, why, "0001-baseline.hlog")); err != nil || string(b) != why {
			t.Errorf("%s's latency log: %q, %v", why, b, err)
		}
	}
	trials, unreadable, err := d.ReadTrials()
	if err != nil || len(unreadable) > 0 || len(trials) != 1 || trials[0].Index != 1 {
		t.Errorf("trials %+v, unreadable %+v, %v: want trial 1 alone", trials, unreadable, err)
	}
}
