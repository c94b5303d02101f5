//go:build race

package weir_test

// raceDetector is true in a build with the race detector, which slows
// every goroutine several times over and unevenly.
const raceDetector = true
