package balancer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSWRRSequence(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
		want    []int
	}{
		// The example of NGINX's commit that introduced smooth weighted
		// round robin: weights {5,1,1} give a a b a c a a.
		{name: "nginx 5/1/1", weights: []int{5, 1, 1}, want: []int{0, 0, 1, 0, 2, 0, 0}},
		{name: "60/40 reduced to 3/2", weights: []int{60, 40}, want: []int{0, 1, 0, 1, 0}},
		{name: "single", weights: []int{100}, want: []int{0}},
		{name: "equal", weights: []int{1, 1, 1}, want: []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, swrrSequence(tt.weights))
		})
	}
}

func TestSWRRSequenceEveryWindowExact(t *testing.T) {
	for _, weights := range [][]int{{99, 1}, {95, 5}, {60, 40}, {1, 1, 98}, {50, 30, 20}, {7, 13, 80}, {33, 33, 34}} {
		seq := swrrSequence(weights)
		g := 0
		sum := 0
		for _, w := range weights {
			g = gcd(g, w)
			sum += w
		}
		n := sum / g
		assert.Len(t, seq, n)
		// Every cyclic window of n picks has each index exactly w/g times.
		for start := range n {
			counts := make([]int, len(weights))
			for i := range n {
				counts[seq[(start+i)%n]]++
			}
			for i, w := range weights {
				assert.Equal(t, w/g, counts[i], "weights %v window at %d", weights, start)
			}
		}
	}
}
