//go:build race

package export_test

const raceEnabled = true
