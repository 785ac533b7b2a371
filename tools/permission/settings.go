package permission

import (
	"strings"

	"github.com/go-harness/harness/internal/configfile"
)

// ReadSettings reads the permissions of the settings file at path, as
// ParseSettings does with its contents.
//
// The file must be a regular file of at most 1 MiB, and is not read
// otherwise: a directory, a named pipe or a device is an error matching
// harness.CodeNotRegular, a larger file one matching
// harness.CodeTooLarge, and a missing file one matching fs.ErrNotExist.
// A file that is not JSON, or whose permissions are malformed, is an
// error matching harness.CodeInvalidOption that says where. Every error
// names the file.
func ReadSettings(path string) (Rules, error) {
	data, err := configfile.Read(path)
	if err != nil {
		return Rules{}, err
	}
	if err := configfile.CheckJSON(data); err != nil {
		return Rules{}, invalid("%s: %v", path, err)
	}
	r, err := ParseSettings(data)
	if err != nil {
		return Rules{}, invalid("%s: %s", path, strings.TrimPrefix(err.Error(), "permission: "))
	}
	return r, nil
}
