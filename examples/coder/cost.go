package main

import "fmt"

// money formats a cost in US dollars for the footer: four decimals, as
// one step costs fractions of a cent.
func money(c float64) string { return fmt.Sprintf("$%.4f", c) }
