package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHandleInterrupts checks the two steps of an interrupt: the first
// signal cancels the run, the second closes stopNow, and later ones are
// taken without effect (toll never exits early).
func TestHandleInterrupts(t *testing.T) {
	sigs := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopNow := make(chan struct{})
	go handleInterrupts(sigs, cancel, stopNow)

	sigs <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel the run")
	}
	select {
	case <-stopNow:
		t.Fatal("the first signal closed stopNow")
	case <-time.After(50 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	select {
	case <-stopNow:
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not close stopNow")
	}
	for range 3 {
		select {
		case sigs <- syscall.SIGTERM: // taken, no panic on a closed channel
		case <-time.After(5 * time.Second):
			t.Fatal("a third signal was not taken")
		}
	}
}
