package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"time"
)

const (
	// pollInterval is the longest pause between two readiness checks.
	pollInterval = 25 * time.Millisecond
	// minPoll is the shortest (PollWait).
	minPoll = time.Millisecond
	// checkTimeout bounds one readiness check, so that a service that
	// accepts but never answers does not hold the poll.
	checkTimeout = time.Second
	// refusalGrace is how long a readiness URL may answer the same
	// definite client error (see definiteRefusal) before the wait gives
	// up: a service that is starting answers 503, or nothing, but one that
	// answers 404 or 405 for this long was asked for a path or a method it
	// does not serve, and waiting out the timeout would only hide that.
	refusalGrace = 5 * time.Second
)

// waitReady polls the readiness checks of r until they all pass, the
// process exits (exited is closed), r's timeout passes or ctx is done.
// The log check reads the log openLog opens from offset logStart on.
func waitReady(ctx context.Context, r Readiness, openLog opener, logStart int64, exited <-chan struct{}) error {
	if !r.configured() {
		return nil
	}
	var lw *logWatch
	if r.Log != nil {
		lw = &logWatch{open: openLog, offset: logStart, re: r.Log}
	}
	timeout := r.timeout()
	deadline := time.Now().Add(timeout)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	began := time.Now()
	wait := time.NewTimer(pollInterval) // reset before each pause
	defer wait.Stop()
	var last error // the last check's failure, preferring one not cut short by the deadline
	var refused refusal
	for {
		err := check(rctx, client, r, lw)
		if err == nil {
			return nil
		}
		if err := refused.note(err, time.Now()); err != nil {
			return err
		}
		// A check that failed for want of time says nothing about the
		// service. (rctx.Err may still be nil then: the context learns of
		// its deadline from a timer, the dialer from the clock.)
		if last == nil || time.Now().Before(deadline) {
			last = err
		}
		wait.Reset(PollWait(time.Since(began)))
		select {
		case <-exited:
			return errors.New("process exited")
		case <-rctx.Done():
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("waiting for readiness: %w", err)
			}
			return fmt.Errorf("not ready within %v: %w", timeout, last)
		case <-wait.C:
		}
	}
}

// PollWait is the pause before the next readiness check, elapsed into
// the wait: a tenth of it, between a millisecond and 25 ms. The service's
// start-up time is when a check first passes, so the pause is its
// resolution: a tenth of itself, however quick the start (a fixed 25 ms
// read a service that starts in 30 ms as 36 or 61 ms and nothing between),
// while a slow start is checked no more often than every 25 ms.
func PollWait(elapsed time.Duration) time.Duration {
	return min(max(elapsed/10, minPoll), pollInterval)
}

// check runs each configured readiness check once.
func check(ctx context.Context, client *http.Client, r Readiness, lw *logWatch) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if lw != nil {
		if err := lw.check(); err != nil {
			return err
		}
	}
	if r.TCP != "" {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", r.TCP)
		if err != nil {
			return err
		}
		conn.Close()
	}
	if r.HTTP != "" {
		if err := checkHTTP(ctx, client, r.HTTP); err != nil {
			return err
		}
	}
	if len(r.Command) > 0 {
		return checkCommand(ctx, r)
	}
	return nil
}

// maxCommandOutput bounds what is kept of a readiness command's output, for
// the error when it never succeeds.
const maxCommandOutput = 512

// checkCommand runs r.Command once and wants it to exit 0.
func checkCommand(ctx context.Context, r Readiness) error {
	cmd := exec.CommandContext(ctx, r.Command[0], r.Command[1:]...)
	cmd.Dir, cmd.Env = r.CommandDir, r.CommandEnv
	cmd.WaitDelay = checkTimeout
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	out = bytes.TrimSpace(out)
	if len(out) > maxCommandOutput {
		out = out[len(out)-maxCommandOutput:]
	}
	if len(out) > 0 {
		return fmt.Errorf("ready command %q: %w: %s", r.Command, err, out)
	}
	return fmt.Errorf("ready command %q: %w", r.Command, err)
}

// statusError is a readiness URL's answer other than 2xx or 3xx.
type statusError struct {
	// URL is the readiness URL.
	URL string
	// Code is the answer's status code.
	Code int
	// Status is the answer's status line, "404 Not Found".
	Status string
}

// Error names the URL and its answer.
func (e *statusError) Error() string {
	return fmt.Sprintf("GET %s: %s", e.URL, e.Status)
}

// definiteRefusal reports whether a readiness URL's status code says that
// the request is wrong rather than that the service is not ready yet: a
// 4xx, but for 408 Request Timeout, 425 Too Early and 429 Too Many
// Requests, which a busy or starting server may answer.
func definiteRefusal(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return code >= 400 && code < 500
}

// refusal follows a readiness URL's answers for the same definite client
// error, given for refusalGrace without a break.
type refusal struct {
	code  int       // the status answered since since; 0 for none
	since time.Time // when it was first answered
}

// note takes the outcome of a readiness check made at now and returns an
// error once the URL has answered the same definite refusal for
// refusalGrace.
func (r *refusal) note(err error, now time.Time) error {
	var se *statusError
	if !errors.As(err, &se) || !definiteRefusal(se.Code) {
		r.code = 0
		return nil
	}
	if se.Code != r.code {
		r.code, r.since = se.Code, now
		return nil
	}
	if d := now.Sub(r.since); d >= refusalGrace {
		return fmt.Errorf("readiness URL %s answered %s to every GET for %v: "+
			"a client error says the URL or its method is wrong, not that the service is starting",
			se.URL, se.Status, d.Round(100*time.Millisecond))
	}
	return nil
}

// checkHTTP GETs url and wants a 2xx or 3xx answer; any other answer is a
// *statusError.
func checkHTTP(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return &statusError{URL: url, Code: resp.StatusCode, Status: resp.Status}
	}
	return nil
}

// maxLogLine bounds the part of one log line kept while waiting for its end;
// a longer line is matched on its first maxLogLine bytes.
const maxLogLine = 64 << 10

// logWatch looks for a line matching re in a log file as it grows.
type logWatch struct {
	open    opener // opens the log
	offset  int64  // where the next read starts
	partial []byte // the start of a line whose end has not been written yet
	re      *regexp.Regexp
	matched bool
}

// check reads what the log gained since the last call and succeeds once a
// complete line of it has matched.
func (w *logWatch) check() error {
	if w.matched {
		return nil
	}
	f, err := w.open(os.O_RDONLY)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.ReadAt(buf, w.offset)
		w.offset += int64(n)
		data := buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				w.partial = append(w.partial, data[:min(len(data), maxLogLine-len(w.partial))]...)
				break
			}
			line := append(w.partial, data[:min(i, maxLogLine-len(w.partial))]...)
			w.partial = w.partial[:0]
			data = data[i+1:]
			if w.re.Match(line) {
				w.matched = true
				return nil
			}
		}
		if err == io.EOF || n == 0 {
			return fmt.Errorf("no line of the log matches %q yet", w.re)
		}
		if err != nil {
			return fmt.Errorf("log: %w", err)
		}
	}
}
