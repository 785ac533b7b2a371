// Package spill keeps oversized tool output out of the model's context
// without losing it. The whole output is saved to a store; the model gets
// a preview of bounded size, with the locator of the saved copy and how
// to read the rest back.
//
// # Stores
//
// A [Store] saves outputs and lets the host clean up: DeleteSession when
// a session is deleted, Expire for outputs older than a retention period.
// Its Save and Open methods are those of tools.OutputStore, so a Store is
// passed to the agent loop as its output store, and tools find it as
// call.Env.Output.
//
// [NewDir] keeps each output in a private file: session directories 0700,
// files 0600 created exclusively, names that no id can steer out of the
// root. It says where an output's file is, so that the read tool holds
// spilled output to the session's path policy like any file. [NewMemory]
// keeps outputs in memory, for tests. The spilltest package checks any
// Store against the contract.
//
// Both keep at most a byte budget per session (4 GiB by default,
// [StoreConfig]). Past it, Save fails with an error matching
// harness.CodeSpillBudget and keeps nothing, and the preview the model
// gets says the output was not saved and why.
//
// # The policy
//
// [Middleware] is the spill policy, for the loop's dispatch chain. A
// result whose text is longer than the threshold (30,000 bytes by
// default) is saved whole and replaced by its head and tail. The cuts
// fall at line boundaries where possible, never inside a UTF-8 sequence.
// Between head and tail a notice gives the exact number of bytes omitted,
// the lines they span, the locator ("spill://...") and a read call with
// offset and limit that shows them. The preview never exceeds the
// threshold.
//
// Tools that declare Spec.NeverSpill (the read tool, which reads locators
// back) are left alone. Error results are spilled too. A failed save
// leaves the result whole and is logged.
//
// The shell tools, whose output arrives as a stream, save it to the same
// store as it arrives, in bounded memory, and show the same kind of
// preview. Their streaming writer is internal to the module.
//
// # Configuration
//
// Constructors take a Config struct whose zero value is the default. They
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
// The package imports harness, tools (the output store and middleware
// contracts it implements) and internal helpers; nothing of session or
// agent.
package spill
