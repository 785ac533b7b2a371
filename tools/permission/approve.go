package permission

import (
	"context"

	"github.com/go-harness/harness"
)

// Request is a question for an approver: may this call run?
type Request struct {
	// Call is the call as the model made it.
	Call harness.ToolCall `json:"call"`
	// Decision is the policy's decision (Outcome Ask): the rule or mode
	// that asked, the reason, the one-line preview and a rule the
	// approver may offer to remember.
	Decision Decision `json:"decision"`
	// Render is the intent of the tool's card, so a host can show the
	// call as it will show its result.
	Render harness.RenderKind `json:"render,omitempty"`
	// Digest identifies the call asked about (its name and arguments),
	// for a host that answers later: an Answer carrying it is refused if
	// the call it answers is no longer that one.
	Digest string `json:"digest,omitempty"`
	// Origin, when set, says the call is a sub-agent's, not the session's
	// own: which child session made it, and the job running it when it
	// runs in the background.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin names the sub-agent whose call a Request asks about.
type Origin struct {
	// Session is the child session's id; Agent its agent type.
	Session string `json:"session"`
	Agent   string `json:"agent,omitempty"`
	// Job is the id of the background job the child runs as (job3); empty
	// for a child that runs in the foreground of its task call.
	Job string `json:"job,omitempty"`
}

// Answer is an approver's reply.
type Answer struct {
	// Allow lets the call run; otherwise it is denied.
	Allow bool `json:"allow"`
	// Feedback is text the user typed with a denial; the model reads it
	// in the denied call's result.
	Feedback string `json:"feedback,omitempty"`
	// Remember is a rule to add to the session's allow list with this
	// answer, such as Decision.Suggest; it is logged, so a resumed
	// session keeps it.
	Remember string `json:"remember,omitempty"`
	// Digest, when set, is the Request.Digest of the question this
	// answers: the answer then holds only for that exact call.
	Digest string `json:"digest,omitempty"`
}

// Approver answers a question synchronously, for hosts that can ask a
// user while the turn waits (a terminal). An error denies the call and
// its text reaches the model; a cancelled ctx ends the turn. Hosts that
// cannot block (a web server, a chat bot) configure no approver: the
// turn then pauses, and the host answers later.
type Approver func(ctx context.Context, req Request) (Answer, error)
