//go:build !race

package warmstack

const raceEnabled = false
