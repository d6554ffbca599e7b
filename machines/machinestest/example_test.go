package machinestest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/machinestest"
)

// Machines of a machinestest.Provider are real HTTP servers that answer
// like linters; a test can kill one and see the provider report it.
func Example() {
	p := machinestest.New(machinestest.Options{})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	exited := make(chan machines.Event, 1)
	go func() { _ = p.Watch(ctx, func(e machines.Event) { exited <- e }) }()
	for p.Watchers() == 0 { // a Watch reports exits from its start on
		runtime.Gosched()
	}

	// The fake reads the linter's command line, as the linter does.
	m, err := p.Create(ctx, machines.Spec{Args: linter.Args("python", "2.0", "{addr}")})
	if err != nil {
		panic(err)
	}
	resp, err := http.Post(m.URL()+"/lint", "application/json", strings.NewReader(`{"code":"print('hello world')"}`))
	if err != nil {
		panic(err)
	}
	var answer struct {
		Language string `json:"language"`
		Version  string `json:"version"`
		Result   bool   `json:"result"`
		Details  string `json:"details"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	fmt.Println(answer.Language, answer.Version, answer.Result, answer.Details)

	_ = p.Kill(m.ID)
	e := <-exited
	fmt.Println(e.Machine.ID == m.ID, e.Machine.State)
	ms, _ := p.List(ctx, nil)
	fmt.Println(len(ms), ms[0].State)
	// Output:
	// python 2.0 false 1:21: W292 no newline at end of file
	// true exited
	// 1 exited
}
