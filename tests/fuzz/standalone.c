/* Replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over files (or every file of directories)
 * without libFuzzer, so the corpus runs in CI under gcc's ASan/UBSan/TSan builds and where clang's
 * libFuzzer runtime is missing. Says how many inputs ran (stderr); exit 0 unless a check aborts. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "railscope-fuzz-replay: %s: cannot open\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (n == cap) buf = realloc(buf, cap *= 2);
        size_t k = fread(buf + n, 1, cap - n, f);
        if (!k) break;
        n += k;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    /* Targets may chdir (fuzz_cli works in a sandbox directory): make every operand absolute first. */
    for (int i = 1; i < argc; i++) {
        char *abs = realpath(argv[i], NULL);
        if (abs) argv[i] = abs;
    }
    int bad = 0;
    long ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "railscope-fuzz-replay: %s: no such file\n", argv[i]);
            bad = 1;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            bad |= run_file(argv[i]);
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) continue;
        char **names = NULL;
        size_t nn = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            names = realloc(names, (nn + 1) * sizeof *names);
            size_t l = strlen(argv[i]) + strlen(de->d_name) + 2;
            names[nn] = malloc(l);
            snprintf(names[nn], l, "%s/%s", argv[i], de->d_name);
            nn++;
        }
        closedir(d);
        qsort(names, nn, sizeof *names, cmp);
        for (size_t k = 0; k < nn; k++) {
            if (stat(names[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
                bad |= run_file(names[k]);
                ran++;
            }
            free(names[k]);
        }
        free(names);
    }
    fprintf(stderr, "replayed %ld inputs\n", ran);
    return bad;
}
