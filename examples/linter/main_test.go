package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start runs the built binary on a free port and returns its base URL.
func start(t *testing.T, bin string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "-addr", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addrRE := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://" + m[1], cmd
		}
	}
	t.Fatalf("linter did not report its address: %v", sc.Err())
	return "", nil
}

func lint(t *testing.T, url, code string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"code": code})
	resp, err := http.Post(url+"/lint", "application/json", strings.NewReader(string(body)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return resp.StatusCode, m
}

// TestBinary runs the real binary, as the machine manager does, and checks
// the contract's sample on every version and language.
func TestBinary(t *testing.T) {
	testenv.Short(t) // builds and runs the binary
	bin := filepath.Join(t.TempDir(), "linter")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))

	for _, lang := range []struct{ name, sample string }{
		{"python", "print('hello world')"},
		{"java", "class A {\n}"},
	} {
		for _, tt := range []struct {
			version            string
			cleanWithoutNL     bool
			slow, crashOnEmpty bool
		}{
			{"1.0", true, false, false},
			{"1.1", true, true, false},
			{"1.2", true, false, true},
			{"2.0", false, false, false},
		} {
			t.Run(lang.name+"/"+tt.version, func(t *testing.T) {
				t.Parallel()
				args := []string{"-language", lang.name, "-version", tt.version}
				if tt.slow {
					args = append(args, "-delay", "300ms")
				}
				url, cmd := start(t, bin, args...)

				begin := time.Now()
				status, m := lint(t, url, lang.sample)
				require.Equal(t, http.StatusOK, status)
				assert.Equal(t, tt.cleanWithoutNL, m["result"], m["details"])
				assert.Equal(t, tt.version, m["version"])
				assert.Equal(t, lang.name, m["language"])
				if tt.slow {
					assert.GreaterOrEqual(t, time.Since(begin), 300*time.Millisecond)
				}
				status, m = lint(t, url, lang.sample+"\n")
				require.Equal(t, http.StatusOK, status)
				assert.Equal(t, true, m["result"], m["details"])

				resp, err := http.Get(url + "/health")
				require.NoError(t, err)
				var h map[string]any
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
				resp.Body.Close()
				assert.Equal(t, map[string]any{"version": tt.version, "language": lang.name, "requestCount": 2.0}, h)

				status, _ = lint(t, url, "")
				if !tt.crashOnEmpty {
					assert.Equal(t, http.StatusOK, status)
					return
				}
				// 1.2 answers the crashing request, then the process exits 3.
				assert.Equal(t, http.StatusInternalServerError, status)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					var exit *exec.ExitError
					require.True(t, errors.As(err, &exit), "want an exit error, got %v", err)
					assert.Equal(t, 3, exit.ExitCode())
				case <-time.After(10 * time.Second):
					t.Fatal("version 1.2 did not exit after crashing")
				}
			})
		}
	}
}

// TestMetricsBounded: thousands of requests with invented paths, methods
// and bodies add no series to the linter's /metrics (its labels are the
// language and version it was started with and a closed set of outcomes).
func TestMetricsBounded(t *testing.T) {
	testenv.Short(t) // builds and runs the binary
	bin := filepath.Join(t.TempDir(), "linter")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	url, _ := start(t, bin, "-language", "python")
	series := func() int {
		resp, err := http.Get(url + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		n := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "fleetkit_") {
				n++
			}
		}
		return n
	}
	for _, code := range []string{"x=1\n", ""} { // every outcome once
		lint(t, url, code)
	}
	resp, err := http.Post(url+"/lint", "application/json", strings.NewReader("{"))
	require.NoError(t, err)
	resp.Body.Close()
	before := series()
	client := &http.Client{}
	for i := range 2000 {
		req, err := http.NewRequest(fmt.Sprintf("X%d", i), fmt.Sprintf("%s/%d/lint?lang=l%d", url, i, i), strings.NewReader(fmt.Sprintf(`{"code":"x","lang%d":1}`, i)))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, before, series())
}

// TestConfig: the machine's rule configuration comes from flags, a
// request's "config" applies over it, and a bad one is a 400.
func TestConfig(t *testing.T) {
	testenv.Short(t) // builds and runs the binary
	bin := filepath.Join(t.TempDir(), "linter")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	url, _ := start(t, bin, "-language", "python", "-version", "1.0", "-ignore", "E2", "-max-line-length", "20", "-option", "max-doc-length=10")

	codes := func(body string) (int, []string) {
		resp, err := http.Post(url+"/lint", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var m struct {
			Diagnostics []struct{ Code string } `json:"diagnostics"`
			Message     string                  `json:"message"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		var cs []string
		for _, d := range m.Diagnostics {
			cs = append(cs, d.Code)
		}
		if resp.StatusCode != http.StatusOK {
			cs = []string{m.Message}
		}
		return resp.StatusCode, cs
	}
	const code = `"# a comment of some length\nx=1"`
	status, got := codes(`{"code": ` + code + `}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"W505", "E501"}, got, "the machine's: E2 ignored, 20 columns, W505 at 10; 1.0 leaves W292 out")
	status, got = codes(`{"code": ` + code + `, "config": {"select": ["E2", "W292"]}}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"E225"}, got, "the request's selection; W292 stays out on 1.0")
	status, got = codes(`{"code": ` + code + `, "config": {"options": {"max-doc-length": "x"}}}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, got[0], "max-doc-length")

	// A bad machine configuration stops the binary with the reason.
	out, err = exec.Command(bin, "-language", "python", "-option", "colour=blue", "-addr", "127.0.0.1:0").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `unknown option "colour"`)
}
