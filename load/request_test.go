package load

import (
	"net/http"
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
	h := http.Header{"X-Test": {"1"}, "Host": {"example.test"}}
	ts, err := prepare([]Request{{URL: "http://127.0.0.1:1/a", Header: h, Body: []byte("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := ts[0].tmpl
	if tmpl.Method != http.MethodGet || tmpl.Host != "example.test" || tmpl.Header.Get("Host") != "" ||
		tmpl.Header.Get("X-Test") != "1" || tmpl.ContentLength != 2 {
		t.Errorf("template = %s %s host %q header %v length %d", tmpl.Method, tmpl.URL, tmpl.Host, tmpl.Header, tmpl.ContentLength)
	}
	if h.Get("Host") != "example.test" {
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prepare([]Request{tt.req})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
