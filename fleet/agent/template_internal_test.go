package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A name the control plane sends cannot break out of its field: the
// templates quote every value, so a hostile name stays one argument and
// adds no object.
func TestTemplatesQuoteValues(t *testing.T) {
	evil := "rex\", \"-addr\", \":1\"]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n#"
	for _, kind := range []string{"dinosaur", "kafka"} {
		t.Run(kind, func(t *testing.T) {
			a := &Agent{opts: Options{Namespace: "ns", Image: "img:1", ImagePullPolicy: "IfNotPresent"}}
			a.opts.Kind.Name = kind
			objs, err := render(DefaultTemplate(kind), a.data(Instance{ID: "abc", Name: evil}))
			require.NoError(t, err)
			require.Len(t, objs, 3)
			assert.Equal(t, []string{"Secret", "Deployment", "Service"}, []string{objs[0].kind, objs[1].kind, objs[2].kind})
			spec := objs[1].body["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			c := spec["containers"].([]any)[0].(map[string]any)
			assert.Equal(t, []any{"instance", "-id", "abc", "-kind", kind, "-name", evil, "-addr", ":8080"}, c["args"])
			for _, o := range objs {
				meta := o.body["metadata"].(map[string]any)
				assert.Equal(t, "ns", meta["namespace"])
				assert.Equal(t, kind+"-abc", meta["name"])
				assert.Equal(t, map[string]any{LabelManagedBy: ManagedBy, LabelInstance: "abc", LabelKind: kind},
					subset(meta["labels"].(map[string]any), LabelManagedBy, LabelInstance, LabelKind))
			}
		})
	}
}

func subset(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// The password is stable for an instance and key, and differs between
// instances and keys.
func TestPasswordIsStable(t *testing.T) {
	a := &Agent{key: []byte("0123456789abcdef")}
	a.opts.Kind.Name = "dinosaur"
	p := a.data(Instance{ID: "a"}).Password
	assert.Equal(t, p, a.data(Instance{ID: "a"}).Password)
	assert.NotEqual(t, p, a.data(Instance{ID: "b"}).Password)
	b := &Agent{key: []byte("fedcba9876543210")}
	b.opts.Kind.Name = "dinosaur"
	assert.NotEqual(t, p, b.data(Instance{ID: "a"}).Password)
	assert.Len(t, p, 43)
}

// Backoff doubles from its base up to its limit, with jitter in [d/2, d).
func TestBackoff(t *testing.T) {
	var b backoff
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		d := b.next(time.Second, 8*time.Second)
		assert.GreaterOrEqual(t, d, want/2, i)
		assert.Less(t, d, want, i)
	}
}
