package gitops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelmValues(t *testing.T) {
	b := &builder{
		configs: map[string]Object{
			"ConfigMap/apps/base": {Kind: kindConfigMap, Body: map[string]any{"data": map[string]any{
				"values.yaml": "image:\n  tag: a\n  repo: r\nlist: [1]\n",
				"tag":         "b",
				"hosts":       `a,b\c`,
			}}},
			"Secret/apps/creds": {Kind: kindSecret, Body: map[string]any{"data": map[string]any{
				"password": "czNjcjN0", // s3cr3t
			}}},
		},
		built: map[string]Object{},
	}
	tests := []struct {
		name    string
		hr      hrSpec
		want    map[string]any
		wantErr error
	}{
		{
			name: "values file merged, spec.values wins",
			hr: hrSpec{
				ValuesFrom: []hrValuesRef{{valuesRef: valuesRef{Kind: kindConfigMap, Name: "base"}}},
				Values:     map[string]any{"image": map[string]any{"tag": "c"}},
			},
			want: map[string]any{"image": map[string]any{"tag": "c", "repo": "r"}, "list": []any{1}},
		},
		{
			name: "targetPath from a key and a Secret",
			hr: hrSpec{ValuesFrom: []hrValuesRef{
				{valuesRef: valuesRef{Kind: kindConfigMap, Name: "base"}, ValuesKey: "tag", TargetPath: "image.tag"},
				{valuesRef: valuesRef{Kind: kindSecret, Name: "creds"}, ValuesKey: "password", TargetPath: "auth.password"},
				{valuesRef: valuesRef{Kind: kindConfigMap, Name: "base"}, ValuesKey: "hosts", TargetPath: "hosts"},
			}},
			want: map[string]any{"image": map[string]any{"tag": "b"}, "auth": map[string]any{"password": "s3cr3t"}, "hosts": `a,b\c`},
		},
		{
			name: "optional missing",
			hr:   hrSpec{ValuesFrom: []hrValuesRef{{valuesRef: valuesRef{Kind: kindConfigMap, Name: "nope", Optional: true}}}},
			want: map[string]any{},
		},
		{
			name:    "missing",
			hr:      hrSpec{ValuesFrom: []hrValuesRef{{valuesRef: valuesRef{Kind: kindConfigMap, Name: "nope"}}}},
			wantErr: ErrNotFound,
		},
		{
			name:    "missing key",
			hr:      hrSpec{ValuesFrom: []hrValuesRef{{valuesRef: valuesRef{Kind: kindConfigMap, Name: "base"}, ValuesKey: "other"}}},
			wantErr: ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.hr.Namespace = "apps"
			got, err := b.values(&tt.hr)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
