package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-harness/harness"
)

// SessionDataDeleter is implemented by stores that keep data on behalf of
// a session outside its log, such as a spill store holding the whole
// output of the session's tool calls. A Retention calls it for every
// session it deletes. Deleting the data of a session that has none must
// succeed.
type SessionDataDeleter interface {
	DeleteSession(ctx context.Context, id string) error
}

// AttachmentReleaser is implemented by attachment stores that count which
// sessions refer to an attachment, so that attachments no session refers
// to any more can be collected. A Retention calls it with the digests a
// deleted session's log referred to (see attachmentDigests).
type AttachmentReleaser interface {
	ReleaseAttachments(ctx context.Context, session string, digests []string) error
}

// Retention deletes sessions together with what other stores keep for
// them, one at a time or by age. Set its fields before first use; it is
// then safe for concurrent use. Nil entries of Data and Attachments are
// skipped.
type Retention struct {
	// Store holds the sessions' logs.
	Store Store
	// Data are stores whose per-session data is deleted with each
	// session, such as the spill store.
	Data []SessionDataDeleter
	// Attachments are attachment stores told which references a deleted
	// session held.
	Attachments []AttachmentReleaser
}

// Delete deletes session id: its log, then the data the configured stores
// keep for it, then its attachment references. A session open for
// appending is left alone (harness.CodeLocked) and nothing is deleted.
//
// When the log no longer exists, Delete still asks the data stores to drop what
// they keep for the id (what an interrupted Delete may have left behind) and
// then fails with harness.CodeNotFound. Errors of the other stores are joined;
// the log is gone by then.
func (r *Retention) Delete(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	var digests []string
	if len(r.Attachments) > 0 {
		tr, err := r.Store.Load(ctx, id)
		switch {
		case err == nil:
			digests = attachmentDigests(tr.Events)
		case errors.Is(err, harness.CodeNotFound):
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			// An unreadable log (another format, a broken header) can
			// still be deleted; its references are unknown.
		}
	}
	derr := r.Store.Delete(ctx, id)
	if derr != nil && !errors.Is(derr, harness.CodeNotFound) {
		return derr
	}
	errs := []error{derr}
	for _, d := range r.Data {
		if d == nil {
			continue
		}
		if err := d.DeleteSession(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("session %s: deleting its data: %w", id, err))
		}
	}
	if len(digests) > 0 {
		for _, a := range r.Attachments {
			if a == nil {
				continue
			}
			if err := a.ReleaseAttachments(ctx, id, digests); err != nil {
				errs = append(errs, fmt.Errorf("session %s: releasing attachments: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// PruneOptions select the sessions Prune deletes.
type PruneOptions struct {
	// OlderThan deletes sessions not updated for longer than this; it
	// must be positive.
	OlderThan time.Duration
	// Workspace, when set, limits pruning to sessions whose cwd is this
	// directory or below it.
	Workspace string
	// DryRun reports what would be deleted without deleting anything.
	DryRun bool
	// Now is the time ages are measured against; zero means time.Now().
	Now time.Time
}

// PruneReport says what Prune did.
type PruneReport struct {
	// Deleted lists the sessions deleted (or, in a dry run, that would
	// be), newest first.
	Deleted []Info
	// Kept lists the old sessions that could not be deleted, and
	// KeptErrs why, one error each (KeptErrs[i] is Kept[i]'s): a session
	// open for appending is kept with an error matching
	// harness.CodeLocked.
	Kept     []Info
	KeptErrs []error
}

// Prune deletes the sessions not updated for longer than opts.OlderThan,
// each as Delete does. Sessions open for appending are kept and reported.
// It also removes what interrupted Creates left behind in a JSONL store.
func (r *Retention) Prune(ctx context.Context, opts PruneOptions) (*PruneReport, error) {
	if opts.OlderThan <= 0 {
		return nil, fmt.Errorf("session: prune: OlderThan must be positive, got %v", opts.OlderThan)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cutoff := now.Add(-opts.OlderThan)
	infos, err := r.Store.List(ctx, ListOptions{Workspace: opts.Workspace})
	if err != nil {
		return nil, err
	}
	rep := &PruneReport{}
	for _, in := range infos {
		if !in.Updated.Before(cutoff) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if opts.DryRun {
			rep.Deleted = append(rep.Deleted, in)
			continue
		}
		err := r.Delete(ctx, in.Header.ID)
		switch {
		case err == nil:
			rep.Deleted = append(rep.Deleted, in)
		case errors.Is(err, harness.CodeNotFound):
			// deleted meanwhile
		case ctx.Err() != nil:
			return rep, ctx.Err()
		default:
			rep.Kept = append(rep.Kept, in)
			rep.KeptErrs = append(rep.KeptErrs, err)
		}
	}
	if c, ok := r.Store.(interface {
		removeStale(before time.Time) error
	}); ok && !opts.DryRun {
		// Leave alone anything a Create running now may still use.
		before := now.Add(-time.Hour)
		if cutoff.Before(before) {
			before = cutoff
		}
		if err := c.removeStale(before); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// attachmentDigests returns the digests of the attachments (images) the
// events refer to, sorted, each once.
func attachmentDigests(events []Event) []string {
	var out []string
	addContent := func(cs []harness.Block) {
		for _, c := range cs {
			if c.Image != nil && c.Image.Digest != "" {
				out = append(out, c.Image.Digest)
			}
		}
	}
	for _, e := range events {
		switch p := e.Data.(type) {
		case *UserMessage:
			addContent(p.Content)
		case *AssistantMessage:
			for _, b := range p.Content {
				if b.Image != nil && b.Image.Digest != "" {
					out = append(out, b.Image.Digest)
				}
				if b.ToolResult != nil {
					addContent(b.ToolResult.Content)
				}
			}
		case *ToolFinished:
			addContent(p.Result.Content)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
