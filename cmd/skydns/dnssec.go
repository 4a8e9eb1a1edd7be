package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/skydns"
	"github.com/kubesky/kubesky/skydns/dnssec"
)

// dnssecUsage is the help of `skydns dnssec`.
const dnssecUsage = `Usage:
  skydns dnssec keygen --zone ZONE [--ksk] [--dir DIR]   write a new ECDSA P-256 key pair, K<zone>+013+<tag>.key and .private
  skydns dnssec ds --dnssec-key FILE...                  print the DS record of each key, for the parent zone

`

// runDNSSEC runs `skydns dnssec ...` and returns the exit status: 0, or 2
// for bad flags or a key that does not load, with one line on stderr.
func runDNSSEC(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, dnssecUsage)
		return 2
	}
	var err error
	switch args[0] {
	case "keygen":
		err = keygen(args[1:], stdout)
	case "ds":
		err = printDS(args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, dnssecUsage)
		return 0
	default:
		err = fmt.Errorf("dnssec: unknown command %q (keygen, ds)", args[0])
	}
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, dnssecUsage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "skydns: %v\n", err)
		return 2
	}
	return 0
}

// keygen writes a new key pair and prints its path without the extension.
func keygen(args []string, stdout io.Writer) error {
	fs := pflag.NewFlagSet("skydns dnssec keygen", pflag.ContinueOnError)
	fs.Usage = func() {}
	zone := fs.String("zone", "", "the zone the key signs")
	ksk := fs.Bool("ksk", false, "a key-signing key (flag 257; also what a CSK is); without it a zone-signing key (256)")
	dir := fs.String("dir", ".", "the directory the files are written to")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *zone == "" {
		return errors.New("--zone: needed")
	}
	base, err := dnssec.NewKey(*dir, *zone, *ksk)
	if err != nil {
		return fmt.Errorf("--dir %s: %w", *dir, err)
	}
	fmt.Fprintln(stdout, base)
	return nil
}

// printDS prints the DS record (SHA-256) of every key --dnssec-key names.
func printDS(args []string, stdout io.Writer) error {
	fs := pflag.NewFlagSet("skydns dnssec ds", pflag.ContinueOnError)
	fs.Usage = func() {}
	files := fs.StringSlice("dnssec-key", nil, "key files K<zone>+013+<tag>.key, repeatable")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(*files) == 0 {
		return errors.New("--dnssec-key: needed")
	}
	keys, err := dnssec.ReadKeys(*files)
	if err != nil {
		return fmt.Errorf("--dnssec-key: %w", err)
	}
	for _, k := range keys {
		fmt.Fprintln(stdout, dnssec.DS(k))
	}
	return nil
}

// parseFlags parses args into fs and fills what they do not give from
// the environment, as the daemon's flags are.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return flagenv.Apply(fs, skydns.EnvPrefix)
}
