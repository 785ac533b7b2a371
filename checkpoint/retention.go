package checkpoint

import (
	"context"
	"errors"
	"slices"

	"github.com/go-harness/harness"
)

// Referenced returns a function for session.Retention.ExpandCheckpoints:
// given the manifests of a deleted session's checkpoints, it returns
// every digest they refer to in store (their chunks, the packs of small
// files' contents and the larger contents they kept), sorted, each once, so that an attachment store
// that counts references can release them. A manifest the store no
// longer holds refers to nothing.
func Referenced(store Store) func(ctx context.Context, manifests []string) ([]string, error) {
	return func(ctx context.Context, manifests []string) ([]string, error) {
		objs := &objects{store: store}
		var out []string
		for _, m := range manifests {
			data, err := store.Get(ctx, m)
			if errors.Is(err, harness.CodeNotFound) {
				continue
			}
			if err != nil {
				return out, err
			}
			refs, _, err := parseManifest(data)
			if err != nil {
				return out, err
			}
			for _, r := range refs {
				out = append(out, r.digest)
			}
			t, err := objs.load(ctx, m)
			if err != nil {
				return out, err
			}
			for _, e := range t.entries {
				switch {
				case e.Kept && e.Pack != "":
					out = append(out, e.Pack)
				case e.Kept:
					out = append(out, e.Digest)
				}
			}
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
}
