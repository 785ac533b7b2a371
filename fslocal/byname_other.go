//go:build !linux

package fslocal

import (
	"context"
	"io"
	"os"

	"github.com/go-harness/harness/fs"
)

// dirHandle holds nothing here: every open takes the general path.
type dirHandle struct{}

func (h *dirHandle) keep(*os.File) bool { return false }

func (h *dirHandle) close() {}

func (f *localFS) openByName(context.Context, string) (io.ReadCloser, fs.FileInfo, bool) {
	return nil, fs.FileInfo{}, false
}

// listTypes is not offered here: ReadDirTypes describes each entry.
func listTypes(*os.File) ([]dirent, error) { return nil, errNoListTypes }
