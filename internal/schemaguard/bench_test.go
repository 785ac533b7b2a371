package schemaguard_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness/internal/schemaguard"
)

// BenchmarkValidate checks arguments with the guard (its estimate, then
// the validator) and with jsonschema-go's validator alone, alternating
// the two each iteration, so the ratio comes out of one run.
func BenchmarkValidate(b *testing.B) {
	cases := []struct {
		name, schema, args string
	}{
		{"read", `{"type":"object","properties":{"file_path":{"type":"string","description":"absolute path"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["file_path"],"additionalProperties":false}`,
			`{"file_path":"/project/src/main.go","offset":10,"limit":200}`},
		{"edits", `{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["old_string","new_string"]}}}}`,
			`{"edits":[` + strings.TrimSuffix(strings.Repeat(`{"old_string":"a","new_string":"b"},`, 100), ",") + `]}`},
		{"tree", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			`{"root":{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[]}]},{"name":"d","children":[]}]}}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s, err := schemaguard.Compile([]byte(c.schema), schemaguard.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			var v any
			if err := json.Unmarshal([]byte(c.args), &v); err != nil {
				b.Fatal(err)
			}
			var guarded, plain time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if i%2 == 0 {
					err = s.Validate(v)
					guarded += time.Since(start)
				} else {
					err = s.Resolved().Validate(v)
					plain += time.Since(start)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			half := float64(max(b.N/2, 1))
			b.ReportMetric(float64(guarded.Nanoseconds())/half, "guarded-ns/check")
			b.ReportMetric(float64(plain.Nanoseconds())/half, "validator-ns/check")
			b.ReportMetric(float64(guarded)/float64(max(plain, 1)), "ratio")
		})
	}
}
