package sessiontest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/sessiontest"
)

func TestPowerLossAttachmentsConforms(t *testing.T) {
	sessiontest.TestAttachments(t, func(t *testing.T) *sessiontest.PowerLossAttachments {
		return sessiontest.NewPowerLossAttachments()
	})
}

// What Put stores and what Sync made durable survive a power loss; what
// was only staged does not.
func TestPowerLossAttachments(t *testing.T) {
	ctx := context.Background()
	s := sessiontest.NewPowerLossAttachments()
	put, err := s.Put(ctx, []byte("put"))
	require.NoError(t, err)
	synced, err := s.Stage(ctx, []byte("synced"))
	require.NoError(t, err)
	require.NoError(t, s.Sync(ctx))
	lost, err := s.Stage(ctx, []byte("lost"))
	require.NoError(t, err)
	again, err := s.Stage(ctx, []byte("put"))
	require.NoError(t, err)
	assert.Equal(t, put, again)
	assert.Equal(t, 1, s.Unsynced(), "staging what is durable leaves nothing to sync")
	got, err := s.Get(ctx, lost)
	require.NoError(t, err)
	assert.Equal(t, "lost", string(got), "a staged object reads at once")

	s.PowerLoss()
	assert.Equal(t, 1, s.Syncs())
	assert.Zero(t, s.Unsynced())
	for d, want := range map[string]string{put: "put", synced: "synced"} {
		got, err := s.Get(ctx, d)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	_, err = s.Get(ctx, lost)
	var he *harness.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, harness.CodeNotFound, he.Code)
}
