// Package units formats counts for the texts the model and the user read:
// byte sizes in one convention (binary multiples, one decimal: "812
// bytes", "4.2 KiB", "3.1 MiB", "1.5 GiB") and counted nouns ("1 line",
// "3 lines"). Every package of the module formats sizes and plurals with
// it, so one text never says "KB" where another says "KiB".
package units

import (
	"strconv"
)

// Bytes formats a byte count: the exact count below 1 KiB ("0 bytes",
// "1 byte", "1023 bytes"), otherwise the count in the largest binary
// multiple it reaches, with one decimal ("1.0 KiB", "20.0 MiB",
// "2.0 GiB"). A negative count is formatted like its absolute value with
// a minus sign.
func Bytes(n int64) string {
	if n < 0 {
		if n == -n { // the smallest int64 has no absolute value
			return "-8.0 EiB"
		}
		return "-" + Bytes(-n)
	}
	const unit = 1 << 10
	if n < unit {
		return Plural(n, "byte", "bytes")
	}
	suffixes := [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i, div := 0, int64(unit)
	for i < len(suffixes)-1 && n/div >= unit {
		div *= unit
		i++
	}
	v := float64(n) / float64(div)
	// One decimal, rounded: 1023.96 KiB reads "1024.0 KiB" rather than
	// moving to the next multiple, which keeps the unit a function of n
	// alone and the text monotonic.
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + suffixes[i]
}

// Plural formats a count with the noun in the form it takes: one when n
// is 1 (or -1), many otherwise ("0 files", "1 file", "2 files").
func Plural[N ~int | ~int64](n N, one, many string) string {
	w := many
	if n == 1 || n == -1 {
		w = one
	}
	return strconv.FormatInt(int64(n), 10) + " " + w
}
