// Package version holds the version string stamped into the binaries at
// build time by the Makefile.
package version

// Version is set with -ldflags "-X github.com/kubesky/kubesky/internal/version.Version=...".
var Version = "dev"
