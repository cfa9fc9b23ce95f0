package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// packageFiles parses the package's files, tests aside.
func packageFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// isBound says whether e reads a change's interval bound: x.CILow,
// *x.CIHigh and the like.
func isBound(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.UnaryExpr:
			e = x.X
		case *ast.SelectorExpr:
			// The names of a change's bounds in analyze's types (Delta,
			// CostChange, ProfileRow, ProfileRowChange).
			switch x.Sel.Name {
			case "CILow", "CIHigh", "AbsCILow", "AbsCIHigh":
				return true
			}
			return false
		default:
			return false
		}
	}
}

// TestReportHoldsNoIntervalArithmetic: no file of the package computes
// with a change's interval. Its direction, half-width and ratio bounds
// are analyze's (Delta.Direction, Delta.HalfWidth, Delta.RatioBounds), so
// that every renderer shows the same verdict: a renderer may print a
// bound or ask whether there is one, never compare it with 0, subtract it
// or scale it, call into the statistics package, or settle a change
// itself.
func TestReportHoldsNoIntervalArithmetic(t *testing.T) {
	fset, files := packageFiles(t)
	for _, f := range files {
		for _, imp := range f.Imports {
			if strings.HasSuffix(strings.Trim(imp.Path.Value, `"`), "/toll/stats") {
				t.Errorf("%s: imports %s: statistics are analyze's", fset.Position(imp.Pos()), imp.Path.Value)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				switch x.Op {
				case token.ADD, token.SUB, token.MUL, token.QUO, token.LSS, token.GTR, token.LEQ, token.GEQ:
					if isBound(x.X) || isBound(x.Y) {
						t.Errorf("%s: computes with an interval's bound (%s): analyze's to do", fset.Position(x.Pos()), x.Op)
					}
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Settle" {
					t.Errorf("%s: settles a change's direction: analyze's to do", fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
}

// TestIsBound checks the test's own eye on the forms a bound is read in.
func TestIsBound(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"*d.CILow > 0", true},
		{"(*r.CIHigh - *r.CILow) / 2", true},
		{"1 + *d.CILow/100", true},
		{"d.CILow == nil", false},
		{"*d.Pct / 100", false},
		{"r.Low < lo", false},
	} {
		e, err := parser.ParseExpr(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		ast.Inspect(e, func(n ast.Node) bool {
			if b, ok := n.(*ast.BinaryExpr); ok && b.Op != token.EQL && b.Op != token.NEQ && (isBound(b.X) || isBound(b.Y)) {
				got = true
			}
			return true
		})
		if got != tt.want {
			t.Errorf("%s: flagged %v, want %v", tt.src, got, tt.want)
		}
	}
}
