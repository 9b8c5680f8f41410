/* gnuplot.c: running gnuplot for the report (see report_int.h).
 *
 * Each chart is written as a data file (STEM.dat, by its caller) and a
 * gnuplot script (STEM.gp) that draws it twice, as STEM.png (pngcairo) and
 * STEM.svg; the script is run with the output folder as its working
 * directory, so it can be re-run there by hand.  Scripts are drawn in the
 * background, at most R->maxpend at once, and each is checked when its
 * gnuplot ends: a PNG or SVG that is missing, empty or not an image stops
 * the report with an error, so a page with a broken image is never written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reports/report_int.h"
#include "sim/util.h"

/* A gnuplot single-quoted string: a quote is written twice. */
void rpt_gp_text(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* A field of a gnuplot data file, double-quoted (quotes dropped). */
void rpt_dat_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s != '"' && (unsigned char)*s >= 0x20)
            fputc(*s, f);
    fputc('"', f);
}

/* --- gnuplot -------------------------------------------------------------------------------- */

int rpt_find_gnuplot(struct rpt *R)
{
    const char *name = R->o->gnuplot;
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return rpt_fail(R, 2, "gnuplot '%s' cannot be run: %s; install it with 'apt-get install gnuplot-nox'", name,
                            strerror(errno));
        snprintf(R->gnuplot, sizeof R->gnuplot, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        char cand[RPT_MAX_PATH];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            snprintf(R->gnuplot, sizeof R->gnuplot, "%s", cand);
            return 0;
        }
        path += len + (e ? 1 : 0);
    }
    return rpt_fail(R, 2,
                    "gnuplot not found on PATH; simrun report draws its charts with gnuplot: "
                    "install it with 'apt-get install gnuplot-nox' (or your system's gnuplot package)");
}

/* Starts gnuplot with args in the output folder, its output appended to
 * gnuplot.log there (or written to `capture`); returns its pid, or -1. */
static pid_t spawn_gnuplot(struct rpt *R, const char *const *args, int nargs, const char *capture)
{
    char logp[RPT_MAX_PATH];
    snprintf(logp, sizeof logp, "%s/%s", R->o->out_dir, capture ? capture : "gnuplot.log");
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = open(logp, O_WRONLY | O_CREAT | (capture ? O_TRUNC : O_APPEND), 0666);
    if (fd < 0 || chdir(R->o->out_dir) != 0)
        _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    char *argv[8];
    argv[0] = R->gnuplot;
    for (int i = 0; i < nargs && i < 6; i++)
        argv[i + 1] = (char *)args[i];
    argv[(nargs < 6 ? nargs : 6) + 1] = NULL;
    execv(R->gnuplot, argv);
    _exit(127);
}

/* Waits for pid; its exit status, or -1 if it did not exit normally. */
static int wait_exit(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_gnuplot(struct rpt *R, const char *const *args, int nargs, const char *capture)
{
    pid_t pid = spawn_gnuplot(R, args, nargs, capture);
    return pid < 0 ? -1 : wait_exit(pid);
}

/* gnuplot must have the pngcairo and svg terminals ('set terminal' lists
 * them). */
int rpt_check_terminals(struct rpt *R)
{
    const char *args[] = {"-e", "set terminal"};
    int rc = run_gnuplot(R, args, 2, ".gnuplot-terminals");
    char p[RPT_MAX_PATH];
    snprintf(p, sizeof p, "%s/.gnuplot-terminals", R->o->out_dir);
    FILE *f = fopen(p, "r");
    int png = 0, svg = 0;
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char word[64];
            if (sscanf(line, " %63s", word) == 1) {
                png |= !strcmp(word, "pngcairo");
                svg |= !strcmp(word, "svg");
            }
        }
        fclose(f);
    }
    unlink(p);
    if (rc != 0)
        return rpt_fail(R, 2, "'%s -e \"set terminal\"' failed (exit %d); install gnuplot with 'apt-get install gnuplot-nox'",
                        R->gnuplot, rc);
    if (!png || !svg)
        return rpt_fail(R, 2, "gnuplot '%s' lacks the %s terminal; install a gnuplot built with cairo: 'apt-get install gnuplot-nox'",
                        R->gnuplot, !png ? "pngcairo" : "svg");
    return 0;
}

FILE *rpt_chart_begin(struct chart *c, const char *stem, int w, int h)
{
    snprintf(c->stem, sizeof c->stem, "%s", stem);
    c->w = w;
    c->h = h;
    c->body = NULL;
    c->nbody = 0;
    c->f = open_memstream(&c->body, &c->nbody);
    c->png_only = 0;
    SIM_ASSERT(c->f != NULL);
    return c->f;
}

/* Checks that path is a non-empty image of the kind (PNG signature, or an
 * SVG element). */
static int image_ok(const char *path, int svg)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[512] = {0};
    size_t n = fread(head, 1, sizeof head - 1, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    if (size < 200)
        return 0;
    if (svg)
        return strstr(head, "<svg") != NULL;
    return n >= 8 && !memcmp(head, "\x89PNG\r\n\x1a\n", 8);
}

/* Waits for the oldest chart being drawn and checks its images. */
int rpt_chart_reap(struct rpt *R)
{
    SIM_ASSERT(R->npend > 0);
    struct pending pd = R->pend[0];
    memmove(&R->pend[0], &R->pend[1], (size_t)(R->npend - 1) * sizeof R->pend[0]);
    R->npend--;
    int rc = wait_exit(pd.pid);
    if (rc != 0)
        return rpt_fail(R, 3, "gnuplot failed on '%s/%s.gp' (exit %d); its messages are in '%s/gnuplot.log'",
                        R->o->out_dir, pd.stem, rc, R->o->out_dir);
    for (int svg = 0; svg < 2 - pd.png_only; svg++) {
        char p[RPT_MAX_PATH];
        snprintf(p, sizeof p, "%s/%s.%s", R->o->out_dir, pd.stem, svg ? "svg" : "png");
        if (!image_ok(p, svg))
            return rpt_fail(R, 3, "gnuplot produced no usable image '%s' from '%s.gp' (see '%s/gnuplot.log')", p,
                            pd.stem, R->o->out_dir);
    }
    R->ncharts++;
    return 0;
}

int rpt_chart_end(struct rpt *R, struct chart *c, const char *what)
{
    fclose(c->f);
    char name[RPT_MAX_PATH];
    snprintf(name, sizeof name, "%s.gp", c->stem);
    FILE *g = rpt_open(R, name, "w");
    if (!g) {
        free(c->body);
        return -1;
    }
    fprintf(g, "# simrun report: %s\n", what);
    fprintf(g, "# Re-plot in this folder with: gnuplot %s.gp  (data: %s.dat)\n", c->stem, c->stem);
    fprintf(g, "set encoding utf8\n");
    fprintf(g, "set terminal pngcairo size %d,%d font 'Sans,10' noenhanced background '#ffffff'\n", c->w, c->h);
    fprintf(g, "set output '%s.png'\n", c->stem);
    fwrite(c->body, 1, c->nbody, g);
    fprintf(g, "unset output\nreset\n");
    if (c->png_only)
        fprintf(g, "# The SVG only when asked: gnuplot -e svg=1 %s.gp\nif (exists('svg')) {\n", c->stem);
    fprintf(g, "set terminal svg size %d,%d font 'Sans,10' noenhanced background '#ffffff'\n", c->w, c->h);
    fprintf(g, "set output '%s.svg'\n", c->stem);
    fwrite(c->body, 1, c->nbody, g);
    fprintf(g, "unset output\n");
    if (c->png_only)
        fprintf(g, "}\n");
    free(c->body);
    c->body = NULL;
    if (rpt_close(R, g, name) != 0)
        return -1;
    /* Drawn in the background, RPT_MAX_GNUPLOTS at a time; checked when it ends. */
    while (R->npend == R->maxpend)
        if (rpt_chart_reap(R) != 0)
            return -1;
    const char *args[] = {name};
    pid_t pid = spawn_gnuplot(R, args, 1, NULL);
    if (pid < 0)
        return rpt_fail(R, 3, "cannot run gnuplot: %s", strerror(errno));
    struct pending *pd = &R->pend[R->npend++];
    pd->pid = pid;
    pd->png_only = c->png_only;
    snprintf(pd->stem, sizeof pd->stem, "%s", c->stem);
    return 0;
}
