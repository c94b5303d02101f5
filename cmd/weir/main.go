// Command weir runs stream processing jobs; see `weir --help`.
package main

import (
	"github.com/weir-stream/weir/cli"
	_ "github.com/weir-stream/weir/cli/jobs" // the built-in jobs
)

func main() { cli.Main() }
