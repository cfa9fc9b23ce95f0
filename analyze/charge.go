package analyze

import (
	"slices"
	"strings"

	pprof "github.com/google/pprof/profile"
	"github.com/tollperf/toll/probe/profile"
)

// OriginNewCode is code of a package that a variant runs and its baseline
// never did, outside the agents' known packages: an agent's dependencies
// (a protobuf encoder, an HTTP client), or the code of an agent whose
// packages toll does not know. Judged by package, not by function: a
// function the baseline ran too rarely to be sampled is still the
// application's.
const OriginNewCode = "agent: code the baseline never runs"

// charged is the CPU per request of one trial by the code charged with it
// (chargeOf): by function, by package and by origin.
type charged struct {
	functions, packages, origins map[string]float64
	// originOf is each charged function's and package's origin, the
	// packages' keyed "\x00"+package as trialProfile.origins.
	originOf map[string]string
}

// chargeTrial charges every sample of tp to the code that asked for it.
// known reports whether the baseline ran code of a package (nil: it ran
// them all, as for the baseline's own trials). The Go garbage collector's background
// work, which no caller asked for, is charged to the code that allocated,
// in proportion to the CPU its allocations took (runtime.mallocgc under
// it); where no allocation was sampled (a JVM allocates in compiled code
// the profile cannot see) it stays the runtime's.
func chargeTrial(tp *trialProfile, known func(string) bool) charged {
	c := charged{functions: map[string]float64{}, packages: map[string]float64{}, origins: map[string]float64{}, originOf: map[string]string{}}
	add := func(fn, pkg, origin string, ms float64) {
		c.functions[fn] += ms
		c.packages[pkg] += ms
		c.origins[origin] += ms
		c.originOf[fn] = origin
		c.originOf["\x00"+pkg] = origin
	}
	type owner struct{ fn, pkg, origin string }
	alloc := map[owner]float64{}
	var allocTotal, gcBackground float64
	for _, s := range tp.held {
		ch := chargeOf(s.locs, s.thread, known)
		if ch.fn == "" {
			if ch.gcBackground {
				gcBackground += s.ms
				continue
			}
			add("("+ch.origin+")", "("+ch.origin+")", ch.origin, s.ms)
			continue
		}
		add(ch.fn, ch.pkg, ch.origin, s.ms)
		if ch.allocates {
			alloc[owner{ch.fn, ch.pkg, ch.origin}] += s.ms
			allocTotal += s.ms
		}
	}
	if gcBackground > 0 {
		if allocTotal == 0 {
			add("("+OriginGC+")", "("+OriginGC+")", OriginGC, gcBackground)
		} else {
			for o, ms := range alloc {
				add(o.fn, o.pkg, o.origin, gcBackground*ms/allocTotal)
			}
		}
	}
	return c
}

// charge is where chargeOf puts one sample.
type charge struct {
	// fn, pkg and origin are the function charged, its package and
	// origin; fn is empty when no frame of the stack owns it, and origin
	// is then the sample's own (originOf).
	fn, pkg, origin string
	// allocates is set when the sample is in Go's allocator, and
	// gcBackground when it is the Go GC's background work.
	allocates, gcBackground bool
}

// chargeOf returns the code charged with a sample whose stack is locs
// (leaf first), on the thread named thread: the first frame from the leaf
// up that is neither a runtime's, the kernel's, a system library's nor a
// language's standard library (libraryFrame), so that an allocation, a
// system call or a map lookup counts for the code that made it, not for
// the runtime. A frame of an agent that forwards a call to a method of the
// same name (a wrapper of the application's http.RoundTripper, its
// response writer, its handler) is passed over: what the application asked
// for through the wrapper stays the application's. known reports whether
// the baseline ran code of a package; one it never ran counts as
// OriginNewCode.
func chargeOf(locs []*pprof.Location, thread string, known func(string) bool) charge {
	var ch charge
	callee := ""
	for _, l := range locs {
		for _, ln := range l.Line {
			name := ln.Function.Name
			switch {
			case name == "runtime.mallocgc":
				ch.allocates = true
			case strings.HasPrefix(name, "runtime.gcBgMarkWorker") || strings.HasPrefix(name, "runtime.bgsweep") || strings.HasPrefix(name, "runtime.bgscavenge"):
				ch.gcBackground = true
			}
			prev := callee
			callee = name
			if ch.fn != "" || libraryFrame(name, ln.Function.Filename) {
				continue
			}
			agent := agentOf(name)
			if agent != "" && prev != "" && methodOf(prev) == methodOf(name) {
				continue // a wrapper forwarding the call
			}
			ch.fn, ch.pkg = name, packageOf(name, ln.Function.Filename)
			switch {
			case agent != "":
				ch.origin = agent
			case known != nil && !known(ch.pkg):
				ch.origin = OriginNewCode
			default:
				ch.origin = OriginApplication
			}
		}
	}
	if ch.fn == "" {
		ch.origin = originOf(locs, thread)
		ch.allocates = false
	}
	return ch
}

// agentOf returns the origin of function name when it is an agent's known
// code (OriginAgent and its prefix), and "" otherwise.
func agentOf(name string) string {
	for _, p := range agentPrefixes {
		if strings.HasPrefix(name, p) {
			return OriginAgent + strings.TrimRight(p, "./")
		}
	}
	return ""
}

// javaLibraries prefix the JDK's own classes.
var javaLibraries = []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "java/", "javax/", "jdk/", "sun/", "com/sun/"}

// libraryFrame reports whether the function name in module is code that
// works for its caller: the kernel, a runtime or a system library (native
// frames, libjvm, libc, libpython, "[unknown]"), Go's standard library
// (an import path whose first element has no dot, other than package
// main), the JDK's classes, or Python's standard library (a file under
// lib/python3 outside site-packages).
func libraryFrame(name, module string) bool {
	switch {
	case (profile.Frame{Module: module}).Kernel():
		return true
	case module == "[java]":
		return javaLibrary(name)
	case strings.HasPrefix(name, "["), strings.HasPrefix(module, "["):
		return true // native code, the interpreter, "[unknown]"
	case strings.HasPrefix(module, "lib") && strings.Contains(module, ".so"):
		return true
	case strings.Contains(module, "/lib/python3"):
		return !strings.Contains(module, "-packages/")
	case strings.HasSuffix(module, ".py"):
		return false
	case javaLibrary(name):
		return true
	}
	// Go: "net/http.(*conn).serve", "sync.(*Mutex).Lock", "slices.Sort[...]".
	n := name
	if i := strings.IndexByte(n, '['); i >= 0 {
		n = n[:i]
	}
	first, _, hasPath := strings.Cut(n, "/")
	if !hasPath {
		var ok bool
		if first, _, ok = strings.Cut(n, "."); !ok {
			return false // a C function
		}
	}
	return slices.Contains(goStd, first)
}

// goStd are the first elements of the Go standard library's import paths
// (go list std), the runtime's among them; an application's module path
// may have no dot, so a name alone does not tell.
var goStd = []string{"archive", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto", "database", "debug",
	"embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash", "html", "image", "index", "internal", "io", "iter",
	"log", "maps", "math", "mime", "net", "os", "path", "plugin", "reflect", "regexp", "runtime", "slices", "sort", "strconv",
	"strings", "structs", "sync", "syscall", "testing", "text", "time", "unicode", "unique", "unsafe", "vendor", "weak",
	"type:"}

// javaLibrary reports whether name is a JDK class's method.
func javaLibrary(name string) bool {
	for _, p := range javaLibraries {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// methodOf returns the name of the method or function name is, without
// its receiver, package, module or signature: "RoundTrip" for
// "net/http.(*Transport).RoundTrip", "wsgi_app" for "flask.app:wsgi_app",
// in lower case (Go's unexported serveHTTP forwards to ServeHTTP).
func methodOf(name string) string {
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i] // Go's type parameters
	}
	if i := strings.IndexByte(name, '('); i > 0 && !strings.HasPrefix(name[i:], "(*") {
		name = name[:i] // a Java signature
	}
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		name = name[i+1:]
	}
	return strings.ToLower(name)
}
