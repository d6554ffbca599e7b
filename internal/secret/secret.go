package secret

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// Source says where a secret may come from.
type Source struct {
	// Flag is the value of a -secret flag ("" when not given).
	Flag string
	// File is the value of a -secret-file flag: a file holding the secret,
	// surrounding white space ignored ("" when not given).
	File string
	// Env names the environment variable read when neither is given.
	Env string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Load returns the secret from s: the flag, else the file, else the
// environment variable; "" when none is set. Giving both the flag and the
// file is an error, as is an unreadable or empty file.
func Load(s Source) (string, error) {
	if s.Flag != "" && s.File != "" {
		return "", errors.New("give the secret once: a flag or a file, not both")
	}
	if s.Flag != "" {
		return s.Flag, nil
	}
	if s.File != "" {
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("reading the secret file: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("the secret file %s is empty", s.File)
		}
		return v, nil
	}
	if s.Env == "" {
		return "", nil
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return strings.TrimSpace(getenv(s.Env)), nil
}

// Loopback reports whether a listener on addr ("127.0.0.1:5000",
// "localhost:0", "[::1]:80") can only be reached from this machine. An empty
// host, 0.0.0.0, :: and names other than localhost are not loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
