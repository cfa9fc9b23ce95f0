package sink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// SkyWalking's OAP server takes an agent's reports over HTTP as JSON, the
// protocol buffers' JSON mapping (apache/skywalking-data-collect-protocol):
//
//	POST /v3/segment                    one SegmentObject
//	POST /v3/segments                   an array of SegmentObjects
//	POST /v3/logs                       an array of LogData
//	POST /v3/management/reportProperties, /v3/management/keepAlive
//
// The Python agent (apache-skywalking, SW_AGENT_PROTOCOL=http) posts one
// segment per request; the Java and Go agents speak gRPC only. The sink
// counts a segment's spans as spans and each LogData as a log record, and
// answers the management calls as the OAP does, with an empty JSON object
// (the Commands the agent should run: none).

// skywalkingSegment is what the sink reads of a SegmentObject: its spans,
// as zero-size elements so that nothing is copied.
type skywalkingSegment struct {
	Spans []struct{} `json:"spans"`
}

// serveSkyWalking handles a POST of segments or logs to ep.
func (s *Sink) serveSkyWalking(w http.ResponseWriter, r *http.Request, ep endpoint, raw []byte, l *lease) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := strings.Cut(ct, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			s.reject(w, &requestError{status: http.StatusUnsupportedMediaType,
				msg: fmt.Sprintf("unsupported Content-Type %q (use application/json)", ct)}, noEncoding)
			return
		}
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	var spans, logs uint64
	var err error
	switch ep {
	case skywalkingSegment1:
		spans, err = countSkyWalkingSegments(body, false)
	case skywalkingSegments:
		spans, err = countSkyWalkingSegments(body, true)
	case skywalkingLogs:
		logs, err = countJSONArray(body)
	}
	if err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode SkyWalking %s: %v", ep.skywalkingWhat(), err)}, noEncoding)
		return
	}
	s.c.spans.Add(spans)
	s.c.logRecords.Add(logs)
	s.serveSkyWalkingManagement(w)
}

// serveSkyWalkingManagement answers an agent's management call (instance
// properties, keep-alive) and a report, as the OAP does: no commands.
func (s *Sink) serveSkyWalkingManagement(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("{}"))
}

// countSkyWalkingSegments returns the number of spans in one segment
// object, or in an array of them (many).
func countSkyWalkingSegments(body []byte, many bool) (uint64, error) {
	if !many {
		var seg skywalkingSegment
		if err := strictObject(body, &seg); err != nil {
			return 0, err
		}
		return uint64(len(seg.Spans)), nil
	}
	var segs []skywalkingSegment
	if err := json.Unmarshal(body, &segs); err != nil {
		return 0, err
	}
	var n uint64
	for _, seg := range segs {
		n += uint64(len(seg.Spans))
	}
	return n, nil
}

// strictObject decodes body, which must be one JSON object, into v.
func strictObject(body []byte, v any) error {
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("want a JSON object")
	}
	return json.Unmarshal(body, v)
}

// countJSONArray returns the number of objects in a JSON array.
func countJSONArray(body []byte) (uint64, error) {
	var xs []struct{}
	if err := json.Unmarshal(body, &xs); err != nil {
		return 0, err
	}
	return uint64(len(xs)), nil
}

// skywalkingWhat names what ep carries, for errors.
func (ep endpoint) skywalkingWhat() string {
	switch ep {
	case skywalkingSegments:
		return "segments"
	case skywalkingLogs:
		return "logs"
	}
	return "segment"
}
