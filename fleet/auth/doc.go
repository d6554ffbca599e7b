// Package auth identifies the callers of the fleet REST API: an
// Authenticator turns a request into a Principal (username and
// organisation). JWTAuthenticator is the reference implementation: HS256
// with a shared secret (local development, NewHS256Token), RS256 with keys
// from a file or from a JSON Web Key Set URL, configurable claims, issuer
// and audience.
//
// Every type is safe for concurrent use. A JWTAuthenticator on a JWKS URL
// fetches the set in a goroutine of its own, each fetch bounded by
// JWTOptions.JWKSTimeout, so a slow key server never holds a request
// longer than its own context allows.
//
//	a, err := auth.NewJWTAuthenticator(auth.JWTOptions{JWKSURL: url, Issuer: iss})
//	if err != nil { ... }
//	h, err := httpapi.New(svc, httpapi.Options{Auth: a})
package auth
