"""A small Flask consumer for toll's Python example.

GET /consumer burns some CPU (WORK math.log calls), then calls the provider
three times with requests, as toll's own Go consumer does, and answers JSON.
It runs under waitress, a multi-threaded WSGI server (no fork, so
opentelemetry-instrument's exporter thread survives). Settings come from the
environment:

  PROVIDER_URL  the provider to call (toll app provider's /provider)
  WORK          math.log iterations per request (default 20000)
  CALLS         downstream calls per request (default 3)
"""

import math
import os

import requests
from flask import Flask, jsonify

app = Flask(__name__)

PROVIDER_URL = os.environ.get("PROVIDER_URL", "http://127.0.0.1:8081/provider")
WORK = int(os.environ.get("WORK", "20000"))
CALLS = int(os.environ.get("CALLS", "3"))

# One session per thread would be ideal; a shared Session is thread-safe
# enough for keep-alive GETs and keeps the example short.
session = requests.Session()


def burn(n: int) -> float:
    x = 0.0
    for i in range(1, n + 1):
        x += math.log(i)
    return x


@app.get("/health")
def health():
    return "ok"


@app.get("/consumer")
def consumer():
    x = burn(WORK)
    sizes = []
    for _ in range(CALLS):
        r = session.get(PROVIDER_URL, timeout=10)
        r.raise_for_status()
        sizes.append(len(r.content))
    return jsonify(work=x, calls=CALLS, bytes=sum(sizes))
