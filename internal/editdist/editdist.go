package editdist

// MaxLen bounds the strings Distance compares in full; longer strings are
// either equal (0) or far apart, so a hostile input costs nothing.
const MaxLen = 256

// Far is the distance of two different strings longer than MaxLen.
const Far = 1 << 20

// Distance returns the Levenshtein distance of a and b in bytes.
func Distance(a, b string) int {
	if len(a) > MaxLen || len(b) > MaxLen {
		if a == b {
			return 0
		}
		return Far
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
