package python_test

import (
	"context"
	"fmt"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/python"
)

func Example() {
	l, err := python.New(linter.Config{})
	if err != nil {
		panic(err)
	}
	src := "import os, sys\ndef main():\n    if sys.argv == None :\n        print(os.name)"
	diags, err := l.Lint(context.Background(), linter.Source{Name: "app.py", Code: []byte(src)})
	if err != nil {
		panic(err)
	}
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// 1:10: E401 multiple imports on one line
	// 2:1: E302 expected 2 blank lines, found 0
	// 3:17: E711 comparison to None should be 'if cond is None:'
	// 3:24: E203 whitespace before ':'
	// 4:23: W292 no newline at end of file
}

func ExampleLanguage() {
	reg, err := linter.NewRegistry(python.Language())
	if err != nil {
		panic(err)
	}
	lang, err := reg.Lookup("python")
	if err != nil {
		panic(err)
	}
	l, err := lang.New(linter.Config{Select: []string{"E2"}})
	if err != nil {
		panic(err)
	}
	diags, err := l.Lint(context.Background(), linter.Source{Code: []byte("x=(1 ,2)\n")})
	if err != nil {
		panic(err)
	}
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// 1:2: E225 missing whitespace around operator
	// 1:5: E203 whitespace before ','
	// 1:6: E231 missing whitespace after ','
}
