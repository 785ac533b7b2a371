package logs

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOrDiscard(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	assert.Same(t, l, OrDiscard(l), "a logger is kept")
	d := OrDiscard(nil)
	assert.NotNil(t, d)
	assert.False(t, d.Enabled(context.Background(), slog.LevelError), "nil logs nothing")
	d.Error("dropped")
	assert.Empty(t, buf.String())
}
