// Package version holds the version string stamped into the binaries at
// build time by the Makefile, and the build-info metric that exports it.
package version

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Version is set with -ldflags "-X github.com/kubesky/kubesky/internal/version.Version=...";
// both skydns and kube2sky print it for --version and log it at start.
var Version = "dev"

// revision is set with -ldflags "-X github.com/kubesky/kubesky/internal/version.revision=...".
var revision = ""

// Revision is the VCS revision the binary was built from: the one stamped
// at build time, else the one the Go toolchain recorded ("-dirty" added
// when the tree had changes), else "unknown" (-buildvcs=false, or a build
// outside a repository).
func Revision() string {
	if revision != "" {
		return revision
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	revision, dirty := "unknown", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			revision = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	return revision + dirty
}

// BuildInfo returns the gauge <component>_build_info, always 1, labelled
// with the version, the revision and the Go version the binary was built
// with.
func BuildInfo(component string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: component + "_build_info",
		Help: "Always 1; the labels say which build is running: version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{
			"version": Version, "revision": Revision(), "goversion": runtime.Version(),
		},
	})
	g.Set(1)
	return g
}
