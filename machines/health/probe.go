package health

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Probe is the one health probe of fleetkit: it GETs url with client and
// returns the answer's body, at most MaxBody bytes of it. Any answer but
// 200 is an error naming its status; ctx bounds the whole exchange. A
// Checker, machines.WaitReady, the balancer's Checker and the fleet data
// plane's liveness check all probe through it, so that a target is judged
// the same way everywhere.
func Probe(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", req.URL.Path, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return nil, fmt.Errorf("reading health answer: %w", err)
	}
	return body, nil
}

// noRedirects makes a client take a redirect as the answer: a health
// endpoint that redirects does not answer 200.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
