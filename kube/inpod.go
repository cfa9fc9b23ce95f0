package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/sink"
	"github.com/tollperf/toll/torecord"
)

// The commands in this file run inside the cluster, in toll's image; each
// prints JSON lines that Runner reads back from the pod's log.

// ProbeLine is one line of `toll k8s probe`: one service's sample at Time.
type ProbeLine struct {
	Time    time.Time     `json:"time"`
	Service string        `json:"service"`
	Sample  record.Sample `json:"sample"`
}

// Probe samples, every interval until ctx is done, the processes of each
// service of run (TOLL_RUN=run and TOLL_SERVICE=NAME in their environment:
// in a pod that shares its process namespace, every container's), and
// writes a ProbeLine per service to w, with the counters of the JVM among
// a service's processes when there is one. CPU counts the processes alive
// at each sample and the children they reaped; a container's own cgroup is
// not visible from the probe's container.
func Probe(ctx context.Context, w io.Writer, interval time.Duration, runLabel string) error {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	groups := map[string][]int{}
	samplers := map[string]*probe.Members{}
	jvms := map[string]*jvmReader{}
	defer func() {
		for _, j := range jvms {
			j.close()
		}
	}()
	enc := json.NewEncoder(w)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		clear(groups)
		procs, err := fs.AllProcs()
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		for _, p := range procs {
			if p.PID == os.Getpid() {
				continue
			}
			env, err := p.Environ()
			if err != nil {
				continue // gone, or not ours to read
			}
			var svc, rl string
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, EnvService+"="); ok {
					svc = v
				} else if v, ok := strings.CutPrefix(kv, runid.EnvVar+"="); ok {
					rl = v
				}
			}
			if svc != "" && rl == runLabel {
				groups[svc] = append(groups[svc], p.PID)
			}
		}
		now := time.Now()
		for svc := range groups {
			m, ok := samplers[svc]
			if !ok {
				if m, err = probe.NewMembers(func() ([]int, error) { return groups[svc], nil }); err != nil {
					return err
				}
				samplers[svc] = m
			}
			ps, err := m.Sample()
			if err != nil {
				continue
			}
			line := ProbeLine{Time: now, Service: svc, Sample: record.Sample{CPU: ps.CPU.Seconds(), User: ps.User.Seconds(), System: ps.System.Seconds(),
				RSS: ps.RSS, Threads: ps.Threads, FDs: ps.FDs, Procs: ps.Procs}}
			if jvms[svc] == nil {
				jvms[svc] = &jvmReader{}
			}
			line.Sample.JVM = jvms[svc].read(groups[svc])
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("probe: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// jvmReader reads the counters of the JVM among a service's processes,
// from the hsperfdata file jstat reads (through /proc/PID/root, so in
// another container of the pod too). Until it finds one it looks at every
// sample, a stat per process: the probe starts with the pod, and a JVM
// creates its file only once it runs, seconds later on a busy node.
type jvmReader struct {
	r   *jvm.Reader
	pid int
}

func (j *jvmReader) read(pids []int) *record.JVMSample {
	if j.r != nil && !slices.Contains(pids, j.pid) {
		j.close() // that JVM is gone; look again
	}
	if j.r == nil {
		for _, pid := range pids {
			path, err := hsperfdata(pid)
			if err != nil {
				continue
			}
			if r, err := jvm.Open(path); err == nil {
				j.r, j.pid = r, pid
				break
			}
		}
	}
	if j.r == nil {
		return nil
	}
	c, err := j.r.Counters()
	if err != nil {
		return nil
	}
	return torecord.JVM(j.pid, c)
}

// hsperfdata finds the hsperfdata file of the JVM with pid: in this
// container's /tmp (a JVM beside the probe, or a local test), else in its
// own container's, through /proc/PID/root (the pod shares one process
// namespace, so the file's name is the pid the probe sees).
func hsperfdata(pid int) (string, error) {
	if p, err := jvm.Path(pid); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob(fmt.Sprintf("/proc/%d/root/tmp/hsperfdata_*/%d", pid, pid))
	if len(m) == 0 {
		return "", fmt.Errorf("no hsperfdata file for pid %d: %w", pid, os.ErrNotExist)
	}
	return m[0], nil
}

func (j *jvmReader) close() {
	if j.r != nil {
		j.r.Close()
		j.r = nil
	}
}

// LoadSpec is what `toll k8s load` sends: the trial's settings.
type LoadSpec struct {
	Requests []LoadRequest
	Rate     float64
	Users    int
	Think    time.Duration
	ThinkExp bool
	Ramp     time.Duration
	Warmup   time.Duration
	Duration time.Duration
	Timeout  time.Duration
	MaxConns int
	Quantum  time.Duration
	// NotBefore is the earliest start of the load (the several pods of
	// one Job share it); zero starts at once.
	NotBefore time.Time
}

// LoadLine is the one line `toll k8s load` prints when the load ends: the
// trial's timeline and what torecord.FillLoad records of the load generator's
// result (totals, latency histograms, per-second intervals).
type LoadLine struct {
	Start        time.Time         `json:"start"`
	MeasureStart time.Time         `json:"measure_start"`
	MeasureEnd   time.Time         `json:"measure_end"`
	Load         record.LoadTotals `json:"load"`
	Intervals    []record.Interval `json:"intervals"`
	Error        string            `json:"error,omitempty"`
}

// Load runs toll's load generator as spec says, from 100 ms from now or
// spec.NotBefore, whichever is later, and writes its LoadLine to w. An error cutting the load short is in the line
// and returned too.
func Load(ctx context.Context, w io.Writer, spec LoadSpec) error {
	cfg := load.Config{Warmup: spec.Warmup, Duration: spec.Duration, Timeout: spec.Timeout, MaxConns: spec.MaxConns,
		Start: time.Now().Add(100 * time.Millisecond).Truncate(time.Millisecond)}
	if cfg.Start.Before(spec.NotBefore) {
		cfg.Start = spec.NotBefore
	}
	for _, r := range spec.Requests {
		h := http.Header{}
		for k, v := range r.Headers {
			h.Set(k, v)
		}
		cfg.Requests = append(cfg.Requests, load.Request{Name: r.Name, Method: r.Method, URL: r.URL, Header: h, Body: []byte(r.Body), Weight: r.Weight})
	}
	if spec.Users > 0 {
		cfg.Users = &load.Users{N: spec.Users, Think: spec.Think, ExponentialThink: spec.ThinkExp, Ramp: spec.Ramp}
	} else {
		cfg.Pacer, cfg.Quantum = load.ConstantPacer{Rate: spec.Rate}, spec.Quantum
		cfg.Lull = load.Midway(load.Spacing(spec.Rate, spec.Quantum))
	}
	res, err := load.Run(ctx, cfg)
	line := LoadLine{Start: cfg.Start, MeasureStart: cfg.Start.Add(spec.Warmup)}
	if res != nil {
		var tr record.Trial
		torecord.FillLoad(&tr, res)
		line.Load, line.Intervals, line.MeasureEnd = tr.Load, tr.Intervals, res.MeasureEnd
	}
	if err != nil {
		line.Error = err.Error()
	}
	if werr := json.NewEncoder(w).Encode(line); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// SinkLine is one line of `toll k8s sink`: its counts at Time.
type SinkLine struct {
	Time   time.Time        `json:"time"`
	Counts record.Telemetry `json:"counts"`
}

// Sink runs a telemetry sink on addr and writes its counts to w every
// interval until ctx is done.
func Sink(ctx context.Context, w io.Writer, addr string, interval time.Duration) error {
	sk := sink.New()
	if err := sk.Start(addr); err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		sk.Close(c)
	}()
	enc := json.NewEncoder(w)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := enc.Encode(SinkLine{Time: time.Now(), Counts: torecord.Telemetry(0, sk.Counts())}); err != nil {
			return fmt.Errorf("sink: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Ready checks once that every HTTP URL answers 2xx or 3xx and every TCP
// address accepts a connection: a pod's readiness probe, run in the pod's
// network, where the services' loopback addresses are.
func Ready(ctx context.Context, urls, addrs []string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
	}
	for _, a := range addrs {
		c, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", a)
		if err != nil {
			return err
		}
		c.Close()
	}
	return nil
}

// ParseLoadSpec reads `toll k8s load --requests`' JSON.
func ParseLoadSpec(requests string) ([]LoadRequest, error) {
	var rs []LoadRequest
	dec := json.NewDecoder(bytes.NewReader([]byte(requests)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		return nil, fmt.Errorf("--requests: %w", err)
	}
	if len(rs) == 0 {
		return nil, errors.New("--requests: no request")
	}
	for i, r := range rs {
		if r.URL == "" || r.Weight < 0 {
			return nil, fmt.Errorf("--requests[%d]: want a url and a weight >= 0", i)
		}
		if rs[i].Method == "" {
			rs[i].Method = http.MethodGet
		}
	}
	return rs, nil
}
