// Package secret gives fleetkit's binaries their secrets from a file or an
// environment variable (or, discouraged, a flag, which shows in ps), and
// tells whether an address is loopback-only, where a service may run
// without one.
//
// Its functions are safe for concurrent use and do not log (a secret's
// value never appears in an error).
//
//	token, err := secret.Load(secret.Source{Flag: *tokenFlag, File: *tokenFile, Env: "FLEET_TOKEN"})
//	if err != nil {
//		return err
//	}
//	if token == "" && !secret.Loopback(*addr) {
//		return errors.New("a token is required off loopback")
//	}
package secret
