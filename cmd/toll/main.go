// Command toll measures what an agent costs the application it rides on:
// it runs a baseline and each variant of a set of services under identical
// load and reports every cost with a 95% confidence interval and a verdict.
// Its commands, flags and exit codes are documented in package cli and by
// `toll help`.
package main

import (
	"os"

	"github.com/tollperf/toll/cli"
)

func main() {
	os.Exit(cli.Main())
}
