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
        else if (f == COMPARE_MD && *s == '|')
            util_buf_adds(out, "\\|");
        else if (f != COMPARE_TEXT && *s == '\n')
            util_buf_adds(out, " ");
        else
            util_buf_add(out, s, 1);
    }
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
    if (f == COMPARE_HTML)
        util_buf_adds(out, "<table>\n");
    for (int r = 0; r < t->rows; r++) {
        if (f == COMPARE_HTML)
            util_buf_adds(out, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            const char *s = t->cells[r][c] ? t->cells[r][c] : "";
            if (f == COMPARE_TEXT) { /* the last column unpadded: no trailing blanks */
                if (c + 1 < t->cols)
                    util_buf_addf(out, "%-*s  ", width[c], s);
                else
                    util_buf_adds(out, s);
                continue;
            }
            util_buf_adds(out, f == COMPARE_MD ? "| " : r ? "<td>" : "<th>");
            compare_escape(out, s, f);
            util_buf_adds(out, f == COMPARE_MD ? " " : r ? "</td>" : "</th>");
        }
        util_buf_adds(out, f == COMPARE_HTML ? "</tr>\n" : f == COMPARE_MD ? "|\n" : "\n");
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
