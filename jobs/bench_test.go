package jobs_test

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/go-harness/harness/jobs"
)

// BenchmarkStart measures what the registry adds to starting a job. Each
// iteration runs `echo hello` twice, interleaved, in alternating order:
// directly with os/exec in the background (start it, a goroutine copies
// its output and waits, the caller waits for the goroutine), and as a
// registered job doing the same work (Start, start the process, a
// goroutine copies its output into the job and Ends it with the exit
// status, Wait). It also times the registry's bookkeeping alone
// (Start, Write, End, Wait, no process). Reported: the time of each, and
// the ratio of the registered job to the direct start.
func BenchmarkStart(b *testing.B) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		b.Skip("no sh on PATH")
	}
	// direct runs the command in the background the plain way: a
	// goroutine copies its output and waits for it, and the caller waits
	// for that goroutine.
	direct := func() {
		cmd := exec.Command(sh, "-c", "echo hello")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan int)
		go func() {
			n, _ := io.Copy(io.Discard, out)
			_ = cmd.Wait()
			if cmd.ProcessState.ExitCode() != 0 {
				n = -1
			}
			done <- int(n)
		}()
		if n := <-done; n != 6 {
			b.Fatalf("direct run printed %d bytes", n)
		}
	}
	r := jobs.New(jobs.Config{})
	defer r.Close()
	ctx := context.Background()
	registered := func() {
		var cmd *exec.Cmd
		j, err := r.Start(jobs.Spec{Kind: jobs.Bash, Title: "echo hello", Stop: func(context.Context) error { return cmd.Process.Kill() }})
		if err != nil {
			b.Fatal(err)
		}
		cmd = exec.Command(sh, "-c", "echo hello")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		go func() {
			_, _ = io.Copy(j, out)
			_ = cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			j.End(jobs.Result{ExitCode: &code})
		}()
		info, err := r.Wait(ctx, j.ID())
		if err != nil || info.Output != 6 || *info.ExitCode != 0 {
			b.Fatalf("job ended as %+v (%v)", info, err)
		}
	}
	bookkeeping := func() {
		j, err := r.Start(jobs.Spec{Kind: jobs.Bash, Title: "echo hello", Stop: func(context.Context) error { return nil }})
		if err != nil {
			b.Fatal(err)
		}
		_, _ = j.Write([]byte("hello\n"))
		code := 0
		j.End(jobs.Result{ExitCode: &code})
		if _, err := r.Wait(ctx, j.ID()); err != nil {
			b.Fatal(err)
		}
	}
	var tDirect, tJob, tBook time.Duration
	timed := func(f func()) time.Duration { t0 := time.Now(); f(); return time.Since(t0) }
	i := 0
	for b.Loop() {
		// Alternate which goes first, so neither always follows the other.
		if i%2 == 0 {
			tDirect += timed(direct)
			tJob += timed(registered)
		} else {
			tJob += timed(registered)
			tDirect += timed(direct)
		}
		tBook += timed(bookkeeping)
		i++
		_ = r.TakeEnded()
	}
	n := float64(b.N)
	b.ReportMetric(float64(tDirect.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(tJob.Nanoseconds())/n, "job-ns/op")
	b.ReportMetric(float64(tBook.Nanoseconds())/n, "registry-only-ns/op")
	b.ReportMetric(float64(tJob)/float64(tDirect), "job/direct")
}
