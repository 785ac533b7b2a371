package openai

// LookupModel is the built-in catalog, for the tests.
var LookupModel = lookupModel

// ParseDialect is parseDialect, for the tests.
var ParseDialect = parseDialect

// Dialect returns the dialect the model's requests follow, for the tests.
func (m *Model) Dialect() Dialect { return m.rules.dialect }
