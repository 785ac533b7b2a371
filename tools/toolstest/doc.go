// Package toolstest is for testing tools, as net/http/httptest is for
// testing handlers: [NewEnv] builds a [tools.Env] whose parts are all in
// memory (a file system from fs/fstest, an output store from spill, an
// attachment store from session/attachments and a logger whose output the test can
// read), and [Env.Call] runs a tool with JSON arguments the way the loop
// does: the registry checks the arguments against the tool's schema, a
// returned error becomes an error result with the error's code, and a
// panic becomes a harness.CodeToolPanic result.
//
//	env := toolstest.NewEnv()
//	defer env.Close()
//	env.FS.SetFile("/project/a.txt", []byte("hi\n"), 0o644)
//	res, err := env.Call(ctx, files.Read(files.Config{}), `{"file_path":"a.txt"}`)
//
// # Tools that run programs
//
// bash and shell_open run programs in a directory on disk; an in-memory
// file system has none to give them, so over NewEnv's FS their calls
// fail saying the directory does not exist (and agent.New refuses them
// beside an in-memory Stores.Files: tools.Spec.NeedsOSDir). Test them
// with Env.Env.FS set to an fslocal.New(t.TempDir()) and Env.Env.Cwd to
// its Root().
//
// It imports tools, fs/fstest, spill, session/attachments and the module's internal
// dispatch helpers; nothing of agent or guard, so a tool's tests do not
// pull in the loop.
package toolstest
