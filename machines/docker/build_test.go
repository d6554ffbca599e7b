package docker_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/build"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/docker"
)

// fakeBuilder answers ImageBuild with a canned output stream.
type fakeBuilder struct {
	stream string
	err    error
	body   *trackingReader
	got    build.ImageBuildOptions
}

type trackingReader struct {
	r      io.Reader
	eof    bool
	closed bool
}

func (t *trackingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.EOF) {
		t.eof = true
	}
	return n, err
}

func (t *trackingReader) Close() error { t.closed = true; return nil }

func (f *fakeBuilder) ImageBuild(ctx context.Context, _ io.Reader, opts build.ImageBuildOptions) (build.ImageBuildResponse, error) {
	f.got = opts
	if f.err != nil {
		return build.ImageBuildResponse{}, f.err
	}
	f.body = &trackingReader{r: strings.NewReader(f.stream)}
	return build.ImageBuildResponse{Body: f.body}, nil
}

func TestBuildImageReadsTheStream(t *testing.T) {
	errTransport := errors.New("connection refused")
	tests := []struct {
		name       string
		stream     string
		err        error
		wantErr    error
		wantInErr  string
		wantOutput string
	}{
		{
			name:       "success",
			stream:     `{"stream":"Step 1/2 : FROM scratch\n"}` + "\n" + `{"aux":{"ID":"sha256:abc"}}` + "\n" + `{"stream":"Successfully built abc\n"}`,
			wantOutput: "Step 1/2 : FROM scratch\nSuccessfully built abc\n",
		},
		{
			name:       "errorDetail after output",
			stream:     `{"stream":"Step 1/2 : COPY linter /linter\n"}{"errorDetail":{"message":"COPY failed: file not found"},"error":"COPY failed: file not found"}{"stream":"trailing\n"}`,
			wantErr:    docker.ErrBuild,
			wantInErr:  "COPY failed: file not found",
			wantOutput: "Step 1/2 : COPY linter /linter\ntrailing\n",
		},
		{
			name:      "error without detail",
			stream:    `{"error":"the daemon said no"}`,
			wantErr:   docker.ErrBuild,
			wantInErr: "the daemon said no",
		},
		{
			name:       "malformed stream",
			stream:     `{"stream":"ok\n"}{"stream":`,
			wantInErr:  "reading the build output",
			wantOutput: "ok\n",
		},
		{
			name:    "request fails",
			err:     errTransport,
			wantErr: errTransport,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBuilder{stream: tt.stream, err: tt.err}
			var out strings.Builder
			err := docker.BuildImage(t.Context(), f, strings.NewReader(""), "fleetkit/linter:1.0",
				docker.BuildOptions{BuildArgs: map[string]string{"VERSION": "1.0"}, Output: &out})
			if tt.wantErr == nil && tt.wantInErr == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				}
				assert.Contains(t, err.Error(), tt.wantInErr)
			}
			assert.Equal(t, tt.wantOutput, out.String())
			assert.Equal(t, []string{"fleetkit/linter:1.0"}, f.got.Tags)
			require.NotNil(t, f.got.BuildArgs["VERSION"])
			assert.Equal(t, "1.0", *f.got.BuildArgs["VERSION"])
			if f.body != nil {
				assert.True(t, f.body.closed, "the body must be closed")
				if tt.wantErr != nil {
					assert.True(t, f.body.eof, "the stream must be read to its end")
				}
			}
		})
	}
}

func TestContextFromDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "linter"), []byte("binary"), 0o755))

	r, err := docker.ContextFromDir(dir)
	require.NoError(t, err)
	tr := tar.NewReader(r)
	got := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		got[hdr.Name] = string(b)
		if hdr.Name == "sub/linter" {
			assert.Equal(t, int64(0o755), hdr.Mode&0o777)
		}
	}
	assert.Equal(t, map[string]string{"Dockerfile": "FROM scratch\n", "sub/": "", "sub/linter": "binary"}, got)
}
