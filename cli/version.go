package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// baseVersion is toll's release version.
const baseVersion = "0.1.0-dev"

// unknownCommit is the commit of a binary built without VCS information
// (go build -buildvcs=false, or outside a repository).
const unknownCommit = "unknown"

// build is what toll version prints: the version and the commit the
// binary was built from, and the Go toolchain and platform.
type build struct {
	Version string `json:"version"`
	// Commit is the VCS revision (vcs.revision), or "unknown".
	Commit string `json:"commit"`
	// Modified is true when the work tree had changes not committed
	// (vcs.modified).
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// buildOf reads the build from the binary's build information, bi (nil
// when the binary has none).
func buildOf(bi *debug.BuildInfo) build {
	b := build{Version: baseVersion, Commit: unknownCommit, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return b
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				b.Commit = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// currentBuild is the build of the running binary.
func currentBuild() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildOf(bi)
}

// String is the version line: toll's version, its commit (marked
// "modified" when built from a changed work tree), and the toolchain.
func (b build) String() string {
	commit := b.Commit
	if b.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("toll %s (commit %s; %s %s/%s)", b.Version, commit, b.Go, b.OS, b.Arch)
}

// tollVersion returns toll's version with the first 12 characters of the
// VCS revision it was built from, when the build recorded one.
func tollVersion() string {
	b := currentBuild()
	if b.Commit != unknownCommit && len(b.Commit) >= 12 {
		return b.Version + "+" + b.Commit[:12]
	}
	return b.Version
}

// versionLine is what toll version and toll --version print.
func versionLine() string {
	return currentBuild().String()
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print toll's version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := currentBuild()
			if !asJSON {
				fmt.Fprintln(cmd.OutOrStdout(), b)
				return nil
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if err := enc.Encode(b); err != nil {
				return fmt.Errorf("version: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as a JSON object (version, commit, modified, go, os, arch)")
	return cmd
}
