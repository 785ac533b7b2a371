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
		limits   CallLimits
		deadline time.Duration
		family   tools.Family
		want     time.Duration
	}{
		{"no deadline: the default", CallLimits{}, 0, "", defaultCallBackstop},
		{"no deadline, any family: the default", CallLimits{}, 0, tools.FamilyNetwork, defaultCallBackstop},
		{"no deadline: configured", CallLimits{Backstop: time.Second}, 0, tools.FamilyLocal, time.Second},
		{"short deadline: deadline plus the grace", CallLimits{}, 10 * time.Second, "", 10*time.Second + minBackstopGrace},
		{"long deadline: twice it", CallLimits{}, 10 * time.Minute, "", 20 * time.Minute},
		{"margin", CallLimits{Margin: 3}, 10 * time.Minute, "", 30 * time.Minute},
		{"margin one: the grace still applies", CallLimits{Margin: 1}, 10 * time.Minute, "", 11 * time.Minute},
		{"huge deadline: no overflow", CallLimits{}, maxDuration - time.Second, "", maxDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.limits.backstop(tools.Spec{Name: "x", Deadline: tc.deadline, Family: tc.family})
			assert.Equal(t, tc.want, got)
		})
	}
}
