// The server runs on Linux only: its event loops are epoll, its syscalls Glibc's. Every server target depends on
// this one, so on any other system the build stops here, once, with what to do instead; the client library
// (TabStoreClient) depends on none of them and builds everywhere.
#if !os(Linux)
    #error(
        "The TabStore server builds on Linux only (epoll, Glibc). On macOS, run the server in the container: docker build -t tabstore . && docker run -p 8080:8080 -v tabstore-data:/data tabstore (README, \"Run it\"). TabStoreClient builds here: swift build --target TabStoreClient"
    )
#endif
