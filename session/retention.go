package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-harness/harness"
)

// Retention deletes sessions together with what other stores keep for
// them, one at a time or by age. Set its fields before first use; it is
// then safe for concurrent use.
type Retention struct {
	// Store holds the sessions' logs.
	Store Store
	// DeleteData, when set, is called for every session deleted, to
	// delete what other stores keep for it outside its log, such as the
	// spill store's saved output (spills.DeleteSession). It must succeed
	// for a session that has no such data.
	DeleteData func(ctx context.Context, id string) error
	// ReleaseAttachments, when set, is called for every deleted session
	// whose log referred to attachments (images), with their digests,
	// sorted, each once: for an attachment store that counts which
	// sessions refer to an attachment, so that attachments no session
	// refers to any more can be collected. The log is read before it is
	// deleted only when this is set.
	ReleaseAttachments func(ctx context.Context, id string, digests []string) error
	// ExpandCheckpoints, when set with ReleaseAttachments, turns the
	// manifests of the deleted session's workspace checkpoints (their
	// digests, which are released in any case) into every digest they
	// refer to: their chunks and the file contents they kept, released
	// with the rest. checkpoint.Referenced returns one for a store.
	ExpandCheckpoints func(ctx context.Context, manifests []string) ([]string, error)
}

// Delete deletes session id: its log and its Meta, then (DeleteData)
// what other stores keep for it, then (ReleaseAttachments) its
// attachment references, the contents of its workspace checkpoints
// included. A session open for appending is left alone
// (harness.CodeLocked) and nothing is deleted. Forks of the session keep
// their own copy of the events they share with it.
//
// When the log no longer exists, Delete still calls DeleteData for the id (what an interrupted Delete may have left behind) and
// then fails with harness.CodeNotFound. Errors of the other stores are joined;
// the log is gone by then.
func (r *Retention) Delete(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	var digests, manifests []string
	if r.ReleaseAttachments != nil {
		tr, err := r.Store.Load(ctx, id)
		switch {
		case err == nil:
			digests = attachmentDigests(tr.Events)
			manifests = checkpointManifests(tr.Events)
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
	if r.DeleteData != nil {
		if err := r.DeleteData(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("session %s: deleting its data: %w", id, err))
		}
	}
	if len(manifests) > 0 && r.ExpandCheckpoints != nil {
		more, err := r.ExpandCheckpoints(ctx, manifests)
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: reading its checkpoints: %w", id, err))
		}
		digests = append(digests, more...)
		slices.Sort(digests)
		digests = slices.Compact(digests)
	}
	if len(digests) > 0 && r.ReleaseAttachments != nil {
		if err := r.ReleaseAttachments(ctx, id, digests); err != nil {
			errs = append(errs, fmt.Errorf("session %s: releasing attachments: %w", id, err))
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

// Prune deletes the sessions not updated for longer than opts.OlderThan,
// each as Delete does, and returns the sessions it deleted (in a dry run,
// those it would delete), newest first. A session it could not delete is
// kept, and the error returned then joins one error per kept session,
// naming it: a session open for appending is kept with an error matching
// harness.CodeLocked. The sessions deleted are returned with any error,
// also when ctx ends the pruning early. Prune also removes what
// interrupted Creates left behind in a JSONL store.
func (r *Retention) Prune(ctx context.Context, opts PruneOptions) ([]Info, error) {
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
	var deleted []Info
	var errs []error
	for _, in := range infos {
		if !in.Updated.Before(cutoff) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		if opts.DryRun {
			deleted = append(deleted, in)
			continue
		}
		err := r.Delete(ctx, in.Header.ID)
		switch {
		case err == nil:
			deleted = append(deleted, in)
		case errors.Is(err, harness.CodeNotFound):
			// deleted meanwhile
		case ctx.Err() != nil:
			return deleted, ctx.Err()
		default:
			errs = append(errs, fmt.Errorf("prune: kept %s: %w", in.Header.ID, err))
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
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}

// checkpointManifests returns the manifests of the events' checkpoints,
// sorted, each once.
func checkpointManifests(events []Event) []string {
	var out []string
	for _, e := range events {
		if c, ok := e.Data.(*Checkpoint); ok && c.Manifest != "" {
			out = append(out, c.Manifest)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// attachmentDigests returns the digests of the attachments (images and
// checkpoint manifests) the events refer to, sorted, each once.
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
		case *Checkpoint:
			if p.Manifest != "" {
				out = append(out, p.Manifest)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
