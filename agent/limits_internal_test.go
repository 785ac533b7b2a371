package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/tools"
)

func TestBackstopOfASpec(t *testing.T) {
	const maxDuration = time.Duration(1<<63 - 1)
	for _, tc := range []struct {
		name     string
		limits   Limits
		deadline time.Duration
		family   tools.Family
		want     time.Duration
	}{
		{"no deadline: the default", Limits{}, 0, "", defaultCallBackstop},
		{"no deadline, any family: the default", Limits{}, 0, tools.FamilyNetwork, defaultCallBackstop},
		{"no deadline: configured", Limits{Backstop: time.Second}, 0, tools.FamilyLocal, time.Second},
		{"short deadline: deadline plus the grace", Limits{}, 10 * time.Second, "", 10*time.Second + minBackstopGrace},
		{"long deadline: twice it", Limits{}, 10 * time.Minute, "", 20 * time.Minute},
		{"margin", Limits{Margin: 3}, 10 * time.Minute, "", 30 * time.Minute},
		{"margin one: the grace still applies", Limits{Margin: 1}, 10 * time.Minute, "", 11 * time.Minute},
		{"huge deadline: no overflow", Limits{}, maxDuration - time.Second, "", maxDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.limits.backstop(tools.Spec{Name: "x", Deadline: tc.deadline, Family: tc.family})
			assert.Equal(t, tc.want, got)
		})
	}
}
