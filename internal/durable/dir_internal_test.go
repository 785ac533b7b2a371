package durable

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedDir returns a Dir whose syncs each wait for a value on gate and
// report on began when they start.
func gatedDir(t *testing.T) (d *Dir, began chan int, gate chan error) {
	t.Helper()
	d = NewDir(t.TempDir())
	began, gate = make(chan int, 16), make(chan error)
	n := 0
	d.sync = func(string) error {
		n++ // under no lock: one sync runs at a time, which this checks
		began <- n
		return <-gate
	}
	return d, began, gate
}

// waitCounter is a Dir's mutex as its condition's Locker, counting the
// waits: sync.Cond.Wait unlocks once the caller is on the list a
// Broadcast wakes, and nothing else unlocks through the condition.
type waitCounter struct {
	mu    *sync.Mutex
	waits *atomic.Int32
}

func (w waitCounter) Lock() { w.mu.Lock() }

func (w waitCounter) Unlock() {
	w.waits.Add(1)
	w.mu.Unlock()
}

// Callers that ask while a sync runs share the next one, and none of
// them returns on the sync that was running when it asked (it may have
// started before the caller's link).
func TestDirSyncsCoalesce(t *testing.T) {
	d, began, gate := gatedDir(t)
	var waits atomic.Int32
	d.done = sync.NewCond(waitCounter{&d.mu, &waits})
	first := make(chan error, 1)
	go func() { first <- d.Sync() }()
	require.Equal(t, 1, <-began)

	const waiters = 10
	var wg sync.WaitGroup
	returned := make(chan error, waiters)
	for range waiters {
		wg.Go(func() { returned <- d.Sync() })
	}
	// Let them all reach the wait: each waits once while the first sync
	// runs, however slowly the machine starts them.
	require.Eventually(t, func() bool { return waits.Load() == waiters }, time.Minute, time.Millisecond)
	d.mu.Lock()
	assert.Equal(t, uint64(1), d.started, "the waiters started no sync of their own")
	d.mu.Unlock()

	gate <- nil // the first sync ends
	require.NoError(t, <-first)
	assert.Equal(t, 2, <-began, "the waiters need a sync that started after they asked")
	assert.Empty(t, returned, "no waiter returned on the sync that ran when it asked")
	gate <- errors.New("disk on fire")
	wg.Wait()
	close(returned)
	for err := range returned {
		assert.EqualError(t, err, "disk on fire", "every waiter gets the error of the sync that served it")
	}
	assert.Equal(t, 2, d.syncs, "ten callers, one sync for all of them")
	assert.Empty(t, began)
}

// With no sync running, a caller syncs at once, and each later caller
// syncs again.
func TestDirSyncsInTurn(t *testing.T) {
	d := NewDir(t.TempDir())
	for i := range 3 {
		require.NoError(t, d.Sync())
		assert.Equal(t, i+1, d.syncs)
	}
	missing := NewDir(t.TempDir() + "/missing")
	assert.Error(t, missing.Sync(), "a directory that is not there is an error")
}
