// Package diff computes line diffs and groups them into unified-diff hunks,
// for the diff render of file changes.
//
// [Lines] is Myers' O(ND) algorithm, searching from both ends in linear
// space, with common prefixes and suffixes trimmed first and a bound on the
// edit cost ([MaxCost]) past which a region is reported as delete-then-
// insert: correct, not minimal, and never slow. [RegionScript] builds the
// script of a change whose changed byte ranges are already known (an edit's
// replacements), eliding the unchanged lines between them, so that the diff
// of one edit in a large file costs about as much as the edit itself.
// [Hunks] groups a script into hunks with context lines.
package diff
