package streamwatch

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Keep-alive bytes count as signs of life: every read that brings data,
// comment lines and blank lines included, re-arms the idle bound.
func TestWatchedBodyTouchesOnEveryRead(t *testing.T) {
	touches := 0
	body := &watchedBody{ReadCloser: io.NopCloser(strings.NewReader(": keep-alive\n\n\n\ndata: {}\n\n")), touch: func() { touches++ }}
	buf := make([]byte, 4)
	var got strings.Builder
	for {
		n, err := body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	assert.Equal(t, ": keep-alive\n\n\n\ndata: {}\n\n", got.String())
	assert.Equal(t, 7, touches, "one touch per read that returned bytes, none at EOF")
	var none *Watch
	rc := io.NopCloser(strings.NewReader(""))
	assert.Equal(t, rc, none.Body(rc))
	assert.NotNil(t, HTTPClient().Transport)
}
