// Package shellkit holds what the one-shot bash tool and background jobs
// (package shell) and the persistent shells (shell/internal/persistent)
// share.
//
// [Config] is the checked configuration both run with. It starts bash:
// the environment policy (an allow-list under a sandbox, the host's
// environment without credentials otherwise), the working directory of a
// call, the sandbox's wrapping and the containment of internal/proctree.
//
// [Capture] keeps one output stream in bounded memory and saves it whole
// to the session's output store once it is too long to show; [WriteStream]
// renders what the model sees of it, cleaned of terminal control
// sequences by [Clean].
//
// The rest are the small pieces every shell tool's text is made of: codes,
// statuses, durations, titles and argument checks.
//
// It imports harness, fs, tools and internal helpers.
package shellkit
