package profile

import (
	"debug/elf"
	"debug/gosym"
	"strings"
)

// goSymbols names the frames perf could not in Go binaries built without
// a symbol table (go run and go test link with -s -w): from the binary's
// own function table, .gopclntab, which every Go binary keeps.
type goSymbols map[string]*goBinary

// goBinary is one binary's function table and its loadable segments.
type goBinary struct {
	table *gosym.Table
	progs []*elf.Prog
}

// name names fs's unnamed frames where their module is a Go binary.
func (g goSymbols) name(fs []Frame) {
	for i := range fs {
		f := &fs[i]
		if f.path == "" || !strings.HasPrefix(f.Function, "[unknown") {
			continue
		}
		b, ok := g[f.path]
		if !ok {
			b = openGoBinary(f.path)
			g[f.path] = b
		}
		if b == nil {
			continue
		}
		if fn := b.lookup(f.addr); fn != "" {
			f.Function = fn
		}
	}
}

// lookup names the function at addr, which perf gives as an offset in
// the file: it is turned into a virtual address through the segment that
// holds it.
func (b *goBinary) lookup(addr uint64) string {
	for _, p := range b.progs {
		if p.Type == elf.PT_LOAD && addr >= p.Off && addr < p.Off+p.Filesz {
			if fn := b.table.PCToFunc(addr - p.Off + p.Vaddr); fn != nil {
				return fn.Name
			}
		}
	}
	if fn := b.table.PCToFunc(addr); fn != nil {
		return fn.Name
	}
	return ""
}

// openGoBinary reads the function table of the Go binary at path, or
// returns nil if it is not one.
func openGoBinary(path string) *goBinary {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	return &goBinary{table: t, progs: f.Progs}
}
