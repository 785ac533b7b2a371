package permission

import "sort"

// pathIndex finds the path rules of one list and kind that may match a
// path without trying them all: a pattern anchored at its base with a
// literal first element can only match paths whose first element below
// that base is the same. A command line names many paths, and a policy
// may hold hundreds of rules.
type pathIndex struct {
	// byFirst maps a base and a first element to the rules anchored
	// there, as positions in rules.
	byFirst [3]map[string][]int
	// other are the positions of the rules to try on every path.
	other []int
	rules []*rule
}

// newPathIndex indexes the path rules of kind k among rules.
func newPathIndex(rules []*rule, k kind) *pathIndex {
	ix := &pathIndex{}
	for _, r := range rules {
		if r.name != "" || r.kind != k || r.anySpec {
			continue
		}
		pos := len(ix.rules)
		ix.rules = append(ix.rules, r)
		pp := r.path
		if pp.anchored && len(pp.segs) > 0 && pp.lit[0] {
			if ix.byFirst[pp.base] == nil {
				ix.byFirst[pp.base] = map[string][]int{}
			}
			ix.byFirst[pp.base][pp.segs[0]] = append(ix.byFirst[pp.base][pp.segs[0]], pos)
			continue
		}
		ix.other = append(ix.other, pos)
	}
	return ix
}

// candidates returns, in the rules' order, the positions of the rules
// that may match a path of one of the forms.
func (ix *pathIndex) candidates(forms []pathForm, buf []int) []int {
	out := append(buf[:0], ix.other...)
	for _, f := range forms {
		for b := range f.parts {
			if !f.under[b] || ix.byFirst[b] == nil || len(f.parts[b]) == 0 {
				continue
			}
			out = append(out, ix.byFirst[b][f.parts[b][0]]...)
		}
	}
	if len(out) > 1 {
		sort.Ints(out)
	}
	return out
}

// A list is one of a policy's three lists of rules.
type list int

const (
	listDeny list = iota
	listAsk
	listAllow
)

func (l list) String() string { return [...]string{"deny", "ask", "allow"}[l] }

func kindSlot(k kind) int {
	if k == kindEdit {
		return 1
	}
	return 0
}

// buildIndexes indexes the policy's path rules.
func (p *Policy) buildIndexes() {
	for i, k := range []kind{kindRead, kindEdit} {
		p.pathIx[listDeny][i] = newPathIndex(p.deny, k)
		p.pathIx[listAsk][i] = newPathIndex(p.ask, k)
		p.pathIx[listAllow][i] = newPathIndex(p.allow, k)
	}
}
