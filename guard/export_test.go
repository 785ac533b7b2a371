package guard

// The defaults, for the tests.
const (
	DefaultLocalDeadline   = defaultLocalDeadline
	DefaultProcessDeadline = defaultProcessDeadline
	DefaultNetworkDeadline = defaultNetworkDeadline
)
