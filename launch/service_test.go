package launch

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestStartReady(t *testing.T) {
	const delay = 200 * time.Millisecond
	tests := []struct {
		name      string
		ready     func(addr string) Readiness
		helper    bool
		minStart  time.Duration
		checkHTTP bool
	}{
		{"http", func(a string) Readiness { return Readiness{HTTP: "http://" + a + "/"} }, true, delay, true},
		{"http redirect", func(a string) Readiness { return Readiness{HTTP: "http://" + a + "/redirect"} }, true, delay, true},
		{"tcp", func(a string) Readiness { return Readiness{TCP: a} }, true, delay, true},
		{"tcp and http", func(a string) Readiness { return Readiness{TCP: a, HTTP: "http://" + a + "/"} }, true, delay, true},
		{"none", func(string) Readiness { return Readiness{} }, false, 0, false},
		// A daemon with no port says it is ready in its log; the line
		// comes after a first one that does not match and a delay.
		{"log", func(string) Readiness { return Readiness{Log: regexp.MustCompile(`^probes attached`)} }, false, delay, false},
		// A daemon whose own tool says it is up: the command fails until
		// the daemon has written its file.
		{"command", func(string) Readiness { return Readiness{Command: []string{"test", "-e", "up"}} }, false, delay, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			spec := shSpec(t, "sleeper", "exec sleep 100")
			if tt.name == "log" {
				spec = shSpec(t, "daemon", "echo attaching; sleep 0.2; printf 'probes attached\\n'; exec sleep 100")
			}
			if tt.name == "command" {
				spec = shSpec(t, "daemon", "sleep 0.2; touch up; exec sleep 100")
				spec.Dir = t.TempDir()
			}
			if tt.helper {
				spec = helperSpec(t, addr, delay)
			}
			spec.Ready = tt.ready(addr)
			spec.Ready.CommandDir = spec.Dir
			spec.Ready.Timeout = 10 * time.Second
			s, err := Start(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			stopOnCleanup(t, s)
			if s.Pid() <= 0 {
				t.Errorf("Pid() = %d", s.Pid())
			}
			if got := s.StartupTime(); got < tt.minStart {
				t.Errorf("StartupTime() = %v, want at least %v: ready before the server listened", got, tt.minStart)
			}
			if tt.checkHTTP {
				resp, err := http.Get("http://" + addr + "/")
				if err != nil {
					t.Fatalf("service not serving after Start: %v", err)
				}
				resp.Body.Close()
			}
			if err := s.Stop(5 * time.Second); err != nil {
				t.Errorf("Stop: %v", err)
			}
			if s.Killed() {
				t.Error("Killed() = true for a service that exits on SIGTERM")
			}
			select {
			case <-s.Done():
			default:
				t.Error("Done not closed after Stop")
			}
			if err := s.ExitErr(); err != nil {
				t.Errorf("ExitErr() = %v after Stop, want nil", err)
			}
			waitGone(t, s.Pid())
		})
	}
}

func TestStartFailure(t *testing.T) {
	tests := []struct {
		name    string
		spec    func(t *testing.T) Spec
		ctx     func() (context.Context, context.CancelFunc)
		want    []string
		notWant []string
		wantErr error         // errors.Is target, if any
		code    int           // exit code, if the process exited on its own
		minTook time.Duration // the least time Start may take to fail
		maxTook time.Duration // the most; 5 s when zero
	}{
		{
			name: "early exit",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "boomer", "echo pid=$$; echo boom >&2; exit 3")
				s.Ready = Readiness{TCP: freeAddr(t), Timeout: 10 * time.Second}
				return s
			},
			want: []string{"start boomer", "exited before ready", "exit status 3", "boom"},
			code: 3,
		},
		{
			name: "readiness timeout",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "deaf", "echo pid=$$; exec sleep 100")
				s.Ready = Readiness{TCP: freeAddr(t), Timeout: 300 * time.Millisecond}
				return s
			},
			want: []string{"start deaf", "not ready within 300ms", "connection refused", "pid="},
		},
		{
			name: "log: exits without the line",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "bpf", "echo 'ERROR: cannot attach uprobe'; exit 1")
				s.Ready = Readiness{Log: regexp.MustCompile(`^attached`), Timeout: 10 * time.Second}
				return s
			},
			want: []string{"start bpf", "exited before ready", "exit status 1", "cannot attach uprobe"},
			code: 1,
		},
		{
			name: "log: line never comes",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "mute", "echo 'attaching 2 probes'; exec sleep 100")
				s.Ready = Readiness{Log: regexp.MustCompile(`^attached`), Timeout: 300 * time.Millisecond}
				return s
			},
			want: []string{"start mute", "not ready within 300ms", `no line of the log matches "^attached"`, "attaching 2 probes"},
		},
		{
			name: "command: never succeeds",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "quiet", "echo pid=$$; exec sleep 100")
				s.Ready = Readiness{Command: []string{"sh", "-c", "echo not yet >&2; exit 7"}, Timeout: 300 * time.Millisecond}
				return s
			},
			want: []string{"start quiet", "not ready within 300ms", "ready command", "exit status 7", "not yet", "pid="},
		},
		{
			name: "http error status",
			spec: func(t *testing.T) Spec {
				addr := freeAddr(t)
				s := helperSpec(t, addr, 0)
				s.Ready = Readiness{HTTP: "http://" + addr + "/fail", Timeout: 500 * time.Millisecond}
				return s
			},
			want: []string{"not ready within 500ms", "500 Internal Server Error", "listening on"},
		},
		{
			// A readiness URL the service does not serve fails at once,
			// not at the timeout, and the log quoted keeps the service's
			// first line, the access lines once each, without colours.
			name: "http not found",
			spec: func(t *testing.T) Spec {
				addr := freeAddr(t)
				s := helperSpec(t, addr, 0)
				s.Ready = Readiness{HTTP: "http://" + addr + "/health", Timeout: 30 * time.Second}
				return s
			},
			want:    []string{"readiness URL http://", "/health answered 404 Not Found to every GET for 5", "listening on", "GET /health HTTP/1.1\" - (repeated "},
			notWant: []string{"\x1b", `\x1b`, "not ready within"},
			minTook: refusalGrace,
			maxTook: refusalGrace + 3*time.Second,
		},
		{
			name: "http method not allowed",
			spec: func(t *testing.T) Spec {
				addr := freeAddr(t)
				s := helperSpec(t, addr, 0)
				s.Ready = Readiness{HTTP: "http://" + addr + "/post-only", Timeout: 30 * time.Second}
				return s
			},
			want:    []string{"/post-only answered 405 Method Not Allowed"},
			minTook: refusalGrace,
			maxTook: refusalGrace + 3*time.Second,
		},
		{
			// A service that is starting answers 503: toll waits for it
			// to the timeout, past the time a 404 is given.
			name: "http unavailable waits",
			spec: func(t *testing.T) Spec {
				addr := freeAddr(t)
				s := helperSpec(t, addr, 0)
				s.Ready = Readiness{HTTP: "http://" + addr + "/starting", Timeout: refusalGrace + time.Second}
				return s
			},
			want:    []string{"not ready within 6s", "503 Service Unavailable", "listening on"},
			minTook: refusalGrace + time.Second,
			maxTook: refusalGrace + 4*time.Second,
		},
		{
			name: "canceled",
			spec: func(t *testing.T) Spec {
				s := shSpec(t, "patient", "echo pid=$$; exec sleep 100")
				s.Ready = Readiness{TCP: freeAddr(t)}
				return s
			},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 200*time.Millisecond)
			},
			want:    []string{"waiting for readiness", "pid="},
			wantErr: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			begin := time.Now()
			s, err := Start(ctx, tt.spec(t))
			if err == nil {
				s.Stop(0)
				t.Fatal("Start succeeded")
			}
			took := time.Since(begin)
			if maxTook := cmp.Or(tt.maxTook, 5*time.Second); took > maxTook || took < tt.minTook {
				t.Errorf("Start took %v to fail, want %v to %v", took, tt.minTook, maxTook)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q contains %q", err, w)
				}
			}
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *StartError", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if tt.code != 0 {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
					t.Errorf("error %v does not carry exit code %d", err, tt.code)
				}
			}
			for _, l := range se.Log {
				if p, ok := strings.CutPrefix(l, "pid="); ok {
					pid, _ := strconv.Atoi(p)
					waitGone(t, pid)
				}
			}
		})
	}
}

func TestStartInvalid(t *testing.T) {
	log := filepath.Join(t.TempDir(), "x.log")
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no argv", Spec{Name: "a", LogPath: log}, "no program"},
		{"no log", Spec{Name: "a", Argv: []string{"true"}}, "no log path"},
		{"bad url", Spec{Name: "a", Argv: []string{"true"}, LogPath: log, Ready: Readiness{HTTP: "localhost:80"}}, "readiness URL"},
		{"bad tcp", Spec{Name: "a", Argv: []string{"true"}, LogPath: log, Ready: Readiness{TCP: "localhost"}}, "readiness address"},
		{"no such program", Spec{Name: "a", Argv: []string{"/nonexistent/prog"}, LogPath: log}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(context.Background(), tt.spec)
			if err == nil {
				s.Stop(0)
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), "start a") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name the service and contain %q", err, tt.want)
			}
		})
	}
}

func TestStop(t *testing.T) {
	const grace = 300 * time.Millisecond
	tests := []struct {
		name       string
		script     string
		wantKilled bool
	}{
		{
			name:   "grandchild in group",
			script: `sleep 100 & echo ready child=$!; exec sleep 200`,
		},
		{
			name:       "group ignores SIGTERM",
			script:     `trap "" TERM; sleep 100 & echo ready child=$!; wait`,
			wantKilled: true,
		},
		{
			name:       "grandchild ignores SIGTERM",
			script:     `(trap "" TERM; exec sh -c 'echo ready child=$$; exec sleep 100') & wait`,
			wantKilled: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(context.Background(), shSpec(t, "svc", tt.script))
			if err != nil {
				t.Fatal(err)
			}
			stopOnCleanup(t, s)
			line := waitLog(t, s, "ready child=")
			child, err := strconv.Atoi(line[strings.Index(line, "=")+1:])
			if err != nil {
				t.Fatalf("bad line %q", line)
			}
			if !alive(child) {
				t.Fatalf("grandchild %d not running before Stop", child)
			}
			begin := time.Now()
			if err := s.Stop(grace); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			took := time.Since(begin)
			if s.Killed() != tt.wantKilled {
				t.Errorf("Killed() = %v, want %v", s.Killed(), tt.wantKilled)
			}
			if tt.wantKilled && took < grace {
				t.Errorf("Stop took %v, less than the %v grace", took, grace)
			}
			if alive(s.Pid()) || alive(child) {
				t.Errorf("after Stop: leader alive %v, grandchild alive %v", alive(s.Pid()), alive(child))
			}
			if err := s.ExitErr(); err != nil {
				t.Errorf("ExitErr() = %v after Stop", err)
			}
		})
	}
}

// TestStopSignal stops a service that exits on SIGINT, after writing that
// it got it, and stays on SIGTERM: with StopSignal SIGINT it stops within
// the grace and has written its line; with none it gets SIGTERM, and
// SIGKILL after the grace.
func TestStopSignal(t *testing.T) {
	const grace = 2 * time.Second
	tests := []struct {
		name       string
		sig        syscall.Signal
		wantKilled bool
	}{
		{"SIGINT", syscall.SIGINT, false},
		{"default", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := shSpec(t, "svc", `trap 'echo got INT; exit 0' INT; trap '' TERM; echo ready; while :; do sleep 0.05; done`)
			spec.StopSignal = tt.sig
			s, err := Start(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			stopOnCleanup(t, s)
			waitLog(t, s, "ready")
			if err := s.Stop(grace); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if s.Killed() != tt.wantKilled {
				t.Errorf("Killed() = %v, want %v", s.Killed(), tt.wantKilled)
			}
			log, err := os.ReadFile(spec.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(log), "got INT"); got == tt.wantKilled {
				t.Errorf("the service wrote that it got SIGINT: %v, want %v; log:\n%s", got, !tt.wantKilled, log)
			}
		})
	}
}

// TestStopContextCutsGrace stops a group that ignores SIGTERM with a long
// grace period, and cancels the context meanwhile (toll's second
// interrupt): the group must be killed at once, and a stop begun after the
// cancellation must not wait at all.
func TestStopContextCutsGrace(t *testing.T) {
	const grace = time.Minute
	for _, already := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled before=%v", already), func(t *testing.T) {
			s, err := Start(context.Background(), shSpec(t, "svc", `trap "" TERM; sleep 100 & echo ready child=$!; wait`))
			if err != nil {
				t.Fatal(err)
			}
			stopOnCleanup(t, s)
			line := waitLog(t, s, "ready child=")
			child, _ := strconv.Atoi(line[strings.Index(line, "=")+1:])
			ctx, cancel := context.WithCancel(context.Background())
			if already {
				cancel()
			} else {
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			begin := time.Now()
			if err := s.StopContext(ctx, grace); err != nil {
				t.Fatalf("StopContext: %v", err)
			}
			cancel()
			if took := time.Since(begin); took > 20*time.Second {
				t.Errorf("StopContext took %v: the grace period of %v was not cut", took, grace)
			}
			if !s.Killed() {
				t.Error("Killed() = false, want true")
			}
			if alive(s.Pid()) || alive(child) {
				t.Errorf("after StopContext: leader alive %v, grandchild alive %v", alive(s.Pid()), alive(child))
			}
		})
	}
}

func TestStopIdempotent(t *testing.T) {
	s, err := Start(context.Background(), shSpec(t, "svc", "exec sleep 100"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Stop(time.Second) })
	}
	wg.Wait()
	for i, err := range append(errs, s.Stop(time.Second)) {
		if err != nil {
			t.Errorf("Stop #%d: %v", i, err)
		}
	}
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

func TestExitErr(t *testing.T) {
	s, err := Start(context.Background(), shSpec(t, "quitter", "echo bye; echo disk on fire >&2; exit 4"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(3 * time.Second):
		s.Stop(0)
		t.Fatal("Done not closed after the process exited")
	}
	err = s.ExitErr()
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "quitter") || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("ExitErr() = %v, want an *ExitError naming quitter with exit status 4", err)
	}
	// What the service said last is in the error: why it exited.
	if err != nil && !strings.Contains(err.Error(), "last 2 log lines:\n\tbye\n\tdisk on fire") {
		t.Errorf("ExitErr() = %q, want the end of the log in it", err)
	}
	if err := s.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
	if s.ExitErr() == nil {
		t.Error("Stop after an unexpected exit cleared ExitErr")
	}
}

// TestEnding checks that Ending says a process has exited as soon as its
// main thread has, while another of its threads still runs and keeps it
// from being reaped (Done open): here a Python whose main thread calls
// pthread_exit beside a thread that sleeps.
func TestEnding(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 to end a main thread before the others")
	}
	script := "import ctypes, threading, time\n" +
		"threading.Thread(target=time.sleep, args=(60,)).start()\n" +
		"ctypes.CDLL(None).pthread_exit(None)\n"
	s, err := Start(context.Background(), Spec{Name: "ending", Argv: []string{py, "-c", script},
		LogPath: filepath.Join(t.TempDir(), "ending.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(0)
	deadline := time.Now().Add(10 * time.Second)
	for !s.Ending() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !s.Ending() {
		t.Fatal("Ending() false 10 s after the main thread exited")
	}
	select {
	case <-s.Done():
		t.Fatal("Done closed while a thread still runs: the test shows nothing")
	default:
	}
	if err := s.Stop(time.Second); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !s.Ending() {
		t.Error("Ending() false after Stop")
	}
}

func TestLog(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "logs", "svc.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, []byte("from an earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Spec{
		Name:    "svc",
		Argv:    []string{"/bin/sh", "-c", `echo out; echo err >&2; echo "dir=$(pwd) foo=$FOO"`},
		Env:     []string{"FOO=bar", "PATH=/usr/bin:/bin"},
		Dir:     dir,
		LogPath: logPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	s.Stop(0)
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "from an earlier run\nout\nerr\ndir=" + dir + " foo=bar\n"
	if string(data) != want {
		t.Errorf("log = %q, want %q", data, want)
	}
	if got, want := s.LogTail(10), []string{"out", "err", "dir=" + dir + " foo=bar"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("LogTail(10) = %q, want %q (only this run's lines)", got, want)
	}
	if got := s.LogTail(1); len(got) != 1 || got[0] != "dir="+dir+" foo=bar" {
		t.Errorf("LogTail(1) = %q", got)
	}
}

// TestPdeathsig kills a process that started a service with SIGKILL and
// checks that the service dies with it.
func TestPdeathsig(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"=launcher", logEnv+"="+filepath.Join(t.TempDir(), "sleeper.log"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("launcher: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid=")))
	if err != nil {
		t.Fatalf("launcher printed %q", line)
	}
	if !alive(pid) {
		t.Fatalf("service %d not running", pid)
	}
	cmd.Process.Kill()
	waitGone(t, pid)
}

// TestRelease checks that Stop releases what the service's place keeps
// once, after the process group is gone, whether the service was stopped,
// had exited on its own, or failed to start; and that a release that fails
// makes Stop fail.
func TestRelease(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		ready        Readiness
		startFails   bool
	}{
		{"stopped", "exec sleep 100", Readiness{}, false},
		{"exited", "exit 0", Readiness{}, false},
		{"failed start", "exit 1", Readiness{TCP: freeAddr(t), Timeout: 5 * time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls int
			var groupGone bool
			spec := shSpec(t, "svc", tc.script)
			spec.Ready = tc.ready
			var s *Service
			spec.Release = func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if s != nil {
					groupGone = s.groupGone()
				} else {
					groupGone = true // a failed start is stopped before Start returns
				}
				return errors.New("engine refused")
			}
			s, err := Start(context.Background(), spec)
			if tc.startFails {
				if err == nil || !strings.Contains(err.Error(), "engine refused") {
					t.Errorf("Start = %v, want the release's error in it", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if tc.script == "exit 0" {
					<-s.Done()
				}
				if err := s.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "engine refused") {
					t.Errorf("Stop = %v, want the release's error", err)
				}
				s.Stop(time.Second)
			}
			mu.Lock()
			defer mu.Unlock()
			if calls != 1 || !groupGone {
				t.Errorf("Release called %d times (group gone: %v), want once, after the group is gone", calls, groupGone)
			}
		})
	}
}
