//go:build !unix

package process

import "os"

// lockFile opens path; there is no advisory lock here.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
