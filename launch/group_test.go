package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestGroupStopsInReverseOrder(t *testing.T) {
	order := filepath.Join(t.TempDir(), "order")
	var specs []Spec
	for _, name := range []string{"a", "b", "c"} {
		script := fmt.Sprintf(`trap 'echo %s >> %s; exit 0' TERM; echo ready; while :; do sleep 0.05; done`, name, order)
		specs = append(specs, shSpec(t, name, script))
	}
	g, err := StartGroup(context.Background(), context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Stop(0) })
	services := g.Services()
	if len(services) != 3 {
		t.Fatalf("Services() has %d services, want 3", len(services))
	}
	for i, s := range services {
		if s.Spec.Name != specs[i].Name {
			t.Errorf("Services()[%d] is %s, want %s", i, s.Spec.Name, specs[i].Name)
		}
		waitLog(t, s, "ready")
	}
	if err := g.Stop(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(order)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "c\nb\na\n" {
		t.Errorf("services stopped in order %q, want c, b, a", got)
	}
	for _, s := range services {
		if s.Killed() {
			t.Errorf("%s needed SIGKILL", s.Spec.Name)
		}
	}
}

func TestStartGroupFailure(t *testing.T) {
	tests := []struct {
		name  string
		specs func(t *testing.T) []Spec
		want  []string
	}{
		{
			name: "later service fails",
			specs: func(t *testing.T) []Spec {
				bad := shSpec(t, "bad", "echo boom >&2; exit 3")
				bad.Ready = Readiness{TCP: freeAddr(t), Timeout: 5 * time.Second}
				return []Spec{shSpec(t, "good", "echo pid=$$; exec sleep 100"), bad}
			},
			want: []string{"start bad", "exit status 3", "boom"},
		},
		{
			name: "earlier service exits",
			specs: func(t *testing.T) []Spec {
				addr := freeAddr(t)
				slow := helperSpec(t, addr, 500*time.Millisecond)
				slow.Ready = Readiness{TCP: addr, Timeout: 5 * time.Second}
				return []Spec{shSpec(t, "brief", "echo pid=$$; sleep 0.1; exit 5"), slow}
			},
			want: []string{"start brief", "exited while later services started", "exit status 5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := tt.specs(t)
			g, err := StartGroup(context.Background(), context.Background(), specs)
			if err == nil {
				g.Stop(0)
				t.Fatal("StartGroup succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			data, err := os.ReadFile(specs[0].LogPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(data), "\n") {
				if p, ok := strings.CutPrefix(l, "pid="); ok {
					pid, _ := strconv.Atoi(p)
					waitGone(t, pid)
				}
			}
		})
	}
}
