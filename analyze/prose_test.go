package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoProse checks that analyze hands its callers codes and numbers,
// not sentences: no non-test file of the package formats text with fmt
// (Sprintf, Sprint, Fprintf, Appendf and the like), whose words report
// could neither translate nor reorder. An error's text (fmt.Errorf) may
// be English. The few names that summary.json carries as data are
// allowed below, each with its reason.
func TestNoProse(t *testing.T) {
	allowed := map[string]string{
		"cost.go:CPUBusy":       "a cost's name, the key of its figures (machine_cpu3_pct)",
		"cost.go:Info":          "a cost's label (machine CPU 3), which summary.json keys by as by every cost's",
		"summary.go:Label":      "a load step's label (50 users), which names the step in summary.json and its files",
		"workload.go:workLabel": "the label of a job's wall time per unit of work, a cost's label",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || pkg.Name != "fmt" || sel.Sel.Name == "Errorf" {
					return true
				}
				where := name + ":" + fn.Name.Name
				seen[where] = true
				if _, ok := allowed[where]; !ok {
					t.Errorf("%s: fmt.%s builds text in %s: give the caller a code and its numbers, and the words to report",
						fset.Position(call.Pos()), sel.Sel.Name, fn.Name.Name)
				}
				return true
			})
		}
	}
	for where := range allowed {
		if !seen[where] {
			t.Errorf("%s is allowed to format text but no longer does: take it off the list", where)
		}
	}
}
