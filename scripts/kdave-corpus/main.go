// Command kdave-corpus writes a corpus of Kubernetes manifests with its
// ground truth, and scores a checker's JSON output against it: the corpus
// of scripts/bench-kdave.sh, run beside pluto when pluto is installed.
//
//	kdave-corpus gen -dir DIR -truth FILE [-files 2000] [-objects 10000] [-broken 21] [-seed 1]
//	kdave-corpus score -truth FILE -report OUT.json [-dir DIR]
//
// The corpus is what a repository of manifests holds: multi-document YAML
// files (helm template output with "# Source:" comments, kubectl dumps),
// JSON files, Lists, ConfigMaps whose block scalars hold manifests (which
// are text, not objects), CRLF line ends, a UTF-16 file, hidden
// directories and files without a .yaml name. About 4% of the objects use
// an API that every checker deems deprecated or removed in Kubernetes
// v1.25 (pluto's default target); broken documents (invalid YAML) sit in
// files beside deprecated objects, as they do in real repositories.
//
// The truth is the list of deprecated objects, by file, apiVersion, kind,
// namespace and name. score reads the JSON of kdave check -o json or of
// pluto detect-files -o json (same layout: items[] with filePath, name,
// namespace, api.version, api.kind) and prints recall and precision.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kdave-corpus gen|score [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "score":
		err = score(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kdave-corpus:", err)
		os.Exit(1)
	}
}

// object is one object of the ground truth.
type object struct {
	File       string `json:"file"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func (o object) key() string {
	return o.File + "|" + o.APIVersion + "|" + o.Kind + "|" + o.Namespace + "|" + o.Name
}

type truth struct {
	Files      int      `json:"files"`
	Objects    int      `json:"objects"`
	Broken     int      `json:"brokenDocuments"`
	Target     string   `json:"target"`
	Deprecated []object `json:"deprecated"`
}

// deprecatedAPIs are deprecated or removed in v1.25 in kdave's table and
// in pluto's published one alike; currentAPIs in neither.
var (
	deprecatedAPIs = [][2]string{
		{"extensions/v1beta1", "Deployment"}, {"extensions/v1beta1", "Ingress"}, {"networking.k8s.io/v1beta1", "Ingress"},
		{"batch/v1beta1", "CronJob"}, {"policy/v1beta1", "PodDisruptionBudget"}, {"policy/v1beta1", "PodSecurityPolicy"},
		{"rbac.authorization.k8s.io/v1beta1", "ClusterRole"}, {"rbac.authorization.k8s.io/v1beta1", "RoleBinding"},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"}, {"autoscaling/v2beta1", "HorizontalPodAutoscaler"},
		{"apps/v1beta2", "StatefulSet"}, {"storage.k8s.io/v1beta1", "CSIDriver"},
	}
	currentAPIs = [][2]string{
		{"apps/v1", "Deployment"}, {"v1", "Service"}, {"v1", "ConfigMap"}, {"v1", "ServiceAccount"}, {"v1", "Secret"},
		{"networking.k8s.io/v1", "Ingress"}, {"batch/v1", "CronJob"}, {"policy/v1", "PodDisruptionBudget"},
		{"rbac.authorization.k8s.io/v1", "Role"}, {"autoscaling/v2", "HorizontalPodAutoscaler"}, {"apps/v1", "StatefulSet"},
	}
	// broken are documents yaml.v3 refuses.
	broken = []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata: [unclosed\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n data:\n  a: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: broken\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"bad \\q escape\"}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a: b\n",
	}
)

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to write the corpus to (must not exist)")
	truthFile := fs.String("truth", "", "file to write the ground truth to (outside -dir)")
	files := fs.Int("files", 2000, "files")
	objects := fs.Int("objects", 10000, "objects (List items count)")
	nBroken := fs.Int("broken", 21, "broken documents")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *truthFile == "" || *files < 1 || *objects < *files {
		return fmt.Errorf("gen: need -dir, -truth, and -objects >= -files >= 1")
	}
	if _, err := os.Stat(*dir); err == nil {
		return fmt.Errorf("gen: %s exists", *dir)
	}
	g := &generator{rng: rand.New(rand.NewPCG(*seed, 0x6b64617665))}
	t := truth{Files: *files, Objects: *objects, Broken: *nBroken, Target: "v1.25.0"}

	// Spread the objects over the files, at least one each.
	perFile := make([]int, *files)
	for i := range perFile {
		perFile[i] = 1
	}
	for range *objects - *files {
		perFile[g.rng.IntN(*files)]++
	}
	// The files that get a broken document: YAML ones with several
	// objects.
	brokenIn := map[int]bool{}
	for len(brokenIn) < *nBroken {
		if i := g.rng.IntN(*files); perFile[i] >= 3 && !strings.HasSuffix(g.fileName(i), ".json") {
			brokenIn[i] = true
		}
	}
	for i, n := range perFile {
		name := g.fileName(i)
		path := filepath.Join(*dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		content, deprecated := g.file(name, n, brokenIn[i])
		for j := range deprecated {
			deprecated[j].File = path
		}
		t.Deprecated = append(t.Deprecated, deprecated...)
		data := []byte(content)
		if i == 7 {
			data = encodeUTF16(content) // one file as an editor on Windows saves it
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*truthFile, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("kdave-corpus: %d files, %d objects (%d deprecated), %d broken documents in %s\n",
		*files, *objects, len(t.Deprecated), *nBroken, *dir)
	return nil
}

type generator struct {
	rng *rand.Rand
	n   int // objects written, for unique names
}

// fileName places file i: mostly apps/<app>/<file>.yaml, some JSON, some
// under a hidden directory, some without a .yaml name.
func (g *generator) fileName(i int) string {
	app := fmt.Sprintf("app-%03d", i/10)
	switch {
	case i%97 == 3:
		return fmt.Sprintf(".ci/manifests/%s-%d.yaml", app, i)
	case i%89 == 5:
		return fmt.Sprintf("apps/%s/rendered-%d", app, i) // no extension
	case i%13 == 0:
		return fmt.Sprintf("apps/%s/dump-%d.json", app, i)
	case i%29 == 0:
		return fmt.Sprintf("apps/%s/list-%d.yml", app, i)
	}
	return fmt.Sprintf("apps/%s/manifest-%d.yaml", app, i)
}

// file writes n objects (and a broken document when asked) in the form
// the file's name says, and returns the deprecated ones.
func (g *generator) file(name string, n int, withBroken bool) (string, []object) {
	var objs []object
	for range n {
		api := currentAPIs[g.rng.IntN(len(currentAPIs))]
		if g.rng.IntN(100) < 4 {
			api = deprecatedAPIs[g.rng.IntN(len(deprecatedAPIs))]
		}
		g.n++
		o := object{APIVersion: api[0], Kind: api[1], Name: fmt.Sprintf("obj-%05d", g.n)}
		if !clusterScoped(api[1]) {
			o.Namespace = fmt.Sprintf("team-%d", g.rng.IntN(20))
		}
		objs = append(objs, o)
	}
	var deprecated []object
	for _, o := range objs {
		for _, d := range deprecatedAPIs {
			if o.APIVersion == d[0] && o.Kind == d[1] {
				deprecated = append(deprecated, o)
			}
		}
	}
	switch {
	case strings.HasSuffix(name, ".json"):
		return g.jsonList(objs), deprecated
	case strings.Contains(name, "/list-"):
		return g.yamlList(objs, withBroken), deprecated
	}
	nl := "\n"
	if g.rng.IntN(20) == 0 {
		nl = "\r\n"
	}
	var b strings.Builder
	at := -1
	if withBroken {
		at = g.rng.IntN(len(objs) + 1)
	}
	for i, o := range objs {
		if i == at {
			b.WriteString("---\n" + broken[g.rng.IntN(len(broken))])
		}
		b.WriteString("---\n")
		g.yamlObject(&b, o)
	}
	if at == len(objs) {
		b.WriteString("---\n" + broken[g.rng.IntN(len(broken))])
	}
	return strings.ReplaceAll(b.String(), "\n", nl), deprecated
}

func clusterScoped(kind string) bool {
	switch kind {
	case "ClusterRole", "CustomResourceDefinition", "PodSecurityPolicy", "CSIDriver":
		return true
	}
	return false
}

// yamlObject writes an object as helm template does, with a body the size
// of a real one; ConfigMaps carry manifests in block scalars.
func (g *generator) yamlObject(b *strings.Builder, o object) {
	fmt.Fprintf(b, "# Source: chart/templates/%s.yaml\n", strings.ToLower(o.Kind))
	fmt.Fprintf(b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", o.APIVersion, o.Kind, o.Name)
	if o.Namespace != "" {
		fmt.Fprintf(b, "  namespace: %s\n", o.Namespace)
	}
	fmt.Fprintf(b, "  labels:\n    app.kubernetes.io/name: %s\n    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: chart-1.2.%d\n", o.Name, g.rng.IntN(9))
	fmt.Fprintf(b, "  annotations:\n    checksum/config: \"%016x\"\n", g.rng.Uint64())
	switch o.Kind {
	case "ConfigMap":
		b.WriteString("data:\n  app.yaml: |\n    # an embedded manifest is text, not an object\n    apiVersion: extensions/v1beta1\n    kind: Deployment\n    metadata:\n      name: embedded\n    ---\n    server: {port: 8080}\n  LOG_LEVEL: info\n")
	case "Deployment", "StatefulSet":
		fmt.Fprintf(b, "spec:\n  replicas: %d\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n      containers:\n      - name: app\n        image: \"registry.example.com/%s:1.%d\"\n        args: [\"--port=8080\", \"--log-level=info\"]\n        ports:\n        - containerPort: 8080\n        resources:\n          limits: {cpu: 500m, memory: 256Mi}\n        env:\n        - name: GREETING\n          value: 'it''s here'\n", 1+g.rng.IntN(3), o.Name, o.Name, o.Name, g.rng.IntN(30))
	case "Service":
		fmt.Fprintf(b, "spec:\n  type: ClusterIP\n  selector:\n    app: %s\n  ports:\n  - port: 80\n    targetPort: 8080\n", o.Name)
	default:
		b.WriteString("spec: {}\n")
	}
}

func (g *generator) yamlList(objs []object, withBroken bool) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for _, o := range objs {
		fmt.Fprintf(&b, "- apiVersion: %s\n  kind: %s\n  metadata:\n    name: %s\n", o.APIVersion, o.Kind, o.Name)
		if o.Namespace != "" {
			fmt.Fprintf(&b, "    namespace: %s\n", o.Namespace)
		}
	}
	if withBroken {
		b.WriteString("---\n" + broken[g.rng.IntN(len(broken))])
	}
	return b.String()
}

func (g *generator) jsonList(objs []object) string {
	type meta struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
	}
	type item struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   meta   `json:"metadata"`
	}
	list := struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []item `json:"items"`
	}{APIVersion: "v1", Kind: "List"}
	for _, o := range objs {
		list.Items = append(list.Items, item{o.APIVersion, o.Kind, meta{o.Name, o.Namespace}})
	}
	b, _ := json.MarshalIndent(list, "", "  ")
	return string(b) + "\n"
}

func encodeUTF16(s string) []byte {
	units := utf16.Encode([]rune("\ufeff" + s))
	out := make([]byte, 2*len(units))
	for i, u := range units {
		out[2*i], out[2*i+1] = byte(u), byte(u>>8)
	}
	return out
}

func score(args []string) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	truthFile := fs.String("truth", "", "ground truth written by gen")
	reportFile := fs.String("report", "", "JSON output of kdave check -o json or pluto detect-files -o json")
	name := fs.String("name", "checker", "name to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var t truth
	if err := readJSON(*truthFile, &t); err != nil {
		return err
	}
	var rep struct {
		// pluto's layout, and kdave's since it took pluto's.
		Items []struct {
			Name, Namespace, FilePath string
			API                       struct{ Version, Kind string }
			ObjectKind                string `json:"objectKind"`
			ObjectAPIVersion          string `json:"objectApiVersion"`
		}
		// kdave's layout before.
		Findings []struct{ Source, APIVersion, Kind, Name, Namespace string }
	}
	if err := readJSON(*reportFile, &rep); err != nil {
		return err
	}
	var got []object
	for _, it := range rep.Items {
		o := object{File: it.FilePath, APIVersion: it.API.Version, Kind: it.API.Kind, Namespace: it.Namespace, Name: it.Name}
		if it.ObjectKind != "" {
			o.Kind = it.ObjectKind
		}
		if it.ObjectAPIVersion != "" {
			o.APIVersion = it.ObjectAPIVersion
		}
		got = append(got, o)
	}
	for _, f := range rep.Findings {
		got = append(got, object{File: f.Source, APIVersion: f.APIVersion, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name})
	}
	// Without file paths in the output, objects are matched without them.
	withFiles := false
	for _, o := range got {
		withFiles = withFiles || o.File != ""
	}
	want := map[string]int{}
	for _, o := range t.Deprecated {
		if !withFiles {
			o.File = ""
		}
		want[o.key()]++
	}
	found := map[string]int{}
	for _, o := range got {
		found[o.key()]++
	}
	tp, fp := 0, 0
	var falsePos, missed []string
	for k, n := range found {
		hit := min(n, want[k])
		tp += hit
		if n > hit {
			fp += n - hit
			falsePos = append(falsePos, k)
		}
	}
	for k, n := range want {
		if found[k] < n {
			missed = append(missed, k)
		}
	}
	sort.Strings(falsePos)
	sort.Strings(missed)
	recall, precision := 1.0, 1.0
	if len(t.Deprecated) > 0 {
		recall = float64(tp) / float64(len(t.Deprecated))
	}
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	fmt.Printf("%s: %d of %d deprecated objects found, %d false; recall %.3f, precision %.3f\n",
		*name, tp, len(t.Deprecated), fp, recall, precision)
	for i, k := range missed {
		if i == 5 {
			fmt.Printf("  ... %d more missed\n", len(missed)-5)
			break
		}
		fmt.Println("  missed:", k)
	}
	for i, k := range falsePos {
		if i == 5 {
			fmt.Printf("  ... %d more false\n", len(falsePos)-5)
			break
		}
		fmt.Println("  false:", k)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
