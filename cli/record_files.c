/* Which trace files of record's output directory this run wrote, for its closing line. The directory may
 * hold older traces (-o reused) or another run's (srun's ranks share the job step's directory, each with its
 * own record): the files counted are those that were not there before the command started (by inode) and
 * whose process descends from the command (the header's pid and ppid, on this host). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "reader.h"

static int is_trace_name(const char *n)
{
    size_t l = strlen(n);
    return l > 7 && !strcmp(n + l - 7, ".rtrace");
}

static int has_ino(const struct rec_snapshot *s, ino_t ino)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->ino[i] == ino) return 1;
    return 0;
}

void rec_snapshot_take(const char *dir, struct rec_snapshot *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    if (!d) return;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_trace_name(e->d_name)) continue;
        if (s->n == cap) {
            ino_t *v = realloc(s->ino, (cap = cap ? cap * 2 : 64) * sizeof *v);
            if (!v) break; /* a count too high at worst: those left out look new but are no descendant */
            s->ino = v;
        }
        s->ino[s->n++] = e->d_ino;
    }
    closedir(d);
}

void rec_snapshot_free(struct rec_snapshot *s)
{
    free(s->ino);
    memset(s, 0, sizeof *s);
}

/* A new file's process: its pid and parent's, from the header; 0 when it is another host's or unreadable. */
struct proc_ids {
    uint64_t pid, ppid;
    int ours;
};

static int read_ids(const char *dir, const char *name, const char *host, struct proc_ids *p)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) return 0;
    const struct rs_header_info *h = rs_reader_header(r);
    int mine = h->host && !strcmp(h->host, host);
    *p = (struct proc_ids){h->pid, h->ppid, 0};
    rs_reader_close(r);
    return mine;
}

static int is_ours_pid(const struct proc_ids *v, size_t n, uint64_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ours && v[i].pid == pid) return 1;
    return 0;
}

/* The command's process, then every process whose own pid (an exec'd image's next file) or parent is one of
 * them: repeated until nothing is added (a file's place in the directory says nothing of its generation). */
static size_t mark_descendants(struct proc_ids *v, size_t n, uint64_t child)
{
    size_t ours = 0;
    for (int grew = 1; grew;) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i].ours || !(v[i].pid == child || is_ours_pid(v, n, v[i].pid) || is_ours_pid(v, n, v[i].ppid)))
                continue;
            v[i].ours = grew = 1;
            ours++;
        }
    }
    return ours;
}

/* The host part of the tracer's file names (tracer/procinfo.c trace_name): the name up to its first dot, each byte
 * outside [A-Za-z0-9._-] as '_'. (The full name was compared: on node7.cluster.example no file was this run's.) */
static void file_host(const char *host, char *out, size_t cap)
{
    snprintf(out, cap, "%s", host);
    char *dot = strchr(out, '.');
    if (dot && dot != out) *dot = 0;
    for (char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_'))
            *c = '_';
}

int rec_count_run_files(const char *dir, const struct rec_snapshot *before, pid_t child, int *total)
{
    char host[256] = "", fhost[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown"); /* as tracer/procinfo.c */
    host[sizeof host - 1] = 0;
    file_host(host, fhost, sizeof fhost);
    *total = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct proc_ids *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_trace_name(e->d_name)) continue;
        ++*total;
        /* <host>-<pid>.rtrace (tracer/procinfo.c): another host's files (a shared file system) are not opened */
        size_t hl = strlen(fhost);
        if (has_ino(before, e->d_ino) || strncmp(e->d_name, fhost, hl) || e->d_name[hl] != '-') continue;
        if (n == cap) {
            struct proc_ids *g = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *g);
            if (!g) break;
            v = g;
        }
        if (read_ids(dir, e->d_name, host, &v[n])) n++;
    }
    closedir(d);
    size_t ours = mark_descendants(v, n, (uint64_t)child);
    free(v);
    return (int)ours;
}
