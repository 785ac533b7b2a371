// Package secretenv names the environment variables that look like
// credentials, so that a program the harness starts (a language server)
// does not inherit them unless the host passes them by name.
//
// The shell tools withhold the same variables from unsandboxed commands
// through this package: one list of what a credential looks like.
//
// It imports only the standard library.
package secretenv

import "strings"

// patterns are variable names; a * matches any run of characters, and
// case is ignored.
var patterns = []string{
	"*_API_KEY", "*APIKEY*", "*_KEY", "*_KEYS", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*",
	"*CREDENTIAL*", "*_PAT", "*_AUTH", "*COOKIE*", "*SESSION_ID*", "AWS_*", "AZURE_*", "GCP_*", "GOOGLE_APPLICATION_CREDENTIALS",
	"DATABASE_URL", "*_DATABASE_URL", "*_DSN", "PG*PASS*", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
}

// Secret reports whether a variable's name looks like it holds a
// credential.
func Secret(name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// Match matches a variable name against a pattern whose * match any run
// of characters, ignoring case.
func Match(pattern, name string) bool {
	pattern, name = strings.ToUpper(pattern), strings.ToUpper(name)
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

// Filter returns the variables of env ("NAME=value") whose names do not
// look like credentials, or that match one of pass (patterns as Match
// takes them).
func Filter(env []string, pass []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := !Secret(name)
		for _, p := range pass {
			if Match(p, name) {
				keep = true
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
