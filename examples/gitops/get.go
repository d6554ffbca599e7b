package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// cmdRun is one command's build and where it writes.
type cmdRun struct {
	res   *gitops.Result
	found bool // false when the name matched nothing
	w     io.Writer
	close func() error
}

// start builds for a command (only what name needs when it is set) and
// opens its output. A name that matches nothing is not an error: found
// is false.
func start(ctx context.Context, s *selector, kind, name string, edit func(*gitops.Options), stdout io.Writer) (*cmdRun, error) {
	opts, err := s.options()
	if err != nil {
		return nil, err
	}
	opts.Only = s.only(kind, name)
	if edit != nil {
		edit(&opts)
	}
	r := &cmdRun{}
	r.res, err = gitops.Build(ctx, opts)
	switch {
	case errors.Is(err, gitops.ErrUnknownNode):
	case err != nil:
		return nil, err
	default:
		r.found = true
	}
	if r.w, r.close, err = s.output(stdout); err != nil {
		return nil, err
	}
	return r, nil
}

// kindLabel is a resource's kind as flux-local names it in messages.
func kindLabel(kind string) string {
	if kind == "hr" {
		return "HelmRelease"
	}
	return "Kustomization"
}

// table prints rows as flux-local does: upper-case headers, each column
// as wide as its widest value plus four spaces.
func table(w io.Writer, cols []string, rows [][]string) error {
	widths := make([]int, len(cols))
	all := append([][]string{cols}, rows...)
	for _, r := range all {
		for i, v := range r {
			widths[i] = max(widths[i], len(v))
		}
	}
	var b strings.Builder
	for ri, r := range all {
		for i, v := range r {
			if ri == 0 {
				v = strings.ToUpper(v)
			}
			fmt.Fprintf(&b, "%-*s", widths[i]+4, v)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// structured writes v as YAML (a document) or JSON (indented by four, as
// flux-local).
func structured(w io.Writer, format string, v any) error {
	if format == "json" {
		data, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

func countKind(objs []gitops.Object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

// chartColumns are a HelmRelease's REVISION, CHART and SOURCE as
// flux-local prints them ("None" for no version).
func chartColumns(n *gitops.NodeResult) (revision, chart, source string) {
	c := n.Chart
	if c == nil {
		return "None", "", ""
	}
	revision, name := c.Version, c.Chart
	if revision == "" {
		revision = "None"
	}
	if name == "" {
		name = c.Name // a chartRef
	}
	return revision, n.Namespace + "-" + name, c.Name
}

// runGet prints Kustomizations or HelmReleases: flux-local's columns, or
// (ours) -o yaml|json.
func runGet(ctx context.Context, kind string, args []string, stdout, stderr io.Writer) error {
	var s selector
	fs := newFlags("get "+kind, &s, false, stderr)
	output := fs.String("output", "", "output format: wide, yaml or json")
	fs.StringVar(output, "o", "", "short for --output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name := first(pos)
	if *output != "" && !slices.Contains([]string{"wide", "yaml", "json"}, *output) {
		return fmt.Errorf("%w: -o %s: want wide, yaml or json", errUsage, *output)
	}
	r, err := start(ctx, &s, kind, name, func(o *gitops.Options) { o.NoRender = true }, stdout)
	if err != nil {
		return err
	}
	defer r.close()
	w := r.w
	var nodes []*gitops.NodeResult
	if r.found {
		nodes = s.pick(r.res, kind, name)
	}
	if len(nodes) == 0 {
		_, err := fmt.Fprintln(w, s.notFound(kindLabel(kind), name))
		return err
	}
	if *output == "yaml" || *output == "json" {
		return structured(w, *output, nodeDocs(nodes))
	}
	var cols []string
	var rows [][]string
	for _, n := range nodes {
		var row []string
		if kind == "ks" {
			cols = []string{"name", "path"}
			row = []string{n.Name, n.Path}
			if *output == "wide" {
				cols = append(cols, "helmrepos", "ocirepos", "releases")
				row = append(row, fmt.Sprint(countKind(n.Objects, "HelmRepository")), fmt.Sprint(countKind(n.Objects, "OCIRepository")), fmt.Sprint(countKind(n.Objects, "HelmRelease")))
			}
		} else {
			rev, chart, source := chartColumns(n)
			cols = []string{"name", "revision", "chart", "source"}
			row = []string{n.Name, rev, chart, source}
		}
		if s.all {
			cols = append([]string{"namespace"}, cols...)
			row = append([]string{n.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return table(w, cols, rows)
}

// nodeDoc is a node in -o yaml|json of get.
type nodeDoc struct {
	Kind      string              `json:"kind" yaml:"kind"`
	Namespace string              `json:"namespace" yaml:"namespace"`
	Name      string              `json:"name" yaml:"name"`
	Path      string              `json:"path,omitempty" yaml:"path,omitempty"`
	Chart     *gitops.ChartSource `json:"chart,omitempty" yaml:"chart,omitempty"`
	DependsOn []string            `json:"dependsOn,omitempty" yaml:"dependsOn,omitempty"`
	Status    gitops.Status       `json:"status" yaml:"status"`
	Error     string              `json:"error,omitempty" yaml:"error,omitempty"`
	Images    []string            `json:"images,omitempty" yaml:"images,omitempty"`
}

func nodeDocs(nodes []*gitops.NodeResult) []nodeDoc {
	out := make([]nodeDoc, 0, len(nodes))
	for _, n := range nodes {
		d := nodeDoc{Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, Path: n.Path, Chart: n.Chart, DependsOn: n.DependsOn, Status: n.Status, Images: n.Images}
		if n.Status == gitops.StatusFailed {
			d.Error = n.Error
		}
		if n.Kind == "HelmRelease" {
			d.Path = ""
		}
		out = append(out, d)
	}
	return out
}

func first(pos []string) string {
	if len(pos) == 0 {
		return ""
	}
	return pos[0]
}

// Cluster documents, in flux-local's manifest fields (get cluster -o
// yaml|json).
type (
	manifestDoc struct {
		Clusters []clusterDoc `json:"clusters" yaml:"clusters"`
	}
	clusterDoc struct {
		Path           string  `json:"path" yaml:"path"`
		Kustomizations []ksDoc `json:"kustomizations" yaml:"kustomizations"`
	}
	ksDoc struct {
		Name         string      `json:"name" yaml:"name"`
		Namespace    string      `json:"namespace" yaml:"namespace"`
		Path         string      `json:"path" yaml:"path"`
		HelmRepos    []repoDoc   `json:"helm_repos" yaml:"helm_repos"`
		OCIRepos     []repoDoc   `json:"oci_repos" yaml:"oci_repos"`
		HelmReleases []hrDoc     `json:"helm_releases" yaml:"helm_releases"`
		ConfigMaps   []objectRef `json:"config_maps" yaml:"config_maps"`
		Secrets      []objectRef `json:"secrets" yaml:"secrets"`
		Images       []string    `json:"images,omitempty" yaml:"images,omitempty"`
	}
	repoDoc struct {
		Name      string `json:"name" yaml:"name"`
		Namespace string `json:"namespace" yaml:"namespace"`
		URL       string `json:"url" yaml:"url"`
		RepoType  string `json:"repo_type,omitempty" yaml:"repo_type,omitempty"`
	}
	hrDoc struct {
		Name      string   `json:"name" yaml:"name"`
		Namespace string   `json:"namespace" yaml:"namespace"`
		Chart     chartDoc `json:"chart" yaml:"chart"`
		Images    []string `json:"images,omitempty" yaml:"images,omitempty"`
	}
	chartDoc struct {
		Name          string `json:"name" yaml:"name"`
		RepoName      string `json:"repo_name" yaml:"repo_name"`
		RepoNamespace string `json:"repo_namespace" yaml:"repo_namespace"`
		RepoKind      string `json:"repo_kind" yaml:"repo_kind"`
	}
	objectRef struct {
		Name      string `json:"name" yaml:"name"`
		Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	}
)

// runGetCluster prints the cluster: flux-local's PATH/KUSTOMIZATIONS
// table, or its manifest as YAML or JSON, with images or images only.
func runGetCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var s selector
	fs := newFlags("get cluster", &s, false, stderr)
	output := fs.String("output", "diff", "output format: diff (a table), yaml or json")
	fs.StringVar(output, "o", "diff", "short for --output")
	var enableImages, onlyImages bool
	optional(fs, &enableImages, "enable-images", false, "list the images of each Kustomization and HelmRelease (renders the HelmReleases; with -o yaml|json)")
	optional(fs, &onlyImages, "only-images", false, "print only the images (with --enable-images)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	structuredOut := *output == "yaml" || *output == "json"
	if enableImages && !structuredOut {
		fmt.Fprintln(stderr, "Flag --enable-images only works with --output yaml or json")
		return nil
	}
	if onlyImages && !enableImages {
		fmt.Fprintln(stderr, "Flag --only-images only works with --enable-images")
		return nil
	}
	r, err := start(ctx, &s, "ks", "", func(o *gitops.Options) { o.NoRender = !enableImages }, stdout)
	if err != nil {
		return err
	}
	defer r.close()
	res, w := r.res, r.w
	kss := s.pick(res, "ks", "")
	path := relPath(s.path)
	if !structuredOut {
		if len(kss) == 0 {
			_, err := fmt.Fprintln(w, "no flux cluster Kustmization objects found in cluster")
			return err
		}
		return table(w, []string{"path", "kustomizations"}, [][]string{{path, fmt.Sprint(len(kss))}})
	}
	hrs := make(map[string][]*gitops.NodeResult)
	for _, n := range res.Nodes {
		if n.Kind == "HelmRelease" {
			hrs[n.Owner] = append(hrs[n.Owner], n)
		}
	}
	var images []string
	cluster := clusterDoc{Path: path, Kustomizations: []ksDoc{}}
	for _, k := range kss {
		d := ksDoc{Name: k.Name, Namespace: k.Namespace, Path: k.Path, HelmRepos: []repoDoc{}, OCIRepos: []repoDoc{}, HelmReleases: []hrDoc{}, ConfigMaps: []objectRef{}, Secrets: []objectRef{}}
		for _, o := range k.Objects {
			switch o.Kind {
			case "HelmRepository", "OCIRepository":
				r := repoDoc{Name: o.Name, Namespace: o.Namespace, URL: str(o.Body, "spec", "url")}
				if o.Kind == "HelmRepository" {
					r.RepoType = str(o.Body, "spec", "type")
					if r.RepoType == "" {
						r.RepoType = "default"
					}
					d.HelmRepos = append(d.HelmRepos, r)
				} else {
					d.OCIRepos = append(d.OCIRepos, r)
				}
			case "ConfigMap":
				d.ConfigMaps = append(d.ConfigMaps, objectRef{o.Name, o.Namespace})
			case "Secret":
				d.Secrets = append(d.Secrets, objectRef{o.Name, o.Namespace})
			}
		}
		for _, h := range hrs[k.ID] {
			c := chartDoc{}
			if h.Chart != nil {
				c = chartDoc{Name: h.Chart.Chart, RepoName: h.Chart.Name, RepoNamespace: h.Chart.Namespace, RepoKind: h.Chart.Kind}
				if c.Name == "" {
					c.Name = h.Chart.Name
				}
			}
			hd := hrDoc{Name: h.Name, Namespace: h.Namespace, Chart: c}
			if enableImages {
				hd.Images = h.Images
				images = append(images, h.Images...)
			}
			d.HelmReleases = append(d.HelmReleases, hd)
		}
		if enableImages {
			d.Images = k.Images
			images = append(images, k.Images...)
		}
		cluster.Kustomizations = append(cluster.Kustomizations, d)
	}
	if onlyImages {
		slices.Sort(images)
		images = slices.Compact(images)
		if images == nil {
			images = []string{}
		}
		return structured(w, *output, images)
	}
	return structured(w, *output, manifestDoc{Clusters: []clusterDoc{cluster}})
}

// runGetImages prints every image a Kustomization or HelmRelease
// deploys, one row per image (ours; flux-local has get cluster
// --only-images).
func runGetImages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var s selector
	fs := newFlags("get images", &s, true, stderr)
	output := fs.String("output", "", "output format: a table, yaml or json")
	fs.StringVar(output, "o", "", "short for --output")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	r, err := start(ctx, &s, "ks", "", nil, stdout)
	if err != nil {
		return err
	}
	defer r.close()
	w := r.w
	nodes := append(s.pick(r.res, "ks", ""), s.pick(r.res, "hr", "")...)
	type row struct {
		Kind      string `json:"kind" yaml:"kind"`
		Namespace string `json:"namespace" yaml:"namespace"`
		Name      string `json:"name" yaml:"name"`
		Image     string `json:"image" yaml:"image"`
	}
	var rows []row
	var cells [][]string
	for _, n := range nodes {
		for _, img := range n.Images {
			rows = append(rows, row{n.Kind, n.Namespace, n.Name, img})
			cells = append(cells, []string{n.Kind, n.Namespace, n.Name, img})
		}
	}
	if *output == "yaml" || *output == "json" {
		if rows == nil {
			rows = []row{}
		}
		return structured(w, *output, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no images found")
		return err
	}
	return table(w, []string{"kind", "namespace", "name", "image"}, cells)
}

// str reads a string at keys in a decoded object.
func str(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}
