/* The argument front shared by the commands whose operands are only trace paths (dump, info): one place
 * decides what --help, "--", an unknown flag and a missing operand do, so every such command fails the
 * same way (one "railscope: CMD: ..." line, exit 2) and a new boolean flag is one table row.
 *
 * Flags may come before or after the paths, as with report and export (`dump run --json` is `dump --json
 * run`): a flag typed last is not taken for a file name. Only "--" ends the flags, so a file named like a
 * flag is given after it (`info -- -q`). record does not use this: the traced command's own flags are not
 * railscope's. These flags take no value: `--abs=1` is refused as getopt_long refuses report's `--json=1`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats/export/export.h"
#include "reader.h"

/* 1 if a is one of flags (and sets it), 0 if not. */
static int set_flag(const char *a, const struct cli_flag *flags)
{
    for (const struct cli_flag *f = flags; f && f->name; f++)
        if (!strcmp(a, f->name)) {
            *f->set = 1;
            return 1;
        }
    return 0;
}

/* 1 if the first n bytes of a are one of flags: `--abs=1` names a flag that takes no value. */
static int is_flag(const char *a, size_t n, const struct cli_flag *flags)
{
    for (const struct cli_flag *f = flags; f && f->name; f++)
        if (strlen(f->name) == n && !strncmp(a, f->name, n)) return 1;
    return 0;
}

void cli_option_error(const char *cmd, const char *arg, int why)
{
    const char *eq = strchr(arg, '=');
    if (why == ':') fprintf(stderr, "railscope: %s: %s needs a value\n", cmd, arg);
    else if (why == '=' && eq && !strncmp(arg, "--", 2))
        fprintf(stderr, "railscope: %s: option '%.*s' takes no value\n", cmd, (int)(eq - arg), arg);
    else fprintf(stderr, "railscope: %s: unknown option '%s' (try 'railscope %s --help')\n", cmd, arg, cmd);
}

/* Sorts argv[1..] into flags and operands (in their order) in ops. Returns the number of operands, -2
 * after --help, -1 after an error. */
static int split_args(const char *cmd, int argc, char **argv, const struct cli_flag *flags, void (*usage)(FILE *),
                      char **ops)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (++i < argc) ops[n++] = argv[i];
            break;
        }
        if (set_flag(a, flags)) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -2;
        }
        if (a[0] == '-' && a[1]) {
            const char *eq = strchr(a, '=');
            cli_option_error(cmd, a, eq && !strncmp(a, "--", 2) && is_flag(a, (size_t)(eq - a), flags) ? '=' : '?');
            return -1;
        }
        ops[n++] = argv[i];
    }
    return n;
}

int cli_trace_args(const char *cmd, int argc, char **argv, const struct cli_flag *flags, void (*usage)(FILE *),
                   char ***paths)
{
    char **ops = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *ops);
    if (!ops) {
        fprintf(stderr, "railscope: %s: out of memory\n", cmd);
        return -1;
    }
    int nops = split_args(cmd, argc, argv, flags, usage, ops);
    int n = nops == -2 ? 0 : -1;
    if (nops == 0) fprintf(stderr, "railscope: %s: no trace given (try 'railscope %s --help')\n", cmd, cmd);
    if (nops > 0) {
        char err[512];
        n = rs_expand_paths(nops, ops, paths, err, sizeof err);
        if (n < 0) fprintf(stderr, "railscope: %s: %s\n", cmd, err);
    }
    free(ops);
    return n < 0 ? -1 : n;
}

int cli_output_is_input(const char *cmd, const char *out, const struct rs_file_id *inputs, size_t ninputs)
{
    if (!rs_file_is_one_of(out, inputs, ninputs)) return 0;
    fprintf(stderr, "railscope: %s: output %s is one of the input traces\n", cmd, out);
    return 1;
}
