package stats

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNothingOfToll keeps the package pure: no file of it (tests
// aside) imports a package of the module, so the statistics never learn
// of trials, records or reports.
func TestImportsNothingOfToll(t *testing.T) {
	const module = "github.com/tollperf/toll"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, imp := range file.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(imp.Pos()), err)
			}
			if path == module || strings.HasPrefix(path, module+"/") {
				t.Errorf("%s: stats imports %s; it must import nothing of toll's", fset.Position(imp.Pos()), path)
			}
		}
	}
}
