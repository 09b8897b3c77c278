#!/usr/bin/env python3
"""Issue 27: one user's history reads must not slow another user's writes.

  bench/history.py BINARY [--seconds S] [--readers "8 64"] [--revisions 100] [--flag=value ...]

Starts BINARY (`tab-server`) on a free port over a temporary data directory (`--durability full
--group-commit true --access-log false`, every TAB_SERVER_* variable cleared; extra `--flag=value` arguments
go to the server), makes REVISIONS revisions of about 48 KB for user A (a PUT each, one more dynamic tab
each time), then for each reader count R (0 first: the unloaded baseline) runs R threads that GET A's
`history?limit=100` over and over on keep-alive connections, while another process PATCHes user B one
request at a time (a fresh value each, so every PATCH is a write) for S seconds and times each. Readers are
hostile: on 429 they retry after 10 ms (never the 1 s Retry-After asks for). Prints one line per phase and
`HISTORY {json}` at the end. Nothing here asserts.
"""
import http.client, json, multiprocessing, os, shutil, socket, subprocess, sys, tempfile, threading, time

from seed import jwt  # bench/seed.py: the HS256 user token the other benchmarks use

APP = "bench.history"


def call(conn, method, path, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": "Bearer " + token}
    if data is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    return response.status, payload


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else 0.0


def victim(port, token, path, seconds, out):
    """PATCHes user B one at a time for `seconds`; puts the latencies (ms) on `out`."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    latencies, errors, index = [], 0, 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        index += 1
        body = {"operations": [{"op": "setDynamicTabs", "section": "com.myApp.playlists",
                                "tabs": [{"id": "com.myApp.playlist.running", "title": f"Run {index}", "systemImage": "figure.run"}]}]}
        started = time.perf_counter()
        status, _ = call(conn, "PATCH", path, token, body)
        latencies.append((time.perf_counter() - started) * 1000)
        if status != 200:
            errors += 1
        time.sleep(0.02)
    out.put((latencies, errors))


def reader(port, path, token, stop, counts, lock):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    ok = refused = other = 0
    while not stop.is_set():
        try:
            status, _ = call(conn, "GET", path, token)
        except (OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            other += 1
            continue
        if status == 200:
            ok += 1
        elif status == 429 or status == 503:
            refused += 1
            time.sleep(0.01)
        else:
            other += 1
    with lock:
        counts["ok"] += ok
        counts["refused"] += refused
        counts["other"] += other


def main():
    args = sys.argv[1:]
    binary = args.pop(0)
    seconds, readers, revisions, extra = 10.0, [8, 64], 100, []
    while args:
        arg = args.pop(0)
        if arg == "--seconds":
            seconds = float(args.pop(0))
        elif arg == "--readers":
            readers = [int(r) for r in args.pop(0).split()]
        elif arg == "--revisions":
            revisions = int(args.pop(0))
        else:
            extra.append(arg)
    work = tempfile.mkdtemp(prefix="tabstore-history-bench-")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAB_SERVER_")}
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(work, "data"), "--durability", "full",
                               "--group-commit", "true", "--access-log", "false"] + extra,
                              stdout=open(os.path.join(work, "server.log"), "w"), stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                if os.path.exists(os.path.join(work, "data", "admin-token")):
                    break
            except OSError:
                pass
            time.sleep(0.05)
        admin = open(os.path.join(work, "data", "admin-token")).read().strip()
        conn = http.client.HTTPConnection("127.0.0.1", port)
        status, body = call(conn, "POST", "/v1/apps", admin, {"id": APP, "name": "History benchmark"})
        secret = json.loads(body)["signingSecret"]
        schema = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "schema.json")))
        # Playlists A may hide (the example only lets them be reordered): that is what makes A's documents large.
        for item in schema["items"]:
            if item.get("id") == "com.myApp.playlists":
                item["dynamicTabs"].pop("customizationBehavior", None)
        call(conn, "PUT", f"/v1/apps/{APP}/schema", admin, schema)
        token_a, token_b = jwt(secret, APP, "user-a"), jwt(secret, APP, "user-b")
        path_a, path_b = f"/v1/apps/{APP}/users/user-a/customization", f"/v1/apps/{APP}/users/user-b/customization"
        sizes = []
        for revision in range(1, revisions + 1):
            # ~48 KB: 470 or 471 hidden dynamic tabs, alternating (so each PUT is a new revision).
            tabs = {f"com.myApp.playlist.{'x' * 16}-{i}": {"sidebarVisibility": "hidden"} for i in range(470 + revision % 2)}
            status, body = call(conn, "PUT", path_a, token_a, {"tabs": tabs})
            if status != 200:
                raise SystemExit(f"PUT {revision}: {status} {body[:200]!r}")
            sizes.append(len(body))
        call(conn, "PATCH", path_b, token_b, {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]})
        status, page = call(conn, "GET", path_a + "/history?limit=100", token_a)
        print(f"user A: {revisions} revisions, documents {min(sizes)}-{max(sizes)} bytes; one history page {len(page)} bytes ({status})", flush=True)
        results = {}
        for count in [0] + readers:
            stop, lock = threading.Event(), threading.Lock()
            counts = {"ok": 0, "refused": 0, "other": 0}
            threads = [threading.Thread(target=reader, args=(port, path_a + "/history?limit=100", token_a, stop, counts, lock)) for _ in range(count)]
            for t in threads:
                t.start()
            time.sleep(1.0 if count else 0)  # let the readers pile up
            out = multiprocessing.Queue()
            process = multiprocessing.Process(target=victim, args=(port, token_b, path_b, seconds, out))
            process.start()
            latencies, errors = out.get()
            process.join()
            stop.set()
            for t in threads:
                t.join()
            row = {"readers": count, "patches": len(latencies), "patchErrors": errors, "meanMs": round(sum(latencies) / max(1, len(latencies)), 2),
                   "p50Ms": round(percentile(latencies, 0.5), 2), "p99Ms": round(percentile(latencies, 0.99), 2),
                   "maxMs": round(max(latencies or [0]), 2), "historyOk": counts["ok"], "historyRefused": counts["refused"], "historyOther": counts["other"]}
            results[count] = row
            print(f"readers {count:3d}: PATCH mean {row['meanMs']} ms, p50 {row['p50Ms']}, p99 {row['p99Ms']}, max {row['maxMs']} "
                  f"({row['patches']} PATCHes, {errors} not 200); history 200: {counts['ok']}, 429/503: {counts['refused']}, other: {counts['other']}",
                  flush=True)
        print("HISTORY " + json.dumps(list(results.values())))
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
