/* The argument front shared by the commands whose operands are only trace paths (dump, info): one place
 * decides what --help, "--", an unknown flag and a missing operand do, so every such command fails the
 * same way (one "railscope: CMD: ..." line, exit 2) and a new boolean flag is one table row. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "reader.h"

int cli_trace_args(const char *cmd, int argc, char **argv, const struct cli_flag *flags, void (*usage)(FILE *),
                   char ***paths)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_flag *f = flags;
        while (f && f->name && strcmp(a, f->name)) f++;
        if (f && f->name) {
            *f->set = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "railscope: %s: unknown option '%s' (try 'railscope %s --help')\n", cmd, a, cmd);
            return -1;
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "railscope: %s: no trace given (try 'railscope %s --help')\n", cmd, cmd);
        return -1;
    }
    char err[512];
    int n = rs_expand_paths(argc - i, argv + i, paths, err, sizeof err);
    if (n < 0) fprintf(stderr, "railscope: %s: %s\n", cmd, err);
    return n < 0 ? -1 : n;
}
