package agentapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// tokenPrefix versions the token format.
const tokenPrefix = "fkc1."

// Token returns the bearer token of the agent of kind on clusterID:
// fkc1.<clusterID>.<base64url-nopad(HMAC-SHA256(secret, "<kind>/<clusterID>"))>.
// It grants access to that one cluster of that one kind.
func Token(secret []byte, kind, clusterID string) string {
	return tokenPrefix + clusterID + "." + base64.RawURLEncoding.EncodeToString(mac(secret, kind, clusterID))
}

func mac(secret []byte, kind, clusterID string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(kind + "/" + clusterID))
	return m.Sum(nil)
}

// verify returns the cluster ID tok grants access to, and whether tok is
// a valid token of kind signed with secret. The MAC is compared in
// constant time (hmac.Equal).
func verify(secret []byte, kind, tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return "", false
	}
	clusterID, sig := rest[:i], rest[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", false
	}
	return clusterID, hmac.Equal(got, mac(secret, kind, clusterID))
}
