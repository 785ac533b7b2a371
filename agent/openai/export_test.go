package openai

import "github.com/go-harness/harness/agent/model"

// LookupModel is the built-in catalog, for the tests.
var LookupModel = lookupModel

// ParseDialect is parseDialect, for the tests.
var ParseDialect = parseDialect

// DialectOf returns the dialect m's requests follow, for the tests.
func DialectOf(m model.Model) Dialect { return m.(*chatModel).rules.dialect }

// CloseIdle closes m's idle connections, for the tests.
func CloseIdle(m model.Model) { m.(interface{ CloseIdleConnections() }).CloseIdleConnections() }

// newChat is New returning the concrete model, for the internal tests.
func newChat(cfg Config) (*chatModel, error) {
	m, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return m.(*chatModel), nil
}
