#!/usr/bin/env python3
"""Change-feed benchmarks against a running tab-server (issue 15 targets), driven by bench/run.

  feed.py hold PORT PID TOKENS PREFIX N
      Opens N change-feed streams (one per user from TOKENS, "userId token" lines; N at most their count)
      and reads each one's first event; then, with all of them open, times 1,000 fresh GETs of a
      customization on new connections. Prints the server's RSS before and after and the GET p50/p99.
      Targets: 10,000 streams in at most 128 MB RSS, fresh GET p99 under 5 ms.

  feed.py fanout PORT TOKENS PREFIX USERS DEVICES ROUNDS
      Opens DEVICES streams for each of USERS users; each round PATCHes every user at once (a thread per
      user) and measures, per stream, the time from sending the PATCH to reading its event, and from the
      PATCH's answer to its events (an event may arrive before the answer: 0 then). Prints p50/p99 of both.
      Target: 100 users with 4 devices each, p99 at most 50 ms.

Each prints one line `FEED {json}`. Nothing here asserts; bench/run reports the numbers next to the targets.
"""
import json, selectors, socket, sys, time

# Alternating after a warm-up that sets the first: every measured PATCH changes something (a PATCH that
# changes nothing makes no revision, so no event).
PATCHES = [
    '{"operations":[{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"visible"}]}',
    '{"operations":[{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"hidden"}]}',
]


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def load_users(path, count):
    users = []
    for line in open(path):
        parts = line.split()
        if len(parts) == 2:
            users.append((parts[0], parts[1]))
        if len(users) == count:
            break
    return users


def open_stream(port, prefix, user, token):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {prefix}{user}/customization/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    return s


def read_until(s, marker, timeout=10.0, buffer=b""):
    """Reads from a blocking socket until `marker` is in what was read; returns (found, rest after marker)."""
    s.settimeout(timeout)
    while marker not in buffer:
        chunk = s.recv(65536)
        if not chunk:
            return False, buffer
        buffer += chunk
    index = buffer.index(marker) + len(marker)
    return True, buffer[index:]


def fresh_get(port, path, token):
    started = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n".encode())
    ok, _ = read_until(s, b"\r\n\r\n", timeout=5)
    data = b""
    while True:  # read to the end (Connection: close)
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return ok, (time.perf_counter() - started) * 1000


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else 0.0


def hold(port, pid, tokens, prefix, count):
    users = load_users(tokens, count)
    before = rss_kb(pid)
    streams = [open_stream(port, prefix, user, token) for user, token in users]
    opened = sum(1 for s in streams if read_until(s, b"event: customization")[0])
    time.sleep(1)
    after = rss_kb(pid)
    latencies = []
    failures = 0
    for i in range(1000):
        user, token = users[i % len(users)]
        ok, ms = fresh_get(port, f"{prefix}{user}/customization", token)
        latencies.append(ms)
        failures += 0 if ok else 1
    print("FEED " + json.dumps({
        "scenario": "hold", "streams": len(streams), "firstEvents": opened, "rssBeforeMB": round(before / 1024, 1),
        "rssAfterMB": round(after / 1024, 1), "bytesPerStream": (after - before) * 1024 // max(len(streams), 1),
        "getP50ms": round(percentile(latencies, 50), 2), "getP99ms": round(percentile(latencies, 99), 2), "getFailures": failures}))
    for s in streams:
        s.close()


def fanout(port, tokens, prefix, user_count, devices, rounds):
    """One thread, one selector: the PATCHes are sent and their answers and events read by the same loop, so
    the times are the server's, not a client's thread scheduling."""
    users = load_users(tokens, user_count)
    selector = selectors.DefaultSelector()
    streams = {}  # socket -> [user index, buffer]
    for index, (user, token) in enumerate(users):
        for _ in range(devices):
            s = open_stream(port, prefix, user, token)
            found, rest = read_until(s, b"event: customization")  # the first event
            found, rest = read_until(s, b"\n\n", buffer=rest)
            s.setblocking(False)
            streams[s] = [index, rest]
            selector.register(s, selectors.EVENT_READ, ("stream", s))

    def send_patch(index, body):
        user, token = users[index]
        s = socket.create_connection(("127.0.0.1", port))
        payload = body.encode()
        s.sendall(f"PATCH {prefix}{user}/customization HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        return s

    def drain_streams(seconds):
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for key, _ in selector.select(timeout=0.1):
                try:
                    key.data[1].recv(65536)
                except BlockingIOError:
                    pass
        for entry in streams.values():
            entry[1] = b""

    # Warm-up: every user's bell to the first state; its events (for users not there yet) are dropped.
    for index in range(len(users)):
        s = send_patch(index, PATCHES[0])
        read_until(s, b"\r\n\r\n")
        s.close()
    drain_streams(1.0)
    latencies, after_answer, missing = [], [], 0
    for round_number in range(rounds):
        body = PATCHES[(round_number + 1) % len(PATCHES)]
        sent_at, answered_at, arrivals = {}, {}, []
        for index in range(len(users)):
            s = send_patch(index, body)
            sent_at[index] = time.perf_counter()
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ, ("patch", index))
        patches_open, expected = len(users), len(users) * devices
        deadline = time.perf_counter() + 10
        while (patches_open or len(arrivals) < expected) and time.perf_counter() < deadline:
            for key, _ in selector.select(timeout=0.5):
                now = time.perf_counter()
                kind, ref = key.data
                if kind == "patch":
                    try:
                        chunk = key.fileobj.recv(65536)
                    except BlockingIOError:
                        continue
                    answered_at.setdefault(ref, now)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
                        patches_open -= 1
                    continue
                entry = streams[ref]
                try:
                    entry[1] += ref.recv(65536)
                except BlockingIOError:
                    continue
                while b"event: customization" in entry[1] and b"\n\n" in entry[1][entry[1].index(b"event: customization"):]:
                    start = entry[1].index(b"event: customization")
                    entry[1] = entry[1][entry[1].index(b"\n\n", start) + 2:]
                    arrivals.append((entry[0], now))
        missing += expected - len(arrivals)
        for index, arrival in arrivals:
            latencies.append((arrival - sent_at[index]) * 1000)
            after_answer.append(max(0.0, (arrival - answered_at.get(index, arrival)) * 1000))
    print("FEED " + json.dumps({
        "scenario": "fanout", "users": len(users), "devicesPerUser": devices, "rounds": rounds, "deliveries": len(latencies),
        "missing": missing, "p50ms": round(percentile(latencies, 50), 2), "p99ms": round(percentile(latencies, 99), 2),
        "afterAnswerP50ms": round(percentile(after_answer, 50), 2), "afterAnswerP99ms": round(percentile(after_answer, 99), 2)}))
    for s in streams:
        s.close()


def main():
    command = sys.argv[1]
    if command == "hold":
        hold(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]))
    elif command == "fanout":
        fanout(int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
