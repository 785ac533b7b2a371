//go:build !linux

package proctree

// cgroupTree is where the tools make a cgroup for each command: only
// Linux has cgroups, so elsewhere there is none to make.
type cgroupTree struct{}
