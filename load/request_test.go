package load

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestMixSmoothWeightedRoundRobin(t *testing.T) {
	m := newMix([]Request{{Weight: 5}, {Weight: 1}, {Weight: 1}})
	var picks []int
	counts := make([]int, 3)
	for range 70 {
		i := m.next()
		picks = append(picks, i)
		counts[i]++
	}
	if counts[0] != 50 || counts[1] != 10 || counts[2] != 10 {
		t.Fatalf("counts = %v, want [50 10 10]", counts)
	}
	// Every window of one period (total weight) holds each entry exactly
	// weight times: the light entries are spread out, not bunched.
	for s := 0; s+7 <= len(picks); s++ {
		w := make([]int, 3)
		for _, i := range picks[s : s+7] {
			w[i]++
		}
		if w[0] != 5 || w[1] != 1 || w[2] != 1 {
			t.Fatalf("picks[%d:%d] = %v has counts %v, want [5 1 1]", s, s+7, picks[s:s+7], w)
		}
	}
	// No long runs: nginx's sequence is a a b a c a a, so the heavy entry
	// runs at most 4 times across periods, the light ones never twice.
	run, longest := 0, map[int]int{}
	for k, i := range picks {
		if k > 0 && picks[k-1] == i {
			run++
		} else {
			run = 1
		}
		longest[i] = max(longest[i], run)
	}
	if longest[0] > 4 || longest[1] > 1 || longest[2] > 1 {
		t.Errorf("longest runs %v in %v", longest, picks)
	}
	if want := []int{0, 0, 1, 0, 2, 0, 0}; !equalInts(picks[:7], want) {
		t.Errorf("first period %v, want nginx's %v", picks[:7], want)
	}
}

func TestMixDefaultsAndDeterminism(t *testing.T) {
	reqs := []Request{{Weight: 0}, {Weight: -3}, {Weight: 2}}
	a, b := newMix(reqs), newMix(reqs)
	counts := make([]int, 3)
	for range 400 {
		i, j := a.next(), b.next()
		if i != j {
			t.Fatal("two mixes of the same weights diverged")
		}
		counts[i]++
	}
	if counts[0] != 100 || counts[1] != 100 || counts[2] != 200 {
		t.Errorf("counts = %v, want [100 100 200] (weights <= 0 mean 1)", counts)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPrepare(t *testing.T) {
	h := http.Header{"X-Test": {"1"}, "host": {"example.test"}, "X-Req": {"r-${id}"}}
	ts, eps, err := prepare([]Request{
		{Name: "a", URL: "http://127.0.0.1:1/a/${id}?q=${id}#frag", Header: h, Body: []byte("hi ${id}")},
		{Name: "b", Method: "HEAD", URL: "https://localhost"},
		{Name: "c", Method: "POST", URL: "http://127.0.0.1:1?x=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []endpoint{{addr: "127.0.0.1:1", serverName: "127.0.0.1"}, {addr: "localhost:443", tls: true, serverName: "localhost"}}
	if !slices.Equal(eps, want) {
		t.Errorf("endpoints = %+v, want %+v", eps, want)
	}
	for _, tt := range []struct {
		target int
		id     uint64
		want   string
	}{
		{0, 7, "GET /a/7?q=7 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: toll\r\nX-Req: r-7\r\nX-Test: 1\r\nContent-Length: 4\r\n\r\nhi 7"},
		{0, 12345, "GET /a/12345?q=12345 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: toll\r\nX-Req: r-12345\r\nX-Test: 1\r\nContent-Length: 8\r\n\r\nhi 12345"},
		{1, 1, "HEAD / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: toll\r\n\r\n"},
		{2, 1, "POST /?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: toll\r\nContent-Length: 0\r\n\r\n"},
	} {
		if got := string(ts[tt.target].render(nil, tt.id)); got != tt.want {
			t.Errorf("target %d, id %d:\n got %q\nwant %q", tt.target, tt.id, got, tt.want)
		}
	}
	if ts[0].dialer != 0 || ts[1].dialer != 1 || ts[2].dialer != 0 || !ts[1].isHead {
		t.Errorf("targets = %+v", ts)
	}
	if h["host"][0] != "example.test" {
		t.Error("prepare modified the caller's header")
	}

	for _, tt := range []struct {
		name string
		req  Request
		want string
	}{
		{"bad method", Request{Name: "m", Method: "GE T", URL: "http://127.0.0.1/"}, "request m"},
		{"relative URL", Request{Name: "rel", URL: "/path"}, "not an absolute http(s) URL"},
		{"other scheme", Request{URL: "ftp://127.0.0.1/"}, "request #0"},
		{"unparsable URL", Request{URL: "http://[::1/"}, "request #0"},
		{"bad header", Request{URL: "http://127.0.0.1/", Header: http.Header{"X Y": {"1"}}}, "invalid header name"},
		{"header injection", Request{URL: "http://127.0.0.1/", Header: http.Header{"X": {"1\r\nY: 2"}}}, "line break"},
		{"NUL in a header", Request{URL: "http://127.0.0.1/", Header: http.Header{"X": {"1\x00"}}}, "control character"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := prepare([]Request{tt.req})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRenderDoesNotAllocate(t *testing.T) {
	ts, _, err := prepare([]Request{{URL: "http://127.0.0.1:1/a/${id}", Body: []byte("${id}")}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	id := uint64(0)
	if n := testing.AllocsPerRun(100, func() { id++; buf = ts[0].render(buf, id) }); n != 0 {
		t.Errorf("render allocates %v times per request", n)
	}
}
