package gitops

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Flux API groups and kinds the package understands.
const (
	groupKustomize = "kustomize.toolkit.fluxcd.io"
	groupHelm      = "helm.toolkit.fluxcd.io"
	groupSource    = "source.toolkit.fluxcd.io"

	kindKustomization  = "Kustomization"
	kindHelmRelease    = "HelmRelease"
	kindHelmRepository = "HelmRepository"
	kindGitRepository  = "GitRepository"
	kindOCIRepository  = "OCIRepository"
	kindHelmChart      = "HelmChart"
	kindBucket         = "Bucket"
	// kindExternalArtifact is a source an external controller produces;
	// it is read from a directory Options.Sources maps it to.
	kindExternalArtifact = "ExternalArtifact"
	kindConfigMap        = "ConfigMap"
	kindSecret           = "Secret"

	// defaultNamespace is the namespace of a Flux object that names none.
	defaultNamespace = "flux-system"
	// substituteAnnotation set to "disabled" turns substitution off for
	// one object.
	substituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"
)

// Object is one Kubernetes object read from the repository or rendered
// by a build.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	// Source is the file the object was read from, or the node that
	// rendered it.
	Source string `json:"source"`
	// Body is the decoded object.
	Body map[string]any `json:"-"`
}

// group returns the API group of the object's apiVersion.
func (o Object) group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// ID returns "namespace/name" with Flux's default namespace.
func (o Object) ID() string {
	ns := o.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	return ns + "/" + o.Name
}

// decodeObjects reads every Kubernetes object (a mapping with apiVersion
// and kind) in a YAML stream; other documents are skipped.
func decodeObjects(source string, data []byte) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var objs []Object
	for {
		var body map[string]any
		err := dec.Decode(&body)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return objs, fmt.Errorf("%s: %w", source, err)
		}
		if o, ok := newObject(source, body); ok {
			objs = append(objs, o)
		}
	}
}

func newObject(source string, body map[string]any) (Object, bool) {
	o := Object{
		APIVersion: str(body, "apiVersion"),
		Kind:       str(body, "kind"),
		Name:       str(body, "metadata", "name"),
		Namespace:  str(body, "metadata", "namespace"),
		Source:     source,
		Body:       body,
	}
	return o, o.APIVersion != "" && o.Kind != ""
}

// lookup follows keys through nested maps.
func lookup(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func str(m map[string]any, keys ...string) string {
	s, _ := lookup(m, keys...).(string)
	return s
}

func list(m map[string]any, keys ...string) []map[string]any {
	l, _ := lookup(m, keys...).([]any)
	out := make([]map[string]any, 0, len(l))
	for _, v := range l {
		if mm, ok := v.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Kustomization is the part of a Flux Kustomization that a build uses.
type ksSpec struct {
	Namespace, Name string
	// Path is spec.path, relative to the source's root.
	Path string
	// SourceKind and SourceName name spec.sourceRef.
	SourceKind, SourceName, SourceNamespace string
	// DependsOn holds "namespace/name" IDs.
	DependsOn []string
	// Substitute is postBuild.substitute.
	Substitute map[string]string
	// SubstituteFrom is postBuild.substituteFrom.
	SubstituteFrom []valuesRef
	// TargetNamespace, NamePrefix, NameSuffix, Images, Patches and
	// Components are the kustomize settings of the spec, written into the
	// path's own kustomization as kustomize-controller does. Images and
	// Patches are kept as read; Components are paths relative to Path.
	TargetNamespace, NamePrefix, NameSuffix string
	Images, Patches                         []any
	Components                              []string
	// CommonLabels and CommonAnnotations are spec.commonMetadata, set on
	// every object the build renders.
	CommonLabels, CommonAnnotations map[string]string
	// Labels are the object's own labels.
	Labels map[string]string
	// Origin is where the object was found.
	Origin string

	// marker names the raw object in the repository this Kustomization
	// was read from ("file#document"), so a build that renders it can be
	// told apart from one that renders another; empty when unknown.
	marker string
}

// overlay reports whether k sets kustomize fields of its own.
func (k *ksSpec) overlay() bool {
	return k.TargetNamespace != "" || k.NamePrefix != "" || k.NameSuffix != "" || len(k.Images) > 0 || len(k.Patches) > 0 || len(k.Components) > 0
}

// ID returns "namespace/name".
func (k *ksSpec) ID() string { return k.Namespace + "/" + k.Name }

// ValuesReference names a ConfigMap or Secret to read variables or values
// from.
type valuesRef struct {
	Kind, Name string
	// Optional references do not fail a build when missing.
	Optional bool
}

func parseKustomization(o Object) *ksSpec {
	ns := o.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	k := &ksSpec{
		Namespace:       ns,
		Name:            o.Name,
		Path:            str(o.Body, "spec", "path"),
		SourceKind:      str(o.Body, "spec", "sourceRef", "kind"),
		SourceName:      str(o.Body, "spec", "sourceRef", "name"),
		SourceNamespace: str(o.Body, "spec", "sourceRef", "namespace"),
		TargetNamespace: str(o.Body, "spec", "targetNamespace"),
		NamePrefix:      str(o.Body, "spec", "namePrefix"),
		NameSuffix:      str(o.Body, "spec", "nameSuffix"),
		Origin:          o.Source,
	}
	k.Images, _ = lookup(o.Body, "spec", "images").([]any)
	k.Patches, _ = lookup(o.Body, "spec", "patches").([]any)
	if l, ok := lookup(o.Body, "spec", "components").([]any); ok {
		for _, c := range l {
			if c, ok := c.(string); ok && c != "" {
				k.Components = append(k.Components, c)
			}
		}
	}
	k.Labels = stringMap(lookup(o.Body, "metadata", "labels"))
	k.CommonLabels = stringMap(lookup(o.Body, "spec", "commonMetadata", "labels"))
	k.CommonAnnotations = stringMap(lookup(o.Body, "spec", "commonMetadata", "annotations"))
	k.marker = str(o.Body, "metadata", "annotations", markerAnnotation)
	if k.SourceNamespace == "" {
		k.SourceNamespace = ns
	}
	for _, d := range list(o.Body, "spec", "dependsOn") {
		dns := str(d, "namespace")
		if dns == "" {
			dns = ns
		}
		k.DependsOn = append(k.DependsOn, dns+"/"+str(d, "name"))
	}
	if m, ok := lookup(o.Body, "spec", "postBuild", "substitute").(map[string]any); ok {
		k.Substitute = make(map[string]string, len(m))
		for key, v := range m {
			k.Substitute[key] = fmt.Sprint(v)
		}
	}
	for _, r := range list(o.Body, "spec", "postBuild", "substituteFrom") {
		opt, _ := r["optional"].(bool)
		k.SubstituteFrom = append(k.SubstituteFrom, valuesRef{Kind: str(r, "kind"), Name: str(r, "name"), Optional: opt})
	}
	return k
}

// stringMap returns a YAML mapping's values as strings, or nil.
func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// isFlux reports whether o is the Flux kind in group.
func isFlux(o Object, group, kind string) bool { return o.Kind == kind && o.group() == group }

// configData returns the string data of a ConfigMap or Secret: data (for
// a Secret base64-decoded) merged with stringData.
func configData(o Object) (map[string]string, error) {
	out := make(map[string]string)
	if m, ok := lookup(o.Body, "data").(map[string]any); ok {
		for k, v := range m {
			s := fmt.Sprint(v)
			if o.Kind == kindSecret {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, fmt.Errorf("secret %s key %s: %w", o.Name, k, err)
				}
				s = string(b)
			}
			out[k] = s
		}
	}
	if m, ok := lookup(o.Body, "stringData").(map[string]any); ok {
		for k, v := range m {
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}

// isCRD reports whether o is a CustomResourceDefinition.
func isCRD(o Object) bool {
	return o.Kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io"
}

// addCRD adds the group/versions and group/version/kinds a CRD serves.
func addCRD(apis map[string]bool, o Object) {
	group, kind := str(o.Body, "spec", "group"), str(o.Body, "spec", "names", "kind")
	if group == "" {
		return
	}
	versions := list(o.Body, "spec", "versions")
	if v := str(o.Body, "spec", "version"); v != "" { // apiextensions.k8s.io/v1beta1
		versions = append(versions, map[string]any{"name": v})
	}
	for _, v := range versions {
		name := str(v, "name")
		if served, ok := v["served"].(bool); name == "" || (ok && !served) {
			continue
		}
		apis[group+"/"+name] = true
		if kind != "" {
			apis[group+"/"+name+"/"+kind] = true
		}
	}
}

// isSourceKind reports whether o is a Flux source object charts are read
// from.
func isSourceKind(o Object) bool {
	switch o.Kind {
	case kindHelmRepository, kindOCIRepository, kindHelmChart, kindGitRepository, kindBucket:
		return o.group() == groupSource
	}
	return false
}
