/* killat: run a command and send it a signal after a delay, recording when (CLOCK_MONOTONIC, the tracer's
 * clock) so a harness can measure what the trace lost.
 *     killat [-s SIGNAL] [-w] MS CMD [ARGS...]
 * -w waits for the command to print a line on stdout (e.g. hv_storm -r's "ready") before the delay starts.
 * Prints "pid=P sent_at=NS status=exit:C|signal:S" on stderr; exits 0 (the command's fate is in the line).
 * killat itself is not meant to be traced: put LD_PRELOAD on the command (env LD_PRELOAD=... CMD). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int sig = SIGKILL, wait_ready = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            const char *s = argv[++i];
            sig = !strcmp(s, "KILL")   ? SIGKILL
                  : !strcmp(s, "TERM") ? SIGTERM
                  : !strcmp(s, "INT")  ? SIGINT
                  : !strcmp(s, "HUP")  ? SIGHUP
                  : !strcmp(s, "QUIT") ? SIGQUIT
                                       : atoi(s);
        } else if (!strcmp(argv[i], "-w")) {
            wait_ready = 1;
        } else {
            break;
        }
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: killat [-s SIGNAL] [-w] MS CMD [ARGS...]\n");
        return 2;
    }
    long ms = atol(argv[i]);
    int pfd[2];
    if (pipe(pfd)) return 2;
    pid_t pid = fork();
    if (pid == 0) {
        /* A shell's background job inherits SIGINT/SIGQUIT ignored: give the command the dispositions a
         * foreground command would have, or a SIGINT test would test nothing (or hang). */
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        if (wait_ready) dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execvp(argv[i + 1], argv + i + 1);
        _exit(127);
    }
    close(pfd[1]);
    if (wait_ready) {
        char c;
        while (read(pfd[0], &c, 1) == 1 && c != '\n') {}
    }
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        fprintf(stderr, "pid=%d sent_at=%llu status=signal:%d\n", (int)pid,
                (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, WTERMSIG(st));
    else
        fprintf(stderr, "pid=%d sent_at=%llu status=exit:%d\n", (int)pid,
                (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, WEXITSTATUS(st));
    return 0;
}
