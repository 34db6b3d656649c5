/* sec_writer: the trace writer's file-creation rules, checked directly on tracer/writer.c:
 *   - a pre-planted symlink at the path is refused (-EEXIST) and its target is left untouched;
 *   - an existing file is refused, never truncated or appended to;
 *   - a new file is created 0600 whatever the umask.
 * Prints TAP (4 tests). Usage: sec_writer DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/writer.h"

static int n, failed;
static void ok(int cond, const char *what, const char *detail)
{
    printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
    if (!cond) {
        printf("# %s\n", detail);
        failed = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: sec_writer DIR\n");
        return 2;
    }
    char target[4096], link_[4096], existing[4096], fresh[4096], detail[256];
    snprintf(target, sizeof target, "%s/victim", argv[1]);
    snprintf(link_, sizeof link_, "%s/planted.rtrace", argv[1]);
    snprintf(existing, sizeof existing, "%s/existing.rtrace", argv[1]);
    snprintf(fresh, sizeof fresh, "%s/fresh.rtrace", argv[1]);
    printf("1..4\n");
    FILE *f = fopen(target, "w");
    fputs("precious\n", f);
    fclose(f);
    if (symlink(target, link_) != 0) {
        perror("symlink");
        return 2;
    }
    struct rs_file_info info = {.host = "h", .pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    int err = 0;
    struct rs_writer *w = rs_writer_open(link_, &info, &err);
    snprintf(detail, sizeof detail, "rs_writer_open returned %p, err %d (%s)", (void *)w, err, strerror(-err));
    ok(!w && err == -EEXIST, "a pre-planted symlink is refused with EEXIST", detail);
    if (w) rs_writer_close(w);
    char buf[64] = "";
    f = fopen(target, "r");
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = 0;
    fclose(f);
    ok(!strcmp(buf, "precious\n"), "the symlink's target is untouched", buf);

    f = fopen(existing, "w");
    fputs("old", f);
    fclose(f);
    err = 0;
    w = rs_writer_open(existing, &info, &err);
    struct stat sb;
    stat(existing, &sb);
    snprintf(detail, sizeof detail, "writer %p err %d, file now %lld bytes", (void *)w, err, (long long)sb.st_size);
    ok(!w && err == -EEXIST && sb.st_size == 3, "an existing file is refused and left as it was", detail);
    if (w) rs_writer_close(w);

    umask(0);
    err = 0;
    w = rs_writer_open(fresh, &info, &err);
    if (w) rs_writer_close(w);
    int mode = stat(fresh, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
    snprintf(detail, sizeof detail, "mode %o, err %d", mode, err);
    ok(w && mode == 0600, "a new trace file is 0600 even with umask 0", detail);
    return failed;
}
