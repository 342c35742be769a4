/* SPDX-License-Identifier: MIT */
/*
 * busbw against message size, and a workload's time per call of each collective, as SVG drawn
 * by gnuplot (a child under a deadline, reading a script with the data inline). Best (chosen)
 * configurations are solid, the defaults (nothing set) dashed; predicted curves have hollow
 * points and say "(predicted)" in their titles, and the reference curve of a predicted input (the
 * best, else the defaults) is shaded with its band, where 90% of healthy systems measure. No
 * scripts or links in the SVG: it is pasted into an HTML file that must open from disk with no
 * network.
 */
#include "compare/internal.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A point's band columns: busbw's edges (model_band_at), or a time's (the other way round). */
static void band_columns(struct util_buf *s, double v, struct model_band b, int is_time)
{
    util_buf_addf(s, " %.6g %.6g", is_time ? v / b.high : v * b.low,
                  is_time ? v / b.low : v * b.high);
}

/* Appends a datablock of (size, busbw) within [min, max), or (size, time per call in us) when
 * as_time, each with its band's low and high edges (columns 3, 4); returns the points written. */
static int datablock(struct util_buf *s, const char *name, const struct compare_input *in,
                     const json_t *per_size, size_t min, size_t max, int as_time)
{
    size_t i;
    json_t *row;
    int n = 0;
    util_buf_addf(s, "$%s << EOD\n", name);
    json_array_foreach(per_size, i, row) {
        json_int_t size = json_integer_value(json_object_get(row, "size"));
        double bw = json_number_value(json_object_get(row, "busbw"));
        if (size >= (json_int_t)min && size < (json_int_t)max && bw > 0) {
            double v = as_time ? compare_time_us(in, bw, size) : bw;
            util_buf_addf(s, "%lld %.6g", (long long)size, v);
            band_columns(s, v, model_band_at((size_t)size), as_time);
            util_buf_adds(s, "\n");
            n++;
        }
    }
    util_buf_adds(s, "EOD\n");
    return n;
}

/*
 * Text as a gnuplot single-quoted string: gnuplot runs `commands` inside double
 * quotes, never inside single ones; ' is written '' and control characters
 * (a newline would end the command) are dropped.
 */
static void quoted(struct util_buf *s, const char *text)
{
    util_buf_adds(s, "'");
    for (const char *p = text; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            continue;
        util_buf_add(s, p, 1);
        if (*p == '\'')
            util_buf_add(s, p, 1);
    }
    util_buf_adds(s, "'");
}

/* A predicted curve's band, shaded in its colour under the lines (bands holds them: drawn first).
 */
/* A curve's title, "LABEL WHAT" and suffix, quoted for gnuplot. */
static void titled(struct util_buf *s, const char *label, const char *what, const char *suffix)
{
    struct util_buf t = UTIL_BUF_INIT;
    util_buf_addf(&t, "%s %s%s", label, what, suffix);
    util_buf_adds(s, " title ");
    quoted(s, util_buf_str(&t));
    util_buf_adds(s, " noenhanced");
    util_buf_release(&t);
}

static void title(struct util_buf *s, const char *label, const char *what, int predicted)
{
    titled(s, label, what, predicted ? " (predicted)" : "");
}

static void band_plot(struct util_buf *bands, const char *block, int colour, const char *label,
                      const char *what)
{
    util_buf_addf(bands,
                  "%s$%s using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc %d",
                  bands->len ? ", " : "", block, colour);
    titled(bands, label, what, ": band (predicted)");
}

/* The plot line: the bands first, so that every curve is drawn over them. */
static void plot_line(struct util_buf *s, struct util_buf *bands, struct util_buf *plots,
                      const char *empty)
{
    if (!plots->len) /* nothing in this range: an empty frame says so */
        util_buf_addf(s, "plot NaN title '%s'\n", empty);
    else
        util_buf_addf(s, "plot %s%s%s\n", util_buf_str(bands), bands->len ? ", " : "",
                      util_buf_str(plots));
    util_buf_release(bands);
    util_buf_release(plots);
}

static void script(struct util_buf *s, const struct compare_input *in, int n, size_t min,
                   size_t max, const char *plot_title, const char *out)
{
    int as_time = max <= COMPARE_TIME_BELOW; /* small messages: latency decides, shown as time */
    util_buf_adds(s, "set terminal svg size 860,460 dynamic font 'sans,11' background rgb "
                     "'white'\nset output ");
    quoted(s, out);
    util_buf_adds(s, "\nset logscale x 2\nset format x '%.0b%B'\n"
                     "set xlabel 'message size (bytes)'\n");
    util_buf_adds(s, as_time ? "set ylabel 'time per call (us)'\nset logscale y 10\n"
                             : "set ylabel 'busbw (GB/s)'\nset yrange [0:*]\n");
    util_buf_adds(s, "set title ");
    quoted(s, plot_title);
    util_buf_adds(s, " noenhanced\nset grid\nset key left top\n");
    struct util_buf plots = UTIL_BUF_INIT, bands = UTIL_BUF_INIT;
    for (int i = 0; i < n; i++) {
        const json_t *p = in[i].profile, *winner = json_object_get(p, "winner");
        const json_t *base = json_object_get(json_object_get(p, "baseline"), "per_size");
        int predicted = json_is_true(json_object_get(p, "predicted")), pt = predicted ? 6 : 7;
        int banded = 0; /* one band per input: its best curve's, else its defaults' */
        const char *base_what =
            json_is_true(json_object_get(p, "defaults_best")) ? "defaults (best here)" : "defaults";
        char name[32];
        snprintf(name, sizeof(name), "best%d", i);
        if (json_is_object(winner) &&
            datablock(s, name, &in[i], json_object_get(winner, "per_size"), min, max, as_time)) {
            util_buf_addf(&plots, "%s$%s using 1:2 with linespoints lw 2 dt 1 pt %d lc %d",
                          plots.len ? ", " : "", name, pt, i + 1);
            title(&plots, in[i].label, "best", predicted);
            if (predicted)
                band_plot(&bands, name, i + 1, in[i].label, "best");
            banded = predicted;
        }
        snprintf(name, sizeof(name), "base%d", i);
        if (datablock(s, name, &in[i], base, min, max, as_time)) {
            util_buf_addf(&plots, "%s$%s using 1:2 with linespoints lw 2 dt 2 pt %d lc %d",
                          plots.len ? ", " : "", name, pt, i + 1);
            title(&plots, in[i].label, base_what, predicted);
            if (predicted && !banded)
                band_plot(&bands, name, i + 1, in[i].label, base_what);
        }
    }
    plot_line(s, &bands, &plots, "no configuration ran ok in this range");
}

/* The scaling plot: busbw at one size against the node count, a curve per input. */
static void scaling_script(struct util_buf *s, const struct compare_input *in, int n,
                           const char *plot_title, const char *out)
{
    util_buf_adds(s, "set terminal svg size 860,460 dynamic font 'sans,11' background rgb "
                     "'white'\nset output ");
    quoted(s, out);
    util_buf_adds(s, "\nset logscale x 2\nset xlabel 'nodes'\nset ylabel 'busbw (GB/s)'\n"
                     "set yrange [0:*]\nset title ");
    quoted(s, plot_title);
    util_buf_adds(s, " noenhanced\nset grid\nset key right top\n");
    struct util_buf plots = UTIL_BUF_INIT, bands = UTIL_BUF_INIT;
    for (int i = 0; i < n; i++) {
        size_t k;
        json_t *r;
        int points = 0, predicted = 0;
        util_buf_addf(s, "$scale%d << EOD\n", i);
        json_array_foreach(in[i].scaling, k, r) {
            double bw = json_number_value(json_object_get(r, "busbw"));
            predicted |= json_is_true(json_object_get(r, "predicted"));
            json_t *band = json_object_get(r, "busbw_band"); /* a predicted number's */
            if (bw > 0) {
                util_buf_addf(s, "%lld %.6g %.6g %.6g\n",
                              (long long)json_integer_value(json_object_get(r, "nodes")), bw,
                              band ? json_number_value(json_array_get(band, 0)) : bw,
                              band ? json_number_value(json_array_get(band, 1)) : bw);
                points++;
            }
        }
        util_buf_adds(s, "EOD\n");
        if (!points)
            continue;
        util_buf_addf(&plots, "%s$scale%d using 1:2 with linespoints lw 2 pt %d lc %d",
                      plots.len ? ", " : "", i, predicted ? 6 : 7, i + 1);
        title(&plots, in[i].label, "defaults", predicted);
        if (predicted) {
            char name[32];
            snprintf(name, sizeof(name), "scale%d", i);
            band_plot(&bands, name, i + 1, in[i].label, "defaults");
        }
    }
    plot_line(s, &bands, &plots, "no number");
}

/* Appends a datablock of (size, us per call) of one collective's evidence, the chosen
 * configuration's time or the defaults', each with its band's edges (columns 3, 4, the
 * collective's band: compare_evidence_band); returns the points written. */
static int evidence_block(struct util_buf *s, const char *name, const json_t *evidence,
                          const char *collective, const char *key)
{
    size_t k;
    json_t *e;
    int points = 0;
    util_buf_addf(s, "$%s << EOD\n", name);
    json_array_foreach(evidence, k, e) {
        double us = json_number_value(json_object_get(e, key));
        const char *c = json_string_value(json_object_get(e, "collective"));
        if (us > 0 && c && !strcmp(c, collective)) {
            util_buf_addf(s, "%lld %.6g", (long long)json_integer_value(json_object_get(e, "size")),
                          us);
            band_columns(s, us, compare_evidence_band(e), 1);
            util_buf_adds(s, "\n");
            points++;
        }
    }
    util_buf_adds(s, "EOD\n");
    return points;
}

/* One collective of a workload: time per call against size, a curve per input for the chosen
 * configuration (solid) and one for the defaults (dashed), from each profile's evidence. */
static void collective_script(struct util_buf *s, const struct compare_input *in, int n,
                              const char *collective, const char *plot_title, const char *out)
{
    util_buf_adds(s, "set terminal svg size 860,460 dynamic font 'sans,11' background rgb "
                     "'white'\nset output ");
    quoted(s, out);
    util_buf_adds(s, "\nset logscale x 2\nset format x '%.0b%B'\nset logscale y 10\n"
                     "set xlabel 'message size (bytes)'\nset ylabel 'time per call (us)'\n"
                     "set title ");
    quoted(s, plot_title);
    util_buf_adds(s, " noenhanced\nset grid\nset key left top\n");
    struct util_buf plots = UTIL_BUF_INIT, bands = UTIL_BUF_INIT;
    for (int i = 0; i < n; i++) {
        const json_t *ev = json_object_get(in[i].profile, "evidence");
        int banded = 0;
        int predicted = compare_predicted(&in[i]), pt = predicted ? 6 : 7;
        char name[32];
        snprintf(name, sizeof(name), "chosen%d", i);
        if (evidence_block(s, name, ev, collective, "time_us")) {
            util_buf_addf(&plots, "%s$%s using 1:2 with linespoints lw 2 dt 1 pt %d lc %d",
                          plots.len ? ", " : "", name, pt, i + 1);
            title(&plots, in[i].label, "chosen", predicted);
            if (predicted)
                band_plot(&bands, name, i + 1, in[i].label, "chosen");
            banded = predicted;
        }
        snprintf(name, sizeof(name), "defaults%d", i);
        if (evidence_block(s, name, ev, collective, "baseline_time_us")) {
            util_buf_addf(&plots, "%s$%s using 1:2 with linespoints lw 2 dt 2 pt %d lc %d",
                          plots.len ? ", " : "", name, pt, i + 1);
            title(&plots, in[i].label, "defaults", predicted);
            if (predicted && !banded)
                band_plot(&bands, name, i + 1, in[i].label, "defaults");
        }
    }
    plot_line(s, &bands, &plots, "no time for this collective");
}

/* What draw() plots: busbw by size over a range, the scaling, or one collective's times. */
struct plot_what {
    size_t min, max;
    int scaling;
    const char *collective;
};

static char *draw(const struct compare_input *in, int n, const struct plot_what *what,
                  const char *plot_title, const char **why);

char *compare_plot_svg(const struct compare_input *in, int n, size_t min, size_t max,
                       const char *plot_title, const char **why)
{
    struct plot_what w = {.min = min, .max = max};
    return draw(in, n, &w, plot_title, why);
}

char *compare_plot_scaling_svg(const struct compare_input *in, int n, const char *plot_title,
                               const char **why)
{
    struct plot_what w = {.scaling = 1};
    return draw(in, n, &w, plot_title, why);
}

char *compare_plot_collective_svg(const struct compare_input *in, int n, const char *collective,
                                  const char *plot_title, const char **why)
{
    struct plot_what w = {.collective = collective};
    return draw(in, n, &w, plot_title, why);
}

/* gnuplot, under a deadline, on a script with the data inline; the SVG it wrote, or NULL. */
static char *draw(const struct compare_input *in, int n, const struct plot_what *what,
                  const char *plot_title, const char **why)
{
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/topotune-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return *why = "no temporary directory for gnuplot", NULL;
    struct util_buf gp = UTIL_BUF_INIT, svg_path = UTIL_BUF_INIT, gp_path = UTIL_BUF_INIT,
                    log_path = UTIL_BUF_INIT, svg = UTIL_BUF_INIT;
    util_buf_addf(&svg_path, "%s/plot.svg", dir);
    util_buf_addf(&gp_path, "%s/plot.gp", dir);
    util_buf_addf(&log_path, "%s/gnuplot.log", dir);
    if (what->scaling)
        scaling_script(&gp, in, n, plot_title, svg_path.data);
    else if (what->collective)
        collective_script(&gp, in, n, what->collective, plot_title, svg_path.data);
    else
        script(&gp, in, n, what->min, what->max, plot_title, svg_path.data);
    char *result = NULL;
    const char *no = NULL;
    int gp_fd = util_file_open_output(gp_path.data, UTIL_FILE_TRUNC, &no);
    FILE *f = gp_fd >= 0 ? fdopen(gp_fd, "w") : NULL;
    if (!f && gp_fd >= 0)
        close(gp_fd);
    if (f) {
        fwrite(gp.data, 1, gp.len, f);
        fclose(f);
        char *argv[] = {"gnuplot", gp_path.data, NULL};
        struct util_child ch = {.argv = argv, .log = log_path.data, .timeout_s = 30, .grace_s = 2};
        util_child_run(&ch);
        if (ch.exec_errno)
            *why = "gnuplot is not installed (Debian: apt install gnuplot-nox)";
        else if (ch.exit_code != 0 || util_file_read_regular(svg_path.data, 16 << 20, &svg, &no))
            *why = "gnuplot failed to draw the plot";
        else
            result = util_buf_detach(&svg);
    } else {
        *why = "cannot write gnuplot's script";
    }
    unlink(gp_path.data);
    unlink(svg_path.data);
    unlink(log_path.data);
    rmdir(dir);
    util_buf_release(&gp);
    util_buf_release(&svg_path);
    util_buf_release(&gp_path);
    util_buf_release(&log_path);
    util_buf_release(&svg);
    return result;
}
