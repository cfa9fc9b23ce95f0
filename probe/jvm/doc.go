// Package jvm reads a running HotSpot JVM's performance counters from its
// hsperfdata file, the memory-mapped file that jstat reads
// (/tmp/hsperfdata_<user>/<pid>). Reading it needs no attach, runs no code
// in the JVM and brings it to no safepoint, so sampling it every second
// costs the measured application nothing.
//
// Open maps the file read-only and indexes its entries once; Counters then
// reads the figures toll reports (heap, metaspace, classes, collectors,
// threads, uptime) at known offsets: about 0.2 µs and two allocations a
// call on a 2-core VM (BenchmarkCounters; Open, once, about 50 µs). Entries
// the JVM adds later are indexed incrementally when the file's entry
// count grows.
//
// The figures agree with jstat's, which reads the same file: to jstat's
// rounding (0.1 KiB, 1 ms), and exactly for counts (TestLive, with G1,
// Serial and Parallel collectors).
//
// Things the caller should know:
//
//   - Some counters are refreshed by the JVM only at a GC, not as memory is
//     used: metaspace and compressed class space always (they read 0 until
//     the first GC), and G1's eden and old figures largely. jstat shows the
//     same values, since it reads the same file.
//   - sun.os.hrt.ticks (Uptime) is sampled by the JVM every
//     PerfDataSamplingInterval (50 ms by default).
//   - A JVM started with -XX:-UsePerfData or -XX:+PerfDisableSharedMem has
//     no file. The file is created mode 0600 by the JVM's user, so the
//     reader needs that user or root.
//   - When the JVM exits it unlinks the file; an open Reader keeps its
//     mapping and goes on returning the last values. Watch the process to
//     know when it has gone.
//   - A JVM in another mount namespace (a container) is out of scope.
//
// The format: a 32-byte prologue (magic 0xcafec0c0 stored big-endian, byte
// order, major and minor version, accessible flag, used, overflow,
// modification time stamp, entry offset, number of entries) followed by
// entries, each a 20-byte header (entry length, name offset, vector
// length, data type, flags, data units, data variability, data offset), a
// NUL-terminated name and the data: a long ('J') or a byte vector ('B',
// used for strings). Only version 2 exists in current JDKs.
package jvm
