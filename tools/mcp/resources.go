package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// The resource tools' names.
const (
	listResourcesName = "mcp_list_resources"
	readResourceName  = "mcp_read_resource"
)

// maxListed bounds the resources one mcp_list_resources call shows per
// server.
const maxListed = 500

type listResourcesArgs struct {
	Server string `json:"server,omitempty" jsonschema:"the MCP server whose resources to list; omit to list every server's"`
}

type readResourceArgs struct {
	Server string `json:"server" jsonschema:"the MCP server that offers the resource"`
	URI    string `json:"uri" jsonschema:"the resource's URI, as mcp_list_resources or a resource link gave it"`
}

// resourceTools returns mcp_list_resources and mcp_read_resource.
func (s *serverSet) resourceTools() []tools.Tool {
	return []tools.Tool{
		tools.Define(tools.Spec{
			Name: listResourcesName,
			Description: "List the resources (documents, files, records) that the connected MCP servers offer, with their URIs, " +
				"and the URI templates they accept. Read one with mcp_read_resource.",
			ConcurrencySafe: true,
			Family:          tools.FamilyNetwork,
			Render:          harness.RenderGeneric,
		}, s.listResources),
		tools.Define(tools.Spec{
			Name:            readResourceName,
			Description:     "Read a resource of a connected MCP server by its URI (from mcp_list_resources, a URI template, or a resource link in a tool result).",
			ConcurrencySafe: true,
			Family:          tools.FamilyNetwork,
			Render:          harness.RenderGeneric,
		}, s.readResource),
	}
}

func (s *serverSet) listResources(ctx context.Context, _ *tools.Call, in listResourcesArgs) (*harness.ToolResult, error) {
	servers := s.servers
	if in.Server != "" {
		srv, err := s.server(in.Server)
		if err != nil {
			return nil, err
		}
		servers = []*server{srv}
	}
	var b strings.Builder
	listed := 0
	for _, srv := range servers {
		srv.mu.Lock()
		offers := srv.resourcesLocked()
		srv.mu.Unlock()
		if !offers {
			if in.Server != "" {
				return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("The MCP server %s offers no resources.", srv.cfg.Name)}
			}
			continue
		}
		cs, err := srv.session(ctx)
		if err != nil {
			fmt.Fprintf(&b, "%s: unavailable (%v)\n", srv.cfg.Name, err)
			continue
		}
		n := 0
		fmt.Fprintf(&b, "%s:\n", srv.cfg.Name)
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				fmt.Fprintf(&b, "  (listing stopped: %v)\n", err)
				break
			}
			if n == maxListed {
				fmt.Fprintf(&b, "  (more resources are not shown: the list stops at %d)\n", maxListed)
				break
			}
			n++
			b.WriteString("  " + resourceLine(r) + "\n")
		}
		for rt, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				break
			}
			line := "  template " + rt.URITemplate
			if rt.Name != "" {
				line += " — " + rt.Name
			}
			if rt.Description != "" {
				line += ": " + oneLine(rt.Description)
			}
			b.WriteString(line + "\n")
			n++
		}
		if n == 0 {
			b.WriteString("  (no resources)\n")
		}
		listed++
	}
	if listed == 0 && b.Len() == 0 {
		return harness.TextResult("No connected MCP server offers resources."), nil
	}
	text := strings.TrimRight(b.String(), "\n")
	return &harness.ToolResult{Content: []harness.Block{harness.TextBlock(text)},
		Render: &harness.Render{Kind: harness.RenderGeneric, Title: "MCP resources", Text: renderTextOf(text)}}, nil
}

func resourceLine(r *sdk.Resource) string {
	line := r.URI
	name := r.Title
	if name == "" {
		name = r.Name
	}
	var details []string
	if name != "" && name != r.URI {
		details = append(details, name)
	}
	if r.MIMEType != "" {
		details = append(details, r.MIMEType)
	}
	if r.Size > 0 {
		details = append(details, units.Bytes(r.Size))
	}
	if len(details) > 0 {
		line += " (" + strings.Join(details, ", ") + ")"
	}
	if r.Description != "" {
		line += ": " + oneLine(r.Description)
	}
	return line
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func renderTextOf(s string) string {
	return renderText(&harness.ToolResult{Content: []harness.Block{harness.TextBlock(s)}})
}

func (s *serverSet) readResource(ctx context.Context, call *tools.Call, in readResourceArgs) (*harness.ToolResult, error) {
	if strings.TrimSpace(in.URI) == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "uri is empty: give the URI of the resource to read."}
	}
	srv, err := s.server(in.Server)
	if err != nil {
		return nil, err
	}
	cs, err := srv.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: in.URI})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isWireError(err) {
			return nil, &harness.Error{Code: harness.CodeNotFound, Err: err,
				Message: fmt.Sprintf("The MCP server %s could not read %s: %v. List the resources with mcp_list_resources.", srv.cfg.Name, in.URI, err)}
		}
		srv.lost(cs, err)
		return nil, &harness.Error{Code: codeServerUnavailable, Err: err,
			Message: fmt.Sprintf("The MCP server %s stopped while reading %s; it is started again on the next call.", srv.cfg.Name, in.URI)}
	}
	var out []harness.Block
	for _, rc := range res.Contents {
		if rc != nil {
			out = append(out, contents(ctx, call.Env, srv.cfg.Name, rc)...)
		}
	}
	if len(out) == 0 {
		out = []harness.Block{harness.TextBlock(fmt.Sprintf("Resource %s is empty.", in.URI))}
	}
	r := &harness.ToolResult{Content: out}
	r.Render = &harness.Render{Kind: harness.RenderGeneric, Title: "read " + in.URI, Text: renderText(r)}
	return r, nil
}
