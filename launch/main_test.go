package launch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// The test binary doubles as the child processes some tests need: with
// helperEnv set it runs the named helper instead of the tests.
const (
	helperEnv = "TOLL_LAUNCH_TEST_HELPER"
	addrEnv   = "TOLL_LAUNCH_TEST_ADDR"
	delayEnv  = "TOLL_LAUNCH_TEST_DELAY"
	logEnv    = "TOLL_LAUNCH_TEST_LOG"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "http":
		os.Exit(helperHTTP())
	case "launcher":
		os.Exit(helperLauncher())
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperHTTP waits for the delay in delayEnv, then serves HTTP on the address
// in addrEnv: 200 on /, a redirect on /redirect, 500 on /fail, 503 on
// /starting, 405 to a GET of /post-only, 404 elsewhere. It logs each
// request as a development server does, in colour, the time to the second.
func helperHTTP() int {
	delay, _ := time.ParseDuration(os.Getenv(delayEnv))
	time.Sleep(delay)
	ln, err := net.Listen("tcp", os.Getenv(addrEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening on", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not yet", http.StatusInternalServerError)
	})
	mux.HandleFunc("/starting", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("POST /post-only", func(w http.ResponseWriter, r *http.Request) {})
	logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("127.0.0.1 - - [%s] \"\x1b[33m%s %s %s\x1b[0m\" -\n", time.Now().Format("02/Jan/2006 15:04:05"), r.Method, r.URL.Path, r.Proto)
		mux.ServeHTTP(w, r)
	})
	fmt.Fprintln(os.Stderr, http.Serve(ln, logged))
	return 1
}

// helperLauncher plays toll: it starts a long sleep, prints its pid and
// waits to be killed.
func helperLauncher() int {
	s, err := Start(context.Background(), Spec{
		Name:    "sleeper",
		Argv:    []string{"sleep", "100"},
		LogPath: os.Getenv(logEnv),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pid=%d\n", s.Pid())
	time.Sleep(time.Minute)
	return 0
}

// helperSpec returns a spec that runs the test binary as the HTTP helper on
// addr after delay.
func helperSpec(t *testing.T, addr string, delay time.Duration) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Name: "helper",
		Argv: []string{self},
		Env: append(os.Environ(),
			helperEnv+"=http", addrEnv+"="+addr, delayEnv+"="+delay.String()),
		LogPath: filepath.Join(t.TempDir(), "helper.log"),
	}
}

// shSpec returns a spec that runs script with /bin/sh.
func shSpec(t *testing.T, name, script string) Spec {
	t.Helper()
	return Spec{
		Name:    name,
		Argv:    []string{"/bin/sh", "-c", script},
		LogPath: filepath.Join(t.TempDir(), name+".log"),
	}
}

// freeAddr returns a 127.0.0.1 address that nothing listens on (for now).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// alive reports whether pid is a live process (zombies are not: the init of
// some containers never reaps orphans).
func alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && st.State != "Z"
}

// waitGone waits up to 2 s for pid to die and fails the test if it does not.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("process %d still alive", pid)
}

// waitLog waits up to 3 s for the service's log to contain want and returns
// the matching line.
func waitLog(t *testing.T, s *Service, want string) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range s.LogTail(50) {
			if strings.Contains(l, want) {
				return l
			}
		}
	}
	t.Fatalf("log of %s never showed %q; tail: %q", s.Spec.Name, want, s.LogTail(15))
	return ""
}

// stopOnCleanup makes sure s is stopped when the test ends.
func stopOnCleanup(t *testing.T, s *Service) {
	t.Cleanup(func() { s.Stop(0) })
}
