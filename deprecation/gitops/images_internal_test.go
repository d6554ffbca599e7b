package gitops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestImages(t *testing.T) {
	objs := []Object{
		{APIVersion: "apps/v1", Kind: "Deployment", Body: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers":     []any{map[string]any{"image": "nginx:1.25"}, map[string]any{"image": "nginx:1.25"}},
			"initContainers": []any{map[string]any{"image": "busybox:1.36"}},
		}}}}},
		{APIVersion: "postgresql.cnpg.io/v1", Kind: "Cluster", Body: map[string]any{"spec": map[string]any{"imageName": "ghcr.io/cloudnative-pg/postgresql:16.2"}}},
		{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Body: map[string]any{"spec": map[string]any{"rules": []any{map[string]any{"image": "*:latest"}}}}},
		{APIVersion: "v1", Kind: "ConfigMap", Body: map[string]any{"data": map[string]any{"imageName": "not-an-image"}}},
	}
	assert.Equal(t, []string{"busybox:1.36", "ghcr.io/cloudnative-pg/postgresql:16.2", "nginx:1.25"}, images(objs))
}
