# syntax=docker/dockerfile:1
# Build: Swift toolchain image; the binary links the Swift runtime statically.
FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev libssl-dev libpq-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The files the binary embeds (Sources/TabStoreAssets links to them): their only copies.
COPY openapi.yaml ./
COPY console ./console
# The manifest declares the test, fuzz and storage-benchmark targets; their folders must exist even though
# only tab-server is built.
COPY Tests ./Tests
COPY bench/storage ./bench/storage
RUN swift build -c release --product tab-server --static-swift-stdlib \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/tab-server" /out/tab-server

# Run: slim Debian with only the shared libraries the binary needs (SQLite, libcrypto, libpq, C++ runtime).
FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-0 libssl3 libpq5 libstdc++6 ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tabstore \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --shell /usr/sbin/nologin tabstore \
    && mkdir -p /data && chown 10001:10001 /data
COPY --from=build /out/tab-server /usr/local/bin/tab-server
ENV TAB_SERVER_HOST=0.0.0.0 \
    TAB_SERVER_PORT=8080 \
    TAB_SERVER_DATA_DIR=/data
VOLUME ["/data"]
USER 10001:10001
WORKDIR /data
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/tab-server", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/tab-server"]
CMD ["serve"]
