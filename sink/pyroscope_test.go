package sink

import (
	"bytes"
	"compress/gzip"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"testing"
)

// testJFR returns a real JFR recording, gzip-compressed as the Pyroscope
// Java agent sends it, and uncompressed. testdata/cpu.jfr.gz was recorded by
// OpenJDK 17 from a program spinning for 300 ms:
//
//	java -XX:StartFlightRecording:filename=cpu.jfr,settings=cpu.jfc Spin
//	gzip -9 -n cpu.jfr
//
// with cpu.jfc enabling jdk.ExecutionSample every 10 ms and nothing else.
func testJFR(t testing.TB) (gzipped, plain []byte) {
	t.Helper()
	gzipped, err := os.ReadFile("testdata/cpu.jfr.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gzipped))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return gzipped, plain
}

// testPprof returns a real pprof profile, gzip-compressed as
// runtime/pprof writes it.
func testPprof(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// formPart is one part of a multipart/form-data body.
type formPart struct {
	field string
	data  []byte
}

// multipartBody encodes parts as multipart/form-data and returns the body
// and its Content-Type.
func multipartBody(t testing.TB, parts ...formPart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		w, err := mw.CreateFormFile(p.field, p.field)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// ingestPath returns the ingest URL path with the query a Pyroscope agent
// sends; an empty format is left out.
func ingestPath(format string) string {
	q := url.Values{}
	q.Set("name", "checkout{env=test}")
	q.Set("from", "1700000000")
	q.Set("until", "1700000010")
	q.Set("spyName", "javaspy")
	q.Set("sampleRate", "100")
	if format != "" {
		q.Set("format", format)
	}
	return "/ingest?" + q.Encode()
}

func TestPyroscopeIngest(t *testing.T) {
	jfrGz, jfr := testJFR(t)
	labels := []byte{0x0a, 0x00} // a protobuf LabelsSnapshot with one empty context
	jfrForm, jfrType := multipartBody(t, formPart{"jfr", jfrGz}, formPart{"labels", labels})
	plainForm, plainType := multipartBody(t, formPart{"jfr", jfr})
	noJFR, noJFRType := multipartBody(t, formPart{"labels", labels})
	badMagic, badMagicType := multipartBody(t, formPart{"jfr", append([]byte("FLX\x00"), jfr[4:]...)})
	cutJFR, cutJFRType := multipartBody(t, formPart{"jfr", jfr[:40]})
	corruptGz, corruptGzType := multipartBody(t, formPart{"jfr", jfrGz[:len(jfrGz)/2]})
	pp := testPprof(t)
	ppForm, ppType := multipartBody(t, formPart{"profile", pp}, formPart{"sample_type_config", []byte(`{}`)})
	folded := []byte("main;App.handle;App.get 12\nmain;App.handle 3\n")
	const octets = "application/octet-stream"

	tests := []requestCase{
		{name: "jfr multipart", path: ingestPath("jfr"), contentType: jfrType, body: jfrForm,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "jfr multipart uncompressed", path: ingestPath("jfr"), contentType: plainType, body: plainForm,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "jfr body", path: ingestPath("jfr"), contentType: octets, body: jfrGz,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "jfr body gzip encoded", path: ingestPath("jfr"), contentType: octets, compress: gz, encoding: "gzip", body: jfr,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "pprof multipart", path: ingestPath("pprof"), contentType: ppType, body: ppForm,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "pprof body", path: ingestPath("pprof"), contentType: octets, body: pp,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "folded", path: ingestPath(""), contentType: "text/plain", body: folded,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "folded named", path: ingestPath("folded"), contentType: "text/plain", body: folded,
			wantStatus: 200, want: Counts{Profiles: 1}},
		{name: "lines", path: ingestPath("lines"), contentType: "text/plain", body: []byte("main;App.handle\nmain;App.get\n"),
			wantStatus: 200, want: Counts{Profiles: 1}},

		{name: "no name", path: "/ingest?format=jfr", contentType: jfrType, body: jfrForm, wantStatus: 400},
		{name: "unsupported format", path: ingestPath("trie"), contentType: octets, body: folded, wantStatus: 415},
		{name: "multipart without jfr part", path: ingestPath("jfr"), contentType: noJFRType, body: noJFR, wantStatus: 400},
		{name: "multipart folded", path: ingestPath(""), contentType: jfrType, body: jfrForm, wantStatus: 415},
		{name: "not JFR", path: ingestPath("jfr"), contentType: badMagicType, body: badMagic, wantStatus: 400},
		{name: "JFR cut short", path: ingestPath("jfr"), contentType: cutJFRType, body: cutJFR, wantStatus: 400},
		{name: "JFR chunk beyond the data", path: ingestPath("jfr"), contentType: octets, body: jfr[:len(jfr)/2], wantStatus: 400},
		{name: "corrupt gzip", path: ingestPath("jfr"), contentType: corruptGzType, body: corruptGz, wantStatus: 400},
		{name: "broken multipart", path: ingestPath("jfr"), contentType: jfrType, body: jfrForm[:len(jfrForm)/2], wantStatus: 400},
		{name: "pprof not protobuf", path: ingestPath("pprof"), contentType: octets, body: []byte{0x0a, 0x7f, 0x01}, wantStatus: 400},
		{name: "pprof empty", path: ingestPath("pprof"), contentType: octets, body: nil, wantStatus: 400},
		{name: "folded without counts", path: ingestPath("folded"), contentType: "text/plain",
			body: []byte("main;App.handle\n"), wantStatus: 400},
		{name: "folded empty", path: ingestPath(""), contentType: "text/plain", body: []byte("\n\n"), wantStatus: 400},
		{name: "GET ingest", method: http.MethodGet, path: ingestPath("jfr"), wantStatus: 405},
	}
	for i := range tests {
		tests[i].limit = 1 << 20 // room for the JFR recording, 103 KiB
	}
	runRequestCases(t, tests)
}
