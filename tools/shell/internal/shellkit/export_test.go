package shellkit

// CollapseCR is collapseCR, for the baseline of BenchmarkClean.
var CollapseCR = collapseCR
