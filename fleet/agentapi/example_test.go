package agentapi_test

import (
	"fmt"

	"github.com/fleetkit/fleetkit/fleet/agentapi"
)

// The token of the dinosaur agent on cluster dp-1: it grants that cluster
// only (fleet-manager cluster-token prints it).
func ExampleToken() {
	fmt.Println(agentapi.Token([]byte("a-secret-of-at-least-16-bytes"), "dinosaur", "dp-1"))
	// Output: fkc1.dp-1._i4R6FW2kWyK7K0EDlpWXVuq20y5tSYkRpXPzPN90YA
}
