package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// elasticServerVersion is the APM Server version the sink announces. Agents
// adapt to the server's version; a current 8.x server is what they are
// tested against, and from 8.0 on they send no unsampled transactions.
const elasticServerVersion = "8.17.0"

// elasticConfigETag is the entity tag of the (empty) central configuration
// the sink serves, so that agents polling it get 304 Not Modified as they
// would from an APM Server whose configuration has not changed.
const elasticConfigETag = `"toll-sink-empty-config"`

// elasticConfigMaxAge is how long, in seconds, an agent may cache the
// central configuration before polling again: the APM Server's default
// (apm-server.agent.config.cache.expiration, 30s).
const elasticConfigMaxAge = 30

// elasticServerInfoBody encodes the APM Server information document the
// sink answers GET / with.
func elasticServerInfoBody() ([]byte, error) {
	b, err := json.Marshal(struct {
		BuildDate    string `json:"build_date"`
		BuildSHA     string `json:"build_sha"`
		PublishReady bool   `json:"publish_ready"`
		Version      string `json:"version"`
	}{
		BuildDate:    "2024-12-10T00:00:00Z",
		BuildSHA:     "toll-sink",
		PublishReady: true,
		Version:      elasticServerVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("encode Elastic APM server information: %w", err)
	}
	return b, nil
}

// serveElasticServerInfo answers the APM Server information request, which
// Elastic agents send at start to learn the server's version.
func (s *Sink) serveElasticServerInfo(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.resp.elasticInfo)
}

// serveElasticAgentConfig answers an agent's poll of central configuration
// (agent configuration set in Kibana) as an APM Server with no
// configuration for the agent does: 200 with an empty object, or 304 when
// the agent already holds it, and a max-age that sets the next poll. The
// request's service name is not checked.
func (s *Sink) serveElasticAgentConfig(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "max-age="+strconv.Itoa(elasticConfigMaxAge)+", must-revalidate")
	w.Header().Set("Etag", elasticConfigETag)
	if r.Header.Get("If-None-Match") == elasticConfigETag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("{}"))
}

// serveElasticIntake handles a POST to the Elastic APM events intake API
// (v2) whose body, as sent, is raw: newline-delimited JSON, optionally
// compressed (Elastic's agents deflate it unless the server is on
// localhost). It counts transactions and spans as spans, metricset samples
// as metric points, and errors and log events as log records, and answers
// 202 as the APM Server does, with {"accepted": N} when the query asks for
// verbose. A request with any invalid line is rejected as a whole (400,
// with the APM Server's error document) and none of its events count.
func (s *Sink) serveElasticIntake(w http.ResponseWriter, r *http.Request, raw []byte, l *lease) {
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.rejectIntake(w, rerr)
		return
	}
	n, err := decodeIntake(body)
	if err != nil {
		s.rejectIntake(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode Elastic APM intake v2 events: %v", err)})
		return
	}
	s.c.spans.Add(n.spans)
	s.c.metricPoints.Add(n.samples)
	s.c.logRecords.Add(n.records)

	if !r.URL.Query().Has("verbose") {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	b, err := json.Marshal(struct {
		Accepted uint64 `json:"accepted"`
	}{n.events})
	if err != nil { // cannot happen: a struct of one integer
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(b)
}

// rejectIntake answers a refused intake request (serveHTTP counts it)
// with the APM Server's error document.
func (s *Sink) rejectIntake(w http.ResponseWriter, rerr *requestError) {
	type intakeError struct {
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		Accepted uint64        `json:"accepted"`
		Errors   []intakeError `json:"errors"`
	}{Errors: []intakeError{{Message: strings.ToValidUTF8(rerr.msg, "\uFFFD")}}})
	if err != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	busyHeaders(w, rerr)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rerr.status)
	_, _ = w.Write(b)
}

// intakeCounts is what one intake request held.
type intakeCounts struct {
	events  uint64 // every event but the metadata
	spans   uint64 // transactions and spans
	samples uint64 // metricset samples
	records uint64 // errors and logs
}

// intakeEvent is one line of an intake request: an object with a single
// key naming the event's type. The events' own fields are validated as
// JSON objects but not decoded; a metricset's samples are counted.
type intakeEvent struct {
	Metadata    *struct{}        `json:"metadata"`
	Transaction *struct{}        `json:"transaction"`
	Span        *struct{}        `json:"span"`
	Error       *struct{}        `json:"error"`
	Metricset   *intakeMetricset `json:"metricset"`
	Log         *struct{}        `json:"log"`
}

// intakeMetricset is the part of a metricset event the sink reads: its
// samples, an object of samples each an object such as {"value": 1.5}.
// They are counted as they are read (countSamples), not kept: a map of
// them would hold several times the line's bytes.
type intakeMetricset struct {
	Samples json.RawMessage `json:"samples"`
}

// countSamples returns the number of samples in a metricset's samples
// object; each must be an object.
func countSamples(raw json.RawMessage) (uint64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, errors.New("metricset samples is not an object")
	}
	var n uint64
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, fmt.Errorf("metricset samples: %w", err)
		}
		var sample struct{}
		if err := dec.Decode(&sample); err != nil {
			return 0, fmt.Errorf("metricset sample %q: %w", key, err)
		}
		n++
	}
	return n, nil
}

// decodeIntake decodes an intake v2 body: a metadata line, then one event
// per line. Blank lines are skipped, as the APM Server does.
func decodeIntake(body []byte) (intakeCounts, error) {
	var n intakeCounts
	sawMetadata := false
	for line := 1; len(body) > 0; line++ {
		var ln []byte
		ln, body, _ = bytes.Cut(body, []byte{'\n'})
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		var ev intakeEvent
		if err := json.Unmarshal(ln, &ev); err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		typ, kinds := "", 0
		for _, k := range []struct {
			name string
			set  bool
		}{
			{"metadata", ev.Metadata != nil},
			{"transaction", ev.Transaction != nil},
			{"span", ev.Span != nil},
			{"error", ev.Error != nil},
			{"metricset", ev.Metricset != nil},
			{"log", ev.Log != nil},
		} {
			if k.set {
				typ = k.name
				kinds++
			}
		}
		switch {
		case kinds == 0:
			return n, fmt.Errorf("line %d: no event of a known type (metadata, transaction, span, error, metricset, log)", line)
		case kinds > 1:
			return n, fmt.Errorf("line %d: more than one event type in one line", line)
		case !sawMetadata && typ != "metadata":
			return n, fmt.Errorf("line %d: %s event before the metadata, which must come first", line, typ)
		case sawMetadata && typ == "metadata":
			return n, fmt.Errorf("line %d: second metadata event", line)
		}
		switch typ {
		case "metadata":
			sawMetadata = true
			continue
		case "transaction", "span":
			n.spans++
		case "error", "log":
			n.records++
		case "metricset":
			k, err := countSamples(ev.Metricset.Samples)
			if err != nil {
				return n, fmt.Errorf("line %d: %w", line, err)
			}
			n.samples += k
		}
		n.events++
	}
	if !sawMetadata {
		return n, fmt.Errorf("no metadata event: the body is empty")
	}
	return n, nil
}
