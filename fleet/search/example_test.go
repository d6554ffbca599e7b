package search_test

import (
	"fmt"

	"github.com/fleetkit/fleetkit/fleet/search"
)

func ExampleParse() {
	e, err := search.Parse("name like 'rex%' and (region = us-east-1 or status in (ready, failed))")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", e)
	_, err = search.Parse("name = x; color = red")
	fmt.Println(err)
	// Output:
	// [{Field:name Op:LIKE Values:[rex%]} [{Field:region Op:= Values:[us-east-1]} {Field:status Op:IN Values:[ready failed]}]]
	// search: unexpected "color"
}
