package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckLeaks(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		<-stop
		close(done)
	}()
	assert.Equal(t, 3, CheckLeaks(3), "a failed run keeps its code and is not checked")
	assert.Equal(t, 1, CheckLeaks(0), "a goroutine left running fails a passing run")
	close(stop)
	<-done
	assert.Equal(t, 0, CheckLeaks(0))
}
