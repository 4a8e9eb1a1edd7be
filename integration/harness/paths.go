package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BinDirEnv names an environment variable that, when set, overrides BinDir.
const BinDirEnv = "KUBESKY_BIN"

// BinDir returns the directory holding the test binaries: $KUBESKY_BIN when
// set, else bin/ under the module root (the nearest directory at or above the
// working directory that holds a go.mod). Tests run in their package
// directory, so this is the repository's bin/ for every package in the root
// module. It returns "bin" when no go.mod is found.
func BinDir() string {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir
	}
	root, err := moduleRoot()
	if err != nil {
		return "bin"
	}
	return filepath.Join(root, "bin")
}

// moduleRoot walks up from the working directory to the first go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Binary returns the path of the named binary in BinDir.
func Binary(name string) string {
	return filepath.Join(BinDir(), name)
}

// RequireBinaries fails the test (it does not skip it) unless every named
// binary exists in BinDir and is executable.
func RequireBinaries(t testing.TB, names ...string) {
	t.Helper()
	var missing []string
	for _, name := range names {
		info, err := os.Stat(Binary(name))
		if err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("missing test binaries in %s: %s; run `make tools` (and `make build` for kubesky's own)",
			BinDir(), strings.Join(missing, ", "))
	}
}
