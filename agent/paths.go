package agent

import (
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/tools"
)

type filesKey struct{}

// files returns the file system the session's tools work in: the loop's,
// restricted (fs.Restrict) by the path policy of its permission rules,
// anchored at the session's working directory, when the loop has both.
// So every tool, and every host tool that uses Env.FS, obeys the Read and
// Edit rules wherever it touches files.
func (s *Session) files() fs.FileSystem {
	cfg := &s.loop.cfg
	if cfg.fsys == nil || cfg.policy == nil {
		return cfg.fsys
	}
	restrict := func() fs.FileSystem {
		cwd := s.log.Header().Cwd
		if cwd == "" {
			cwd = fsimpl.RootOf(cfg.fsys)
		}
		paths := cfg.policy.Paths(cwd)
		if paths.Empty() {
			return cfg.fsys
		}
		return fs.Restrict(cfg.fsys, paths)
	}
	fsys, err := tools.LoadState(s.state, filesKey{}, restrict)
	if err != nil {
		return restrict() // the session is closing: still restricted
	}
	return fsys
}
