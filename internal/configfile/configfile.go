package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/go-harness/harness"
)

// MaxBytes is the largest configuration file Read accepts: 1 MiB, far
// more than any real configuration needs.
const MaxBytes = 1 << 20

// Read returns the contents of the configuration file at path. The path
// (after symbolic links) must name a regular file of at most MaxBytes;
// anything else is a *harness.Error that names the file:
// harness.CodeNotRegular for a directory, a named pipe, a device or a
// socket (none of them is opened, and the file is opened without
// blocking should it turn into a pipe meanwhile), harness.CodeTooLarge
// for a larger file, and the code of the operating system's error
// otherwise (harness.CodeNotFound for a missing file, which matches
// fs.ErrNotExist).
func Read(path string) ([]byte, error) {
	return ReadLimit(path, MaxBytes)
}

// ReadLimit is Read with a limit of max bytes instead of MaxBytes.
func ReadLimit(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ioError(path, err)
	}
	if fi.Size() > max {
		return nil, tooLarge(path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, ioError(path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(path, int64(len(data)), max)
	}
	return data, nil
}

// Open opens the regular file at path for reading, as Read does, for a
// caller that reads it in its own way (it must bound what it reads: the
// file may grow).
func Open(path string) (*os.File, error) {
	return OpenFile(path, os.O_RDONLY)
}

// OpenFile is Open with the flags of os.OpenFile (never O_CREATE: the
// file must exist, and be a regular file).
func OpenFile(path string, flag int) (*os.File, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, ioError(path, err)
	}
	if !before.Mode().IsRegular() {
		return nil, notRegular(path, before.Mode())
	}
	f, err := os.OpenFile(path, flag&^os.O_CREATE|nonBlock, 0)
	if err != nil {
		return nil, ioError(path, err)
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, ioError(path, err)
	}
	if !after.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, after.Mode())
	}
	return f, nil
}

func ioError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &harness.Error{Code: harness.CodeOf(err), Err: err, Message: fmt.Sprintf("%s: %v", path, err)}
}

func tooLarge(path string, size, max int64) error {
	return &harness.Error{Code: harness.CodeTooLarge,
		Message: fmt.Sprintf("%s is larger than the %d bytes that are read of it (a configuration file has far fewer; is it the right file?)", path, max)}
}

func notRegular(path string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	via := ""
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Readlink(path); err == nil {
			via = fmt.Sprintf(" (a symbolic link to %s)", target)
		}
	}
	return &harness.Error{Code: harness.CodeNotRegular,
		Message: fmt.Sprintf("%s%s is %s, not a regular file", path, via, what)}
}

// CheckJSON reports whether data is exactly one JSON value, and
// otherwise describes where it goes wrong (see DescribeJSON).
func CheckJSON(data []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return DescribeJSON(data, err)
	}
	return nil
}

// DescribeJSON turns an error of decoding data as JSON into one that says
// where: "incomplete JSON at byte N (...)" when the text ends before its
// value does, "invalid JSON at line L, column C (byte N): ..." for a
// syntax error, and err itself otherwise.
func DescribeJSON(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		if len(bytes.TrimSpace(data)) == 0 {
			return fmt.Errorf("incomplete JSON at byte %d: the file is empty", len(data))
		}
		return fmt.Errorf("incomplete JSON at byte %d: the text ends before its value does (is the file cut short?)", len(data))
	case errors.As(err, &se):
		off := int(min(max(se.Offset, 0), int64(len(data))))
		line, col := position(data, off)
		return fmt.Errorf("invalid JSON at line %d, column %d (byte %d): %s", line, col, off, se.Error())
	}
	return err
}

// position returns the line and column (both from 1, the column in
// bytes) of the byte before offset, where the decoder stopped.
func position(data []byte, offset int) (line, col int) {
	at := max(offset-1, 0)
	if at > len(data) {
		at = len(data)
	}
	before := data[:at]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = at - bytes.LastIndexByte(before, '\n')
	return line, col
}
