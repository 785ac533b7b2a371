// Package spill keeps oversized tool output out of the model's context
// without losing it: the whole output is saved to a store, and the model
// gets a preview of bounded size with the locator of the saved copy and
// how to read the rest back.
//
// A [Store] saves outputs (its Save and Open methods are those of
// tools.OutputStore, so a Store is passed to the agent loop as its output store
// and tools find it as call.Env.Output) and lets the host clean up:
// DeleteSession when a session is deleted, Expire for outputs older than a
// retention period. [NewDir] keeps each output in a private file (session
// directories 0700, files 0600 created exclusively, names that no id can steer
// out of the root, and says where an output's file is, so that the read
// tool holds spilled output to the session's path policy like any file);
// [NewMemory] keeps them in memory for tests. Both keep at most
// a byte budget per session (4 GiB by default, [StoreConfig]): past it
// Save fails with an error matching harness.CodeSpillBudget and keeps nothing,
// and the preview the model gets says the output was not saved and why. The
// spilltest package checks any Store against the contract.
//
// [Middleware] is the spill policy, for the loop's dispatch chain: a result
// whose text is longer than the threshold (30,000 bytes by default) is
// saved whole and replaced by its head and tail, cut at line boundaries
// where possible and never inside a UTF-8 sequence, around a notice with
// the exact number of bytes omitted, the lines they span, the locator
// ("spill://...") and a read call with offset and limit that shows them.
// The preview never exceeds the threshold. Tools that declare
// Spec.NeverSpill (the read tool, which reads locators back) are left
// alone; error results are spilled too; a failed save leaves the result
// whole and is logged.
//
// The shell tools, whose output arrives as a stream, save it to the same
// store as it arrives, in bounded memory, and show the same kind of
// preview (their streaming writer is internal to the module).
//
// Constructors take a Config struct whose zero value is the default, and
// return an error (harness.CodeInvalidOption) for an invalid value, which
// is never clamped or ignored. Wiring it into a loop:
//
//	store, err := spill.NewDir(filepath.Join(dataDir, "spill"), spill.StoreConfig{})
//	...
//	spilling, err := spill.Middleware(spill.Config{})
//	...
//	loop, err := agent.New(
//		agent.WithModel(model),
//		agent.WithStores(agent.Stores{Output: store}),
//		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling}}),
//		...
//	)
//	// From time to time:
//	store.Expire(ctx, time.Now().Add(-7*24*time.Hour))
//
// It imports harness, tools (the output store and middleware contracts it
// implements) and internal helpers; nothing of session or agent.
package spill
