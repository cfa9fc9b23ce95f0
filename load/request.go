package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// Request is one entry of the request mix: an HTTP request that Run sends
// repeatedly, in proportion to its Weight among all entries.
type Request struct {
	// Name labels the entry in error messages; optional.
	Name string
	// Method is the HTTP method; empty means GET.
	Method string
	// URL is the absolute http:// or https:// URL to request.
	URL string
	// Header holds request headers to send. A "Host" entry sets the Host
	// header (net/http ignores it in Header otherwise).
	Header http.Header
	// Body is the request body, sent with a Content-Length; empty sends none.
	Body []byte
	// Weight is the entry's share of the mix; Weight <= 0 means 1.
	Weight int
}

// target is a Request prepared once for repeated sending.
type target struct {
	tmpl *http.Request // shared by all sends and never modified after prepare
	body []byte
}

// prepare validates the requests and builds their templates.
func prepare(reqs []Request) ([]target, error) {
	targets := make([]target, len(reqs))
	for i, q := range reqs {
		name := q.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		method := q.Method
		if method == "" {
			method = http.MethodGet
		}
		tmpl, err := http.NewRequest(method, q.URL, nil)
		if err != nil {
			return nil, fmt.Errorf("load: request %s: %w", name, err)
		}
		if s := tmpl.URL.Scheme; (s != "http" && s != "https") || tmpl.URL.Host == "" {
			return nil, fmt.Errorf("load: request %s: URL %q is not an absolute http(s) URL", name, q.URL)
		}
		if q.Header != nil {
			tmpl.Header = q.Header.Clone()
		}
		if host := tmpl.Header.Get("Host"); host != "" {
			tmpl.Host = host
			tmpl.Header.Del("Host")
		}
		var body []byte
		if len(q.Body) > 0 {
			body = bytes.Clone(q.Body)
			tmpl.ContentLength = int64(len(body))
			tmpl.GetBody = func() (io.ReadCloser, error) { return newBody(body), nil }
		}
		targets[i] = target{tmpl: tmpl, body: body}
	}
	return targets, nil
}

// request returns a request to send under ctx; only its context and body are
// its own, the rest is shared with the template.
func (t *target) request(ctx context.Context) *http.Request {
	r := t.tmpl.WithContext(ctx)
	if t.body != nil {
		r.Body = newBody(t.body)
	}
	return r
}

// send sends one request and reads its response body to the end, so that the
// connection can be reused. It returns the response status (0 if none came).
func (t *target) send(ctx context.Context, rt http.RoundTripper) (status int, err error) {
	resp, err := rt.RoundTrip(t.request(ctx))
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return resp.StatusCode, err
}

// bodyReader is a request body over a shared byte slice.
type bodyReader struct{ bytes.Reader }

func newBody(b []byte) *bodyReader {
	r := new(bodyReader)
	r.Reset(b)
	return r
}

// Close implements io.Closer; there is nothing to release.
func (*bodyReader) Close() error { return nil }

// mix picks entries by smooth weighted round robin (nginx's algorithm): each
// pick adds every entry's weight to its current value, picks the entry with
// the largest current value (the first on ties) and subtracts the total weight
// from it. Over any total-weight consecutive picks each entry is picked exactly
// weight times, spread out rather than in runs.
type mix struct {
	weight  []int
	current []int
	total   int
}

func newMix(reqs []Request) mix {
	m := mix{weight: make([]int, len(reqs)), current: make([]int, len(reqs))}
	for i, q := range reqs {
		w := q.Weight
		if w <= 0 {
			w = 1
		}
		m.weight[i] = w
		m.total += w
	}
	return m
}

// next returns the index of the next entry.
func (m *mix) next() int {
	best := 0
	for i, w := range m.weight {
		m.current[i] += w
		if m.current[i] > m.current[best] {
			best = i
		}
	}
	m.current[best] -= m.total
	return best
}
