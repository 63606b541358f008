/* The smallest HTTP-over-unix-socket client a FROM-scratch test image can run: connect to the
   socket named by argv[1], send stdin, half-close, copy the answer to stdout. Busybox has none. */
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int copy(int from, int to) {
    char buf[65536];
    ssize_t n;
    while ((n = read(from, buf, sizeof buf)) > 0) {
        ssize_t done = 0;
        while (done < n) {
            ssize_t w = write(to, buf + done, (size_t)(n - done));
            if (w <= 0) return -1;
            done += w;
        }
    }
    return n < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 2 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) return 64;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, argv[1]);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return 2;
    if (copy(0, fd) != 0) return 3;
    shutdown(fd, SHUT_WR);
    return copy(fd, 1) != 0 ? 4 : 0;
}
