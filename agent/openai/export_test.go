package openai

// LookupModel is the built-in catalog, for the tests.
var LookupModel = lookupModel
