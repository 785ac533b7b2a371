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
// of characters, ignoring case. It allocates nothing when both are upper
// case already (the shell checks every variable of every command's
// environment against every pattern).
func Match(pattern, name string) bool {
	pattern, name = strings.ToUpper(pattern), strings.ToUpper(name)
	prefix, rest, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == name
	}
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	name = name[len(prefix):]
	for {
		part, more, ok := strings.Cut(rest, "*")
		if !ok {
			return strings.HasSuffix(name, rest)
		}
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name, rest = name[i+len(part):], more
	}
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
