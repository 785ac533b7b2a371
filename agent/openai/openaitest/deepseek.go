package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// DeepSeekModels are the model ids DeepSeek's API serves, as its
// documentation lists them: deepseek-flash (V4.1 Flash, images in),
// deepseek-v4-pro (text only), and the legacy ids deepseek-v4-flash and
// deepseek-v4-flash-vision-exp, which V4.1 Flash answers.
var DeepSeekModels = []string{"deepseek-flash", "deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v4-flash-vision-exp"}

// deepSeekEfforts are the reasoning_effort values DeepSeek accepts
// (mapped server-side onto its own levels).
var deepSeekEfforts = []string{"minimal", "low", "medium", "high", "xhigh", "max", "ultra"}

// deepSeekFormats are the string formats DeepSeek's strict mode takes.
var deepSeekFormats = []string{"email", "hostname", "ipv4", "ipv6", "uuid"}

// deepSeekMaxFunctions is how many functions one request may declare.
const deepSeekMaxFunctions = 128

// DeepSeek returns a Reply that checks a request against the rules
// DeepSeek's API documents and answers as DeepSeek does when one is
// broken (a 400 with DeepSeek's error body), and with next when all hold.
// It checks the model id (one of [DeepSeekModels]); that thinking mode,
// on unless the request sends "thinking": {"type": "disabled"}, is not
// asked to force a tool ("tool_choice" "required" or a named function);
// the "reasoning_effort" value; that an assistant message that made tool
// calls carries "reasoning_content" in thinking mode; strict function
// calling (beta path, at most 128 functions, every object closed with all
// properties required, string formats email, hostname, ipv4, ipv6 and
// uuid only, no minLength, maxLength, minItems or maxItems); and that a
// "json_object" response format comes with a prompt that says "json".
//
//	srv := openaitest.NewServer(openaitest.DeepSeek(openaitest.Reply{Chunks: ...}))
func DeepSeek(next Reply) Reply {
	return Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if msg := deepSeekProblem(r.URL.Path, body); msg != "" {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{
				"message": msg, "type": "invalid_request_error", "param": nil, "code": "invalid_request_error"}})
			Reply{Status: http.StatusBadRequest, Body: string(b)}.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}}
}

// deepSeekRequest is what the rules read of a request.
type deepSeekRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent *string         `json:"reasoning_content"`
		ToolCalls        []any           `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
			Strict     bool            `json:"strict"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	ReasoningEffort *string         `json:"reasoning_effort"`
	Thinking        *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// deepSeekProblem returns DeepSeek's error message for the first rule
// body breaks, or "".
func deepSeekProblem(path string, body []byte) string {
	var req deepSeekRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return "Failed to deserialize the JSON body into the target type: " + err.Error()
	}
	if !slices.Contains(DeepSeekModels, req.Model) {
		return "Model Not Exist"
	}
	thinking := req.Thinking == nil || req.Thinking.Type != "disabled"
	if thinking && len(req.ToolChoice) > 0 {
		var choice any
		_ = json.Unmarshal(req.ToolChoice, &choice)
		if s, ok := choice.(string); !ok || s == "required" {
			return "Thinking mode does not support this tool_choice"
		}
	}
	if e := req.ReasoningEffort; e != nil && !slices.Contains(deepSeekEfforts, *e) {
		return fmt.Sprintf("Invalid reasoning_effort %q: expected one of %s", *e, strings.Join(deepSeekEfforts, ", "))
	}
	for _, m := range req.Messages {
		if thinking && m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == nil {
			return "The reasoning_content in the thinking mode must be passed back to the API."
		}
	}
	strict := false
	for _, t := range req.Tools {
		strict = strict || t.Function.Strict
	}
	if len(req.Tools) > deepSeekMaxFunctions {
		return fmt.Sprintf("Too many tools: at most %d functions are supported", deepSeekMaxFunctions)
	}
	if strict {
		if !strings.HasPrefix(path, "/beta/") {
			return "strict mode is only available on the beta endpoint (base_url=https://api.deepseek.com/beta)"
		}
		for _, t := range req.Tools {
			if !t.Function.Strict {
				continue
			}
			var schema any
			if err := json.Unmarshal(t.Function.Parameters, &schema); err != nil {
				return fmt.Sprintf("Invalid schema for function '%s': not JSON", t.Function.Name)
			}
			if msg := deepSeekStrictProblem(schema, "parameters"); msg != "" {
				return fmt.Sprintf("Invalid schema for function '%s': %s", t.Function.Name, msg)
			}
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			said := false
			for _, m := range req.Messages {
				said = said || strings.Contains(strings.ToLower(string(m.Content)), "json")
			}
			if !said {
				return "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."
			}
		case "text":
		default:
			return "This response_format type is unavailable now"
		}
	}
	return ""
}

// deepSeekStrictProblem checks one schema node for strict mode.
func deepSeekStrictProblem(node any, where string) string {
	s, ok := node.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if _, ok := s[k]; ok {
			return fmt.Sprintf("%s: '%s' is not supported in strict mode", where, k)
		}
	}
	if f, ok := s["format"].(string); ok && !slices.Contains(deepSeekFormats, f) {
		return fmt.Sprintf("%s: format '%s' is not supported in strict mode", where, f)
	}
	props, hasProps := s["properties"].(map[string]any)
	if s["type"] == "object" || hasProps {
		if ap, ok := s["additionalProperties"].(bool); !ok || ap {
			return fmt.Sprintf("%s: 'additionalProperties' must be false", where)
		}
		req := map[string]bool{}
		list, _ := s["required"].([]any)
		for _, r := range list {
			if name, ok := r.(string); ok {
				req[name] = true
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !req[name] {
				return fmt.Sprintf("%s: every property must be required, '%s' is not", where, name)
			}
			if msg := deepSeekStrictProblem(props[name], where+"."+name); msg != "" {
				return msg
			}
		}
	}
	if msg := deepSeekStrictProblem(s["items"], where+"[]"); msg != "" {
		return msg
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		list, _ := s[k].([]any)
		for _, alt := range list {
			if msg := deepSeekStrictProblem(alt, where); msg != "" {
				return msg
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := s[k].(map[string]any)
		for name, d := range defs {
			if msg := deepSeekStrictProblem(d, "#/"+k+"/"+name); msg != "" {
				return msg
			}
		}
	}
	return ""
}
