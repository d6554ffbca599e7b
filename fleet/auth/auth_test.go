package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/auth"
)

func TestJWTAuthenticator(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))
	secret := []byte("shared-secret")

	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret, RS256KeyFile: keyFile})
	require.NoError(t, err)
	custom, err := auth.NewJWTAuthenticator(auth.JWTOptions{RS256KeyFile: keyFile, UsernameClaim: "email", OrgClaim: "tenant"})
	require.NoError(t, err)

	exp := time.Now().Add(time.Hour).Unix()
	rs := func(c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(key)
		require.NoError(t, err)
		return s
	}
	hs := func(c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
		require.NoError(t, err)
		return s
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"username": "alice", "exp": exp}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	dev, err := auth.NewHS256Token(secret, "alice", "acme", time.Hour)
	require.NoError(t, err)

	tests := []struct {
		name   string
		authn  *auth.JWTAuthenticator
		header string
		want   auth.Principal
		ok     bool
	}{
		{"dev token", authn, "Bearer " + dev, auth.Principal{Username: "alice", Organisation: "acme"}, true},
		{"HS256", authn, "Bearer " + hs(jwt.MapClaims{"username": "bob", "exp": exp}), auth.Principal{Username: "bob"}, true},
		{"RS256 from key file", authn, "Bearer " + rs(jwt.MapClaims{"preferred_username": "carol", "org_id": "o1", "exp": exp}), auth.Principal{Username: "carol", Organisation: "o1"}, true},
		{"custom claims", custom, "Bearer " + rs(jwt.MapClaims{"email": "d@x", "tenant": "t1", "exp": exp}), auth.Principal{Username: "d@x", Organisation: "t1"}, true},
		{"org admin", authn, "Bearer " + hs(jwt.MapClaims{"username": "erin", "org_id": "acme", "is_org_admin": true, "exp": exp}), auth.Principal{Username: "erin", Organisation: "acme", OrgAdmin: true}, true},
		{"org admin without org", authn, "Bearer " + hs(jwt.MapClaims{"username": "erin", "is_org_admin": true, "exp": exp}), auth.Principal{Username: "erin"}, true},
		{"org admin not a boolean", authn, "Bearer " + hs(jwt.MapClaims{"username": "erin", "org_id": "acme", "is_org_admin": "true", "exp": exp}), auth.Principal{Username: "erin", Organisation: "acme"}, true},
		{"HS256 not configured", custom, "Bearer " + hs(jwt.MapClaims{"username": "bob", "exp": exp}), auth.Principal{}, false},
		{"alg none", authn, "Bearer " + none, auth.Principal{}, false},
		{"no exp", authn, "Bearer " + hs(jwt.MapClaims{"username": "bob"}), auth.Principal{}, false},
		{"expired", authn, "Bearer " + hs(jwt.MapClaims{"username": "bob", "exp": time.Now().Add(-time.Hour).Unix()}), auth.Principal{}, false},
		{"no username", authn, "Bearer " + hs(jwt.MapClaims{"exp": exp}), auth.Principal{}, false},
		{"no header", authn, "", auth.Principal{}, false},
		{"not bearer", authn, "Token " + dev, auth.Principal{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodGet, "/", nil)
			require.NoError(t, err)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			p, err := tt.authn.Authenticate(r)
			if !tt.ok {
				require.ErrorIs(t, err, auth.ErrUnauthenticated)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
	_, err = auth.NewJWTAuthenticator(auth.JWTOptions{})
	assert.ErrorIs(t, err, auth.ErrInvalid, "a key is required")
}

func TestJWTAuthenticatorJWKS(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		e := big.NewInt(int64(key.E)).Bytes()
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": "k1", "use": "sig", "n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(e)},
			{"kty": "EC", "kid": "ec"},
		}})
	}))
	t.Cleanup(srv.Close)
	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{JWKSURL: srv.URL})
	require.NoError(t, err)
	sign := func(k *rsa.PrivateKey, kid string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"username": "alice", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = kid
		s, err := tok.SignedString(k)
		require.NoError(t, err)
		return s
	}
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"known kid", sign(key, "k1"), true},
		{"again, from the cache", sign(key, "k1"), true},
		{"wrong key under a known kid", sign(other, "k1"), false},
		{"unknown kid", sign(other, "k2"), false},
		{"non-RSA kid", sign(key, "ec"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			p, err := authn.Authenticate(r)
			if !tt.ok {
				require.ErrorIs(t, err, auth.ErrUnauthenticated)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "alice", p.Username)
		})
	}
	assert.Equal(t, int32(1), fetches.Load(), "unknown kids do not refetch more than every ten seconds")
}

// roundTripFunc serves the JWKS tests' fetches without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func jwksBody(t *testing.T, kid string, key *rsa.PublicKey) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": kid,
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes())}}})
	require.NoError(t, err)
	return string(b)
}

// TestJWKSFetchInBackground: a JWKS endpoint that hangs must not hold up
// requests whose key is known (the set is refreshed in the background
// under its own timeout, the last good set serving meanwhile), and a
// fetch is never bounded by, or cancelled with, one caller's context.
func TestJWKSFetchInBackground(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int32
		hang := make(chan struct{})
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if fetches.Add(1) > 1 {
				select { // the endpoint hangs from the second fetch on
				case <-hang:
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(jwksBody(t, "k1", &key.PublicKey))), Request: r}, nil
		})
		authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{JWKSURL: "http://jwks.invalid/keys", JWKSRefresh: time.Minute,
			JWKSTimeout: 5 * time.Second, HTTPClient: &http.Client{Transport: rt}})
		require.NoError(t, err)
		sign := func(kid string) string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"username": "alice", "exp": time.Now().Add(time.Hour).Unix()})
			tok.Header["kid"] = kid
			s, err := tok.SignedString(key)
			require.NoError(t, err)
			return s
		}
		authenticate := func(ctx context.Context, tok string) error {
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			_, err := authn.Authenticate(r)
			return err
		}
		require.NoError(t, authenticate(t.Context(), sign("k1")), "first use fetches the set")

		time.Sleep(2 * time.Minute) // the set is due for a refresh; the endpoint now hangs
		done := make(chan error, 1)
		go func() { done <- authenticate(t.Context(), sign("k1")) }()
		synctest.Wait()
		select {
		case err := <-done:
			require.NoError(t, err, "the last good set serves while the refresh hangs")
		default:
			t.Fatal("a request with a known key waits for the JWKS refresh")
		}
		// An unknown kid waits for the fetch in flight, as long as its own
		// context allows; ending it does not end the fetch for others.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err = authenticate(ctx, sign("k2"))
		cancel()
		require.ErrorIs(t, err, auth.ErrUnauthenticated)
		require.ErrorContains(t, err, "deadline exceeded")
		require.NoError(t, authenticate(t.Context(), sign("k1")))

		time.Sleep(10 * time.Second) // the fetch's own timeout ends it
		synctest.Wait()
		require.NoError(t, authenticate(t.Context(), sign("k1")), "the last good set outlives a failed refresh")
		close(hang)
	})
}

// TestJWTIssuerAudience: iss and aud are checked when configured.
func TestJWTIssuerAudience(t *testing.T) {
	secret := []byte("shared-secret")
	strict, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret, Issuer: "https://sso.example/", Audience: "fleet"})
	require.NoError(t, err)
	lax, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	require.NoError(t, err)
	exp := time.Now().Add(time.Hour).Unix()
	tests := []struct {
		name   string
		claims jwt.MapClaims
		strict bool
	}{
		{"both right", jwt.MapClaims{"iss": "https://sso.example/", "aud": "fleet"}, true},
		{"aud in a list", jwt.MapClaims{"iss": "https://sso.example/", "aud": []string{"other", "fleet"}}, true},
		{"wrong issuer", jwt.MapClaims{"iss": "https://evil.example/", "aud": "fleet"}, false},
		{"wrong audience", jwt.MapClaims{"iss": "https://sso.example/", "aud": "billing"}, false},
		{"no issuer", jwt.MapClaims{"aud": "fleet"}, false},
		{"no audience", jwt.MapClaims{"iss": "https://sso.example/"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.claims["username"], tt.claims["exp"] = "alice", exp
			tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tt.claims).SignedString(secret)
			require.NoError(t, err)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			_, err = strict.Authenticate(r)
			if tt.strict {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, auth.ErrUnauthenticated)
			}
			_, err = lax.Authenticate(r)
			assert.NoError(t, err, "unchecked when not configured")
		})
	}
}
