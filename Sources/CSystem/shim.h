#ifndef TABSTORE_CSYSTEM_SHIM_H
#define TABSTORE_CSYSTEM_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stdint.h>
#include <stddef.h>

// accept4 is declared by <sys/socket.h> only under _GNU_SOURCE, which would redefine types Glibc's
// Swift module already has; declare just the function (Linux, glibc >= 2.10).
struct sockaddr;
extern int accept4(int sockfd, struct sockaddr *addr, unsigned int *addrlen, int flags);
#define TABSTORE_SOCK_NONBLOCK 04000     /* == O_NONBLOCK */
#define TABSTORE_SOCK_CLOEXEC 02000000   /* == O_CLOEXEC */

// epoll_event is packed on x86_64; these wrappers keep Swift away from its layout.
static inline int tabstore_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int tabstore_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

/// Waits for events; writes up to `max` (events, data) pairs into the two arrays.
static inline int tabstore_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { events[i] = evs[i].events; data[i] = evs[i].data.u64; }
    return n;
}

static inline int tabstore_accept4(int fd) {
    return accept4(fd, NULL, NULL, TABSTORE_SOCK_NONBLOCK | TABSTORE_SOCK_CLOEXEC);
}

static inline int tabstore_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static const uint32_t TABSTORE_EPOLLIN = EPOLLIN;
static const uint32_t TABSTORE_EPOLLOUT = EPOLLOUT;
static const uint32_t TABSTORE_EPOLLERR = EPOLLERR;
static const uint32_t TABSTORE_EPOLLHUP = EPOLLHUP;
static const uint32_t TABSTORE_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t TABSTORE_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;
static const int TABSTORE_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int TABSTORE_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int TABSTORE_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
#endif
