package secret

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s")
	require.NoError(t, os.WriteFile(file, []byte(" from-file\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	env := func(k string) string {
		if k == "SECRET" {
			return "from-env"
		}
		return ""
	}
	tests := []struct {
		name string
		src  Source
		want string
		err  string
	}{
		{"flag", Source{Flag: "from-flag", Env: "SECRET", Getenv: env}, "from-flag", ""},
		{"file", Source{File: file, Env: "SECRET", Getenv: env}, "from-file", ""},
		{"environment", Source{Env: "SECRET", Getenv: env}, "from-env", ""},
		{"none", Source{Env: "OTHER", Getenv: env}, "", ""},
		{"flag and file", Source{Flag: "x", File: file}, "", "not both"},
		{"missing file", Source{File: filepath.Join(dir, "nope")}, "", "reading the secret file"},
		{"empty file", Source{File: empty}, "", "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.src)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "127.1.2.3:1": true, "localhost:0": true, "[::1]:80": true,
		":5000": false, "0.0.0.0:5000": false, "[::]:5000": false, "10.0.0.1:5000": false,
		"example.com:80": false, "127.0.0.1": false,
	} {
		assert.Equal(t, want, Loopback(addr), addr)
	}
}
