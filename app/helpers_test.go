package app_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// runFunc is RunProvider or RunConsumer with its config bound.
type runFunc func(ctx context.Context, ready func(net.Addr)) error

// start runs a service in the background and returns its base URL and a
// function that stops it and returns what the service returned. The service
// is stopped when the test ends at the latest.
func start(t *testing.T, run runFunc) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(a net.Addr) { addrs <- a }) }()
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a.String()
	case err := <-done:
		cancel()
		t.Fatalf("service ended before it was ready: %v", err)
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatal("service not ready within 5s")
	}
	stop := sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			return errors.New("service did not stop within 15s")
		}
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop service: %v", err)
		}
	})
	return base, stop
}

// get fetches url and returns the status code and body.
func get(t *testing.T, url string, header http.Header) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer of GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}
