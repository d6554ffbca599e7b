package auth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors of this package.
var (
	// ErrUnauthenticated means the request carries no valid bearer token.
	// An Authenticator's errors wrap it.
	ErrUnauthenticated = errors.New("auth: not authenticated")
	// ErrInvalid wraps every reason JWTOptions are refused.
	ErrInvalid = errors.New("auth: invalid options")
)

// Principal is the authenticated caller.
type Principal struct {
	Username     string
	Organisation string
	// OrgAdmin says the caller administers Organisation: it may delete
	// and hand over the instances of other members.
	OrgAdmin bool
}

// Authenticator identifies the caller of a request. Safe for concurrent
// use; it may block (a JWKS fetch, say).
type Authenticator interface {
	// Authenticate returns the caller, or an error wrapping
	// ErrUnauthenticated.
	Authenticate(r *http.Request) (Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (Principal, error) { return f(r) }

// JWTOptions configures a JWTAuthenticator. At least one key source is
// required.
type JWTOptions struct {
	// HS256Secret verifies HS256 tokens (local development).
	HS256Secret []byte
	// RS256Keys verify RS256 tokens; RS256KeyFile adds the PEM public key
	// in that file.
	RS256Keys    []*rsa.PublicKey
	RS256KeyFile string
	// JWKSURL, when set, verifies RS256 tokens with the key named by their
	// kid in the JSON Web Key Set at that URL, fetched on first use, again
	// every JWKSRefresh (0: one hour) and when a token names an unknown kid
	// (at most every ten seconds). Fetches run in the background, each
	// bounded by JWKSTimeout (0: DefaultJWKSTimeout), and the last good set
	// keeps serving while one runs or after one failed. HTTPClient fetches
	// it (nil: http.DefaultClient).
	JWKSURL     string
	JWKSRefresh time.Duration
	JWKSTimeout time.Duration
	HTTPClient  *http.Client
	// Issuer and Audience, when set, are required of every token: its iss
	// claim equal to Issuer, its aud claim (a string or a list) containing
	// Audience.
	Issuer   string
	Audience string
	// UsernameClaim and OrgClaim name the claims; "" means "username" (then
	// "preferred_username", then "sub") and "org_id".
	UsernameClaim string
	OrgClaim      string
	// OrgAdminClaim names the boolean claim that makes the caller an
	// administrator of its organisation; "" means "is_org_admin", the
	// original's.
	OrgAdminClaim string
	// Leeway allows clock skew on exp/nbf/iat; 0 means one minute.
	Leeway time.Duration
}

// JWTAuthenticator verifies `Authorization: Bearer <JWT>`. It is immutable
// and safe for concurrent use.
type JWTAuthenticator struct {
	opts JWTOptions
	rsa  []*rsa.PublicKey
	jwks *jwks // nil without JWKSURL
}

var _ Authenticator = (*JWTAuthenticator)(nil)

// NewJWTAuthenticator validates opts and reads the key file.
func NewJWTAuthenticator(opts JWTOptions) (*JWTAuthenticator, error) {
	a := &JWTAuthenticator{opts: opts, rsa: append([]*rsa.PublicKey(nil), opts.RS256Keys...)}
	if opts.RS256KeyFile != "" {
		b, err := os.ReadFile(opts.RS256KeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth: read RS256 key: %w", err)
		}
		k, err := jwt.ParseRSAPublicKeyFromPEM(b)
		if err != nil {
			return nil, fmt.Errorf("%w: RS256 key file %s: %v", ErrInvalid, opts.RS256KeyFile, err)
		}
		a.rsa = append(a.rsa, k)
	}
	if opts.JWKSURL != "" {
		a.jwks = &jwks{url: opts.JWKSURL, client: opts.HTTPClient, refresh: opts.JWKSRefresh, timeout: opts.JWKSTimeout}
		if a.jwks.client == nil {
			a.jwks.client = http.DefaultClient
		}
		if a.jwks.refresh <= 0 {
			a.jwks.refresh = time.Hour
		}
		if a.jwks.timeout <= 0 {
			a.jwks.timeout = DefaultJWKSTimeout
		}
	}
	if len(opts.HS256Secret) == 0 && len(a.rsa) == 0 && a.jwks == nil {
		return nil, fmt.Errorf("%w: JWT authentication needs an HS256 secret, an RS256 key or a JWKS URL", ErrInvalid)
	}
	if a.opts.Leeway <= 0 {
		a.opts.Leeway = time.Minute
	}
	if a.opts.OrgClaim == "" {
		a.opts.OrgClaim = "org_id"
	}
	if a.opts.OrgAdminClaim == "" {
		a.opts.OrgAdminClaim = "is_org_admin"
	}
	return a, nil
}

// Authenticate implements Authenticator.
func (a *JWTAuthenticator) Authenticate(r *http.Request) (Principal, error) {
	h := r.Header.Get("Authorization")
	raw, ok := strings.CutPrefix(h, "Bearer ")
	raw = strings.TrimSpace(raw)
	if !ok || raw == "" {
		return Principal{}, fmt.Errorf("%w: missing bearer token", ErrUnauthenticated)
	}
	var methods []string
	if len(a.opts.HS256Secret) > 0 {
		methods = append(methods, "HS256")
	}
	if len(a.rsa) > 0 || a.jwks != nil {
		methods = append(methods, "RS256")
	}
	claims := jwt.MapClaims{}
	popts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithLeeway(a.opts.Leeway), jwt.WithExpirationRequired()}
	if a.opts.Issuer != "" {
		popts = append(popts, jwt.WithIssuer(a.opts.Issuer))
	}
	if a.opts.Audience != "" {
		popts = append(popts, jwt.WithAudience(a.opts.Audience))
	}
	_, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) { return a.key(r.Context(), t) }, popts...)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	p := Principal{Username: a.claim(claims, a.opts.UsernameClaim, "username", "preferred_username", "sub"), Organisation: a.claim(claims, a.opts.OrgClaim)}
	if p.Username == "" {
		return Principal{}, fmt.Errorf("%w: token has no username claim", ErrUnauthenticated)
	}
	// An administrator of no organisation administers nothing.
	admin, _ := claims[a.opts.OrgAdminClaim].(bool)
	p.OrgAdmin = admin && p.Organisation != ""
	return p, nil
}

// key returns the verification key(s) for t: the shared secret for HS256;
// for RS256 the JWKS key named by the token's kid (fetching the set again
// when the kid is unknown), else every configured RSA key.
func (a *JWTAuthenticator) key(ctx context.Context, t *jwt.Token) (any, error) {
	switch t.Method.Alg() {
	case "HS256":
		return a.opts.HS256Secret, nil
	case "RS256":
		if kid, ok := t.Header["kid"].(string); ok && kid != "" && a.jwks != nil {
			k, err := a.jwks.key(ctx, kid)
			if err == nil {
				return k, nil
			}
			if len(a.rsa) == 0 {
				return nil, err
			}
		}
		set := jwt.VerificationKeySet{}
		for _, k := range a.rsa {
			set.Keys = append(set.Keys, k)
		}
		if len(set.Keys) == 0 {
			return nil, errors.New("no RS256 key for this token")
		}
		return set, nil
	}
	return nil, fmt.Errorf("unexpected signing method %s", t.Method.Alg())
}

// jwks is a JSON Web Key Set fetched from a URL: its RSA keys by kid.
// Requests read the last good set without a lock; a fetch runs in a
// goroutine of its own under its own timeout (never a caller's context),
// one at a time. A known kid never waits for a fetch, even when the set
// is due for a refresh; only a kid the set lacks (or the very first
// request) waits, and only as long as its own context allows.
type jwks struct {
	url     string
	client  *http.Client
	refresh time.Duration
	timeout time.Duration

	set atomic.Pointer[keySet] // the last good set; nil before the first

	mu        sync.Mutex
	fetching  chan struct{} // guarded by mu: closed when the fetch in flight ends; nil when none
	attempted time.Time     // guarded by mu: when the last fetch started
	lastErr   error         // guarded by mu: the last fetch's error
}

// keySet is one fetched key set.
type keySet struct {
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// minRefetch bounds how often an unknown kid makes the set be fetched.
const minRefetch = 10 * time.Second

// DefaultJWKSTimeout bounds one fetch of a JWKS.
const DefaultJWKSTimeout = 10 * time.Second

func (j *jwks) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	if set := j.set.Load(); set != nil {
		if k, ok := set.keys[kid]; ok {
			if time.Since(set.fetched) > j.refresh {
				j.start() // refresh in the background; this key serves meanwhile
			}
			return k, nil
		}
	}
	done := j.start()
	if done == nil {
		return nil, j.unknown(kid)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the JWKS: %w", ctx.Err())
	}
	if set := j.set.Load(); set != nil {
		if k, ok := set.keys[kid]; ok {
			return k, nil
		}
	}
	return nil, j.unknown(kid)
}

// unknown is the error for a kid the last good set lacks.
func (j *jwks) unknown(kid string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lastErr != nil && j.set.Load() == nil {
		return j.lastErr
	}
	return fmt.Errorf("unknown key id %q", kid)
}

// start begins a fetch unless one is in flight or the last one started
// less than minRefetch ago, and returns the channel closed when the fetch
// in flight ends (nil when none runs). The fetch's goroutine ends within
// the fetch timeout.
func (j *jwks) start() <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fetching != nil {
		return j.fetching
	}
	if !j.attempted.IsZero() && time.Since(j.attempted) < minRefetch {
		return nil
	}
	j.attempted = time.Now()
	done := make(chan struct{})
	j.fetching = done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
		keys, err := j.fetch(ctx)
		cancel()
		if err == nil {
			j.set.Store(&keySet{keys: keys, fetched: time.Now()})
		}
		j.mu.Lock()
		j.fetching, j.lastErr = nil, err
		j.mu.Unlock()
		close(done)
	}()
	return done
}

func (j *jwks) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS: %s", resp.Status)
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			N   string `json:"n"`
			E   string `json:"e"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("decode JWKS: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Kid == "" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	return keys, nil
}

func (a *JWTAuthenticator) claim(c jwt.MapClaims, names ...string) string {
	for _, n := range names {
		if n == "" {
			continue
		}
		if s, ok := c[n].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// NewHS256Token signs a development token for user (and organisation, if
// any) valid for ttl, with the claims JWTAuthenticator reads by default.
func NewHS256Token(secret []byte, user, org string, ttl time.Duration) (string, error) {
	return NewHS256TokenFor(secret, Principal{Username: user, Organisation: org}, ttl)
}

// NewHS256TokenFor signs a development token for p valid for ttl, with the
// claims JWTAuthenticator reads by default.
func NewHS256TokenFor(secret []byte, p Principal, ttl time.Duration) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{"username": p.Username, "sub": p.Username, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	if p.Organisation != "" {
		claims["org_id"] = p.Organisation
	}
	if p.OrgAdmin {
		claims["is_org_admin"] = true
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}

type principalKey struct{}

// NewContext returns ctx carrying p: the API passes the caller it
// authenticated down to the Quota and Store calls of the request.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller NewContext put in ctx, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
