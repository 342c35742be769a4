/* SPDX-License-Identifier: MIT */
/* One table, three renderings: aligned text, Markdown, HTML; cells escaped for each. */
#include "compare/internal.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

void compare_table_init(struct compare_table *t, int rows, int cols)
{
    t->rows = t->allocated = rows, t->cols = cols;
    t->cells = util_xcalloc((size_t)rows, sizeof(char **));
    for (int r = 0; r < rows; r++)
        t->cells[r] = util_xcalloc((size_t)cols, sizeof(char *));
}

void compare_table_set(struct compare_table *t, int r, int c, struct util_buf *b)
{
    free(t->cells[r][c]);
    t->cells[r][c] = util_buf_detach(b);
}

void compare_table_sets(struct compare_table *t, int r, int c, const char *s)
{
    free(t->cells[r][c]);
    t->cells[r][c] = util_xstrdup(s ? s : "");
}

void compare_escape(struct util_buf *out, const char *s, enum compare_format f)
{
    for (; s && *s; s++) {
        if (f != COMPARE_TEXT && *s == '<')
            util_buf_adds(out, "&lt;");
        else if (f == COMPARE_HTML && *s == '>')
            util_buf_adds(out, "&gt;");
        else if (f != COMPARE_TEXT && *s == '&')
            util_buf_adds(out, "&amp;");
        else if (f == COMPARE_MD && strchr("|\\`*[]!", *s)) /* no link, image or code span */
            util_buf_addf(out, "\\%c", *s);
        else if (f != COMPARE_TEXT && *s == '\n')
            util_buf_adds(out, " ");
        else
            util_buf_add(out, s, 1);
    }
}

/* The widest a text table's line gets (docs/man: the text report stays within 120 columns). */
#define TABLE_TEXT_WIDTH 120

/* One text row of columns 0 and [first, last), padded to width, the last one unpadded (no
 * trailing blanks). */
static void text_row(char **row, const int *width, int first, int last, struct util_buf *out)
{
    const char *name = row[0] ? row[0] : "";
    if (first >= last) {
        util_buf_addf(out, "%s\n", name);
        return;
    }
    util_buf_addf(out, "%-*s  ", width[0], name);
    for (int c = first; c < last; c++) {
        const char *s = row[c] ? row[c] : "";
        if (c + 1 < last)
            util_buf_addf(out, "%-*s  ", width[c], s);
        else
            util_buf_adds(out, s);
    }
    util_buf_adds(out, "\n");
}

/* Aligned text: where the columns pass TABLE_TEXT_WIDTH (a column per input, a matrix of 32
 * NICs), in parts of as many columns as fit, each with the first (the rows' names) again. */
static void render_text(const struct compare_table *t, const int *width, struct util_buf *out)
{
    int first = 1;
    do {
        int last = first, used = width[0] + 2;
        while (last < t->cols && (last == first || used + width[last] + 2 <= TABLE_TEXT_WIDTH))
            used += width[last++] + 2;
        if (first > 1)
            util_buf_adds(out, "\n");
        for (int r = 0; r < t->rows; r++)
            text_row(t->cells[r], width, first, last, out);
        first = last;
    } while (first < t->cols);
}

void compare_table_render(const struct compare_table *t, enum compare_format f,
                          struct util_buf *out)
{
    int *width = util_xcalloc((size_t)t->cols, sizeof(int));
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            int w = (int)strlen(t->cells[r][c] ? t->cells[r][c] : "");
            width[c] = w > width[c] ? w : width[c];
        }
    if (f == COMPARE_TEXT) {
        render_text(t, width, out);
        free(width);
        return;
    }
    if (f == COMPARE_HTML)
        util_buf_adds(out, "<table>\n");
    for (int r = 0; r < t->rows; r++) {
        if (f == COMPARE_HTML)
            util_buf_adds(out, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            const char *s = t->cells[r][c] ? t->cells[r][c] : "";
            util_buf_adds(out, f == COMPARE_MD ? "| " : r ? "<td>" : "<th>");
            compare_escape(out, s, f);
            util_buf_adds(out, f == COMPARE_MD ? " " : r ? "</td>" : "</th>");
        }
        util_buf_adds(out, f == COMPARE_HTML ? "</tr>\n" : "|\n");
        if (r == 0 && f == COMPARE_MD) {
            for (int c = 0; c < t->cols; c++)
                util_buf_adds(out, "|---");
            util_buf_adds(out, "|\n");
        }
    }
    if (f == COMPARE_HTML)
        util_buf_adds(out, "</table>\n");
    free(width);
}

void compare_table_free(struct compare_table *t)
{
    for (int r = 0; r < t->allocated; r++) {
        for (int c = 0; c < t->cols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
}
