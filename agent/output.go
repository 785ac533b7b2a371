package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/schemaguard"
	"github.com/go-harness/harness/session"
)

// outputSource names the reminder that asks the model to repair a
// structured answer.
const outputSource = "output_validation"

// outputSpec is the structured answer a turn asks for.
type outputSpec struct {
	out      model.Output
	schema   *schemaguard.Schema
	repaired bool            // the one repair round trip was spent
	value    json.RawMessage // the validated answer
}

func newOutputSpec(out model.Output) (*outputSpec, error) {
	if out.Name == "" {
		out.Name = "answer"
	}
	// The schema is compiled as tool schemas are, so a schema whose
	// checking could blow up (deep nesting, huge patterns, $ref cycles
	// that expand without end) is refused here, and checking the
	// model's answer against it has bounded cost.
	r, err := schemaguard.Compile(out.Schema, schemaguard.Limits{})
	if err != nil {
		var ge *schemaguard.Error
		if errors.As(err, &ge) && ge.Kind != schemaguard.KindInvalid {
			return nil, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: the output schema cannot be checked safely: " + err.Error() + "; simplify it", Err: err}
		}
		return nil, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: the output schema is not valid JSON Schema: " + err.Error() + "; pass a JSON Schema object", Err: err}
	}
	return &outputSpec{out: out, schema: r}, nil
}

// outputAs decodes the structured answer a TurnEnd carries into a T.
func outputAs[T any](end *TurnEnd) (T, error) {
	var v T
	if end != nil && end.Reason == session.ReasonAwaitingApproval {
		return v, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: the turn paused for approval before its structured answer: " +
			"answer the calls of Session.Pending with Session.Resolve (after ResumeSession, in another process, too); the TurnEnd that resolving yields holds the answer in Output"}
	}
	if end == nil || end.Output == nil {
		return v, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: the turn has no structured answer; run it with RunOutput or RunTyped"}
	}
	if err := json.Unmarshal(end.Output, &v); err != nil {
		return v, &harness.Error{Code: harness.CodeInvalidOutput, Message: fmt.Sprintf("agent: the structured answer does not decode into %T: %v", v, err), Err: err}
	}
	return v, nil
}

// outputFor infers the output of a T: its schema and a snake_case name.
func outputFor[T any]() (model.Output, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return model.Output{}, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: inferring the output schema: " + err.Error(), Err: err}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return model.Output{}, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: encoding the output schema: " + err.Error(), Err: err}
	}
	return model.Output{Name: snakeName(reflect.TypeFor[T]().Name()), Schema: b}, nil
}

// snakeName turns a Go type name into a schema name: ReviewResult →
// review_result; "" for an unnamed type becomes "answer".
func snakeName(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue // generic type arguments and the like
		}
		if unicode.IsUpper(r) {
			if i > 0 && b.Len() > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "answer"
	}
	return b.String()
}

// check validates the final answer of a structured turn, text. It
// keeps a valid answer's value; for an invalid one it returns the
// reminder that asks the model to repair it, once, and then the error
// that ends the turn.
func (o *outputSpec) check(text string) (repair *harness.Reminder, err error) {
	v, problem := o.validate(text)
	if problem == "" {
		o.value = v
		return nil, nil
	}
	if o.repaired {
		return nil, &harness.Error{Code: harness.CodeInvalidOutput, Message: "agent: the final answer is not valid against the " + o.out.Name + " schema after one repair: " + problem}
	}
	o.repaired = true
	return &harness.Reminder{Source: outputSource, Text: "Your final answer is not valid against the " + o.out.Name + " schema: " + problem +
		". Answer again with only one JSON value that matches the schema, no prose and no code fence."}, nil
}

// validate parses text as one JSON value (a surrounding code fence is
// tolerated) and checks it against the schema. It returns the compact
// value, or what is wrong with it.
func (o *outputSpec) validate(text string) (json.RawMessage, string) {
	text = stripFence(text)
	if text == "" {
		return nil, "the answer is empty"
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, "the answer is not JSON (" + err.Error() + ")"
	}
	if dec.More() {
		return nil, "the answer holds more than one JSON value"
	}
	// Validate wants plain Go values, as json.Unmarshal makes them.
	var plain any
	if err := json.Unmarshal([]byte(text), &plain); err != nil {
		return nil, "the answer is not JSON (" + err.Error() + ")"
	}
	if err := o.schema.Validate(plain); err != nil {
		return nil, err.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "the answer cannot be encoded (" + err.Error() + ")"
	}
	return b, ""
}

// stripFence trims space and one surrounding ``` fence (with an optional
// language tag).
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := strings.TrimSuffix(s[3:], "```")
	if i := strings.IndexByte(body, '\n'); i >= 0 && !strings.ContainsAny(body[:i], "{}[]\"") {
		body = body[i+1:]
	}
	return strings.TrimSpace(body)
}
