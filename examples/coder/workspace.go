package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// openSession resumes the session resumeID, or starts a new one in the
// workspace when it is "".
func (a *app) openSession(ctx context.Context, loop *agent.Loop, resumeID string) (*agent.Session, error) {
	if resumeID == "" {
		return loop.NewSession(ctx, session.Header{Cwd: a.root})
	}
	s, err := loop.ResumeSession(ctx, resumeID)
	if errors.Is(err, harness.CodeLocked) {
		return nil, usagef("session %s is open in another coder; close that one first", resumeID)
	}
	return s, err
}

// openStore opens the store of session logs in -sessions (or the
// default directory), sets the workspace root, and returns the id of the
// session to resume, or "" for a new one.
func (a *app) openStore(ctx context.Context) (string, error) {
	dir := a.o.sessions
	if dir == "" {
		var err error
		if dir, err = defaultSessionsDir(a.env); err != nil {
			return "", usagef("%v; name a directory for session logs with -sessions", err)
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	a.sessionsDir, a.store = dir, session.NewJSONL(dir, session.StoreConfig{})
	return a.pickOrFork(ctx)
}

// pickSession sets the workspace root and returns the id of the session
// to resume, or "" for a new one.
func (a *app) pickSession(ctx context.Context) (string, error) {
	if a.o.dir != "" {
		root, err := filepath.Abs(a.o.dir)
		if err != nil {
			return "", usagef("-C %s: %v", a.o.dir, err)
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			return "", usagef("-C %s: not a directory", a.o.dir)
		}
		a.root = root
	}
	switch {
	case a.o.resume != "":
		tr, err := a.store.Load(ctx, a.o.resume)
		if errors.Is(err, harness.CodeInvalidID) {
			return "", usagef("%q is not a session id", a.o.resume)
		}
		if errors.Is(err, harness.CodeNotFound) {
			return "", usagef("no session %s in %s", a.o.resume, a.sessionsDir)
		}
		if err != nil {
			return "", err
		}
		cwd := filepath.FromSlash(tr.Header.Cwd)
		if a.root == "" {
			a.root = cwd
		} else if !session.Below(tr.Header.Cwd, filepath.ToSlash(a.root)) {
			return "", usagef("session %s worked in %s, outside %s; run it with -C %s", a.o.resume, cwd, a.root, cwd)
		}
		return a.o.resume, nil
	case a.o.cont:
		if err := a.defaultRoot(); err != nil {
			return "", err
		}
		infos, err := a.store.List(ctx, session.ListOptions{Workspace: filepath.ToSlash(a.root)})
		if err != nil {
			return "", err
		}
		id, ok := latestTopSession(infos)
		if !ok {
			return "", usagef("no earlier session of %s in %s to continue; start one without -continue, or name the sessions' directory with -sessions", a.root, a.sessionsDir)
		}
		return id, nil
	}
	return "", a.defaultRoot()
}

func (a *app) defaultRoot() error {
	if a.root != "" {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return usagef("the current directory: %v; name the workspace with -C", err)
	}
	a.root = wd
	return nil
}

// defaultSessionsDir is where session logs go unless -sessions says
// otherwise: $XDG_DATA_HOME/harness/sessions when XDG_DATA_HOME is set;
// else ~/Library/Application Support/harness/sessions on macOS,
// %LocalAppData%\harness\sessions on Windows, and
// ~/.local/share/harness/sessions elsewhere.
func defaultSessionsDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "harness", "sessions"), nil
	}
	if runtime.GOOS == "windows" {
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "harness", "sessions"), nil
		}
	}
	home := getenv("HOME")
	if home == "" && runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("no home directory ($HOME is not set)")
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "harness", "sessions"), nil
	}
	return filepath.Join(home, ".local", "share", "harness", "sessions"), nil
}

// latestTopSession returns the newest of infos (newest first) that is not
// a sub-agent's session: -continue goes on with the user's conversation,
// never with a child started by one of its task calls.
func latestTopSession(infos []session.Info) (string, bool) {
	for _, in := range infos {
		if in.Header.ParentCall == "" {
			return in.Header.ID, true
		}
	}
	return "", false
}
