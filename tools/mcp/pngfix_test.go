package mcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
	"github.com/go-harness/harness/tools/mcp/internal/testserver"
)

func chunk(typ string, body []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(body)))
	b.WriteString(typ)
	b.Write(body)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), body...)))
	return b.Bytes()
}

// withChunk inserts a chunk after IHDR, with its checksum broken if asked.
func withChunk(png []byte, c []byte, broken bool) []byte {
	if broken {
		c = append([]byte(nil), c...)
		c[len(c)-1] ^= 0xff
	}
	at := len(pngSignature) + 25 // signature, then IHDR (12 + 13)
	return append(append(append([]byte(nil), png[:at]...), c...), png[at:]...)
}

func TestDropBadAncillary(t *testing.T) {
	good := testserver.PNG(4, 3)
	_, err := images.Normalize(context.Background(), "x.png", good, images.Limits{})
	require.NoError(t, err)
	text := chunk("tEXt", []byte("Comment\x00hello"))
	idat := chunk("IDAT", []byte("junk"))
	cases := []struct {
		name    string
		in      []byte
		dropped bool
		want    []byte
	}{
		{"whole", good, false, good},
		{"good ancillary kept", withChunk(good, text, false), false, withChunk(good, text, false)},
		{"bad ancillary dropped", withChunk(good, text, true), true, good},
		{"bad critical kept", withChunk(good, idat, true), false, withChunk(good, idat, true)},
		{"not png", []byte("GIF89a"), false, []byte("GIF89a")},
		{"truncated", withChunk(good, text, true)[:40], false, withChunk(good, text, true)[:40]},
	}
	for _, c := range cases {
		got, dropped := dropBadAncillary(c.in)
		assert.Equal(t, c.dropped, dropped, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
}

func testEnv() *tools.Env {
	return &tools.Env{ModelInput: []harness.Modality{harness.ModalityImage}, Attachments: attachments.NewMemory(),
		Logger: slog.New(slog.DiscardHandler)}
}

func TestImageWithBrokenProfile(t *testing.T) {
	broken := withChunk(testserver.PNG(8, 8), chunk("iCCP", []byte("profile\x00\x00zzz")), true)
	_, err := images.Normalize(context.Background(), "x.png", broken, images.Limits{})
	require.Error(t, err, "Go's decoder refuses the image as it is")
	env := testEnv()
	blocks := image(context.Background(), env, "srv", "image/png", broken, "")
	require.Len(t, blocks, 2)
	assert.Equal(t, harness.BlockImage, blocks[1].Type)
	assert.Equal(t, [2]int{8, 8}, [2]int{blocks[1].Image.Width, blocks[1].Image.Height})
}

func FuzzDropBadAncillary(f *testing.F) {
	good := testserver.PNG(2, 2)
	f.Add(good)
	f.Add(withChunk(good, chunk("tEXt", []byte("a\x00b")), true))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, dropped := dropBadAncillary(data)
		if !dropped {
			require.Equal(t, data, out)
			return
		}
		require.Less(t, len(out), len(data))
		again, more := dropBadAncillary(out)
		require.False(t, more, "one pass drops every bad ancillary chunk")
		require.Equal(t, out, again)
	})
}
