package gitops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"env": "prod", "empty": ""}
	tests := []struct {
		name, in, want string
	}{
		{"plain", "name: app", "name: app"},
		{"var", "name: app-${env}", "name: app-prod"},
		{"default unused", "name: ${env:=dev}", "name: prod"},
		{"default used", "replicas: ${replicas:=2}", "replicas: 2"},
		{"dash default", "x: ${missing:-y}", "x: y"},
		{"empty takes default", "x: ${empty:=z}", "x: z"},
		{"missing is empty", "x: '${missing}'", "x: ''"},
		{"two", "${env}-${env}", "prod-prod"},
		{"not a var", "x: $env ${1x}", "x: $env ${1x}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, substitute(tt.in, vars))
		})
	}
}
