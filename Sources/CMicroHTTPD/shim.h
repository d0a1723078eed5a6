#ifndef QUIRE_CMICROHTTPD_SHIM_H
#define QUIRE_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Typed wrappers for libmicrohttpd's variadic calls (MHD_start_daemon and its option list,
// MHD_get_daemon_info), which Swift cannot call directly. Each wrapper fixes the argument
// types MHD expects for the options Quire uses, so a wrong type is a compile error.

/// An MHD_OPTION_UNESCAPE_CALLBACK function: returns the length left in `s` after unescaping.
typedef size_t (*cmhd_unescape_callback)(void *cls, struct MHD_Connection *connection, char *s);

/// The daemon settings Quire passes as MHD options.
typedef struct {
    /// MHD_OPTION_SOCK_ADDR (IPv4 or IPv6; the port is in the address). Must not be NULL.
    const struct sockaddr *address;
    /// MHD_OPTION_CONNECTION_LIMIT (0: MHD's default).
    unsigned int connection_limit;
    /// MHD_OPTION_CONNECTION_TIMEOUT in seconds (0: none).
    unsigned int connection_timeout;
    /// MHD_OPTION_CONNECTION_MEMORY_LIMIT in bytes (bounds request line and headers).
    size_t connection_memory_limit;
    /// MHD_OPTION_THREAD_POOL_SIZE (0 or 1: none; not with thread-per-connection).
    unsigned int thread_pool_size;
    /// MHD_OPTION_UNESCAPE_CALLBACK (NULL: MHD's lenient "%HH" decoder).
    cmhd_unescape_callback unescape;
    void *unescape_cls;
} cmhd_daemon_options;

/// MHD_start_daemon with the options above; NULL when the daemon could not start (errno set).
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, MHD_AccessHandlerCallback handler,
                                                   void *handler_cls, const cmhd_daemon_options *options) {
    struct MHD_OptionItem items[8];
    int n = 0;
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)options->address};
    if (options->connection_limit)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)options->connection_limit, NULL};
    if (options->connection_timeout)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)options->connection_timeout, NULL};
    if (options->connection_memory_limit)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                             (intptr_t)options->connection_memory_limit, NULL};
    if (options->thread_pool_size > 1)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)options->thread_pool_size, NULL};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    if (options->unescape)
        return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, items,
                                MHD_OPTION_UNESCAPE_CALLBACK, options->unescape, options->unescape_cls,
                                MHD_OPTION_END);
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, items, MHD_OPTION_END);
}

/// The port the daemon listens on (MHD_DAEMON_INFO_BIND_PORT), 0 when unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// The connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD), -1 when unknown.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

#endif
