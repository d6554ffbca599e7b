package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TemplateData is what an object template is executed with.
type TemplateData struct {
	// Instance is the desired instance, as the control plane sent it.
	Instance Instance
	// Kind is the fleet kind's name: "dinosaur", "kafka".
	Kind string
	// Name is the name of every object of the instance, "<kind>-<id>";
	// the root Secret must have it.
	Name string
	// Namespace is the agent's namespace (the agent sets it on every
	// object whatever the template says).
	Namespace string
	// Image and ImagePullPolicy are the per-instance service's image.
	Image, ImagePullPolicy string
	// Port is the per-instance service's port (8080).
	Port int
	// Labels are the agent's labels of the instance's objects: put them
	// on the Pod template so that the agent sees the instance's Pods.
	Labels map[string]string
	// Selector is the Deployment's selector: the instance and kind labels.
	Selector map[string]string
	// Password is the instance's credential: stable for an instance (a
	// keyed hash of its id, the key kept in the agent's key Secret), so
	// that rendering again changes nothing.
	Password string
}

// templateFuncs are the functions templates may call: json quotes a value
// (a valid YAML flow value, so no user-controlled string can break out of
// its field), b64 encodes a string for a Secret's data.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"b64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
}

// ParseTemplate parses an object template: text/template source with the
// functions json and b64, that renders YAML (or JSON) documents, one
// object each, separated by "---". See TemplateData and DefaultTemplate.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
}

// DefaultTemplate returns the object template of a kind: kafkaTemplate for
// "kafka", dinosaurTemplate for any other.
func DefaultTemplate(kind string) *template.Template {
	src := dinosaurTemplate
	if kind == "kafka" {
		src = kafkaTemplate
	}
	return template.Must(ParseTemplate(kind, src))
}

// securityContext locks the per-instance service down: not root, a
// read-only root filesystem, no privilege escalation, no capabilities.
const securityContext = `
        securityContext:
          runAsNonRoot: true
          runAsUser: 65534
          runAsGroup: 65534
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
          seccompProfile: {type: RuntimeDefault}`

// dinosaurTemplate: a Secret with the credentials, a Deployment of one
// replica of the per-instance service probed on /health/<id>, a Service.
const dinosaurTemplate = `apiVersion: v1
kind: Secret
metadata:
  name: {{ json .Name }}
type: Opaque
data:
  username: {{ b64 .Name | json }}
  password: {{ b64 .Password | json }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ json .Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {{ json .Selector }}
  template:
    metadata:
      labels: {{ json .Labels }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 2
      containers:
      - name: dinosaur
        image: {{ json .Image }}
        imagePullPolicy: {{ json .ImagePullPolicy }}
        args: ["instance", "-id", {{ json .Instance.ID }}, "-kind", {{ json .Kind }}, "-name", {{ json .Instance.Name }}, "-addr", {{ printf ":%d" .Port | json }}]
        ports:
        - {name: http, containerPort: {{ .Port }}}
        readinessProbe:
          httpGet: {path: {{ printf "/health/%s" .Instance.ID | json }}, port: {{ .Port }}}
          periodSeconds: 1
          failureThreshold: 3` + securityContext + `
---
apiVersion: v1
kind: Service
metadata:
  name: {{ json .Name }}
spec:
  selector: {{ json .Selector }}
  ports:
  - {name: http, port: {{ .Port }}, targetPort: {{ .Port }}}
`

// kafkaTemplate differs from dinosaur's as a Kafka's would: SASL
// credentials, the broker component label, the port named kafka, the
// bootstrap address and credentials in the environment.
const kafkaTemplate = `apiVersion: v1
kind: Secret
metadata:
  name: {{ json .Name }}
  labels: {fleetkit.io/component: broker}
type: Opaque
data:
  sasl-username: {{ b64 .Instance.Name | json }}
  sasl-password: {{ b64 .Password | json }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ json .Name }}
  labels: {fleetkit.io/component: broker}
spec:
  replicas: 1
  selector:
    matchLabels: {{ json .Selector }}
  template:
    metadata:
      labels: {{ json .Labels }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 2
      containers:
      - name: broker
        image: {{ json .Image }}
        imagePullPolicy: {{ json .ImagePullPolicy }}
        args: ["instance", "-id", {{ json .Instance.ID }}, "-kind", {{ json .Kind }}, "-name", {{ json .Instance.Name }}, "-addr", {{ printf ":%d" .Port | json }}]
        env:
        - {name: KAFKA_BOOTSTRAP_SERVER, value: {{ printf "%s.%s.svc:%d" .Name .Namespace .Port | json }}}
        - name: KAFKA_SASL_PASSWORD
          valueFrom: {secretKeyRef: {name: {{ json .Name }}, key: sasl-password}}
        ports:
        - {name: kafka, containerPort: {{ .Port }}}
        readinessProbe:
          httpGet: {path: {{ printf "/health/%s" .Instance.ID | json }}, port: kafka}
          periodSeconds: 1
          failureThreshold: 3` + securityContext + `
---
apiVersion: v1
kind: Service
metadata:
  name: {{ json .Name }}
  labels: {fleetkit.io/component: broker}
spec:
  selector: {{ json .Selector }}
  ports:
  - {name: kafka, port: {{ .Port }}, targetPort: kafka}
`

// object is one rendered object, ready to apply.
type object struct {
	kind string // Secret, ConfigMap, Service, Deployment
	name string
	body map[string]any
}

// render executes the template for d and returns its objects, the root
// Secret first, each with the agent's namespace and labels. It fails
// (ErrTemplate) when the template does not give exactly one Secret named
// d.Name or gives an object of a kind the agent does not manage.
func render(t *template.Template, d TemplateData) ([]object, error) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []object
	root := -1
	for {
		var body map[string]any
		if err := dec.Decode(&body); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
		}
		if body == nil {
			continue // an empty document
		}
		kind, _ := body["kind"].(string)
		api, _ := body["apiVersion"].(string)
		if gv, ok := managed[kind]; !ok || gv != api {
			return nil, fmt.Errorf("%w: object of kind %q %q: the agent manages v1 Secret, ConfigMap, Service and apps/v1 Deployment", ErrTemplate, api, kind)
		}
		meta, _ := body["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			body["metadata"] = meta
		}
		name, _ := meta["name"].(string)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("%w: %s name %q: %v", ErrTemplate, kind, name, errs)
		}
		for _, o := range objs {
			if o.kind == kind && o.name == name {
				return nil, fmt.Errorf("%w: two %s objects named %s", ErrTemplate, kind, name)
			}
		}
		meta["namespace"] = d.Namespace
		labels := map[string]any{}
		if l, ok := meta["labels"].(map[string]any); ok {
			maps.Copy(labels, l)
		}
		for k, v := range d.Labels {
			labels[k] = v
		}
		meta["labels"] = labels
		delete(meta, "ownerReferences") // the agent's to set
		if kind == "Secret" && name == d.Name {
			root = len(objs)
		}
		objs = append(objs, object{kind: kind, name: name, body: body})
	}
	if root < 0 {
		return nil, fmt.Errorf("%w: no Secret named %s (the instance's root object)", ErrTemplate, d.Name)
	}
	objs[0], objs[root] = objs[root], objs[0]
	return objs, nil
}

// managed maps the kinds the agent applies to their apiVersion.
var managed = map[string]string{"Secret": "v1", "ConfigMap": "v1", "Service": "v1", "Deployment": "apps/v1"}
