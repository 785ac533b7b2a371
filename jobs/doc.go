// Package jobs is the registry of a session's background work: commands
// started by bash with run_in_background, sub-agents, and whatever kinds
// a host adds.
//
// A [Registry] holds a session's jobs. [FromState] gives every tool of a
// session the same one, kept in its tools.State and closed with it. A
// tool starts a job with [Registry.Start], giving its kind, a title and
// a [Stopper]; it then does the work, writes the job's output to the
// [Job] (an io.Writer) and reports how the work ended with [Job.End].
// The registry does not run anything itself: each kind knows how to run
// and stop its work, and the registry knows which jobs there are.
//
// # Status
//
// A job is running, then stopping once a stop was asked, and ends
// completed (it finished by itself, whatever its exit status), killed
// (stopped, or ended by a signal), failed (a sub-agent's error) or lost
// (the process that ran it ended first, so how it ended is unknown). Its
// [Info] carries its id (job1, job2, ..., one sequence for every kind),
// kind, title, status, start and end times, exit status or final answer,
// and how much it printed.
//
// # Output
//
// Each job keeps the last Config.Window bytes of its output in memory,
// readable from any offset still held ([Job.Read]). Its whole output goes
// to the kind's spill (Spec.Spill) up to Config.MaxOutput bytes for the
// whole registry, so a session's jobs cannot fill the disk however much
// they print. A kind that saves output through its own writer (the bash
// jobs' saved windows) counts it against the same cap with
// [Registry.TakeOutput].
//
// # Limits
//
// Config.MaxRunning bounds the jobs live at once; Config.MaxKept bounds
// the jobs remembered, the oldest ended ones forgotten first. Start fails
// with [CodeTooManyJobs] past either.
//
// # Completion notices
//
// When a job ends it is queued for [Registry.TakeEnded] and
// Config.OnEnd is called. The agent loop takes the queue after each step
// (and after each user message) and tells the model, one reminder line
// per job ([Info.Notice], Source [NoticeSource]), such as
//
//	job job3 (bash) completed, exit 0; read it with bash_output {"job_id":"job3"}
//
// so the model need not poll. The loop logs each reminder and emits it
// as an event, so resume and replay send the same turn. A job whose end
// a tool already showed the model ([Job.Shown]) gets no notice.
//
// # Tools
//
// [Tools] returns the model's tools over every kind of job: job_list
// (each job's id, kind, status, duration, output size and title),
// job_output (a job's output by byte offset, with limit and wait_ms, its
// status, and a sub-agent's final answer) and job_stop (stop, wait, and
// report the status). The kinds' own tools (bash_output, bash_kill) stay
// beside them.
//
// # Restarts
//
// Jobs do not survive the process that ran them. [Registry.Lose] records
// a job known from a session's log as lost, with the output it had
// printed, so that a resumed session can still list and read it (the
// agent loop logs its jobs and restores them on resume). Lost jobs are
// queued for TakeEnded, so the model is told; new jobs are numbered after
// the restored ones. [Registry.Reattach] instead takes a job up again as
// a running job under its id: work that waited durably (a sub-agent
// whose session waits for an approval) and that this process goes on
// with.
//
// # Imports
//
// It imports harness and tools only; the shell tools and the agent's
// sub-agent tool import it.
package jobs
