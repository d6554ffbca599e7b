package linter

import (
	"bytes"
	"container/list"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// RequestConfig is the optional "config" of a /lint request: the rules a
// team wants, applied over the service's own configuration (the machine's,
// ServiceOptions.Config). A field that is present replaces the service's
// (an empty list too: "select": [] means no selection), ExtendIgnore adds
// to the service's, and Options are merged key by key. The version's rule
// (1.x leaves the newline-at-end-of-file rule out) is part of the
// service's ExtendIgnore, so no request can undo it.
//
//	{"code": "...", "config": {"select": ["E", "W"], "ignore": ["E501"],
//	  "extend_ignore": ["W503"], "max_line_length": 100,
//	  "options": {"max-doc-length": "72"}}}
type RequestConfig struct {
	Select        []string          `json:"select"`
	Ignore        []string          `json:"ignore"`
	ExtendIgnore  []string          `json:"extend_ignore"`
	MaxLineLength *int              `json:"max_line_length"`
	Options       map[string]string `json:"options"`
}

// Bounds of a RequestConfig, far above what a real configuration needs.
const (
	maxCodes       = 256     // entries of each of select, ignore, extend_ignore
	maxCodeLen     = 64      // length of one code or prefix
	maxOptions     = 64      // keys of options
	maxOptionKey   = 64      // length of one option name
	maxLineLimit   = 1 << 20 // max_line_length
	defaultConfigs = 32      // linters kept for request configurations
)

// validate checks rc's bounds and characters.
func (rc *RequestConfig) validate() error {
	for _, l := range []struct {
		name  string
		codes []string
	}{{"select", rc.Select}, {"ignore", rc.Ignore}, {"extend_ignore", rc.ExtendIgnore}} {
		if len(l.codes) > maxCodes {
			return fmt.Errorf("config.%s has %d entries, more than %d", l.name, len(l.codes), maxCodes)
		}
		for _, c := range l.codes {
			if !isName(c, maxCodeLen, false) {
				return fmt.Errorf("config.%s: %q is not a code or code prefix (1 to %d letters, digits or _)", l.name, clip(c), maxCodeLen)
			}
		}
	}
	if m := rc.MaxLineLength; m != nil && (*m < 0 || *m > maxLineLimit) {
		return fmt.Errorf("config.max_line_length must be from 0 (the language's default) to %d, not %d", maxLineLimit, *m)
	}
	if len(rc.Options) > maxOptions {
		return fmt.Errorf("config.options has %d keys, more than %d", len(rc.Options), maxOptions)
	}
	for k := range rc.Options {
		if !isName(k, maxOptionKey, true) {
			return fmt.Errorf("config.options: %q is not an option name (1 to %d letters, digits, - or _)", clip(k), maxOptionKey)
		}
	}
	return nil
}

// isName reports whether s is 1 to max ASCII letters, digits or '_' (and
// '-' when dash).
func isName(s string, max int, dash bool) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '_' || dash && c == '-') {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// over returns base with rc applied.
func (rc *RequestConfig) over(base Config) Config {
	cfg := base
	if rc.Select != nil {
		cfg.Select = rc.Select
	}
	if rc.Ignore != nil {
		cfg.Ignore = rc.Ignore
	}
	if len(rc.ExtendIgnore) > 0 {
		cfg.ExtendIgnore = append(slices.Clip(base.ExtendIgnore), rc.ExtendIgnore...)
	}
	if rc.MaxLineLength != nil {
		cfg.MaxLineLength = *rc.MaxLineLength
	}
	if len(rc.Options) > 0 {
		cfg.Options = make(map[string]string, len(base.Options)+len(rc.Options))
		for k, v := range base.Options {
			cfg.Options[k] = v
		}
		for k, v := range rc.Options {
			cfg.Options[k] = v
		}
	}
	return cfg
}

// decodeRequestConfig reads a request's "config", rejecting fields it does
// not know (a misspelt "ignore" must not pass silently).
func decodeRequestConfig(raw json.RawMessage) (*RequestConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var rc RequestConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rc); err != nil {
		return nil, httpjson.Errorf(http.StatusBadRequest, "invalid config: %v", err)
	}
	if err := rc.validate(); err != nil {
		return nil, httpjson.Errorf(http.StatusBadRequest, "invalid config: %v", err)
	}
	return &rc, nil
}

// linterCache keeps the linters built for request configurations, the
// most recently used first, at most max of them: building one can cost
// more than a lint (a checkstyle configuration is parsed), and clients
// cannot grow it.
type linterCache struct {
	max int
	new func(Config) (Linter, error)

	mu    sync.Mutex
	byKey map[string]*list.Element // guarded by mu
	order *list.List               // of *cached, guarded by mu
}

type cached struct {
	key string
	l   Linter
}

func newLinterCache(max int, build func(Config) (Linter, error)) *linterCache {
	return &linterCache{max: max, new: build, byKey: make(map[string]*list.Element), order: list.New()}
}

// get returns the linter for cfg, building it if needed. An error is the
// language refusing cfg.
func (c *linterCache) get(cfg Config) (Linter, error) {
	keyBytes, err := json.Marshal(cfg) // map keys sorted: a canonical key
	if err != nil {
		return nil, err
	}
	key := string(keyBytes)
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		l := e.Value.(*cached).l
		c.mu.Unlock()
		return l, nil
	}
	c.mu.Unlock()

	// Built outside the lock: two requests may build the same linter
	// once each, and neither waits for the other's.
	l, err := c.new(cfg)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cached).l, nil
	}
	c.byKey[key] = c.order.PushFront(&cached{key: key, l: l})
	for c.order.Len() > c.max {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.byKey, e.Value.(*cached).key)
	}
	return l, nil
}
