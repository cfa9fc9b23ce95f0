package local

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/probe/scrape"
	"github.com/tollperf/toll/record"
)

// pulls says whether some service has metrics to scrape or NMT to read.
func (s *sampler) pulls() bool {
	for _, sp := range s.services {
		if sp.scrape != nil || sp.nmt {
			return true
		}
	}
	return false
}

// pullAt reads the services' own metrics at the window's start, at, unless
// ctx ends first, where some service has any (pulls): the returned group
// is done once it has. The window's end is read by the caller.
func (s *sampler) pullAt(ctx context.Context, at time.Time) *sync.WaitGroup {
	var edge sync.WaitGroup
	if s.pulls() {
		edge.Go(func() {
			timer := time.NewTimer(time.Until(at))
			defer timer.Stop()
			select {
			case <-timer.C:
				s.pull(ctx, time.Now(), false)
			case <-ctx.Done():
			}
		})
	}
	return &edge
}

// pull reads, at one edge of the window (now), every service's own metrics
// (scrape:) and, at the end, its JVM's Native Memory Tracking (nmt: true).
// The services are read at once, each bounded by its scrape's timeout.
func (s *sampler) pull(ctx context.Context, now time.Time, end bool) {
	t := now.Sub(s.t0).Seconds()
	// No connection is kept between a window's two edges, so that toll
	// holds nothing of the agent's meanwhile.
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for _, sp := range s.services {
		if sp.scrape != nil {
			wg.Go(func() {
				sctx, cancel := context.WithTimeout(ctx, sp.scrape.Timeout.D())
				defer cancel()
				ms, err := scrape.Get(sctx, client, sp.scrape.URL, sp.scrape.Metrics)
				s.mu.Lock()
				defer s.mu.Unlock()
				if err != nil {
					if sp.scrapeErr == "" {
						sp.scrapeErr = err.Error()
					}
					return
				}
				rs := record.Scrape{T: t}
				for _, m := range ms {
					rs.Metrics = append(rs.Metrics, record.ScrapedMetric{Name: m.Name, Type: m.Kind, Value: m.Value})
				}
				sp.scrapes = append(sp.scrapes, rs)
			})
		}
		if end && sp.nmt {
			wg.Go(func() { sp.readNMT(ctx, t, &s.mu) })
		}
	}
	wg.Wait()
}

// nmtTimeout bounds jcmd's attach and answer.
const nmtTimeout = 10 * time.Second

// readNMT reads the Native Memory Tracking summary of the JVM in sp's tree,
// only if the JVM was started with NMT on (jcmd attaches to it).
func (sp *serviceProbe) readNMT(ctx context.Context, t float64, mu *sync.Mutex) {
	mu.Lock()
	jp := sp.jvmOf()
	mu.Unlock()
	var n jvm.NMT
	var err error
	switch {
	case jp == nil:
		err = errors.New("nmt: no JVM found in the service's processes (hsperfdata)")
	case !jp.Reader().NMTEnabled():
		err = jvm.ErrNMTDisabled
	default:
		cctx, cancel := context.WithTimeout(ctx, nmtTimeout)
		n, err = jvm.ReadNMT(cctx, jp.Pid())
		cancel()
	}
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		sp.nmtErr = err.Error()
		return
	}
	sp.nmtRead = &record.NMT{T: t, Committed: n.Committed, HeapCommitted: n.HeapCommitted}
}
