package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { AddCommand(versionCommand) }

// weirModule is the module path of weir itself.
const weirModule = "github.com/weir-stream/weir"

func versionCommand(stdout, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of weir and how this binary was built",
		Long: `Print the module version of weir, the version control revision the binary
was built from (with "modified" when the work tree had changes), and the Go
version that built it. A program that embeds weir prints its own module too.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info, ok := debug.ReadBuildInfo()
			if !ok {
				return fmt.Errorf("version: the binary carries no build information")
			}
			fmt.Fprint(stdout, formatVersion(info))
			return nil
		},
	}
}

// formatVersion describes a build: weir's module version, the program's
// module when it is not weir, the VCS revision and the Go version.
func formatVersion(info *debug.BuildInfo) string {
	weirVersion := ""
	if info.Main.Path == weirModule {
		weirVersion = info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == weirModule {
			weirVersion = d.Version
			if d.Replace != nil {
				weirVersion += " => " + d.Replace.Path + " " + d.Replace.Version
			}
		}
	}
	if weirVersion == "" {
		weirVersion = "(unknown)"
	}
	s := fmt.Sprintf("weir %s\n", weirVersion)
	if info.Main.Path != weirModule && info.Main.Path != "" {
		s += fmt.Sprintf("program %s %s\n", info.Main.Path, info.Main.Version)
	}
	var rev, at, modified string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			at = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		s += "revision unknown (built without version control information)\n"
	} else {
		s += fmt.Sprintf("revision %s%s", rev, modified)
		if at != "" {
			s += ", committed " + at
		}
		s += "\n"
	}
	return s + fmt.Sprintf("built with %s\n", info.GoVersion)
}
