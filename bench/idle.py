#!/usr/bin/env python3
"""Open N idle keep-alive connections to a server (one request each first), then print the server's RSS."""
import socket, sys, time

def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

def main():
    port, pid, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    before = rss_kb(pid)
    sockets = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
        sockets.append(s)
    answered = 0
    for s in sockets:
        s.settimeout(10)
        if s.recv(4096).startswith(b"HTTP/1.1 200"):
            answered += 1
    time.sleep(1)
    after = rss_kb(pid)
    # A fresh client is still served promptly with all of them open.
    probe = socket.create_connection(("127.0.0.1", port))
    started = time.time()
    probe.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
    ok = probe.recv(4096).startswith(b"HTTP/1.1 200")
    probe_ms = (time.time() - started) * 1000
    print(f'IDLE {{"connections":{count},"answered":{answered},"rssBeforeKB":{before},"rssAfterKB":{after},'
          f'"perConnectionBytes":{(after - before) * 1024 // max(count, 1)},"probeOK":{str(ok).lower()},"probeMs":{probe_ms:.2f}}}')
    for s in sockets:
        s.close()

if __name__ == "__main__":
    main()
