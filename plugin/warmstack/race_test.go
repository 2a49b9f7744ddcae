//go:build race

package warmstack

// raceEnabled: the race detector instruments every memory access and
// channel operation, so CPU costs measured under it are its own.
const raceEnabled = true
