/* SPDX-License-Identifier: MIT */
/* The tuner table: parsing the text format tuner.h defines, and looking a call up in it. */
#include "tuner/tuner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const coll_names[TUNER_NUM_COLLS] = {"broadcast", "reduce", "allgather",
                                                        "reducescatter", "allreduce"};
static const char *const algo_names[TUNER_NUM_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const proto_names[TUNER_NUM_PROTOS] = {"ll", "ll128", "simple"};

/* Line 1 of a table of any version: the magic without its version number. */
static const char magic_stem[] = "# topotune tuner table ";

/* A field or line: a pointer into the text and a length (the text has no NUL). */
struct span {
    const char *s;
    size_t n;
};

/* What the parser carries from line to line. */
struct parser {
    struct tuner_table *t;
    size_t cap;
    unsigned line;
    int columns_seen;
    int seen_class, seen_min, seen_max, seen_gpus, seen_model, seen_digest;
    char *err;
    size_t errsz;
};

static int fail(struct parser *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records "line N: reason" (or the reason alone before the first line) and returns `code`. */
static int fail(struct parser *p, int code, const char *fmt, ...)
{
    if (!p->err || p->errsz == 0)
        return code;
    int used = p->line ? snprintf(p->err, p->errsz, "line %u: ", p->line) : 0;
    if (used < 0 || (size_t)used >= p->errsz)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + used, p->errsz - (size_t)used, fmt, ap);
    va_end(ap);
    return code;
}

static struct span trim(struct span f)
{
    while (f.n && (f.s[0] == ' ' || f.s[0] == '\t'))
        f.s++, f.n--;
    while (f.n && (f.s[f.n - 1] == ' ' || f.s[f.n - 1] == '\t'))
        f.n--;
    return f;
}

static int span_is(struct span f, const char *word)
{
    return f.n == strlen(word) && memcmp(f.s, word, f.n) == 0;
}

/* Index of `f` in `names` (case-insensitive), or -1. */
static int lookup(struct span f, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (f.n == strlen(names[i]) && strncasecmp(f.s, names[i], f.n) == 0)
            return i;
    return -1;
}

/* Quotes at most 40 bytes of a field for a message, with unprintable bytes as '?'. */
static const char *shown(struct span f, char buf[48])
{
    size_t n = 0;
    for (; n < f.n && n < 40; n++)
        buf[n] = (f.s[n] >= 0x20 && f.s[n] < 0x7f) ? f.s[n] : '?';
    buf[n] = '\0';
    if (n < f.n)
        strcat(buf, "...");
    return buf;
}

/* A decimal integer of 1 to 20 digits that fits in 64 bits. */
static int parse_u64(struct span f, uint64_t *out)
{
    if (f.n == 0 || f.n > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (f.s[i] < '0' || f.s[i] > '9')
            return -1;
        unsigned d = (unsigned)(f.s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* nodes or ranks: `*` or a count from 1 to UINT32_MAX. */
static int parse_count(struct span f, uint32_t *out)
{
    uint64_t v;
    if (span_is(f, "*")) {
        *out = TUNER_ANY;
        return 0;
    }
    if (parse_u64(f, &v) || v == 0 || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* MAJOR.MINOR.PATCH with MINOR and PATCH below 100, as a version code. */
static int parse_version(struct span f, unsigned *code)
{
    uint64_t part[3];
    for (int i = 0; i < 3; i++) {
        const char *dot = i < 2 ? memchr(f.s, '.', f.n) : NULL;
        if (i < 2 && !dot)
            return -1;
        size_t len = dot ? (size_t)(dot - f.s) : f.n;
        if (parse_u64((struct span){f.s, len}, &part[i]) || part[i] > (i ? 99u : 999u))
            return -1;
        if (dot)
            f.s = dot + 1, f.n -= len + 1;
    }
    if (part[0] == 0)
        return -1;
    *code = tuner_version_code((unsigned)part[0], (unsigned)part[1], (unsigned)part[2]);
    return 0;
}

/* Splits `line` at commas into at most `max` fields; returns the count, or max + 1 if more. */
static int split(struct span line, struct span *fields, int max)
{
    int n = 0;
    for (;;) {
        const char *comma = memchr(line.s, ',', line.n);
        size_t len = comma ? (size_t)(comma - line.s) : line.n;
        if (n == max)
            return max + 1;
        fields[n++] = trim((struct span){line.s, len});
        if (!comma)
            return n;
        line.s += len + 1, line.n -= len + 1;
    }
}

static int add_rule(struct parser *p, const struct tuner_rule *r)
{
    struct tuner_table *t = p->t;
    if (t->nrules == TUNER_TABLE_MAX_ROWS)
        return fail(p, TUNER_ELIMIT, "more than %d rows", TUNER_TABLE_MAX_ROWS);
    if (t->nrules == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        struct tuner_rule *grown = realloc(t->rules, cap * sizeof(*grown));
        if (!grown)
            return fail(p, TUNER_ENOMEM, "out of memory");
        t->rules = grown;
        p->cap = cap;
    }
    t->rules[t->nrules++] = *r;
    return 0;
}

/* collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol[,channels] */
static int parse_row(struct parser *p, struct span line)
{
    struct span f[8];
    char b[48];
    int n = split(line, f, 8);
    if (n > 8)
        return fail(p, TUNER_EFORMAT, "more than 8 fields (%s)", TUNER_TABLE_COLUMNS);
    if (n < 7)
        return fail(p, TUNER_EFORMAT, "%d fields where 7 or 8 are expected (%s)", n,
                    TUNER_TABLE_COLUMNS);
    struct tuner_rule r = {.line = p->line};
    int v;
    if ((v = lookup(f[0], coll_names, TUNER_NUM_COLLS)) < 0)
        return fail(p, TUNER_EFORMAT, "unknown collective \"%s\"", shown(f[0], b));
    r.coll = (uint8_t)v;
    if (parse_u64(f[1], &r.min_bytes))
        return fail(p, TUNER_EFORMAT, "min_bytes \"%s\" is not a byte count", shown(f[1], b));
    if (span_is(f[2], "inf"))
        r.max_bytes = UINT64_MAX;
    else if (parse_u64(f[2], &r.max_bytes))
        return fail(p, TUNER_EFORMAT, "max_bytes \"%s\" is not a byte count or inf",
                    shown(f[2], b));
    if (r.max_bytes < r.min_bytes)
        return fail(p, TUNER_EFORMAT, "max_bytes is below min_bytes");
    if (parse_count(f[3], &r.nodes))
        return fail(p, TUNER_EFORMAT, "nodes \"%s\" is not a count >= 1 or *", shown(f[3], b));
    if (parse_count(f[4], &r.ranks))
        return fail(p, TUNER_EFORMAT, "ranks \"%s\" is not a count >= 1 or *", shown(f[4], b));
    if ((v = lookup(f[5], algo_names, TUNER_NUM_ALGOS)) < 0)
        return fail(p, TUNER_EFORMAT, "unknown algorithm \"%s\"", shown(f[5], b));
    r.algo = (uint8_t)v;
    if ((v = lookup(f[6], proto_names, TUNER_NUM_PROTOS)) < 0)
        return fail(p, TUNER_EFORMAT, "unknown protocol \"%s\"", shown(f[6], b));
    r.proto = (uint8_t)v;
    uint64_t ch = 0;
    if (n == 8 && f[7].n && (parse_u64(f[7], &ch) || ch > TUNER_MAX_CHANNELS))
        return fail(p, TUNER_EFORMAT, "channels \"%s\" is not 0..%d", shown(f[7], b),
                    TUNER_MAX_CHANNELS);
    r.channels = (uint8_t)ch;
    return add_rule(p, &r);
}

/* `# key=value` before the column line; other `#` lines are comments. */
static int parse_header(struct parser *p, struct span line)
{
    struct span body = trim((struct span){line.s + 1, line.n - 1});
    const char *eq = memchr(body.s, '=', body.n);
    if (!eq || eq == body.s)
        return 0;
    struct span raw = trim((struct span){body.s, (size_t)(eq - body.s)});
    char lower[16]; /* a key in any case: "# GPUS=4" is gpus, never prose that skips its check */
    if (raw.n >= sizeof(lower))
        return 0; /* longer than any key: prose with an '=' in it */
    for (size_t i = 0; i < raw.n; i++) {
        char ch = raw.s[i] >= 'A' && raw.s[i] <= 'Z' ? (char)(raw.s[i] - 'A' + 'a') : raw.s[i];
        if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            return 0; /* prose with an '=' in it, not a key */
        lower[i] = ch;
    }
    struct span key = {lower, raw.n};
    struct span value = trim((struct span){eq + 1, body.n - (size_t)(eq + 1 - body.s)});
    char b[48];
    if (span_is(key, "class")) {
        if (p->seen_class++)
            return fail(p, TUNER_EFORMAT, "class given twice");
        if (value.n == 0 || value.n > TUNER_CLASS_MAX || memchr(value.s, ' ', value.n))
            return fail(p, TUNER_EFORMAT, "class \"%s\" is empty, too long or has a space",
                        shown(value, b));
        memcpy(p->t->class_id, value.s, value.n);
        p->t->class_id[value.n] = '\0';
    } else if (span_is(key, "gpus")) {
        uint64_t n;
        if (p->seen_gpus++)
            return fail(p, TUNER_EFORMAT, "gpus given twice");
        if (parse_u64(value, &n) || n == 0 || n > 4096)
            return fail(p, TUNER_EFORMAT, "gpus \"%s\" is not a count from 1 to 4096",
                        shown(value, b));
        p->t->gpus = (unsigned)n;
    } else if (span_is(key, "gpu_model")) {
        if (p->seen_model++)
            return fail(p, TUNER_EFORMAT, "gpu_model given twice");
        int bad = value.n == 0 || value.n > TUNER_CLASS_MAX;
        for (size_t i = 0; i < value.n && !bad; i++)
            bad = (unsigned char)value.s[i] < ' ' || value.s[i] == 0x7f;
        if (bad)
            return fail(p, TUNER_EFORMAT, "gpu_model \"%s\" is empty, too long or not text",
                        shown(value, b));
        memcpy(p->t->gpu_model, value.s, value.n);
        p->t->gpu_model[value.n] = '\0';
    } else if (span_is(key, "digest")) {
        char hex[TUNER_DIGEST_CHARS + 1] = "";
        if (p->seen_digest++)
            return fail(p, TUNER_EFORMAT, "digest given twice");
        if (value.n == TUNER_DIGEST_CHARS)
            memcpy(hex, value.s, value.n);
        if (tuner_digest_parse(hex, &p->t->declared))
            return fail(p, TUNER_EFORMAT, "digest \"%s\" is not %d lowercase hex digits",
                        shown(value, b), TUNER_DIGEST_CHARS);
        p->t->has_declared = 1;
    } else if (span_is(key, "nccl_min") || span_is(key, "nccl_max")) {
        int is_min = span_is(key, "nccl_min");
        if (is_min ? p->seen_min++ : p->seen_max++)
            return fail(p, TUNER_EFORMAT, "%.*s given twice", (int)key.n, key.s);
        if (parse_version(value, is_min ? &p->t->nccl_min : &p->t->nccl_max))
            return fail(p, TUNER_EFORMAT, "%.*s \"%s\" is not MAJOR.MINOR.PATCH", (int)key.n, key.s,
                        shown(value, b));
    }
    return 0;
}

/* One line without its end: line 1 is the magic, then headers, the column line, rows. */
static int parse_line(struct parser *p, struct span raw)
{
    if (raw.n > TUNER_TABLE_MAX_LINE)
        return fail(p, TUNER_ELIMIT, "longer than %d bytes", TUNER_TABLE_MAX_LINE);
    if (memchr(raw.s, '\0', raw.n))
        return fail(p, TUNER_EFORMAT, "a NUL byte");
    struct span line = trim(raw);
    if (p->line == 1) {
        if (span_is(line, TUNER_TABLE_MAGIC))
            return 0;
        size_t stem = sizeof(magic_stem) - 1;
        if (line.n > stem && memcmp(line.s, magic_stem, stem) == 0) {
            char b[48];
            return fail(p, TUNER_EFORMAT, "table version \"%s\" is not 1 (a newer topotune?)",
                        shown((struct span){line.s + stem, line.n - stem}, b));
        }
        return fail(p, TUNER_EFORMAT, "not a topotune tuner table (want \"%s\")",
                    TUNER_TABLE_MAGIC);
    }
    if (line.n == 0)
        return 0;
    if (line.s[0] == '#')
        return p->columns_seen ? 0 : parse_header(p, line);
    if (!p->columns_seen) {
        if (!span_is(line, TUNER_TABLE_COLUMNS))
            return fail(p, TUNER_EFORMAT, "expected the column line \"%s\"", TUNER_TABLE_COLUMNS);
        p->columns_seen = 1;
        return 0;
    }
    return parse_row(p, line);
}

static int check_whole(struct parser *p)
{
    p->line = 0;
    if (!p->columns_seen)
        return fail(p, TUNER_EFORMAT, "no column line \"%s\"", TUNER_TABLE_COLUMNS);
    if (p->t->nccl_min && p->t->nccl_max && p->t->nccl_min > p->t->nccl_max)
        return fail(p, TUNER_EFORMAT, "nccl_min is above nccl_max");
    return 0;
}

/* FNV-1a (64 bits) of `len` more bytes, from `h`. */
static uint64_t fnv(uint64_t h, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)data[i]) * 1099511628211ULL; /* FNV's 64-bit prime */
    return h;
}

/* tuner/tuner.h: the digest of what decides calls, in its fixed text form. */
static uint64_t meaning_digest(const struct tuner_table *t)
{
    char line[2 * TUNER_CLASS_MAX + 96];
    uint64_t h = 14695981039346656037ULL; /* FNV's 64-bit offset basis */
    int n = snprintf(line, sizeof(line), "class=%s\ngpu_model=%s\ngpus=%u\nnccl=%u-%u\n",
                     t->class_id, t->gpu_model, t->gpus, t->nccl_min, t->nccl_max);
    h = fnv(h, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    for (size_t i = 0; i < t->nrules; i++) {
        const struct tuner_rule *r = &t->rules[i];
        n = snprintf(line, sizeof(line), "%u,%llu,%llu,%u,%u,%u,%u,%u\n", r->coll,
                     (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes, r->nodes,
                     r->ranks, r->algo, r->proto, r->channels);
        h = fnv(h, line, (size_t)n);
    }
    return h;
}

int tuner_table_parse(struct tuner_table *t, const char *text, size_t len, char *err, size_t errsz)
{
    struct parser p = {.t = t, .err = err, .errsz = errsz};
    *t = (struct tuner_table)TUNER_TABLE_INIT;
    if (err && errsz)
        err[0] = '\0';
    int rc = 0;
    if (!text)
        len = 0;
    if (len > TUNER_TABLE_MAX_BYTES)
        rc = fail(&p, TUNER_ELIMIT, "larger than %d bytes", TUNER_TABLE_MAX_BYTES);
    for (size_t at = 0; rc == 0 && at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        struct span raw = {text + at, n};
        if (raw.n && raw.s[raw.n - 1] == '\r')
            raw.n--;
        p.line++;
        rc = parse_line(&p, raw);
        at += n + (nl != NULL);
    }
    if (rc == 0 && len == 0)
        rc = fail(&p, TUNER_EFORMAT, "empty file");
    if (rc == 0)
        rc = check_whole(&p);
    if (rc)
        tuner_table_release(t);
    else
        t->digest = meaning_digest(t);
    return rc;
}

void tuner_digest_format(uint64_t digest, char buf[TUNER_DIGEST_CHARS + 1])
{
    snprintf(buf, TUNER_DIGEST_CHARS + 1, "%016llx", (unsigned long long)digest);
}

int tuner_table_identity(const struct tuner_table *t, const char *named, char *why, size_t len)
{
    uint64_t want;
    char have[TUNER_DIGEST_CHARS + 1], declared[TUNER_DIGEST_CHARS + 1];
    tuner_digest_format(t->digest, have);
    if (t->has_declared && t->declared != t->digest) {
        tuner_digest_format(t->declared, declared);
        snprintf(why, len,
                 "its rows are not those its digest= header names (%s, they are %s): a copy "
                 "cut short or edited",
                 declared, have);
        return -1;
    }
    if (named && (tuner_digest_parse(named, &want) || want != t->digest)) {
        char job[TUNER_DIGEST_CHARS + 1]; /* as given, printable: it may be anything */
        size_t n = 0;
        for (; n < TUNER_DIGEST_CHARS && named[n]; n++)
            job[n] = named[n] > ' ' && named[n] < 0x7f ? named[n] : '?';
        job[n] = '\0';
        snprintf(why, len,
                 "it is not the table the job was launched with (digest %s, the job's %s): "
                 "another profile's, or a copy cut short",
                 have, job);
        return -1;
    }
    return 0;
}

int tuner_digest_parse(const char *text, uint64_t *digest)
{
    uint64_t v = 0;
    for (int i = 0; i < TUNER_DIGEST_CHARS; i++) {
        char ch = text ? text[i] : '\0';
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (text[TUNER_DIGEST_CHARS] != '\0')
        return -1;
    *digest = v;
    return 0;
}

/* Reads at most TUNER_TABLE_MAX_BYTES + 1 bytes of a regular file into a new buffer
 * (O_NONBLOCK: a FIFO named by mistake must not block NCCL's init). */
static int read_file(const char *path, char **out, size_t *len, char *err, size_t errsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    char *buf = NULL;
    size_t n = 0;
    const char *why = NULL;
    int rc = TUNER_EIO;
    if (fd < 0 || fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (!(buf = malloc(TUNER_TABLE_MAX_BYTES + 1)))
        why = "out of memory", rc = TUNER_ENOMEM;
    while (!why && n < TUNER_TABLE_MAX_BYTES + 1) {
        ssize_t got = read(fd, buf + n, TUNER_TABLE_MAX_BYTES + 1 - n);
        if (got < 0 && errno != EINTR)
            why = strerror(errno);
        else if (got == 0)
            break;
        else if (got > 0)
            n += (size_t)got;
    }
    if (fd >= 0)
        close(fd);
    if (why) {
        if (err && errsz)
            snprintf(err, errsz, "cannot read it: %s", why);
        free(buf);
        buf = NULL;
        n = 0;
    }
    *out = buf;
    *len = n;
    return why ? rc : 0;
}

int tuner_table_load(struct tuner_table *t, const char *path, char *err, size_t errsz)
{
    char *text;
    size_t len;
    *t = (struct tuner_table)TUNER_TABLE_INIT;
    int rc = read_file(path, &text, &len, err, errsz);
    if (rc == 0)
        rc = tuner_table_parse(t, text, len, err, errsz);
    free(text);
    return rc;
}

void tuner_table_release(struct tuner_table *t)
{
    free(t->rules);
    *t = (struct tuner_table)TUNER_TABLE_INIT;
}

int tuner_rule_fits(const struct tuner_rule *r, uint64_t nodes, uint64_t ranks)
{
    return (r->nodes == TUNER_ANY || r->nodes == nodes) &&
           (r->ranks == TUNER_ANY || r->ranks == ranks);
}

const struct tuner_rule *tuner_table_match(const struct tuner_table *t, int coll, uint64_t bytes,
                                           uint64_t nodes, uint64_t ranks)
{
    for (size_t i = 0; i < t->nrules; i++) {
        const struct tuner_rule *r = &t->rules[i];
        if (r->coll == coll && bytes >= r->min_bytes && bytes <= r->max_bytes &&
            tuner_rule_fits(r, nodes, ranks))
            return r;
    }
    return NULL;
}

unsigned tuner_version_code(unsigned major, unsigned minor, unsigned patch)
{
    return major * 10000 + minor * 100 + patch;
}

void tuner_version_format(unsigned code, char *buf, size_t bufsz)
{
    if (code >= 10000)
        snprintf(buf, bufsz, "%u.%u.%u", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(buf, bufsz, "%u.%u.%u", code / 1000, code / 100 % 10, code % 100);
}

const char *tuner_coll_name(int coll)
{
    return coll >= 0 && coll < TUNER_NUM_COLLS ? coll_names[coll] : "?";
}

const char *tuner_algo_name(int algo)
{
    return algo >= 0 && algo < TUNER_NUM_ALGOS ? algo_names[algo] : "?";
}

const char *tuner_proto_name(int proto)
{
    return proto >= 0 && proto < TUNER_NUM_PROTOS ? proto_names[proto] : "?";
}
