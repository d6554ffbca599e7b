package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/fleetkit/fleetkit/deprecation"
)

// RenderOptions tunes RenderChart.
type RenderOptions struct {
	// Target is the Kubernetes release the chart is rendered for. Charts
	// that branch on .Capabilities.KubeVersion render what they would
	// deploy there; Helm's default (1.20) would render old apiVersions and
	// corrupt the findings. Required.
	Target deprecation.Version
	// ReleaseName defaults to the chart's name; Namespace to "default".
	ReleaseName string
	Namespace   string
	// Values override the chart's values.yaml.
	Values map[string]any
}

// IsChart reports whether path is a chart RenderChart can load: a
// directory holding Chart.yaml, or a packaged chart (.tgz, .tar.gz).
func IsChart(path string) bool {
	if strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz") {
		st, err := os.Stat(path)
		return err == nil && !st.IsDir()
	}
	st, err := os.Stat(filepath.Join(path, "Chart.yaml"))
	return err == nil && !st.IsDir()
}

// RenderChart renders a local chart client-side, as `helm template` does,
// and returns its manifest followed by its hooks' manifests, as one
// multi-document stream for deprecation.Checker. Nothing is sent to a
// cluster.
func RenderChart(ctx context.Context, path string, opts RenderOptions) ([]byte, error) {
	if opts.Target.IsZero() {
		return nil, fmt.Errorf("%w: RenderOptions.Target is required", ErrInvalidOptions)
	}
	kube, err := chartutil.ParseKubeVersion(opts.Target.String())
	if err != nil {
		return nil, fmt.Errorf("helm: target %v: %w", opts.Target, err)
	}
	chrt, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("helm: loading chart %s: %w", path, err)
	}
	cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory())}
	in := action.NewInstall(cfg)
	in.DryRun, in.ClientOnly, in.Replace, in.IncludeCRDs = true, true, true, true
	in.ReleaseName = opts.ReleaseName
	if in.ReleaseName == "" {
		in.ReleaseName = chrt.Name()
	}
	in.Namespace = opts.Namespace
	if in.Namespace == "" {
		in.Namespace = "default"
	}
	in.KubeVersion = kube
	rel, err := in.RunWithContext(ctx, chrt, opts.Values)
	if err != nil {
		return nil, fmt.Errorf("helm: rendering chart %s: %w", path, err)
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		b.WriteString("\n---\n# Source: ")
		b.WriteString(h.Path)
		b.WriteString("\n")
		b.WriteString(h.Manifest)
	}
	return []byte(b.String()), nil
}
