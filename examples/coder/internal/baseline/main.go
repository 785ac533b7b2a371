// Command baseline is the hand-written client the coder's whole-turn
// benchmark compares with: one headless turn against an OpenAI-compatible
// endpoint that reads and edits files, written directly on net/http,
// encoding/json and os, with nothing of the harness library.
//
// It does the work the coder's turn must do and nothing more: the same
// streamed chat completions, the read and the edit on the same files,
// and a session log of one JSON line per event, synced when the turn
// ends; the edit replaces the file through a synced temporary file, so a
// crash leaves the old content or the new. It checks nothing else (no
// permissions, no read-before-edit, no sandbox), which is why it is a
// floor, not a rival.
//
//	baseline -C dir -sessions dir prompt
//
// The endpoint comes from HARNESS_BASE_URL, HARNESS_API_KEY and
// HARNESS_MODEL, as for the coder.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolsJSON declares read and edit.
const toolsJSON = `[{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}},` +
	`{"type":"function","function":{"name":"edit","description":"Replace text in a file.","parameters":{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["file_path","old_string","new_string"]}}}]`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("C", ".", "workspace")
	sessions := flag.String("sessions", ".", "session log directory")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if err := os.MkdirAll(*sessions, 0o700); err != nil {
		return err
	}
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	logf, err := os.OpenFile(filepath.Join(*sessions, id+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	logLine := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = logf.Write(append(b, '\n'))
		return err
	}
	if err := logLine(map[string]any{"type": "session", "id": id, "cwd": *dir}); err != nil {
		return err
	}
	msgs := []message{{Role: "system", Content: "You are a coding agent."}, {Role: "user", Content: prompt}}
	if err := logLine(msgs[1]); err != nil {
		return err
	}
	client := &http.Client{}
	for range 10 {
		reply, err := complete(client, msgs)
		if err != nil {
			return err
		}
		msgs = append(msgs, reply)
		if err := logLine(reply); err != nil {
			return err
		}
		if len(reply.ToolCalls) == 0 {
			fmt.Println(reply.Content)
			return logf.Sync()
		}
		for _, c := range reply.ToolCalls {
			out := runTool(*dir, c)
			res := message{Role: "tool", ToolCallID: c.ID, Content: out}
			msgs = append(msgs, res)
			if err := logLine(res); err != nil {
				return err
			}
		}
	}
	return errors.New("too many steps")
}

// complete sends one streamed chat completion and assembles the reply.
func complete(client *http.Client, msgs []message) (message, error) {
	body, err := json.Marshal(map[string]any{
		"model": os.Getenv("HARNESS_MODEL"), "stream": true, "messages": msgs, "tools": json.RawMessage(toolsJSON),
	})
	if err != nil {
		return message{}, err
	}
	req, err := http.NewRequest("POST", strings.TrimSuffix(os.Getenv("HARNESS_BASE_URL"), "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return message{}, err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("HARNESS_API_KEY"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return message{}, fmt.Errorf("status %s", resp.Status)
	}
	out := message{Role: "assistant"}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return message{}, err
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for len(out.ToolCalls) <= tc.Index {
					out.ToolCalls = append(out.ToolCalls, toolCall{Type: "function"})
				}
				c := &out.ToolCalls[tc.Index]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Function.Name += tc.Function.Name
				c.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	out.Content = text.String()
	return out, sc.Err()
}

// runTool runs read or edit and returns the text for the model.
func runTool(dir string, c toolCall) string {
	var in struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if err := json.Unmarshal([]byte(c.Function.Arguments), &in); err != nil {
		return "error: " + err.Error()
	}
	p := in.FilePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "error: " + err.Error()
	}
	switch c.Function.Name {
	case "read":
		var b strings.Builder
		for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			fmt.Fprintf(&b, "%d: %s\n", i+1, l)
		}
		return b.String()
	case "edit":
		if strings.Count(string(data), in.OldString) != 1 {
			return "error: old_string must occur exactly once"
		}
		if err := writeAtomic(p, []byte(strings.Replace(string(data), in.OldString, in.NewString, 1))); err != nil {
			return "error: " + err.Error()
		}
		return "edited " + in.FilePath
	}
	return "error: unknown tool " + c.Function.Name
}

// writeAtomic replaces the file at p through a synced temporary file.
func writeAtomic(p string, data []byte) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".edit-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Sync(), tmp.Chmod(fi.Mode().Perm()), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}
