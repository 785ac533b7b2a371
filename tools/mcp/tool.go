package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
)

// remoteTool is one server tool as a tool of the loop.
type remoteTool struct {
	srv  *server
	def  *toolDef
	name string
}

func (t *remoteTool) Spec() tools.Spec {
	s := t.def.spec
	s.Name = t.name
	return s
}

func (t *remoteTool) Execute(ctx context.Context, call *tools.Call) (*harness.ToolResult, error) {
	srv := t.srv
	cs, err := srv.session(ctx)
	if err != nil {
		return nil, err
	}
	args := json.RawMessage(call.Arguments)
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	params := &sdk.CallToolParams{Name: t.def.remote, Arguments: args}
	token := fmt.Sprintf("%s-%d", call.ID, srv.tokenSeq.Add(1))
	params.SetProgressToken(token)
	srv.tokens.Store(token, call)
	defer srv.tokens.Delete(token)

	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			// The SDK has sent notifications/cancelled; the dispatcher
			// reports the timeout or the cancellation.
			return nil, ctx.Err()
		}
		if isWireError(err) {
			return nil, &harness.Error{Code: harness.CodeToolFailed, Err: err,
				Message: fmt.Sprintf("The MCP server %s refused the %s call: %v", srv.cfg.Name, t.def.remote, err)}
		}
		srv.lost(cs, err)
		return nil, &harness.Error{Code: codeServerUnavailable, Err: err, Message: fmt.Sprintf(
			"The MCP server %s stopped while running %s, so the outcome is unknown: check before repeating anything it may have done. "+
				"The server is started again on the next call of one of its tools.", srv.cfg.Name, t.def.remote)}
	}
	if name, ok := res.Meta[spoolKey].(string); ok {
		if sp := srv.spools.take(name); sp != nil {
			r := t.spooledResult(ctx, call, sp)
			r.Render = &harness.Render{Kind: harness.RenderGeneric, Title: t.title(), Text: renderText(r)}
			return r, nil
		}
	}
	out := convert(ctx, call.Env, srv.cfg.Name, res.Content)
	if res.StructuredContent != nil {
		out = appendStructured(out, res.StructuredContent)
	}
	r := &harness.ToolResult{Content: out}
	if res.IsError {
		r.IsError, r.Code = true, harness.CodeToolFailed
		if len(r.Content) == 0 {
			r.Content = []harness.Block{harness.TextBlock(fmt.Sprintf("The %s tool of the MCP server %s failed without saying why.", t.def.remote, srv.cfg.Name))}
		}
	} else if len(r.Content) == 0 {
		r.Content = []harness.Block{harness.TextBlock("The tool returned no content.")}
	}
	r.Render = &harness.Render{Kind: harness.RenderGeneric, Title: t.title(), Text: renderText(r)}
	return r, nil
}

// title is the title of the tool's render cards.
func (t *remoteTool) title() string {
	if t.def.title != "" {
		return t.srv.cfg.Name + ": " + t.def.title
	}
	return t.srv.cfg.Name + " " + t.def.remote
}

// renderCard bounds the text of a generic card.
const renderCard = 2000

func renderText(r *harness.ToolResult) string {
	s := r.Text()
	if len(s) > renderCard {
		cut := renderCard
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// convert maps a result's content to blocks the model reads: text as
// text, images through the attachment store when the model takes them,
// resources as text with their URIs, and a line saying what was left out
// for everything else.
func convert(ctx context.Context, env *tools.Env, server string, content []sdk.Content) []harness.Block {
	var out []harness.Block
	for _, c := range content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, harness.TextBlock(c.Text))
		case *sdk.ImageContent:
			out = append(out, image(ctx, env, server, c.MIMEType, c.Data, "")...)
		case *sdk.AudioContent:
			out = append(out, harness.TextBlock(fmt.Sprintf("[audio omitted: %s, %s; audio cannot be shown to you]", orUnknown(c.MIMEType), units.Bytes(int64(len(c.Data))))))
		case *sdk.ResourceLink:
			out = append(out, harness.TextBlock(linkText(c)))
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				out = append(out, contents(ctx, env, server, c.Resource)...)
			}
		default:
			if c != nil {
				out = append(out, harness.TextBlock("[content of a kind this client does not show was left out]"))
			}
		}
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func linkText(l *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Resource link: %s", l.URI)
	name := l.Title
	if name == "" {
		name = l.Name
	}
	var details []string
	if name != "" {
		details = append(details, name)
	}
	if l.MIMEType != "" {
		details = append(details, l.MIMEType)
	}
	if l.Size != nil {
		details = append(details, units.Bytes(*l.Size))
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", strings.TrimRight(oneLine(l.Description), "."))
	}
	b.WriteString(". Read it with mcp_read_resource.")
	return b.String()
}

// contents maps one resource's contents: text with its URI, an image
// blob as an image, any other blob as a line that says what it is.
func contents(ctx context.Context, env *tools.Env, server string, rc *sdk.ResourceContents) []harness.Block {
	mime := rc.MIMEType
	if rc.Blob == nil || rc.Text != "" {
		head := "Resource " + rc.URI
		if mime != "" {
			head += " (" + mime + ")"
		}
		return []harness.Block{harness.TextBlock(head + ":\n" + rc.Text)}
	}
	if strings.HasPrefix(mime, "image/") {
		return image(ctx, env, server, mime, rc.Blob, rc.URI)
	}
	return []harness.Block{harness.TextBlock(fmt.Sprintf("Resource %s: binary content (%s, %s), not shown.", rc.URI, orUnknown(mime), units.Bytes(int64(len(rc.Blob)))))}
}

// extensions are the file extensions package images knows a format by.
var extensions = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}

// image stores an image for a model that accepts images, checked and
// downscaled as read_image does; otherwise a line says what was left out.
func image(ctx context.Context, env *tools.Env, server, mime string, data []byte, uri string) []harness.Block {
	what := fmt.Sprintf("%s image, %s", orUnknown(mime), units.Bytes(int64(len(data))))
	if uri != "" {
		what = uri + ", " + what
	}
	if env == nil || !slices.Contains(env.ModelInput, harness.ModalityImage) {
		return []harness.Block{harness.TextBlock(fmt.Sprintf("[image omitted (%s): the current model does not accept image input]", what))}
	}
	if env.Attachments == nil {
		return []harness.Block{harness.TextBlock(fmt.Sprintf("[image omitted (%s): this session keeps no images (no attachment store)]", what))}
	}
	ext, ok := extensions[strings.ToLower(strings.TrimSpace(strings.Split(mime, ";")[0]))]
	if !ok {
		return []harness.Block{harness.TextBlock(fmt.Sprintf("[image omitted (%s): only PNG, JPEG, WebP and GIF images can be shown]", what))}
	}
	name := "mcp-" + server + "-image" + ext
	n, err := images.Normalize(ctx, name, data, images.Limits{})
	if err != nil && ext == ".png" {
		if fixed, ok := dropBadAncillary(data); ok {
			n, err = images.Normalize(ctx, name, fixed, images.Limits{})
		}
	}
	if err != nil {
		return []harness.Block{harness.TextBlock(fmt.Sprintf("[image omitted (%s): %v]", what, err))}
	}
	digest, err := env.Attachments.Put(ctx, n.Data)
	if err != nil {
		toolexec.Logger(env).Error("mcp: storing an image failed", "server", server, "error", err)
		return []harness.Block{harness.TextBlock(fmt.Sprintf("[image omitted (%s): storing it failed: %v]", what, err))}
	}
	label := uri
	if label == "" {
		label = "image from " + server
	}
	line := fmt.Sprintf("%s: %s, %dx%d px", label, n.MediaType, n.Width, n.Height)
	if n.Scale() > 1 {
		line += fmt.Sprintf(", downscaled from %dx%d px (multiply coordinates by %s)", n.SourceWidth, n.SourceHeight, strconv.FormatFloat(n.Scale(), 'g', 4, 64))
	}
	img := &harness.Image{Digest: digest, MediaType: n.MediaType, Width: n.Width, Height: n.Height, Size: int64(len(n.Data)), Name: label}
	return []harness.Block{harness.TextBlock(line), {Type: harness.BlockImage, Image: img}}
}

// appendStructured adds the structured result as compact JSON, unless the
// text already carries it: servers are asked to repeat structured content
// as text (the SDK's typed handlers do, as JSON), and many return the same
// values as prose, which the model need not read twice.
func appendStructured(out []harness.Block, v any) []harness.Block {
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	var text strings.Builder
	for _, blk := range out {
		if blk.Type != harness.BlockText {
			continue
		}
		if sameJSON(blk.Text, b) {
			return out
		}
		text.WriteString(blk.Text)
		text.WriteByte('\n')
	}
	var plain any
	if text.Len() > 0 && json.Unmarshal(b, &plain) == nil && covered(text.String(), plain) {
		return out
	}
	return append(out, harness.TextBlock(string(b)))
}

// covered reports whether every string and number in v appears in text.
func covered(text string, v any) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(text, v)
	case float64:
		return strings.Contains(text, strconv.FormatFloat(v, 'f', -1, 64))
	case []any:
		for _, x := range v {
			if !covered(text, x) {
				return false
			}
		}
	case map[string]any:
		for _, x := range v {
			if !covered(text, x) {
				return false
			}
		}
	}
	return true
}

func sameJSON(text string, compact []byte) bool {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return t == string(compact)
	}
	var a, b any
	if json.Unmarshal([]byte(t), &a) != nil || json.Unmarshal(compact, &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
