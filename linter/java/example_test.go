package java_test

import (
	"context"
	"fmt"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/java"
)

func Example() {
	l, err := java.New(linter.Config{Ignore: []string{"NewlineAtEndOfFile"}})
	if err != nil {
		panic(err)
	}
	src := "import java.util.List;\n\nclass Demo {\n    int Count;\n    void f(int x) {\n        if(x > 0) x++;\n    }\n}"
	diags, err := l.Lint(context.Background(), linter.Source{Name: "Demo.java", Code: []byte(src)})
	if err != nil {
		panic(err)
	}
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// 1:8: UnusedImports Unused import - java.util.List.
	// 4:9: MemberName Name 'Count' must match pattern '^[a-z][a-zA-Z0-9]*$'.
	// 6:9: NeedBraces 'if' construct must use '{}'s.
	// 6:9: WhitespaceAround 'if' is not followed by whitespace.
}
