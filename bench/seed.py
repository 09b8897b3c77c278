#!/usr/bin/env python3
"""Seed a running TabStore for the benchmark.

Creates the app `bench.app` with examples/schema.json through the API, makes 64 customization
variants through the API (so every stored document is one the service itself wrote and validated),
then bulk-inserts N users' rows straight into the SQLite file (one transaction per 50,000 rows, so a
million users take about a minute instead of hours), and writes one JWT per sampled user.
"""
import argparse, base64, hashlib, hmac, json, os, random, sqlite3, time, urllib.request

def call(url, method, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", "Bearer " + token)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"null")

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def jwt(secret, app, user, ttl=7200):
    now = int(time.time())
    header = b64(b'{"alg":"HS256","typ":"JWT"}')
    payload = b64(json.dumps({"sub": user, "aud": app, "iat": now, "exp": now + ttl}, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"

OPERATIONS = [
    {"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"},
    {"op": "setTabBarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"},
    {"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0},
    {"op": "setSectionExpanded", "section": "com.myApp.categories", "expanded": False},
    {"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.bell"]},
    {"op": "setTabOrder", "section": "com.myApp.playlists", "tabOrder": ["com.myApp.playlist.running", "com.myApp.playlist.all"]},
]

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--users", type=int, required=True)
    parser.add_argument("--tokens", type=int, default=10000)
    parser.add_argument("--out", required=True, help="folder for tokens.txt and document.json")
    args = parser.parse_args()
    admin = open(os.path.join(args.data_dir, "admin-token")).read().strip()
    app = "bench.app"
    created = call(f"{args.url}/v1/apps", "POST", admin, {"id": app, "name": "Benchmark"})
    secret = created["signingSecret"]
    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "examples", "schema.json")))
    call(f"{args.url}/v1/apps/{app}/schema", "PUT", admin, schema)
    rng = random.Random(7)
    variants = []
    for v in range(64):
        user = f"variant-{v}"
        ops = [op for op in OPERATIONS if rng.random() < 0.5] or OPERATIONS[:1]
        doc = call(f"{args.url}/v1/apps/{app}/users/{user}/customization", "PATCH", jwt(secret, app, user), {"operations": ops})
        variants.append((user, doc))
    with open(os.path.join(args.out, "document.json"), "w") as f:
        f.write(json.dumps(variants[0][1], separators=(",", ":")))
    started = time.time()
    db = sqlite3.connect(os.path.join(args.data_dir, "tabstore.sqlite"), timeout=30)
    db.execute("PRAGMA synchronous=OFF")
    texts = [(json.dumps(doc, separators=(",", ":")), user, doc["revision"], doc["schemaVersion"], doc["updatedAt"]) for user, doc in variants]
    batch = []
    for i in range(args.users):
        text, variant_user, revision, schema_version, updated = texts[i % len(texts)]
        user = f"user-{i}"
        batch.append((app, user, revision, schema_version, text.replace(f'"userId":"{variant_user}"', f'"userId":"{user}"', 1).encode(), updated))
        if len(batch) == 50000 or i == args.users - 1:
            db.execute("BEGIN")
            db.executemany("INSERT OR REPLACE INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES (?,?,?,?,?,?)", batch)
            db.execute("COMMIT")
            batch = []
    db.close()
    sample = rng.sample(range(args.users), min(args.tokens, args.users))
    with open(os.path.join(args.out, "tokens.txt"), "w") as f:
        for i in sample:
            f.write(f"user-{i} {jwt(secret, app, f'user-{i}')}\n")
    print(json.dumps({"users": args.users, "insertSeconds": round(time.time() - started, 1), "tokens": len(sample)}))

if __name__ == "__main__":
    main()
