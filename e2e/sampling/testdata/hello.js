// A tiny Node.js HTTP service for toll's end-to-end tests: it answers every
// request with "hello", and with KEEP_KIB set keeps that many KiB of
// objects per request in a bounded cache (an agent's buffers, say), so its
// V8 heap is larger than the baseline's.
'use strict';
const http = require('node:http');

const keepKiB = Number(process.env.KEEP_KIB) || 0;
const cache = [];
const cacheMax = 4000;

http.createServer((req, res) => {
  if (keepKiB > 0) {
    cache.push(Array.from({ length: keepKiB * 16 }, (_, i) => ({ i })));
    if (cache.length > cacheMax) cache.shift();
  }
  // Garbage each request, so that collections happen in every variant.
  JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i, s: 'x' + i })));
  res.end('hello\n');
}).listen(Number(process.argv[2]), '127.0.0.1');
