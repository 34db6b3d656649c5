/* A forked child that, before its first event, closes every descriptor with the raw close_range system call (which
 * the tracer's wrappers cannot see: the tracer's unnamed trace file goes with them, and ext4 gives its inode number
 * to the next file made), creates a file of its own at the same number (100), writes to it, then records a marker.
 * The tracer took that file for its own trace file (same device and inode): the header and events went into it,
 * it was linked into the trace directory, and close()/fcntl() on it answered EBADF (helper-86, session 29).
 * Usage: rawclose_child FILE. Prints "ok", or what went wrong; the file must then hold the child's 13 bytes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) return 2;
    if (p == 0) {
        syscall(SYS_close_range, 3u, ~0u, 0u);
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, 100) != 100) _exit(3);
        close(fd);
        if (write(100, "PROGRAM DATA\n", 13) != 13) _exit(4);
        if (mark) mark("after", 1);
        usleep(100000); /* the writer's tick names the child's trace file meanwhile */
        if (fcntl(100, F_GETFD) < 0) _exit(5);
        if (close(100) != 0) _exit(6);
        _exit(0);
    }
    int st = 0;
    if (waitpid(p, &st, 0) != p) return 2;
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return 1;
    }
    printf("ok\n");
    return 0;
}
