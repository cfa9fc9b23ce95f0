package sink

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// serveZipkin handles a POST to the Zipkin v2 endpoint whose body, as
// sent, is raw: a JSON array of span objects, optionally gzip-compressed.
// It counts the array's elements as spans and answers 202 as Zipkin does.
// The spans' fields are not validated; each element must be a JSON object.
// Zipkin's protobuf encoding is not supported (415).
func (s *Sink) serveZipkin(w http.ResponseWriter, r *http.Request, raw []byte, l *lease) {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	if mt = strings.TrimSpace(mt); mt != "" && !strings.EqualFold(mt, "application/json") {
		s.reject(w, &requestError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Type %q (use application/json)", ct)}, noEncoding)
		return
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	n, err := countZipkin(body)
	if err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode Zipkin v2 JSON spans: %v", err)}, noEncoding)
		return
	}
	s.c.spans.Add(n)
	w.WriteHeader(http.StatusAccepted)
}

// countZipkin returns the number of spans in a Zipkin v2 JSON body, an
// array of span objects.
func countZipkin(body []byte) (uint64, error) {
	// Zero-size elements: this validates the JSON and checks that it is an
	// array of objects without copying the spans.
	var spans []struct{}
	if err := json.Unmarshal(body, &spans); err != nil {
		return 0, err
	}
	return uint64(len(spans)), nil
}
