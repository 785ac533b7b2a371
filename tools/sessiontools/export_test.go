package sessiontools

// Search and Read give the tests each tool alone; a host takes both from
// Tools.
var (
	Search = searchTool
	Read   = readTool
)
