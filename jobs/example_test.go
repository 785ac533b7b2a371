package jobs_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness/jobs"
)

// A kind of job: the work runs in a goroutine, writes its output to the
// job and ends it; the stopper cancels the work.
func Example() {
	r := jobs.New(jobs.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(context.Context) error { cancel(); return nil }
	j, err := r.Start(jobs.Spec{Kind: "count", Title: "count to three", Stop: stop})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		for i := 1; i <= 3 && ctx.Err() == nil; i++ {
			fmt.Fprintf(j, "%d\n", i)
		}
		code := 0
		j.End(jobs.Result{ExitCode: &code})
	}()

	info, err := r.Wait(ctx, j.ID())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %s, printed %q\n", info.ID, info.Status, j.Read(0, 0).Data)
	for _, ended := range r.TakeEnded() {
		fmt.Println(ended.Notice())
	}
	// Output:
	// job1 completed, printed "1\n2\n3\n"
	// job job1 (count) completed, exit 0; read it with job_output {"job_id":"job1"}
}
