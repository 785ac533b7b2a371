package guard

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
)

// canonicalJSON returns the canonical text of a call's arguments, so that
// two argument texts that mean the same compare equal: the arguments
// decoded, every number replaced by the one form of its exact value
// (canonicalNumber), and encoded again by encoding/json, which sorts
// object keys at every level, writes no white space and escapes strings
// one way (HTML characters left as they are). Empty arguments are "{}".
// Text that is not one valid JSON value is returned as it is, trimmed of
// surrounding JSON white space.
func canonicalJSON(raw []byte) string {
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return "{}"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.Trim(raw[dec.InputOffset():], jsonSpace)) > 0 {
		return string(raw)
	}
	return encodeCanonical(v)
}

// jsonSpace is the white space JSON allows between tokens.
const jsonSpace = " \t\r\n"

// encodeCanonical returns the canonical text of v, a value decoded with
// json.Number for numbers: its numbers in canonical form, encoded by
// encoding/json. v is not modified.
func encodeCanonical(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canonicalNumbers(v)); err != nil {
		return "" // not reached: a decoded value with canonical numbers is valid JSON
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// canonicalNumbers returns a copy of the decoded value v with every
// number in its canonical form; v is not modified (the registry's
// decoded arguments are shared).
func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return json.Number(canonicalNumber(string(x)))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonicalNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonicalNumbers(e)
		}
		return out
	}
	return v
}

// maxPlainZeros bounds the zeros a number is padded with in plain form:
// an integral value with more trailing zeros, or a fraction with more
// zeros after the point, is written with an exponent instead.
const maxPlainZeros = 20

// canonicalNumber returns the one text of the exact value of a JSON
// number (of any size or precision; s must be valid JSON number syntax):
// "0" for every zero, -0 included; otherwise the significant digits,
// with a sign when negative, in plain form (an integer, or a decimal
// fraction with a point) when that takes at most maxPlainZeros zeros of
// padding, else as d.ddd and an exponent ("1e700", "-2.5e-30"). Texts of
// equal value, such as 1, 1.0, 10e-1 and 1E+00, get the same form; texts
// of different values never do. The result is valid JSON.
func canonicalNumber(s string) string {
	neg, digits, exp, ok := decimalParts(s)
	if !ok {
		return s
	}
	// Drop leading and trailing zeros: value = digits × 10^exp.
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))
	digits = trimmed

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	n := int64(len(digits))
	switch {
	case exp.Sign() >= 0 && exp.Cmp(big.NewInt(maxPlainZeros)) <= 0:
		// An integer: the digits and exp zeros.
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", int(exp.Int64())))
	case exp.Sign() < 0 && new(big.Int).Neg(exp).Cmp(big.NewInt(n)) < 0:
		// A point inside the digits.
		k := n + exp.Int64()
		b.WriteString(digits[:k])
		b.WriteByte('.')
		b.WriteString(digits[k:])
	case exp.Sign() < 0 && new(big.Int).Neg(exp).Cmp(big.NewInt(n+maxPlainZeros)) <= 0:
		// A fraction below 1: zeros after the point, then the digits.
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-exp.Int64()-n)))
		b.WriteString(digits)
	default:
		// d.ddd × 10^(exp + n - 1).
		b.WriteString(digits[:1])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		b.WriteString(exp.Add(exp, big.NewInt(n-1)).String())
	}
	return b.String()
}

// decimalParts splits the JSON number s into its sign and the value
// digits × 10^exp, where digits are those of the integer and the fraction
// parts together. ok is false when s is not JSON number syntax.
func decimalParts(s string) (neg bool, digits string, exp *big.Int, ok bool) {
	neg = strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	whole, frac, hasFrac := strings.Cut(mant, ".")
	if !isDigits(whole) || (hasFrac && !isDigits(frac)) || (len(whole) > 1 && whole[0] == '0') {
		return false, "", nil, false
	}
	exp = new(big.Int)
	if hasExp {
		sign := ""
		if e != "" && (e[0] == '+' || e[0] == '-') {
			sign, e = e[:1], e[1:]
		}
		if !isDigits(e) {
			return false, "", nil, false
		}
		exp.SetString(sign+e, 10)
	}
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	return neg, whole + frac, exp, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
