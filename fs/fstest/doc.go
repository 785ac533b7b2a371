// Package fstest has an in-memory fs.FileSystem for tests and the
// conformance suite every FileSystem must pass, in the way testing/fstest
// serves io/fs.
//
// [MemFS] behaves as the OS-backed fslocal does (the same codes, windows,
// edit semantics, preconditions and versions) without touching the disk,
// so tools and agent tests can run against it with no temporary
// directories. It is an interface: the contract of package fs, the
// optional capabilities it always has, and the helpers a test arranges
// files with ([NewMemFS] returns it; the concrete type is unexported):
//
//	fsys := fstest.NewMemFS("/project")
//	fsys.SetFile("/project/main.go", []byte("package main\n"), 0o644)
//	loop, err := agent.New(agent.WithStores(agent.Stores{Files: fsys}), ...) // sessions start in /project
//
// MemFS is not on disk: it is not an fs.LocalPather, so tools that run
// programs in a directory (bash, shell_open) have none to run in.
// agent.New refuses them beside a MemFS (tools.Spec.NeedsOSDir); test
// them over fslocal and a temporary directory.
//
// [TestFileSystem] checks an implementation:
//
//	func TestMyFS(t *testing.T) {
//		fstest.TestFileSystem(t, newMyFS(t.TempDir()))
//	}
//
// It imports harness, fs and internal/fsimpl (what it shares with
// fslocal); nothing of tools, session or agent.
package fstest
