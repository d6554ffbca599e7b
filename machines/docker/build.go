package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/build"
)

// ErrBuild is wrapped by BuildImage when the engine reports a failed build.
var ErrBuild = errors.New("docker: image build failed")

// ImageBuilder is the part of the Docker API BuildImage uses;
// *client.Client implements it.
type ImageBuilder interface {
	ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error)
}

// BuildOptions tune BuildImage. The zero value is ready to use.
type BuildOptions struct {
	// Dockerfile is the Dockerfile's path in the context; "" means
	// "Dockerfile".
	Dockerfile string
	// BuildArgs are the build's --build-arg values.
	BuildArgs map[string]string
	// Labels are added to the image.
	Labels map[string]string
	// Output receives the build's text output; nil discards it.
	Output io.Writer
}

// buildMessage is one JSON message of the build output stream.
type buildMessage struct {
	Stream      string `json:"stream"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// BuildImage builds an image tagged tag from buildContext (a tar stream;
// see ContextFromDir) with the engine's classic builder, which needs no
// registry for FROM scratch. The engine answers a build with a stream of
// JSON messages and reports failures inside it, not with an HTTP status:
// BuildImage reads the stream to its end and returns an error wrapping
// ErrBuild when any message carries "error" or "errorDetail".
func BuildImage(ctx context.Context, cli ImageBuilder, buildContext io.Reader, tag string, opts BuildOptions) error {
	if tag == "" {
		return errors.New("docker: BuildImage needs a tag")
	}
	args := make(map[string]*string, len(opts.BuildArgs))
	for k, v := range opts.BuildArgs {
		args[k] = &v
	}
	resp, err := cli.ImageBuild(ctx, buildContext, build.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  opts.Dockerfile,
		BuildArgs:   args,
		Labels:      opts.Labels,
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("docker: building %s: %w", tag, err)
	}
	defer resp.Body.Close()
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	var failures []string
	dec := json.NewDecoder(resp.Body)
	for {
		var msg buildMessage
		err := dec.Decode(&msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("docker: building %s: reading the build output: %w", tag, err)
		}
		switch {
		case msg.ErrorDetail != nil && msg.ErrorDetail.Message != "":
			failures = append(failures, msg.ErrorDetail.Message)
		case msg.Error != "":
			failures = append(failures, msg.Error)
		}
		if msg.Stream != "" {
			_, _ = io.WriteString(out, msg.Stream)
		} else if msg.Status != "" {
			_, _ = io.WriteString(out, msg.Status+"\n")
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrBuild, tag, strings.Join(failures, "; "))
	}
	return nil
}

// ContextFromDir returns dir as a tar stream for BuildImage. It holds the
// whole context in memory, which suits the small contexts of FROM scratch
// images. Symbolic links are stored as links; file modes are kept.
func ContextFromDir(dir string) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("docker: tarring build context %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}
