package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// superviseFlags are the flags about the session's budget and the
// model's questions to the user.
type superviseFlags struct {
	maxCost   float64
	maxTokens int64
	answers   []string
}

func (s *superviseFlags) register(fset *flag.FlagSet) {
	fset.Float64Var(&s.maxCost, "max-cost", 0, "pause the session once its model calls cost `usd` dollars (all its turns; at a terminal coder asks to go on, otherwise -continue with a higher -max-cost does)")
	fset.Int64Var(&s.maxTokens, "max-tokens", 0, "pause the session once its model calls used `n` tokens, input plus output (all its turns; raised like -max-cost)")
	fset.Func("answer", "with -continue or -resume: answer the model's waiting questions with `text`, one -answer per question in order (a choice's number picks it; 1,3 picks several)", func(v string) error {
		s.answers = append(s.answers, v)
		return nil
	})
}

// check validates the flags once they are parsed.
func (s *superviseFlags) check(o *options) error {
	if s.maxCost < 0 || math.IsNaN(s.maxCost) || math.IsInf(s.maxCost, 0) {
		return usagef("-max-cost must be a positive number of dollars, not %v", s.maxCost)
	}
	if s.maxTokens < 0 {
		return usagef("-max-tokens must be positive, not %d", s.maxTokens)
	}
	if len(s.answers) > 0 {
		if o.resume == "" && !o.cont {
			return usagef("-answer answers a paused turn's questions: give -continue (or -resume ID) too")
		}
		if o.perm.approve != "" || o.perm.reject != "" {
			return usagef("-answer and -approve/-reject: a turn waits for one kind of answer; give the one it asks for")
		}
		if o.hist.rewind != "" {
			return usagef("-rewind and -answer: answer the questions first, then rewind")
		}
	}
	return nil
}

// budgets are the session budgets of -max-cost and -max-tokens.
func (s *superviseFlags) budgets() agent.Budgets {
	return agent.Budgets{Session: agent.Budget{Cost: s.maxCost, Tokens: s.maxTokens}}
}

// checkPrices refuses -max-cost for a model whose prices coder does not
// know: nothing could be counted against it.
func (s *superviseFlags) checkPrices(modelName string) error {
	if s.maxCost == 0 {
		return nil
	}
	if _, ok := pricing.Builtin().Price(modelName); !ok {
		return usagef("-max-cost: coder knows no prices for the model %s, so it cannot count what it spends; cap it with -max-tokens instead", modelName)
	}
	return nil
}

// askUser is the ask_user answerer at a terminal: each question is asked
// at the prompt in turn, its choices numbered. Without a terminal (or
// with -json) it is nil, so that questions pause the turn and exit 3.
func (a *app) askUser() agent.Answerer {
	if !a.interactive() {
		return nil
	}
	return func(ctx context.Context, req agent.InputRequest) ([]string, error) {
		answers := make([]string, len(req.Questions))
		for i, q := range req.Questions {
			head := "? " + q.Question
			if len(req.Questions) > 1 {
				head = fmt.Sprintf("? (%d/%d) %s", i+1, len(req.Questions), q.Question)
			}
			shown := head + choiceList(q)
			line, ok, err := a.console.AskAfter(ctx, func() { a.view.Notice(ui.NoticeWarn, shown) }, answerPrompt(q))
			switch {
			case err != nil:
				return nil, err
			case !ok:
				return nil, fmt.Errorf("the user gave no answer (end of input)")
			}
			answers[i] = parseChoice(q, line)
		}
		return answers, nil
	}
}

// interactive reports whether coder can ask the user at once: stdin is
// a terminal and stdout is not JSON for a script.
func (a *app) interactive() bool { return ui.IsTerminal(a.stdin) && !a.o.json }

// choiceList is a question's choices, numbered, one a line.
func choiceList(q harness.Question) string {
	var b strings.Builder
	for i, c := range q.Choices {
		fmt.Fprintf(&b, "\n  %d. %s", i+1, oneLine(c, 200))
	}
	return b.String()
}

// answerPrompt is the prompt an answer is typed at: what it may be.
func answerPrompt(q harness.Question) string {
	switch {
	case q.Multiple:
		return fmt.Sprintf("numbers (1,3), or your answer › ")
	case len(q.Choices) > 0:
		return fmt.Sprintf("1-%d, or your answer › ", len(q.Choices))
	}
	return "answer › "
}

// parseChoice reads an answer to q: the number of a choice picks it
// (several numbers, split by commas or spaces, pick several of a
// multiple-choice question, joined by ", "); anything else is the
// answer as typed, trimmed.
func parseChoice(q harness.Question, line string) string {
	line = strings.TrimSpace(line)
	if len(q.Choices) == 0 || line == "" {
		return line
	}
	fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 || len(fields) > 1 && !q.Multiple {
		return line
	}
	var picked []string
	seen := map[int]bool{}
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(q.Choices) || strings.HasPrefix(f, "+") {
			return line
		}
		if !seen[n] {
			seen[n] = true
			picked = append(picked, q.Choices[n-1])
		}
	}
	return strings.Join(picked, ", ")
}

// inputAnswers turns -answer into answers for the waiting questions: one
// per question, in the order Paused lists them.
func (a *app) inputAnswers(p *agent.Pause) (map[string][]string, error) {
	total := 0
	for _, r := range p.Questions {
		total += len(r.Questions)
	}
	given := a.o.sup.answers
	if len(given) != total {
		return nil, usagef("the turn waits for %s and -answer gave %d: give one -answer per question, in order",
			ui.Plural(total, "answer", "answers"), len(given))
	}
	out := map[string][]string{}
	i := 0
	for _, r := range p.Questions {
		for _, q := range r.Questions {
			out[r.Call.ID] = append(out[r.Call.ID], parseChoice(q, given[i]))
			i++
		}
	}
	return out, nil
}

// continuePaused answers the turn a resumed session left paused, from
// the command line: -answer for questions, a raised -max-cost or
// -max-tokens for a budget. handled is false when nothing of the kind
// was given (the flags of approvals are resolve's).
func (a *app) continuePaused(ctx context.Context) (code int, handled bool, err error) {
	p := a.sess.Paused()
	given := len(a.o.sup.answers) > 0
	if p == nil {
		if given {
			return 0, true, usagef("session %s has no question waiting for an answer", a.sess.Header().ID)
		}
		return 0, false, nil
	}
	switch p.Reason {
	case session.ReasonAwaitingInput:
		if !given && a.o.hasPrompt {
			return 0, false, nil // the prompt starts afresh
		}
		var ans map[string][]string
		switch {
		case given:
			if ans, err = a.inputAnswers(p); err != nil {
				return 0, true, err
			}
		case a.interactive():
			return 0, false, nil // the prompt loop asks, on its terminal
		default:
			a.showQuestions()
			return exitPaused, true, nil
		}
		code, _ := a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] {
			return a.sess.Answer(c, agent.Answers{Input: ans})
		})
		return code, true, nil
	case session.ReasonAwaitingBudget:
		if given {
			return 0, true, usagef("session %s waits for a higher budget, not answers: -continue with a higher -max-cost or -max-tokens", a.sess.Header().ID)
		}
		if what, limit := stillReached(p.Spend, a.o.sup.budgets()); what != "" {
			if a.o.hasPrompt || a.interactive() {
				return 0, false, nil // the prompt loop asks, or the prompt starts afresh
			}
			a.showBudget(p.Spend)
			return 0, true, usagef("the session's %s is still reached (%s): give a higher %s", what, limit, budgetFlag(p.Spend.Reached))
		}
		b := a.o.sup.budgets()
		code, _ := a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] {
			return a.sess.Answer(c, agent.Answers{Budget: &b})
		})
		return code, true, nil
	}
	if given {
		return 0, true, usagef("session %s waits for approval, not answers: use -approve or -reject", a.sess.Header().ID)
	}
	return 0, false, nil
}

// stillReached names the budget of b that the spend of a budget pause
// still reaches, with what was spent of it; "" when b lets the turn go
// on. A zero cap of b caps nothing.
func stillReached(sp *session.Spend, b agent.Budgets) (what, spent string) {
	if sp == nil {
		return "", ""
	}
	s := b.Session
	switch {
	case s.Cost > 0 && sp.SessionCost >= s.Cost:
		return "cost budget", fmt.Sprintf("%s spent of %s", dollars(sp.SessionCost), dollars(s.Cost))
	case s.Tokens > 0 && sp.SessionTokens >= s.Tokens:
		return "token budget", fmt.Sprintf("%s tokens spent of %s", ui.Count(sp.SessionTokens), ui.Count(s.Tokens))
	case s.Cost == 0 && s.Tokens == 0:
		return "budget", "no higher -max-cost or -max-tokens was given"
	}
	return "", ""
}

// budgetFlag is the flag that raises the budget reached.
func budgetFlag(reached string) string {
	if strings.HasSuffix(reached, "_tokens") {
		return "-max-tokens"
	}
	return "-max-cost"
}

// dollars is an amount of dollars, with the precision small amounts need.
func dollars(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("$%.2f", v)
	case v >= 0.01:
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.6f", v)
}

// raisedBudget is the budget a paused turn is offered to go on with:
// twice the limit reached (and at least twice what was spent of it).
func raisedBudget(sp *session.Spend) float64 {
	if strings.HasSuffix(sp.Reached, "_tokens") {
		return math.Ceil(max(2*sp.Limit, 2*float64(sp.SessionTokens), 2*float64(sp.TurnTokens)))
	}
	return roundUp(max(2*sp.Limit, 2*sp.SessionCost, 2*sp.TurnCost))
}

// roundUp rounds a dollar amount up to two significant digits, so the
// amount offered is easy to read and type.
func roundUp(v float64) float64 {
	if v <= 0 {
		return 0
	}
	scale := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Ceil(v/scale-1e-9) * scale
}

// budgetText says which budget a turn reached and what was spent.
func budgetText(sp *session.Spend) string {
	if strings.HasSuffix(sp.Reached, "_tokens") {
		return fmt.Sprintf("the token budget is reached: %s tokens spent of %s", ui.Count(sp.SessionTokens), ui.Count(int64(sp.Limit)))
	}
	return fmt.Sprintf("the cost budget is reached: %s spent of %s", dollars(sp.SessionCost), dollars(sp.Limit))
}

// budgetValue is a budget amount as its flag takes it.
func budgetValue(reached string, v float64) string {
	if strings.HasSuffix(reached, "_tokens") {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// askBudget asks at the terminal whether a turn paused at its budget goes
// on, and with which limit. ok is false when the user declines.
func (a *app) askBudget(ctx context.Context, sp *session.Spend) (b agent.Budgets, ok bool) {
	offer := raisedBudget(sp)
	unit := "$"
	if strings.HasSuffix(sp.Reached, "_tokens") {
		unit = ""
	}
	a.view.Notice(ui.NoticeWarn, "⏸ "+budgetText(sp))
	for {
		line, answered := a.ask(ctx, fmt.Sprintf("go on with a budget of %s%s? [Y/n] or a new limit › ", unit, budgetValue(sp.Reached, offer)))
		if !answered {
			return agent.Budgets{}, false
		}
		v, yes, err := parseBudgetAnswer(line, offer)
		if err != nil {
			a.view.Notice(ui.NoticeWarn, err.Error())
			continue
		}
		if !yes {
			return agent.Budgets{}, false
		}
		spent := sp.SessionCost
		if unit == "" {
			spent = float64(sp.SessionTokens)
		}
		if v <= spent || v <= sp.Limit {
			a.view.Notice(ui.NoticeWarn, fmt.Sprintf("%s%s is not above the limit reached: give more", unit, budgetValue(sp.Reached, v)))
			continue
		}
		if unit == "" {
			a.o.sup.maxTokens = int64(v)
			return agent.Budgets{Session: agent.Budget{Tokens: int64(v)}}, true
		}
		a.o.sup.maxCost = v
		return agent.Budgets{Session: agent.Budget{Cost: v}}, true
	}
}

// parseBudgetAnswer reads the answer to "go on with a budget of offer?":
// Enter or yes takes offer, no declines, and a number (a leading $
// allowed, and k or m for thousands or millions of tokens) is the new
// limit.
func parseBudgetAnswer(line string, offer float64) (v float64, yes bool, err error) {
	s := strings.ToLower(strings.TrimSpace(line))
	switch s {
	case "", "y", "yes":
		return offer, true, nil
	case "n", "no":
		return 0, false, nil
	}
	s = strings.TrimPrefix(s, "$")
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		s, mult = strings.TrimSuffix(s, "k"), 1e3
	case strings.HasSuffix(s, "m"):
		s, mult = strings.TrimSuffix(s, "m"), 1e6
	}
	f, perr := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if perr != nil || !(f > 0) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP") {
		return 0, false, fmt.Errorf("%q is not an answer: Enter or y goes on, n stops, or give a new limit such as 2.50", strings.TrimSpace(line))
	}
	return f * mult, true, nil
}

// showBudget says that the turn paused at its budget, and how to go on.
func (a *app) showBudget(sp *session.Spend) {
	if sp == nil {
		return
	}
	flagName := budgetFlag(sp.Reached)
	msg := fmt.Sprintf("The turn is paused: %s.\nGo on with: %s", budgetText(sp),
		a.resumeCommand(flagName, budgetValue(sp.Reached, raisedBudget(sp))))
	a.pauseNotice(msg)
}

// showQuestions prints the questions a paused turn waits for, and the
// command that answers them.
func (a *app) showQuestions() {
	p := a.sess.Paused()
	if p == nil {
		return
	}
	var b strings.Builder
	var extra []string
	n := 0
	for _, r := range p.Questions {
		n += len(r.Questions)
	}
	fmt.Fprintf(&b, "The turn is paused: the agent asks %s.\n", ui.Plural(n, "question", "questions"))
	i := 0
	for _, r := range p.Questions {
		for _, q := range r.Questions {
			i++
			fmt.Fprintf(&b, "  %d. %s", i, oneLine(q.Question, 300))
			if len(q.Choices) > 0 {
				how := "one of"
				if q.Multiple {
					how = "any of"
				}
				fmt.Fprintf(&b, "  (%s: ", how)
				for k, c := range q.Choices {
					if k > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "%d %s", k+1, oneLine(c, 80))
				}
				b.WriteString(")")
			}
			b.WriteString("\n")
			extra = append(extra, "-answer", fmt.Sprintf("ANSWER%d", i))
		}
	}
	fmt.Fprintf(&b, "Answer with: %s\n(one -answer per question, in order: your text, or a choice's number)", a.resumeCommand(extra...))
	a.pauseNotice(b.String())
}

// pauseNotice shows how to go on with a paused turn: on stderr under
// -json, else in the view.
func (a *app) pauseNotice(msg string) {
	if a.o.json {
		fmt.Fprintln(a.stderr, msg)
		return
	}
	a.view.Notice(ui.NoticeWarn, msg)
}

// resumeCommand is the command that continues this session, with the
// flags this run was given that shape the loop (the workspace and the
// sessions directory made absolute; those that pick a session, a prompt
// or answers left out) and then extra, as name value pairs: a flag in
// extra replaces the one given.
func (a *app) resumeCommand(extra ...string) string {
	skip := map[string]bool{
		"C": true, "sessions": true, "p": true, "resume": true, "continue": true, "fork": true,
		"approve": true, "reject": true, "feedback": true, "answer": true,
		"rewind": true, "rewind-scope": true, "dry-run": true, "force": true, "list": true,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		skip[strings.TrimPrefix(extra[i], "-")] = true
	}
	words := []string{"coder", "-C", shellQuote(a.root)}
	if a.o.sessions != "" {
		words = append(words, "-sessions", shellQuote(a.sessionsDir))
	}
	for _, g := range a.o.given {
		if skip[g.name] {
			continue
		}
		if g.bool {
			words = append(words, shellQuote("-"+g.name+"="+g.value))
			continue
		}
		words = append(words, "-"+g.name, shellQuote(g.value))
	}
	words = append(words, "-continue")
	for i := 0; i+1 < len(extra); i += 2 {
		words = append(words, extra[i], shellQuote(extra[i+1]))
	}
	return strings.Join(words, " ")
}

// budgetPaused follows a turn that paused at its budget: at a terminal
// coder asks whether to go on, and with which limit, and the same turn
// goes on; otherwise it prints the command that goes on, and exits 3.
func (a *app) budgetPaused(ctx context.Context) (code int, exit bool) {
	p := a.sess.Paused()
	if p == nil || p.Spend == nil {
		return exitPaused, true
	}
	if !a.interactive() {
		a.showBudget(p.Spend)
		return exitPaused, true
	}
	b, ok := a.askBudget(ctx, p.Spend)
	if !ok {
		a.view.Notice(ui.NoticeWarn, "the turn stays paused at its budget; a new prompt starts afresh, or go on later with: "+
			a.resumeCommand(budgetFlag(p.Spend.Reached), budgetValue(p.Spend.Reached, raisedBudget(p.Spend))))
		return exitPaused, ctx.Err() != nil
	}
	return a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] {
		return a.sess.Answer(c, agent.Answers{Budget: &b})
	})
}

// askBetweenTurns asks the questions of a paused turn at the terminal,
// as the answerer does during a turn. ok is false when the user did not
// answer (end of input, Ctrl-C).
func (a *app) askBetweenTurns(ctx context.Context, reqs []agent.InputRequest) (map[string][]string, bool) {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	out := map[string][]string{}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ask := a.askUser()
		for _, r := range reqs {
			var ans []string
			if ans, err = ask(c, r); err != nil {
				return
			}
			out[r.Call.ID] = ans
		}
	}()
	a.console.WaitTurn(ctx, done, cancel)
	return out, err == nil && c.Err() == nil
}

// steer sends a line typed while a turn runs: into the turn (Enter), or
// queued as the next turn (Tab). The screen says which happened: a line
// steered as the turn ends is queued instead.
func (a *app) steer(text string, queue bool) {
	shown := "» " + oneLine(text, 60)
	if queue {
		if err := a.sess.Queue(context.Background(), text); err != nil {
			a.view.Notice(ui.NoticeError, "queueing the message: "+err.Error())
			return
		}
		a.view.Notice(ui.NoticeInfo, shown+" · queued: it runs after this turn")
		return
	}
	d, err := a.sess.Steer(context.Background(), text)
	switch {
	case err != nil:
		a.view.Notice(ui.NoticeError, "steering the turn: "+err.Error())
	case d == agent.Queued:
		a.view.Notice(ui.NoticeWarn, shown+" · the turn was ending, so it is queued: it runs next")
	default:
		a.view.Notice(ui.NoticeInfo, shown+" · steered: the agent reads it before its next step")
	}
}

// runQueued runs the queued messages, oldest first, each as a turn,
// while they complete; last is the status of the turn before them. A turn that ends otherwise leaves the rest
// waiting, and the screen says how to run them.
func (a *app) runQueued(ctx context.Context, last int) (code int, exit bool) {
	code = last
	for {
		q := a.sess.Queued()
		if len(q) == 0 {
			return code, false
		}
		if code != exitOK {
			a.view.Notice(ui.NoticeWarn, fmt.Sprintf("%s wait: Enter at the empty prompt runs them", ui.Plural(len(q), "queued message", "queued messages")))
			return code, false
		}
		code, exit = a.runTurn(ctx, q[0], true, func(c context.Context) iter.Seq2[agent.Event, error] { return a.sess.RunQueued(c) })
		if exit {
			return code, true
		}
	}
}

// resumePaused asks at the start of the prompt loop about a turn the
// resumed session left paused for answers or a budget, and goes on with
// it once answered.
func (a *app) resumePaused(ctx context.Context) (code int, exit bool) {
	p := a.sess.Paused()
	if p == nil {
		return exitOK, false
	}
	switch p.Reason {
	case session.ReasonAwaitingInput:
		a.view.Notice(ui.NoticeInfo, "the last turn waits for answers to the agent's questions")
		ans, ok := a.askBetweenTurns(ctx, p.Questions)
		if !ok {
			return exitPaused, ctx.Err() != nil
		}
		return a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] {
			return a.sess.Answer(c, agent.Answers{Input: ans})
		})
	case session.ReasonAwaitingBudget:
		return a.budgetPaused(ctx)
	}
	return exitOK, false
}
