package sessiontools

import (
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// Search and Read give the tests each tool alone; a host takes both from
// Tools.
func Search(store session.Store, cfg Config) tools.Tool { return searchTool(store, cfg.resolve()) }
func Read(store session.Store, cfg Config) tools.Tool   { return readTool(store, cfg.resolve()) }
