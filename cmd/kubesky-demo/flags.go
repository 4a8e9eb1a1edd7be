package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// parseFlags parses args into fs. It returns (status, true) when the
// command should exit at once: 0 after printing the flags for --help, 2
// after a bad flag.
func parseFlags(fs *pflag.FlagSet, args []string, summary string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: kubesky-demo %s [flags]\n\n%s\n\nFlags:\n%s", fs.Name(), summary, fs.FlagUsages())
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "kubesky-demo %s: %v\n", fs.Name(), err)
		return 2, true
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "kubesky-demo %s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2, true
	}
	return 0, false
}
