/* Subcommands of the railscope CLI. Each takes argc/argv starting at its own name and returns the exit
 * status: 0 success, 1 the result is partial or found problems (documented per command), 2 usage or
 * input error. Errors are one line on stderr starting with "railscope: ". */
#ifndef RAILSCOPE_CLI_H
#define RAILSCOPE_CLI_H

#define RS_VERSION_STRING "0.1.0"

int cmd_record(int argc, char **argv); /* cli/record.c */
int cmd_dump(int argc, char **argv);   /* cli/dump.c */
int cmd_info(int argc, char **argv);   /* cli/info.c */
int cmd_report(int argc, char **argv); /* cli/report.c */
int cmd_export(int argc, char **argv); /* cli/export.c, formats/export/ */
int cmd_doctor(int argc, char **argv); /* cli/doctor.c, doctor/ */

#include <stddef.h>
#include <stdio.h>

/* args.c: boolean flags of a paths-only command, NULL-terminated. */
struct cli_flag {
    const char *name; /* "--json" */
    int *set;         /* set to 1 when given */
};
/* Parses flags then expands the trace operands into *paths (free with rs_paths_free). Returns the number
 * of paths (> 0); 0 after printing --help to stdout (exit 0); -1 after a one-line error (exit 2). */
int cli_trace_args(const char *cmd, int argc, char **argv, const struct cli_flag *flags, void (*usage)(FILE *),
                   char ***paths);

/* args.c: the one line for an option refused: why ':' "railscope: CMD: ARG needs a value", '=' "option
 * '--NAME' takes no value" (ARG is --NAME=VALUE), else "unknown option 'ARG' (try ...)". The caller exits 2. */
void cli_option_error(const char *cmd, const char *arg, int why);

/* args.c: an output that is one of the inputs (the same file, or a hard or symbolic link to it) would
 * destroy a trace: 1 after the one-line error "railscope: CMD: output OUT is one of the input traces"
 * (exit 2), 0 when out is "-", does not exist yet, or is none of them. Called before out is opened. */
struct rs_file_id; /* formats/export/export.h: rs_file_ids() */
int cli_output_is_input(const char *cmd, const char *out, const struct rs_file_id *inputs, size_t ninputs);

/* record_files.c: the trace files of record's directory before the command started (their inodes)... */
#include <sys/types.h>
struct rec_snapshot {
    ino_t *ino;
    size_t n;
};
void rec_snapshot_take(const char *dir, struct rec_snapshot *s);
void rec_snapshot_free(struct rec_snapshot *s);
/* ... and after: how many files this run wrote (not in the snapshot, of this host, of the command's process or
 * of one descending from it); *total: all the directory's trace files. */
int rec_count_run_files(const char *dir, const struct rec_snapshot *before, pid_t child, int *total);
/* record_hint.c: why a run of cmd (argv[0], as execvp takes it) wrote no trace, in a few words for the end of
 * record's line: RAILSCOPE_DISABLE set, a static executable, a set-user-ID one..., or "no process ...". */
void rec_why_untraced(const char *cmd, char *why, size_t cap);

#endif
