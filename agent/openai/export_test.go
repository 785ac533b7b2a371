package openai

// LookupModel is the built-in catalog, for the tests.
var LookupModel = lookupModel

// ParseDialect is parseDialect, for the tests.
var ParseDialect = parseDialect
