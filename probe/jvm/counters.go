package jvm

import (
	"math/bits"
	"strconv"
	"time"
)

// Counters are the figures toll reports, read in one call.
type Counters struct {
	// HeapUsed and HeapCommitted are the heap's used and committed bytes:
	// the sums over Generations (a "perm" generation, of JDK 7, is left
	// out). HeapUsed is jstat -gc's S0U+S1U+EU+OU; HeapCommitted is
	// jstat -gccapacity's NGC+OGC. jstat -gc's S0C+S1C+EC+OC can be a
	// little less: ParallelGC may leave part of the committed young
	// generation to neither eden nor a survivor.
	HeapUsed, HeapCommitted uint64
	// Generations are the heap's generations (sun.gc.generation.N): for
	// G1 "young" and "old", for Serial and Parallel "new" and "old".
	Generations []Generation
	// MetaspaceUsed and MetaspaceCommitted are sun.gc.metaspace.used and
	// .capacity, in bytes (jstat's MU and MC). The JVM updates them at GCs
	// only: they are 0 before the first.
	MetaspaceUsed, MetaspaceCommitted uint64
	// ClassSpaceUsed and ClassSpaceCommitted are the compressed class
	// space's, in bytes (sun.gc.compressedclassspace.*; jstat's CCSU and
	// CCSC), part of the metaspace figures. Also updated at GCs only.
	ClassSpaceUsed, ClassSpaceCommitted uint64
	// ClassesLoaded and ClassesUnloaded count classes since start,
	// including those from the CDS archive (java.cls.loadedClasses +
	// java.cls.sharedLoadedClasses; jstat -class's Loaded and Unloaded).
	ClassesLoaded, ClassesUnloaded int64
	// Collectors are the GC's collectors (sun.gc.collector.N): for G1
	// young, full and concurrent-cycle pauses (jstat's YGC, FGC, CGC).
	Collectors []Collector
	// GCCount and GCTime sum Collectors (GCTime is jstat's GCT).
	GCCount int64
	GCTime  time.Duration
	// Threads, PeakThreads and DaemonThreads are live Java threads
	// (java.threads.live, .livePeak, .daemon).
	Threads, PeakThreads, DaemonThreads int64
	// VMStart is when the JVM began to start (sun.rt.createVmBeginTime).
	VMStart time.Time
	// VMInitDone is when it finished initializing (sun.rt.vmInitDoneTime),
	// before main runs.
	VMInitDone time.Time
	// Uptime is the JVM's elapsed time (sun.os.hrt.ticks), sampled by the
	// JVM every 50 ms.
	Uptime time.Duration
	// JITCompiles counts the methods the JIT compilers have compiled since
	// start, standard and on-stack replacement (sun.ci.totalCompiles;
	// jstat -compiler's Compiled).
	JITCompiles int64
	// JITTime is the time the JIT compilers' threads have spent compiling
	// (java.ci.totalTime; jstat -compiler's Time). A JVM still compiling
	// under steady load has not finished warming up.
	JITTime time.Duration
}

// Generation is one generation of the heap.
type Generation struct {
	// Name is the JVM's: "young", "new", "old".
	Name string
	// Used is the sum of its spaces' used bytes.
	Used uint64
	// Committed is its committed bytes (sun.gc.generation.N.capacity).
	Committed uint64
}

// Collector is one of the GC's collectors.
type Collector struct {
	// Name is the JVM's, e.g. "G1 young collection pauses".
	Name string
	// Count is how many times it ran (jstat's YGC, FGC, CGC).
	Count int64
	// Time is the time it took, in all (jstat's YGCT, FGCT, CGCT).
	Time time.Duration
}

// plan holds the data offsets of the entries Counters reads, -1 for one
// absent, so that a read is loads at known offsets.
type plan struct {
	gens  []genPlan
	colls []collPlan

	metaUsed, metaCap, ccsUsed, ccsCap int
	loaded, sharedLoaded               int
	unloaded, sharedUnloaded           int
	threads, peak, daemon              int
	vmStart, vmInit, ticks, freq       int
	jitCompiles, jitTime               int
}

type genPlan struct {
	name      string
	heap      bool // counts in the heap sums
	capacity  int
	used, cap []int // per space
}

type collPlan struct {
	name        string
	count, time int
}

// Counters reads the figures of Counters. It fails only if the Reader is
// closed or the JVM has added a malformed entry; a figure the JVM does
// not publish is zero.
func (r *Reader) Counters() (Counters, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refresh(); err != nil {
		return Counters{}, err
	}
	if r.plan == nil || r.planned != len(r.entries) {
		r.plan, r.planned = r.makePlan(), len(r.entries)
	}
	p := r.plan
	var c Counters

	c.Generations = make([]Generation, len(p.gens))
	for i, g := range p.gens {
		gen := Generation{Name: g.name}
		var spaceCap uint64
		for j := range g.used {
			gen.Used += r.bytes(g.used[j])
			spaceCap += r.bytes(g.cap[j])
		}
		if g.capacity >= 0 {
			gen.Committed = r.bytes(g.capacity)
		} else {
			gen.Committed = spaceCap
		}
		c.Generations[i] = gen
		if g.heap {
			c.HeapUsed += gen.Used
			c.HeapCommitted += gen.Committed
		}
	}

	c.MetaspaceUsed, c.MetaspaceCommitted = r.bytes(p.metaUsed), r.bytes(p.metaCap)
	c.ClassSpaceUsed, c.ClassSpaceCommitted = r.bytes(p.ccsUsed), r.bytes(p.ccsCap)
	c.ClassesLoaded = r.value(p.loaded) + r.value(p.sharedLoaded)
	c.ClassesUnloaded = r.value(p.unloaded) + r.value(p.sharedUnloaded)

	freq := r.value(p.freq)
	c.Collectors = make([]Collector, len(p.colls))
	for i, cp := range p.colls {
		col := Collector{Name: cp.name, Count: r.value(cp.count), Time: ticks(r.value(cp.time), freq)}
		c.Collectors[i] = col
		c.GCCount += col.Count
		c.GCTime += col.Time
	}

	c.Threads, c.PeakThreads, c.DaemonThreads = r.value(p.threads), r.value(p.peak), r.value(p.daemon)
	if ms := r.value(p.vmStart); ms > 0 {
		c.VMStart = time.UnixMilli(ms)
	}
	if ms := r.value(p.vmInit); ms > 0 {
		c.VMInitDone = time.UnixMilli(ms)
	}
	c.Uptime = ticks(r.value(p.ticks), freq)
	c.JITCompiles, c.JITTime = r.value(p.jitCompiles), ticks(r.value(p.jitTime), freq)
	return c, nil
}

// value returns the long at data offset off, or 0 for -1.
func (r *Reader) value(off int) int64 {
	if off < 0 {
		return 0
	}
	return r.load64(off)
}

// bytes returns the long at off as a byte count, never negative.
func (r *Reader) bytes(off int) uint64 {
	return uint64(max(r.value(off), 0))
}

// ticks converts t ticks at freq ticks per second to a duration, without
// overflow for any t a JVM can count.
func ticks(t, freq int64) time.Duration {
	if t <= 0 || freq <= 0 {
		return 0
	}
	sec, rem := uint64(t/freq), uint64(t%freq)
	hi, lo := bits.Mul64(rem, uint64(time.Second))
	frac, _ := bits.Div64(hi, lo, uint64(freq)) // hi < freq since rem < freq
	return time.Duration(sec)*time.Second + time.Duration(frac)
}

// makePlan resolves the offsets of the entries Counters reads. Call with
// r.mu held.
func (r *Reader) makePlan() *plan {
	long := func(name string) int {
		i, ok := r.byName[name]
		if !ok || r.entries[i].typ != typeLong || r.entries[i].vlen != 0 {
			return -1
		}
		return r.entries[i].data
	}
	str := func(name string) (string, bool) {
		i, ok := r.byName[name]
		if !ok {
			return "", false
		}
		return r.str(r.entries[i])
	}
	p := &plan{
		metaUsed:       long("sun.gc.metaspace.used"),
		metaCap:        long("sun.gc.metaspace.capacity"),
		ccsUsed:        long("sun.gc.compressedclassspace.used"),
		ccsCap:         long("sun.gc.compressedclassspace.capacity"),
		loaded:         long("java.cls.loadedClasses"),
		sharedLoaded:   long("java.cls.sharedLoadedClasses"),
		unloaded:       long("java.cls.unloadedClasses"),
		sharedUnloaded: long("java.cls.sharedUnloadedClasses"),
		threads:        long("java.threads.live"),
		peak:           long("java.threads.livePeak"),
		daemon:         long("java.threads.daemon"),
		vmStart:        long("sun.rt.createVmBeginTime"),
		vmInit:         long("sun.rt.vmInitDoneTime"),
		ticks:          long("sun.os.hrt.ticks"),
		freq:           long("sun.os.hrt.frequency"),
		jitCompiles:    long("sun.ci.totalCompiles"),
		jitTime:        long("java.ci.totalTime"),
	}
	// Names of generations, spaces and collectors are constants, read once.
	for n := 0; ; n++ {
		prefix := "sun.gc.generation." + strconv.Itoa(n) + "."
		name, ok := str(prefix + "name")
		if !ok {
			break
		}
		g := genPlan{name: name, heap: name != "perm", capacity: long(prefix + "capacity")}
		for s := 0; ; s++ {
			sp := prefix + "space." + strconv.Itoa(s) + "."
			used := long(sp + "used")
			if used < 0 {
				break
			}
			g.used = append(g.used, used)
			g.cap = append(g.cap, long(sp+"capacity"))
		}
		p.gens = append(p.gens, g)
	}
	for n := 0; ; n++ {
		prefix := "sun.gc.collector." + strconv.Itoa(n) + "."
		name, ok := str(prefix + "name")
		if !ok {
			break
		}
		p.colls = append(p.colls, collPlan{name: name, count: long(prefix + "invocations"), time: long(prefix + "time")})
	}
	return p
}
