/* Doctor's renderers. Text: one line per verdict, "  fix: ..." under WARN/FAIL (and INFO with advice),
 * then a summary with the exit status. JSON: the same verdicts as objects. */
#include "doctor_out.h"

#include <ctype.h>
#include <string.h>

static void counts(const struct rs_verdicts *v, int c[4])
{
    memset(c, 0, 4 * sizeof c[0]);
    for (size_t i = 0; i < v->n; i++) c[v->v[i].level]++;
}

static const char *status_words(int st) { return st == 2 ? "failures" : st == 1 ? "warnings" : "all checks pass"; }

void rs_doctor_print_text(FILE *o, const struct rs_verdicts *v, int quiet)
{
    for (size_t i = 0; i < v->n; i++) {
        const struct rs_verdict *d = &v->v[i];
        if (quiet && d->level != RS_WARN && d->level != RS_FAIL) continue;
        char lv[8];
        const char *n = rs_level_name(d->level);
        for (int k = 0; k < 4; k++) lv[k] = (char)toupper((unsigned char)n[k]);
        lv[4] = '\0';
        fprintf(o, "%s  %-19s %-12s %s\n", lv, d->check, d->subject, d->msg);
        if (d->fix[0] && d->level != RS_PASS) fprintf(o, "      %-19s %-12s fix: %s\n", "", "", d->fix);
    }
    int c[4], st = rs_verdicts_status(v);
    counts(v, c);
    fprintf(o, "summary: %d pass, %d warn, %d fail, %d info; exit status %d (%s)\n", c[RS_PASS], c[RS_WARN], c[RS_FAIL],
            c[RS_INFO], st, status_words(st));
}

static void jstr(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(o, "\\%c", ch);
        else if (ch < 0x20) fprintf(o, "\\u%04x", ch);
        else fputc(ch, o);
    }
    fputc('"', o);
}

void rs_doctor_print_json(FILE *o, const struct rs_verdicts *v)
{
    int c[4], st = rs_verdicts_status(v);
    counts(v, c);
    fprintf(o,
            "{\n  \"status\": %d,\n  \"summary\": {\"pass\": %d, \"warn\": %d, \"fail\": %d, \"info\": %d},\n  "
            "\"verdicts\": [",
            st, c[RS_PASS], c[RS_WARN], c[RS_FAIL], c[RS_INFO]);
    for (size_t i = 0; i < v->n; i++) {
        const struct rs_verdict *d = &v->v[i];
        fprintf(o, "%s\n    {\"level\": \"%s\", \"check\": ", i ? "," : "", rs_level_name(d->level));
        jstr(o, d->check);
        fputs(", \"subject\": ", o);
        jstr(o, d->subject);
        fputs(", \"message\": ", o);
        jstr(o, d->msg);
        fputs(", \"fix\": ", o);
        jstr(o, d->fix);
        fputc('}', o);
    }
    fprintf(o, "%s]\n}\n", v->n ? "\n  " : "");
}

void rs_doctor_print_facts(FILE *o, struct rs_facts *f)
{
    rs_facts_sort(f);
    for (size_t i = 0; i < f->n; i++) fprintf(o, "%s=%s\n", f->v[i].key, f->v[i].value);
}
