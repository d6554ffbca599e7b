package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testdata = "../../deprecation/testdata/"

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{"no command", nil, "", 1, nil, "usage: kdave <command>"},
		{"serve bad flag", []string{"serve", "-nope"}, "", 1, nil, "flag provided but not defined"},
		{"help", []string{"help"}, "", 0, []string{"check   check manifest files"}, ""},
		{"no paths", []string{"check"}, "", 1, nil, "usage: kdave check"},
		{"bad target", []string{"check", "-target", "latest", "-"}, "", 1, nil, "invalid version"},
		{"bad format", []string{"check", "-o", "xml", "-"}, "", 1, nil, "unknown output format"},
		{"missing rules file", []string{"check", "-rules", "nope.yaml", "-"}, "", 1, nil, "nope.yaml"},
		{"bad rules file", []string{"check", "-rules", testdata + "rules/bad-field.yaml", "-"}, "", 1, nil, "invalid rules"},
		{"clean", []string{"check", testdata + "manifests/current.yaml"}, "", 0, []string{"0 finding(s)", "target Kubernetes v1.34.0"}, ""},
		{"deprecated", []string{"check", "-target", "v1.21", "-"}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n", 2, []string{"CronJob", "deprecated"}, ""},
		{"removed", []string{"check", "-target", "v1.25", "-"}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n", 3, []string{"removed"}, ""},
		{"no replacement", []string{"check", "-target", "v1.25", "-"}, "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: p}\n", 4, []string{"none"}, ""},
		{"error only", []string{"check", "nope.yaml"}, "", 1, []string{"error: nope.yaml"}, ""},
		{"directory", []string{"check", testdata + "manifests"}, "", 4, []string{"9 finding(s), 1 error(s) in 16 document(s) of 5 source(s)"}, ""},
		{"extra rules", []string{"check", "-rules", testdata + "rules/cert-manager.yaml", "-target", "v1.25", "-"},
			"apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n---\napiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n",
			2, []string{"v1.40.0", "cert-manager.io/v1alpha2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			assert.Equal(t, tt.wantCode, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			for _, w := range tt.wantOut {
				assert.Contains(t, out.String(), w)
			}
			if tt.wantStderr != "" {
				assert.Contains(t, errOut.String(), tt.wantStderr)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "-o", "json", "-target", "v1.22", testdata + "manifests/cluster-dump.json"}, nil, &out, &errOut)
	assert.Equal(t, 3, code, errOut.String())
	var rep struct {
		Target   string `json:"target"`
		Findings []struct {
			Kind  string `json:"kind"`
			Item  int    `json:"item"`
			State string `json:"state"`
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	assert.Equal(t, "v1.22.0", rep.Target)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, "ClusterRole", rep.Findings[0].Kind)
	assert.Equal(t, 1, rep.Findings[0].Item)
	assert.Equal(t, "removed", rep.Findings[0].State)
}
