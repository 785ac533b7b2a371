package jobs

// NoticeSource is the Source of the reminders that tell the model a job
// ended (harness.Reminder). The agent loop makes one per job TakeEnded
// returns, with Info.Notice as its text.
const NoticeSource = "jobs"
