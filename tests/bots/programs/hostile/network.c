/* Tries the network: TCP to the port given (argv[1]) on 127.0.0.1, where the
 * test listens outside the sandbox, and to an outside address; UDP; a Unix
 * socket to a local service; the datagram and sequenced socket pairs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "hostile.h"

static const char *tcp(const char *address, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return outcome(fd);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, address, &to.sin_addr);
    return outcome(connect(fd, (struct sockaddr *)&to, sizeof to));
}

static void attack(char *info, size_t size) {
    int pair[2];
    report(info, size, "loopback", tcp("127.0.0.1", atoi(g_argv[1])));
    report(info, size, "outside", tcp("1.1.1.1", 80));
    report(info, size, "udp", outcome(socket(AF_INET, SOCK_DGRAM, 0)));
    report(info, size, "ipv6", outcome(socket(AF_INET6, SOCK_STREAM, 0)));
    report(info, size, "netlink", outcome(socket(AF_NETLINK, SOCK_RAW, 0)));
    int unix_socket = socket(AF_UNIX, SOCK_STREAM, 0);
    report(info, size, "unix", outcome(unix_socket));
    report(info, size, "dgram_pair", outcome(socketpair(AF_UNIX, SOCK_DGRAM, 0, pair)));
    report(info, size, "seqpacket_pair", outcome(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair)));
    report(info, size, "inet_pair", outcome(socketpair(AF_INET, SOCK_STREAM, 0, pair)));
}

static void again(char *info, size_t size) { (void)info; (void)size; }
