package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/tools"
)

// worker is a job kind for tests: a goroutine that runs until stopped
// or told to finish.
type worker struct {
	job    *jobs.Job
	stops  atomic.Int32
	quit   chan jobs.Result
	exited chan struct{}
}

func startWorker(t *testing.T, r *jobs.Registry, kind jobs.Kind) *worker {
	t.Helper()
	w := &worker{quit: make(chan jobs.Result, 1), exited: make(chan struct{})}
	j, err := r.Start(jobs.Spec{Kind: kind, Title: "work", Stop: func(context.Context) error {
		w.stops.Add(1)
		select {
		case w.quit <- jobs.Result{}:
		default:
		}
		return nil
	}})
	require.NoError(t, err)
	w.job = j
	go func() {
		defer close(w.exited)
		res := <-w.quit
		j.End(res)
	}()
	t.Cleanup(func() {
		select {
		case w.quit <- jobs.Result{}:
		default:
		}
		<-w.exited
	})
	return w
}

func (w *worker) finish(res jobs.Result) {
	w.quit <- res
	<-w.exited
}

func TestLifecycle(t *testing.T) {
	leakcheck.Check(t)
	var ended []jobs.Info
	var mu sync.Mutex
	r := jobs.New(jobs.Config{OnEnd: func(i jobs.Info) { mu.Lock(); ended = append(ended, i); mu.Unlock() }})
	a := startWorker(t, r, jobs.Bash)
	b := startWorker(t, r, jobs.Agent)
	assert.Equal(t, "job1", a.job.ID())
	assert.Equal(t, "job2", b.job.ID())

	_, _ = a.job.Write([]byte("hello "))
	_, _ = a.job.Write([]byte("world\n"))
	code := 3
	a.finish(jobs.Result{ExitCode: &code})
	b.finish(jobs.Result{Status: jobs.Failed, Detail: "the model\nwas unreachable"})

	list := r.List()
	require.Len(t, list, 2)
	assert.Equal(t, jobs.Completed, list[0].Status)
	assert.Equal(t, 3, *list[0].ExitCode)
	assert.Equal(t, int64(12), list[0].Output)
	assert.False(t, list[0].Ended.Before(list[0].Started))
	assert.Equal(t, jobs.Failed, list[1].Status)
	assert.Equal(t, "hello world\n", string(a.job.Read(0, 0).Data))
	assert.Equal(t, "world\n", string(a.job.Read(6, 0).Data))
	assert.Equal(t, "wor", string(a.job.Read(-6, 3).Data))

	// A second End is ignored, and output after the end is dropped.
	a.job.End(jobs.Result{Status: jobs.Killed})
	_, _ = a.job.Write([]byte("late"))
	assert.Equal(t, jobs.Completed, a.job.Info().Status)
	assert.Equal(t, int64(12), a.job.Info().Output)

	notices := r.TakeEnded()
	require.Len(t, notices, 2)
	assert.Equal(t, `job job1 (bash) completed, exit 3; read it with job_output {"job_id":"job1"}`, notices[0].Notice())
	assert.Equal(t, `job job2 (agent) failed (the model was unreachable); read it with job_output {"job_id":"job2"}`, notices[1].Notice())
	assert.Empty(t, r.TakeEnded(), "each end is taken once")
	mu.Lock()
	assert.Len(t, ended, 2)
	mu.Unlock()
}

func TestStopRunsTheStopperOnceAndReportsKilled(t *testing.T) {
	leakcheck.Check(t)
	r := jobs.New(jobs.Config{})
	w := startWorker(t, r, jobs.Bash)
	var wg sync.WaitGroup
	infos := make([]jobs.Info, 3)
	for i := range infos {
		wg.Go(func() {
			var err error
			infos[i], err = r.Stop(context.Background(), w.job.ID())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for _, info := range infos {
		assert.Equal(t, jobs.Killed, info.Status)
	}
	assert.Equal(t, int32(1), w.stops.Load())

	// Stopping an ended job returns it as it is.
	info, err := r.Stop(context.Background(), w.job.ID())
	require.NoError(t, err)
	assert.Equal(t, jobs.Killed, info.Status)
	assert.Equal(t, int32(1), w.stops.Load())
}

func TestStopThatDoesNotEndTheJob(t *testing.T) {
	leakcheck.Check(t)
	r := jobs.New(jobs.Config{})
	j, err := r.Start(jobs.Spec{Kind: "stubborn", Stop: func(context.Context) error { return nil }})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	info, err := j.Stop(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, harness.CodeNotStopped), err)
	assert.Equal(t, jobs.Stopping, info.Status)
	j.End(jobs.Result{})
	assert.Equal(t, jobs.Killed, j.Info().Status, "a job that ends after a stop was asked was killed")
}

func TestStopperError(t *testing.T) {
	r := jobs.New(jobs.Config{})
	boom := errors.New("boom")
	j, err := r.Start(jobs.Spec{Kind: "x", Stop: func(context.Context) error { return boom }})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = j.Stop(ctx)
	assert.ErrorIs(t, err, boom)
}

func TestWait(t *testing.T) {
	leakcheck.Check(t)
	r := jobs.New(jobs.Config{})
	w := startWorker(t, r, jobs.Bash)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	info, err := r.Wait(ctx, w.job.ID())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, jobs.Running, info.Status)
	go w.finish(jobs.Result{Answer: "done"})
	info, err = r.Wait(context.Background(), w.job.ID())
	require.NoError(t, err)
	assert.Equal(t, "done", info.Answer)

	_, err = r.Wait(context.Background(), "job9")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.Contains(t, err.Error(), "Known jobs: job1.")
}

func TestLimits(t *testing.T) {
	leakcheck.Check(t)
	r := jobs.New(jobs.Config{MaxRunning: 2, MaxKept: 3})
	a := startWorker(t, r, jobs.Bash)
	startWorker(t, r, jobs.Bash)
	_, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: func(context.Context) error { return nil }})
	require.Error(t, err)
	assert.ErrorIs(t, err, jobs.CodeTooManyJobs)
	assert.Contains(t, err.Error(), "job1, job2")

	a.finish(jobs.Result{})
	c := startWorker(t, r, jobs.Bash)
	assert.Equal(t, "job3", c.job.ID())
	c.finish(jobs.Result{})
	// Three kept: a fourth forgets the oldest ended job (job1).
	d := startWorker(t, r, jobs.Bash)
	assert.Equal(t, "job4", d.job.ID())
	var ids []string
	for _, i := range r.List() {
		ids = append(ids, i.ID)
	}
	assert.Equal(t, []string{"job2", "job3", "job4"}, ids)
	_, err = r.Get("job1")
	assert.ErrorIs(t, err, harness.CodeNotFound)
}

type sink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *sink) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *sink) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestOutputWindowAndSpillLimit(t *testing.T) {
	r := jobs.New(jobs.Config{Window: 8, MaxOutput: 10})
	s1, s2 := &sink{}, &sink{}
	stop := func(context.Context) error { return nil }
	j1, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: stop, Spill: s1})
	require.NoError(t, err)
	j2, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: stop, Spill: s2})
	require.NoError(t, err)
	_, _ = j1.Write([]byte("0123456"))
	_, _ = j2.Write([]byte("abcdef"))
	_, _ = j1.Write([]byte("789"))
	assert.Equal(t, "0123456", s1.String())
	assert.Equal(t, "abc", s2.String(), "the registry's spill budget is shared")
	assert.Equal(t, int64(3), j2.Info().Unspilled)
	assert.Equal(t, int64(3), j1.Info().Unspilled)

	w := j1.Read(0, 0)
	assert.Equal(t, int64(2), w.Offset)
	assert.Equal(t, int64(2), w.Skipped)
	assert.Equal(t, "23456789", string(w.Data))
	assert.Equal(t, int64(10), w.Next)
	w = j1.Read(w.Next, 0)
	assert.Empty(t, w.Data)
	assert.Equal(t, int64(10), w.Total)
	j1.End(jobs.Result{})
	j2.End(jobs.Result{})
}

func TestStopAllAndClosed(t *testing.T) {
	leakcheck.Check(t)
	r := jobs.New(jobs.Config{})
	a := startWorker(t, r, jobs.Bash)
	b := startWorker(t, r, jobs.Agent)
	require.NoError(t, r.StopAll(context.Background()))
	assert.Equal(t, jobs.Killed, a.job.Info().Status)
	assert.Equal(t, jobs.Killed, b.job.Info().Status)
	_, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, harness.CodeClosed)
	require.NoError(t, r.Close(), "closing twice is fine")
}

func TestStartNeedsKindAndStopper(t *testing.T) {
	r := jobs.New(jobs.Config{})
	_, err := r.Start(jobs.Spec{Kind: jobs.Bash})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
	_, err = r.Start(jobs.Spec{Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
}

func TestLose(t *testing.T) {
	r := jobs.New(jobs.Config{})
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	j, err := r.Lose(jobs.Info{ID: "job4", Kind: jobs.Bash, Title: "make", Status: jobs.Running, Started: started,
		ReadTool: "bash_output"}, []byte("compiling\n"))
	require.NoError(t, err)
	info := j.Info()
	assert.Equal(t, jobs.Lost, info.Status)
	assert.Equal(t, started, info.Started)
	assert.False(t, info.Ended.IsZero())
	assert.Equal(t, "compiling\n", string(j.Read(0, 0).Data))
	ended := r.TakeEnded()
	require.Len(t, ended, 1)
	assert.Equal(t, `job job4 (bash) lost; read it with bash_output {"job_id":"job4"}`, ended[0].Notice())

	// A job recorded as ended keeps its status and gets no notice.
	code := 0
	_, err = r.Lose(jobs.Info{ID: "job2", Kind: jobs.Bash, Status: jobs.Completed, ExitCode: &code}, nil)
	require.NoError(t, err)
	assert.Empty(t, r.TakeEnded())
	_, err = r.Lose(jobs.Info{ID: "job4"}, nil)
	assert.ErrorIs(t, err, harness.CodeExists)

	// New jobs are numbered after those known.
	n, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: func(context.Context) error { return nil }})
	require.NoError(t, err)
	assert.Equal(t, "job5", n.ID())
	n.End(jobs.Result{})
}

func TestShownJobsGetNoNotice(t *testing.T) {
	r := jobs.New(jobs.Config{})
	a := startWorker(t, r, jobs.Bash)
	a.job.Shown() // live: ignored
	b := startWorker(t, r, jobs.Bash)
	a.finish(jobs.Result{})
	b.finish(jobs.Result{})
	a.job.Shown()
	ended := r.TakeEnded()
	require.Len(t, ended, 1)
	assert.Equal(t, "job2", ended[0].ID)
}

func TestFromStateIsOnePerSession(t *testing.T) {
	st := &tools.State{}
	defer st.Close()
	r, err := jobs.FromState(st, jobs.Config{})
	require.NoError(t, err)
	again, err := jobs.FromState(st, jobs.Config{MaxRunning: 1})
	require.NoError(t, err)
	assert.Same(t, r, again)
}

func TestFromStateAfterClose(t *testing.T) {
	st := &tools.State{}
	r, err := jobs.FromState(st, jobs.Config{})
	require.NoError(t, err)
	w := startWorker(t, r, jobs.Bash)
	require.NoError(t, st.Close())
	assert.Equal(t, jobs.Killed, w.job.Info().Status, "closing the session's state stops its jobs")
	_, err = jobs.FromState(st, jobs.Config{})
	assert.ErrorIs(t, err, harness.CodeClosed)
	_, err = jobs.FromState(nil, jobs.Config{})
	assert.Error(t, err)
}

func TestReattach(t *testing.T) {
	r := jobs.New(jobs.Config{MaxRunning: 2})
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stopped := make(chan struct{})
	var j *jobs.Job
	j, err := r.Reattach(jobs.Info{ID: "job5", Kind: jobs.Agent, Title: "helper: look", Status: jobs.Running, Started: started, Output: 40},
		[]byte("so far"), jobs.Spec{Stop: func(context.Context) error { close(stopped); go j.End(jobs.Result{}); return nil }})
	require.NoError(t, err)
	info := j.Info()
	assert.Equal(t, jobs.Info{ID: "job5", Kind: jobs.Agent, Title: "helper: look", Status: jobs.Running, Started: started, Output: 40}, info,
		"the job keeps its id, kind, title, start and output count, and runs")
	assert.Equal(t, "so far", string(j.Read(0, 0).Data))
	assert.False(t, j.Ended())
	assert.Empty(t, r.TakeEnded(), "a job taken up again is no news")

	_, _ = j.Write([]byte(" and more"))
	assert.Equal(t, int64(49), j.Info().Output)
	next, err := r.Start(jobs.Spec{Kind: jobs.Bash, Stop: func(context.Context) error { return nil }})
	require.NoError(t, err)
	assert.Equal(t, "job6", next.ID(), "new jobs are numbered after it")

	_, err = r.Reattach(jobs.Info{ID: "job5", Kind: jobs.Agent}, nil, jobs.Spec{Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, harness.CodeExists)
	_, err = r.Reattach(jobs.Info{ID: "job9", Kind: jobs.Agent}, nil, jobs.Spec{Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, jobs.CodeTooManyJobs, "it counts among the running jobs")
	_, err = r.Reattach(jobs.Info{Kind: jobs.Agent}, nil, jobs.Spec{Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)

	info, err = j.Stop(context.Background())
	require.NoError(t, err)
	<-stopped
	assert.Equal(t, jobs.Killed, info.Status)
	ended := r.TakeEnded()
	require.Len(t, ended, 1)
	assert.Equal(t, "job5", ended[0].ID)
	next.End(jobs.Result{})

	require.NoError(t, r.StopAll(context.Background()))
	_, err = r.Reattach(jobs.Info{ID: "job7", Kind: jobs.Agent}, nil, jobs.Spec{Stop: func(context.Context) error { return nil }})
	assert.ErrorIs(t, err, harness.CodeClosed)
}
