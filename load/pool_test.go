package load

import (
	"testing"
	"time"
)

func TestPoolLastIdleFirstAndRetirement(t *testing.T) {
	p := newPool()
	ws := make([]*worker, 3)
	for i := range ws {
		ws[i] = &worker{jobs: make(chan job, 1)}
	}
	// Idle at 0 s, 1 s and 2 s: ws[0] has been idle longest.
	for i, w := range ws {
		if !p.put(w, time.Duration(i)*time.Second) {
			t.Fatal("put on an open pool returned false")
		}
	}
	steps := []struct {
		now         time.Duration
		want        *worker
		wantRetired int
	}{
		{now: 3 * time.Second, want: ws[2]},                            // the last to become idle; ws[0] idle 3 s, kept
		{now: idleRetire - time.Second/2, want: ws[1]},                 // ws[0] idle just under idleRetire, kept
		{now: idleRetire + 2*time.Second, want: ws[0], wantRetired: 0}, // the last one is handed out, not retired
	}
	for i, s := range steps {
		w, retired := p.get(s.now)
		if w != s.want || retired != s.wantRetired {
			t.Errorf("step %d: got worker %p, %d retired; want %p, %d", i, w, retired, s.want, s.wantRetired)
		}
	}
	if w, _ := p.get(0); w != nil {
		t.Errorf("empty pool returned worker %p", w)
	}

	// Two idle workers: getting the top one retires the bottom one once it
	// has been idle for idleRetire, and closes its jobs.
	p.put(ws[0], 0)
	p.put(ws[1], idleRetire)
	if w, retired := p.get(idleRetire + time.Millisecond); w != ws[1] || retired != 1 {
		t.Errorf("got %p, %d retired; want ws[1], 1 retired", w, retired)
	}
	if _, ok := <-ws[0].jobs; ok {
		t.Error("the retired worker's jobs are not closed")
	}

	// wait: nil while a worker is idle, else a channel put signals.
	p.put(ws[2], 0)
	if ch := p.wait(); ch != nil {
		t.Error("wait returned a channel with a worker idle")
	}
	p.get(0)
	ch := p.wait()
	if ch == nil {
		t.Fatal("wait returned nil with no worker idle")
	}
	p.put(ws[1], 0)
	select {
	case <-ch:
	default:
		t.Error("put did not signal the waiting scheduler")
	}

	// close: idle workers' jobs are closed, and put tells busy ones to exit.
	p.close()
	if _, ok := <-ws[1].jobs; ok {
		t.Error("close left an idle worker's jobs open")
	}
	if p.put(ws[2], 0) {
		t.Error("put on a closed pool returned true")
	}
}
