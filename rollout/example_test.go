package rollout_test

import (
	"context"
	"fmt"

	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/rollout"
	"github.com/fleetkit/fleetkit/rollout/rollouttest"
)

// The machine split and the traffic ratio of an update of four machines
// from 1.0 to 2.0 over the default steps.
func ExampleMachineSplit() {
	for _, p := range rollout.DefaultSteps() {
		old, new := rollout.MachineSplit(4, p)
		fmt.Printf("%3d%%: %d old + %d new, ratio %v\n", p, old, new, rollout.Ratio("1.0", "2.0", p, 100))
	}
	// Output:
	//   1%: 3 old + 1 new, ratio map[1.0:99 2.0:1]
	//   5%: 3 old + 1 new, ratio map[1.0:95 2.0:5]
	//  10%: 3 old + 1 new, ratio map[1.0:90 2.0:10]
	//  50%: 2 old + 2 new, ratio map[1.0:50 2.0:50]
	// 100%: 0 old + 4 new, ratio map[2.0:100]
}

// A Manager over the in-memory provider and router: two machines, then the
// first step of an update.
func ExampleManager() {
	ctx := context.Background()
	provider := machinestest.New(machinestest.Options{})
	defer provider.Close()
	router := rollouttest.NewRouter(rollouttest.Options{})
	mgr, err := rollout.New(provider, router, rollout.Options{
		Languages: map[string]rollout.Language{"python": {
			Version: "1.0",
			Versions: map[string]rollout.VersionSpec{
				"1.0": {Command: "linter"}, "2.0": {Command: "linter"},
			},
		}},
		IsNotFound: rollouttest.IsNotFound,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		if _, err := mgr.Create(ctx, "python"); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := mgr.InitUpdate(ctx, "python", "2.0"); err != nil {
		fmt.Println(err)
		return
	}
	st, _ := mgr.Status(ctx)
	for _, m := range st.Languages[0].Machines {
		fmt.Println(m.Language, m.Version, m.Healthy)
	}
	ratio, _ := router.Ratio("python")
	fmt.Println("ratio", ratio)
	err = mgr.Update(ctx, "python")
	fmt.Println("update:", err)
	// Output:
	// python 1.0 true
	// python 2.0 true
	// ratio map[1.0:99 2.0:1]
	// update: <nil>
}
