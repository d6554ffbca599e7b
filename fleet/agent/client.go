package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
)

// Instance is a desired instance as the control plane's agent API sends it
// (GET .../agent-clusters/{id}/<kind>s).
type Instance struct {
	ID             string `json:"id"`
	Kind           string `json:"kind,omitempty"`
	Name           string `json:"name"`
	Owner          string `json:"owner,omitempty"`
	OrganisationID string `json:"organisation_id,omitempty"`
	InstanceType   string `json:"instance_type,omitempty"`
	SizeID         string `json:"size_id,omitempty"`
	CloudProvider  string `json:"cloud_provider,omitempty"`
	Region         string `json:"region,omitempty"`
	Status         string `json:"status,omitempty"`
}

// Heartbeat is the cluster status the agent reports
// (PUT .../agent-clusters/{id}/status).
type Heartbeat struct {
	Phase        string   `json:"phase"`
	Capacity     Capacity `json:"capacity"`
	AgentVersion string   `json:"agent_version"`
}

// Capacity is the cluster's capacity in units; 0 is unlimited.
type Capacity struct {
	Units int `json:"units"`
}

// Limits of what the agent reads from the control plane.
const (
	maxListBody  = 32 << 20
	maxErrorBody = 4 << 10
	// maxReportBody is the contract's limit of a status report.
	maxReportBody = 1 << 20
)

// StatusError is a control plane answer other than the expected one.
type StatusError struct {
	Op     string // "list", "report", "heartbeat"
	Status int
	Body   string // the start of the body (the API's error JSON)
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("agent: control plane %s: HTTP %d: %s", e.Op, e.Status, e.Body)
}

// client speaks the agent API of one cluster and kind.
type client struct {
	hc    *http.Client
	token string
	// cluster is .../agent-clusters/{id}; list its desired instances'
	// path.
	cluster, list string
}

func newClient(hc *http.Client, base string, kind fleet.Kind, cluster, token string) (*client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: control plane URL %q: want http(s)://host[:port]", ErrInvalidOptions, base)
	}
	c := strings.TrimSuffix(base, "/") + kind.BasePath() + "/agent-clusters/" + url.PathEscape(cluster)
	return &client{hc: hc, token: token, cluster: c, list: c + "/" + kind.Plural}, nil
}

// desired long-polls the desired instances: with etag it waits up to wait
// for a set other than etag's, and returns changed false when none came.
func (c *client) desired(ctx context.Context, etag string, wait time.Duration) (items []Instance, newTag string, changed bool, err error) {
	u := c.list
	if etag != "" && wait > 0 {
		u += "?wait=" + url.QueryEscape(wait.String())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", false, err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, "", false, err
	}
	defer drain(resp)
	switch resp.StatusCode {
	case http.StatusNotModified:
		return nil, etag, false, nil
	case http.StatusOK:
	default:
		return nil, "", false, statusError("list", resp)
	}
	var body struct {
		Items []Instance `json:"items"`
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxListBody+1))
	if err := dec.Decode(&body); err != nil {
		return nil, "", false, fmt.Errorf("agent: control plane list: %w", err)
	}
	return body.Items, resp.Header.Get("ETag"), true, nil
}

// report sends the complete status report of the agent's instances.
func (c *client) report(ctx context.Context, r map[string]fleet.InstanceReport) error {
	return c.put(ctx, "report", c.list+"/status", r)
}

// heartbeat sends the cluster status.
func (c *client) heartbeat(ctx context.Context, h Heartbeat) error {
	return c.put(ctx, "heartbeat", c.cluster+"/status", h)
}

func (c *client) put(ctx context.Context, op, u string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxReportBody {
		return fmt.Errorf("agent: %s of %d bytes exceeds the control plane's limit of %d", op, len(b), maxReportBody)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return statusError(op, resp)
	}
	return nil
}

func (c *client) do(req *http.Request) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		// The URL carries no secret; the error names the call.
		return nil, fmt.Errorf("agent: control plane: %w", err)
	}
	return resp, nil
}

func statusError(op string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &StatusError{Op: op, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
}

// drain reads what is left of a body (bounded) so the connection is
// reused, and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// isAuthError reports a refusal that retrying will not fix (a wrong token
// or cluster); the agent keeps trying, slowly, and says so.
func isAuthError(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden || se.Status == http.StatusNotFound)
}
