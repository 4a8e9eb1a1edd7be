package etcdtest

import (
	"slices"
	"strings"
)

// FlagCase is a command line of a daemon's config test and what its error
// must say ("" for none).
type FlagCase struct {
	Name string
	Args []string
	Want string
}

// OptionalEtcdFlagCases are the cases of a second etcd's flags, named
// --<prefix>etcd-*, that only mean something with the flag on=value
// (etcdstore.ClientOptions.ValidateOptional): each malformed, the
// certificate without its key, and each given without on or without the
// endpoints; the last case is valid.
func OptionalEtcdFlagCases(prefix, on, value string) []FlagCase {
	flag := "--" + prefix + "etcd-"
	with := []string{on + "=" + value, flag + "endpoints=http://127.0.0.1:2379"}
	plus := func(arg string) []string { return append(slices.Clone(with), arg) }
	cases := []FlagCase{
		{"an endpoint without a scheme", []string{on + "=" + value, flag + "endpoints=127.0.0.1:2379"}, flag + "endpoints"},
		{"a dial timeout that is no duration", plus(flag + "dial-timeout=soon"), flag + "dial-timeout"},
		{"a zero dial timeout", plus(flag + "dial-timeout=0s"), flag + "dial-timeout: must be positive"},
		{"a negative request timeout", plus(flag + "request-timeout=-1s"), flag + "request-timeout: must be positive"},
		{"a missing CA file", plus(flag + "cafile=/nonexistent/ca.crt"), flag + "cafile"},
		{"a certificate without its key", plus(flag + "certfile=/nonexistent/c.crt"), flag + "certfile and " + flag + "keyfile must be given together"},
		{"a password without a user", plus(flag + "password=x"), flag + "password needs " + flag + "username"},
		{"a CA file without the endpoints", []string{on + "=" + value, flag + "cafile=/nonexistent/ca.crt"}, flag + "cafile: only with " + flag + "endpoints"},
	}
	for _, name := range []string{"endpoints=http://127.0.0.1:2379", "dial-timeout=1s", "request-timeout=1s", "cafile=ca.crt",
		"certfile=c.crt", "keyfile=c.key", "username=u", "password=p"} {
		given := flag + name
		cases = append(cases, FlagCase{given + " without " + on, []string{given}, given[:len(flag)+strings.IndexByte(name, '=')] + ": only with " + on})
	}
	return append(cases, FlagCase{"the endpoints with " + on, with, ""})
}
