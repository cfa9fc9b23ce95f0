package load

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
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

// IDPlaceholder, in a Request's URL, header values or body, is replaced by
// the request's number: 1 for the first request of a run, 2 for the next,
// and so on, warm-up included.
const IDPlaceholder = "${id}"

// segment is a piece of a request template: literal bytes, or the
// request's number.
type segment struct {
	lit []byte
	id  bool
}

// template is text with IDPlaceholder in it, split into segments.
type template []segment

// parseTemplate splits s at each IDPlaceholder.
func parseTemplate(s string) template {
	var t template
	for {
		i := strings.Index(s, IDPlaceholder)
		if i < 0 {
			break
		}
		if i > 0 {
			t = append(t, segment{lit: []byte(s[:i])})
		}
		t = append(t, segment{id: true})
		s = s[i+len(IDPlaceholder):]
	}
	if s != "" {
		t = append(t, segment{lit: []byte(s)})
	}
	return t
}

// render appends the template with id in place of IDPlaceholder.
func (t template) render(b []byte, id uint64) []byte {
	for _, s := range t {
		if s.id {
			b = strconv.AppendUint(b, id, 10)
		} else {
			b = append(b, s.lit...)
		}
	}
	return b
}

// size returns the length of the template rendered with id.
func (t template) size(id uint64) int {
	n := 0
	for _, s := range t {
		if s.id {
			n += digits(id)
		} else {
			n += len(s.lit)
		}
	}
	return n
}

// digits returns the number of decimal digits of n.
func digits(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// target is a Request prepared once for repeated sending: its request line
// and headers as a template, and its body.
type target struct {
	name   string
	dialer int      // index into the run's dialers
	head   template // request line and headers, up to the Content-Length
	body   template
	// hasBody says a Content-Length (and body) is sent.
	hasBody bool
	// isHead marks a HEAD request, whose response has no body.
	isHead bool
}

// endpoint is where a target's connections go.
type endpoint struct {
	addr       string // host:port
	tls        bool
	serverName string
}

// prepare validates the requests and builds their templates, and returns
// the distinct endpoints they are sent to.
func prepare(reqs []Request) ([]target, []endpoint, error) {
	targets := make([]target, len(reqs))
	var endpoints []endpoint
	for i, q := range reqs {
		name := q.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		method := q.Method
		if method == "" {
			method = http.MethodGet
		}
		if !validMethod(method) {
			return nil, nil, fmt.Errorf("load: request %s: invalid method %q", name, method)
		}
		// The URL is checked with the placeholder replaced by a number.
		u, err := url.Parse(strings.ReplaceAll(q.URL, IDPlaceholder, "1"))
		if err != nil {
			return nil, nil, fmt.Errorf("load: request %s: %w", name, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("load: request %s: URL %q is not an absolute http(s) URL", name, q.URL)
		}
		ep := endpoint{addr: u.Host, tls: u.Scheme == "https", serverName: u.Hostname()}
		if u.Port() == "" {
			port := "80"
			if ep.tls {
				port = "443"
			}
			ep.addr = net.JoinHostPort(u.Hostname(), port)
		}
		di := slices.Index(endpoints, ep)
		if di < 0 {
			di = len(endpoints)
			endpoints = append(endpoints, ep)
		}

		// The request target is taken from the raw URL, so that the
		// placeholder survives: everything after the authority, without
		// the fragment.
		rest := q.URL[strings.Index(q.URL, "://")+3:]
		path := "/"
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			path = rest[j:]
			if path[0] == '?' {
				path = "/" + path
			}
		}
		if j := strings.IndexByte(path, '#'); j >= 0 {
			path = path[:j]
		}
		if strings.ContainsAny(path, " \r\n") {
			return nil, nil, fmt.Errorf("load: request %s: URL %q has spaces or line breaks in its path", name, q.URL)
		}

		host := u.Host
		var h strings.Builder
		h.WriteString(method + " " + path + " HTTP/1.1\r\n")
		for _, k := range slices.Sorted(maps.Keys(q.Header)) {
			if http.CanonicalHeaderKey(k) == "Host" && len(q.Header[k]) > 0 {
				host = q.Header[k][0]
			}
		}
		h.WriteString("Host: " + host + "\r\n")
		h.WriteString("User-Agent: toll\r\n")
		for _, k := range slices.Sorted(maps.Keys(q.Header)) {
			ck := http.CanonicalHeaderKey(k)
			switch ck {
			case "Host", "Content-Length", "Transfer-Encoding", "Connection":
				continue // set by toll
			}
			if !validHeaderName(k) {
				return nil, nil, fmt.Errorf("load: request %s: invalid header name %q", name, k)
			}
			for _, v := range q.Header[k] {
				if !httpguts.ValidHeaderFieldValue(v) {
					return nil, nil, fmt.Errorf("load: request %s: header %s has a line break or another control character", name, k)
				}
				h.WriteString(ck + ": " + v + "\r\n")
			}
		}
		hasBody := len(q.Body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
		targets[i] = target{
			name: name, dialer: di,
			head: parseTemplate(h.String()), body: parseTemplate(string(q.Body)),
			hasBody: hasBody, isHead: method == http.MethodHead,
		}
	}
	return targets, endpoints, nil
}

// render writes the request numbered id into b.
func (t *target) render(b []byte, id uint64) []byte {
	b = t.head.render(b[:0], id)
	if t.hasBody {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(t.body.size(id)), 10)
		b = append(b, "\r\n\r\n"...)
		return t.body.render(b, id)
	}
	return append(b, "\r\n"...)
}

// validMethod reports whether m is an HTTP token.
func validMethod(m string) bool { return validHeaderName(m) }

// validHeaderName reports whether s is an HTTP token (RFC 9110 section 5.6.2).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

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
