// tollstats.cjs publishes a Node.js process's V8 heap, GC and event-loop
// figures for toll to read from outside the process, as a JVM publishes
// its hsperfdata: load it with `node --require /path/to/tollstats.cjs` or
// NODE_OPTIONS="--require /path/to/tollstats.cjs".
//
// Every 250 ms (TOLL_NODE_STATS_MS) it writes one line of JSON to
// /tmp/toll-node-<uid>/<pid> (through a temporary file and a rename, so a
// reader never sees half of it) and removes the file when the process
// exits; as it starts, it removes those of processes that are gone. What it costs the process: one timer wake-up per period that does
// not keep the process alive, a few microseconds of V8 calls
// (process.memoryUsage, performance.eventLoopUtilization) and a write of
// about 200 bytes; and a PerformanceObserver of garbage collections, one
// entry per collection.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { PerformanceObserver, performance } = require('node:perf_hooks');

const dir = path.join('/tmp', 'toll-node-' + (process.getuid ? process.getuid() : 0));
const file = path.join(dir, String(process.pid));
const tmp = file + '.tmp';
const period = Math.max(10, Number(process.env.TOLL_NODE_STATS_MS) || 250);

let gcCount = 0;
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++;
    gcMs += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

function write() {
  const m = process.memoryUsage();
  const elu = performance.eventLoopUtilization();
  const line = JSON.stringify({
    heap_used: m.heapUsed,
    heap_total: m.heapTotal,
    external: m.external,
    array_buffers: m.arrayBuffers,
    gc_count: gcCount,
    gc_time: gcMs / 1000,
    loop_busy: elu.active / 1000,
    loop_idle: elu.idle / 1000,
  }) + '\n';
  try {
    fs.writeFileSync(tmp, line, { mode: 0o644 });
    fs.renameSync(tmp, file);
  } catch {
    // /tmp full or removed: toll reads nothing; the process is unharmed.
  }
}

// Removes the files of processes that are gone: a process ended by a
// signal (as toll stops services) never runs its exit handler.
function sweep() {
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(name.replace(/\.tmp$/, ''));
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code === 'ESRCH') {
        try { fs.unlinkSync(path.join(dir, name)); } catch { /* raced */ }
      }
    }
  }
}

try {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  sweep();
  write();
  setInterval(write, period).unref();
  process.on('exit', () => {
    try { fs.unlinkSync(file); } catch { /* already gone */ }
  });
} catch {
  // No /tmp to write to: toll finds no Node.js process to read.
}
