/* A program whose SIGINT handler does what dash's does: put the default action back and raise() the signal again,
 * expecting not to come back (tests/core/raise_in_flush.t). `raise_in_flush exec|exit`: sets RS_SIGWRITE (for
 * sigwrite: SIGINT lands inside the tracer's exec or exit flush), then exec()s /bin/true or exit()s 0.
 * "raise() returned" on stdout and exit status 42: the handler's raise() came back. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void onint(int sig)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* dash's sigclearmask(): the signal is blocked in its own handler */
    signal(sig, SIG_DFL);
    raise(sig);
    static const char msg[] = "raise() returned\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(43);
    _exit(42);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = onint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    setenv("RS_SIGWRITE", "1", 1);
    if (argc > 1 && !strcmp(argv[1], "exit")) exit(0);
    execl("/bin/true", "true", (char *)NULL);
    return 3;
}
