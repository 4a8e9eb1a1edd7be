package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/internal/poll"
)

// fieldManager is who the demo's server-side applies are recorded as.
const fieldManager = "kubesky-demo"

func applyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var kubeconfig string
	var paths []string
	timeout := 2 * time.Minute
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringSliceVarP(&paths, "filename", "f", nil, "YAML file or directory to apply instead of the built-in examples, repeatable")
	fs.DurationVar(&timeout, "timeout", timeout, "how long to keep retrying while the API server is not ready")
	summary := "Applies deploy/examples (built in) or the given files with server-side apply,\n" +
		"retrying until the API server accepts them."
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	objs, err := loadObjects(paths)
	if err != nil {
		fmt.Fprintf(stderr, "kubesky-demo apply: %v\n", err)
		return 2
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "kubesky-demo apply: %v\n", err)
		return 2
	}
	if err := applyObjects(ctx, cfg, objs, timeout, stdout); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo apply: %v\n", err)
		return 1
	}
	return 0
}

// loadObjects reads the given files and directories, or the built-in
// examples when there are none.
func loadObjects(paths []string) ([]*unstructured.Unstructured, error) {
	if len(paths) == 0 {
		return deploy.Examples()
	}
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		more, err := loadPath(p)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

func loadPath(p string) ([]*unstructured.Unstructured, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return deploy.ReadDir(os.DirFS(p), ".")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return deploy.Decode(filepath.Base(p), data)
}

// restConfig loads a kubeconfig the way kubectl does.
func restConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	return cfg, nil
}

// applyObjects applies objs, all again after any error, until they all
// apply or timeout passes; it prints each object once applied.
func applyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, timeout time.Duration, stdout io.Writer) error {
	applier, err := deploy.NewApplier(cfg, fieldManager)
	if err != nil {
		return err
	}
	done := 0
	return poll.Until(ctx, timeout, func(ctx context.Context) error {
		for ; done < len(objs); done++ {
			if err := applier.ApplyOne(ctx, objs[done]); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  applied %s\n", deploy.Describe(objs[done]))
		}
		return nil
	})
}
