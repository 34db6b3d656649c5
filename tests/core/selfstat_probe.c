/* What a program reads of its own thread count (tests/core/selfstat.t): run untraced and under LD_PRELOAD, its
 * stdout must be the same. With N threads of its own started (argv[1], default 2) and its command name set to one
 * with spaces and ')' (the stat line's field 2), it prints field 20 (num_threads) of /proc/self/stat,
 * /proc/thread-self/stat and /proc/<pid>/stat read through fopen(), how CPython 3.12 parses it (strtok on spaces,
 * which the name's spaces shift: printed as is), whether fopen() took the lowest free descriptor and kept "e"'s
 * close-on-exec, and the count a forked child reads. On stderr: raw_extra=K, the threads open()/read() of the same
 * file shows beyond fopen()'s (the tracer's own threads: 0 untraced). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipefd[2];

static void *idle(void *arg)
{
    (void)arg;
    char c;
    while (read(pipefd[0], &c, 1) < 0) {}
    return NULL;
}

/* field 20 of a stat line, counted from the last ')' */
static long field20(const char *s)
{
    const char *p = strrchr(s, ')');
    if (!p) return -1;
    int f = 2;
    for (p++; *p && f < 20; p++)
        if (*p == ' ') f++;
    return f == 20 ? atol(p) : -1;
}

static long cpython_way(const char *s)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL, *field = strtok_r(buf, " ", &save);
    unsigned idx;
    for (idx = 19; idx && field; --idx) field = strtok_r(NULL, " ", &save);
    return idx == 0 && field ? atol(field) : -1;
}

static long via_fopen(const char *path, const char *mode, char *text, size_t cap, int *fdno, int *cloexec)
{
    FILE *f = fopen(path, mode);
    if (!f) return -2;
    size_t n = fread(text, 1, cap - 1, f);
    text[n] = 0;
    if (fdno) *fdno = fileno(f);
    if (cloexec) *cloexec = (fcntl(fileno(f), F_GETFD) & FD_CLOEXEC) != 0;
    fclose(f);
    return field20(text);
}

static long via_read(const char *path)
{
    char text[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -2;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    return field20(text);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    if (pipe(pipefd) != 0) return 2;
    prctl(PR_SET_NAME, "se lf) st at", 0, 0, 0);
    pthread_t t[16];
    for (int i = 0; i < n && i < 16; i++) pthread_create(&t[i], NULL, idle, NULL);
    usleep(20000); /* the threads (and the tracer's writer) are running */

    char text[1024], path[64];
    int fdno = -1, cloexec = -1, lowest = dup(0);
    close(lowest);
    long self = via_fopen("/proc/self/stat", "r", text, sizeof text, &fdno, &cloexec);
    printf("fopen /proc/self/stat: threads=%ld lowest_fd=%s cloexec=%d\n", self, fdno == lowest ? "yes" : "no",
           cloexec);
    printf("cpython's parse: %ld\n", cpython_way(text));
    via_fopen("/proc/self/stat", "re", text, sizeof text, NULL, &cloexec);
    printf("fopen re: cloexec=%d\n", cloexec);
    printf("fopen /proc/thread-self/stat: threads=%ld\n",
           via_fopen("/proc/thread-self/stat", "r", text, sizeof text, NULL, NULL));
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
    printf("fopen /proc/PID/stat: threads=%ld\n", via_fopen(path, "r", text, sizeof text, NULL, NULL));
    fprintf(stderr, "raw_extra=%ld\n", via_read("/proc/self/stat") - self);
    fflush(stdout);

    pid_t c = fork();
    if (c == 0) {
        usleep(20000);
        printf("child: threads=%ld\n", via_fopen("/proc/self/stat", "r", text, sizeof text, NULL, NULL));
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    for (int i = 0; i < n && i < 16; i++)
        if (write(pipefd[1], "x", 1) != 1) return 3;
    for (int i = 0; i < n && i < 16; i++) pthread_join(t[i], NULL);
    /* a joined thread may count until the kernel has reaped it: wait for one (2 s at most) */
    long after = 0;
    for (int i = 0; i < 200 && (after = via_fopen("/proc/self/stat", "r", text, sizeof text, NULL, NULL)) != 1; i++)
        usleep(10000);
    printf("after join: threads=%ld\n", after);
    return 0;
}
