/* SPDX-License-Identifier: MIT */
/*
 * The profile store: ROOT/<class>/v<N>/ directories, never overwritten; a new
 * version only when the content (not the date) changed; ROOT/<class>/latest a
 * symbolic link to the newest; ROOT/index.json listing every class and
 * version. A version is written whole into a hidden temporary directory and
 * renamed into place, so an interrupted gen leaves the previous state intact.
 */
#include "gen/internal.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct gen_emitter *const emitters[] = {
    &gen_emit_env,        &gen_emit_conf,
    &gen_emit_tuner,      &gen_emit_tuner_table,
    &gen_emit_torchrun,   &gen_emit_sbatch,
    &gen_emit_mpirun,     &gen_emit_pytorchjob,
    &gen_emit_dockerfile, &gen_emit_check_daemonset,
    &gen_emit_survey_job,
};

/* snprintf for paths: -1 (and an empty string) instead of a silently cut path. */
__attribute__((format(printf, 3, 4))) static int pathf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}

/*
 * N of a version directory's name "v<N>": digits only, no sign, no leading zero, 1 to
 * GEN_MAX_VERSION; 0 for any other name. A store never holds more versions than a person
 * makes, so a larger number is a planted or damaged entry (v2147483647 overflowed the next
 * version, an empty v1999999999 made every later gen walk two billion names).
 */
static int version_of(const char *name)
{
    if (name[0] != 'v' || name[1] < '1' || name[1] > '9')
        return 0;
    long v = 0;
    for (const char *p = name + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > GEN_MAX_VERSION)
            return 0;
        v = v * 10 + (*p - '0');
    }
    return v <= GEN_MAX_VERSION ? (int)v : -1;
}

/*
 * The version directories under dir, sorted, into a new array (free it); their count in *n.
 * Only real directories count (not links, not files); a name beyond GEN_MAX_VERSION is left
 * out with a warning naming it.
 */
static int *versions_in(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    int *list = NULL;
    size_t cap = 0;
    *n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        int v = e->d_name[0] == 'v' ? version_of(e->d_name) : 0;
        struct stat st;
        if (v < 0 || (!v && e->d_name[0] == 'v' && e->d_name[1] >= '0' && e->d_name[1] <= '9'))
            util_warning("ignoring '%s/%.64s': not a version gen writes (v1 to v%d)", dir,
                         e->d_name, GEN_MAX_VERSION);
        if (v <= 0 || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISDIR(st.st_mode))
            continue;
        if (*n == cap) {
            list = util_xrealloc(list, (cap = cap ? cap * 2 : 16) * sizeof(int));
        }
        list[(*n)++] = v;
    }
    if (d)
        closedir(d);
    for (size_t i = 1; i < *n; i++) /* insertion sort: a store holds few versions */
        for (size_t j = i; j > 0 && list[j - 1] > list[j]; j--) {
            int t = list[j];
            list[j] = list[j - 1];
            list[j - 1] = t;
        }
    return list;
}

/* The highest v<N> under dir, 0 when none. */
static int latest_version(const char *dir)
{
    size_t n;
    int *list = versions_in(dir, &n);
    int best = n ? list[n - 1] : 0;
    free(list);
    return best;
}

/* A stored profile.json, quietly NULL when missing or not a regular file (a link, a FIFO). */
static json_t *regular_json(const char *path)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why;
    json_t *j = util_file_read_regular(path, 64u << 20, &text, &why)
                    ? NULL
                    : json_loadb(util_buf_str(&text), text.len, 0, NULL);
    util_buf_release(&text);
    return j;
}

/* profile.json as stored; the emitters also get where the version will live (location). */
static int write_version(const char *tmpdir, const json_t *profile, const char *location)
{
    char path[2300];
    pathf(path, sizeof(path), "%s/launch", tmpdir);
    if (util_mkdir_p(path))
        return util_error("cannot create '%s': %s", path, strerror(errno)), UTIL_EIO;
    pathf(path, sizeof(path), "%s/profile.json", tmpdir);
    if (util_json_write(path, profile))
        return UTIL_EIO;
    json_t *emitted = json_deep_copy(profile);
    json_object_set_new(emitted, "location", json_string(location));
    for (size_t i = 0; i < sizeof(emitters) / sizeof(emitters[0]); i++) {
        struct util_buf out = UTIL_BUF_INIT;
        pathf(path, sizeof(path), "%s/%s", tmpdir, emitters[i]->path);
        int rc = emitters[i]->emit(emitted, &out);
        if (!rc)
            rc = util_file_write_atomic(path, out.data ? out.data : "", out.len);
        if (!rc && emitters[i]->executable)
            chmod(path, 0755);
        util_buf_release(&out);
        if (rc) {
            json_decref(emitted);
            return util_error("cannot write '%s'", emitters[i]->path), UTIL_EIO;
        }
    }
    json_decref(emitted);
    return 0;
}

/* Our own temporary directory: unlinkat, no shell, no link followed. */
static void remove_tree(const char *dir)
{
    if (util_remove_tree_at(AT_FDCWD, dir, 4))
        util_warning("could not remove '%s'", dir);
}

int gen_latest_dir(const char *classdir, char *out, size_t len)
{
    char link[2300], target[64];
    struct stat st;
    if (pathf(link, sizeof(link), "%s/latest", classdir))
        return util_error("'%s': a path too long", classdir), -1;
    if (lstat(link, &st))
        return errno == ENOENT ? 0
                               : (util_error("cannot read '%s': %s", link, strerror(errno)), -1);
    ssize_t n = S_ISLNK(st.st_mode) ? readlink(link, target, sizeof(target) - 1) : -1;
    int version = 0, used = 0;
    if (n > 0) {
        target[n] = '\0';
        if (sscanf(target, "v%d%n", &version, &used) != 1 || used != n || version < 1 ||
            version > GEN_MAX_VERSION)
            version = 0;
    }
    if (!version)
        return util_error("'%s' is not gen's link to a version beside it (v<N>): a directory, a "
                          "file or a link elsewhere was put there; remove it (gen points it again)",
                          link),
               -1;
    if (pathf(out, len, "%s/v%d", classdir, version))
        return util_error("'%s': a path too long", classdir), -1;
    /* the version it names must be gen's folder too: a link put there led every reader of
     * latest to a profile planted elsewhere */
    if (!lstat(out, &st) && !S_ISDIR(st.st_mode))
        return util_error("'%s' is not a folder gen wrote (a link or a file was put there): "
                          "remove it",
                          out),
               -1;
    return version;
}

static int latest_named(const char *classdir);

/* latest names a version after `version` that is there (a racing gen's, written first). */
static int newer_named(const char *classdir, int version)
{
    char dir[2300];
    struct stat st;
    int named = latest_named(classdir);
    return named > version && !pathf(dir, sizeof(dir), "%s/v%d", classdir, named) &&
           !lstat(dir, &st) && S_ISDIR(st.st_mode);
}

/* The class folder's lock: a record lock on its .lock file (NFS carries those between hosts; it
 * does not carry flock), waited for. -1 without one, said: on a filesystem that refuses locks
 * gen goes on unlocked rather than fail after writing its version. */
static int lock_class(const char *classdir)
{
    char path[2300];
    struct stat st;
    pathf(path, sizeof(path), "%s/.lock", classdir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st))
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    while (!why && fcntl(fd, F_SETLKW, &l) == -1)
        why = errno == EINTR ? NULL : strerror(errno);
    if (!why)
        return fd;
    util_warning("cannot lock '%s' (%s): latest is pointed without it (gens racing on this class "
                 "may leave it on an older version)",
                 path, why);
    if (fd >= 0)
        close(fd);
    return -1;
}

/* latest -> v<N> through a temporary link of this gen's own (host and process: gens racing
 * shared one, and one failed), never back: a later version another gen pointed it at stays. */
static int point_latest(const char *classdir, int version)
{
    char link[2300], tmp[2400], target[32], host[64] = "";
    if (gethostname(host, sizeof(host) - 1) || !*host)
        snprintf(host, sizeof(host), "host");
    for (char *c = host; *c; c++) /* a file name's bytes */
        *c = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                     *c == '-'
                 ? *c
                 : '_';
    pathf(link, sizeof(link), "%s/latest", classdir);
    pathf(tmp, sizeof(tmp), "%s/.latest.tmp-%s-%d", classdir, host, (int)getpid());
    pathf(target, sizeof(target), "v%d", version);
    if (newer_named(classdir, version))
        return 0;
    unlink(tmp);
    if (symlink(target, tmp) || rename(tmp, link)) {
        int err = errno;
        unlink(tmp);
        return util_error("cannot point '%s' at %s: %s", link, target, strerror(err)), UTIL_EIO;
    }
    return 0;
}

/* The version a class's latest names, read without a word (0: none, or not gen's link): the index
 * is rewritten over every class, and another class's planted latest is that class's reader's to
 * refuse, not an error of the gen that wrote this one. */
static int latest_named(const char *classdir)
{
    char link[2300], target[64];
    int version = 0, used = 0;
    if (pathf(link, sizeof(link), "%s/latest", classdir))
        return 0;
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return 0;
    target[n] = '\0';
    if (sscanf(target, "v%d%n", &version, &used) != 1 || used != n || version < 1 ||
        version > GEN_MAX_VERSION)
        return 0;
    return version;
}

static int write_index(const char *root)
{
    json_t *index = json_object(), *classes = json_object();
    json_object_set_new(index, "schema", json_string("topotune/profiles-index/1"));
    DIR *d = opendir(root);
    for (struct dirent *e; d && (e = readdir(d));) {
        char classdir[2100];
        /* a folder of no class id gen writes ("CLASS (old)", a copy kept by hand) is no class of
         * the store: listed, it made every `profiles list` refuse the index gen wrote */
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "index.json") || !util_valid_id(e->d_name))
            continue;
        if (pathf(classdir, sizeof(classdir), "%s/%s", root, e->d_name))
            continue;
        size_t nv;
        int *list = versions_in(classdir, &nv), latest = nv ? list[nv - 1] : 0;
        int pointed = latest ? latest_named(classdir) : 0;
        latest = pointed > 0 ? pointed : latest; /* the version latest names (see gen_store) */
        if (!latest) {
            free(list);
            continue;
        }
        json_t *c = json_object(), *versions = json_array();
        for (size_t i = 0; i < nv; i++) { /* the versions there are, never a count up to N */
            char p[2200];
            int v = list[i];
            pathf(p, sizeof(p), "%s/v%d/profile.json", classdir, v);
            json_t *prof = regular_json(p);
            if (!prof)
                continue;
            /* each as `profiles list` reads it: text or null (a version without a summary was
             * dropped from the index, one whose summary was no text made every list refuse it) */
            json_t *row = json_pack("{s:i}", "version", v);
            static const char *const texts[] = {"created", "content_hash", "summary"};
            for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
                json_t *x = json_object_get(prof, texts[k]);
                json_object_set(row, texts[k], json_is_string(x) ? x : json_null());
            }
            json_array_append_new(versions, row);
            json_decref(prof);
        }
        free(list);
        json_object_set_new(c, "latest", json_integer(latest));
        json_object_set_new(c, "versions", versions);
        json_object_set_new(classes, e->d_name, c);
    }
    if (d)
        closedir(d);
    json_object_set_new(index, "classes", classes);
    char path[2100];
    pathf(path, sizeof(path), "%s/index.json", root);
    int rc = util_json_write(path, index);
    json_decref(index);
    return rc;
}

/* The temporary links of gens that died between making one and renaming it: under the lock no
 * other gen has one (those that run unlocked, where the lock cannot be had, take none of this). */
static void remove_stale_links(const char *classdir)
{
    DIR *d = opendir(classdir);
    struct stat st;
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, ".latest.tmp", 11) &&
            !fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

/* latest pointed at `version` (0: left as it is) and the index rewritten, under the class's lock:
 * renames of racing gens crossed (latest back on the older version), and an index written
 * outside the lock could name the older one. */
static int publish(const char *root, const char *classdir, int version)
{
    int fd = lock_class(classdir);
    if (fd >= 0)
        remove_stale_links(classdir);
    int rc = version ? point_latest(classdir, version) : 0;
    if (!rc && write_index(root))
        rc = UTIL_EIO;
    if (fd >= 0)
        close(fd); /* the lock with it */
    return rc;
}

/*
 * ROOT/<class>, created when missing: the class id is one safe path component
 * (checked again here, wherever it came from) and the directory is a real one
 * under the root, not a symbolic link that leads elsewhere.
 */
static int class_dir(const char *root, const char *class_id, char *classdir, size_t len)
{
    if (!util_valid_id(class_id))
        return util_error("refusing to write a profile for class \"%.64s\": a class id is "
                          "[A-Za-z0-9._-] without \"..\", at most 128 characters",
                          class_id ? class_id : "(none)"),
               UTIL_EINVAL;
    if (!strcmp(class_id, "index.json")) /* the root's own file: a class there breaks it */
        return util_error("refusing to write a profile for class \"index.json\": the profile "
                          "root's index has that name (a node class id never does)"),
               UTIL_EINVAL;
    if (util_mkdir_p(root))
        return util_error("cannot create '%s': %s", root, strerror(errno)), UTIL_EIO;
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return util_error("cannot open '%s': %s", root, strerror(errno)), UTIL_EIO;
    int fd = mkdirat(rootfd, class_id, 0755) && errno != EEXIST
                 ? -1
                 : openat(rootfd, class_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    close(rootfd);
    if (fd < 0)
        return util_error("cannot use '%s/%s': %s (a profile class directory must be a directory, "
                          "not a link)",
                          root, class_id, strerror(err)),
               UTIL_EIO;
    close(fd);
    return pathf(classdir, len, "%s/%s", root, class_id)
               ? (util_error("profiles root path too long: '%.64s...'", root), UTIL_EINVAL)
               : 0;
}

/* 1 when the latest version under classdir holds content of this hash. */
static int latest_is(const char *classdir, int latest, const char *hash)
{
    char prev[2200];
    if (!latest || pathf(prev, sizeof(prev), "%s/v%d/profile.json", classdir, latest))
        return 0;
    json_t *old = regular_json(prev);
    const char *old_hash = json_string_value(json_object_get(old, "content_hash"));
    int same = old_hash && !strcmp(old_hash, hash);
    json_decref(old);
    return same;
}

/*
 * Writes content as version v into a temporary directory and renames it into
 * place. Returns 0, 1 when v appeared meanwhile (another gen took it: try the
 * next), or an error code.
 */
static int try_version(const char *classdir, const json_t *content, const char *hash, int v)
{
    json_t *profile = json_deep_copy(content);
    char created_at[32], tmp[2200], final[2200], location[PATH_MAX + 32] = "";
    time_t now = time(NULL);
    strftime(created_at, sizeof(created_at), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(profile, "version", json_integer(v));
    json_object_set_new(profile, "created", json_string(created_at));
    json_object_set_new(profile, "content_hash", json_string(hash));
    pathf(tmp, sizeof(tmp), "%s/.v%d.tmp-%d", classdir, v, (int)getpid());
    pathf(final, sizeof(final), "%s/v%d", classdir, v);
    char *abs = realpath(classdir, NULL);
    if (abs)
        snprintf(location, sizeof(location), "%s/v%d", abs, v);
    free(abs);
    remove_tree(tmp);
    int rc = write_version(tmp, profile, location);
    json_decref(profile);
    if (!rc && rename(tmp, final)) {
        int err = errno;
        remove_tree(tmp);
        if (err == ENOTEMPTY || err == EEXIST)
            return 1;
        return util_error("cannot create '%s': %s", final, strerror(err)), UTIL_EIO;
    }
    if (rc)
        remove_tree(tmp);
    return rc;
}

int gen_store(const char *root, json_t *content, int *version, int *created)
{
    const char *class_id = json_string_value(json_object_get(content, "class"));
    /* what gen will replace, checked before anything is written (the class folder made): a
     * linked index.json would stop the index, a planted latest keep the store's readers on
     * another profile */
    char classdir[2100], latest_dir[2400], index[2300];
    struct stat st;
    pathf(index, sizeof(index), "%s/index.json", root);
    if (!lstat(index, &st) && !S_ISREG(st.st_mode))
        return util_error("'%s' is not a regular file (a link?): remove it; gen writes the index "
                          "there",
                          index),
               UTIL_EINVAL;
    int rc = class_dir(root, class_id, classdir, sizeof(classdir));
    if (rc)
        return rc;
    if (gen_latest_dir(classdir, latest_dir, sizeof(latest_dir)) < 0)
        return UTIL_EINVAL;
    char *hash = util_json_hash(content);
    *created = 0;
    /* Another gen on the same root may take a version number first: then the next one, unless
     * it wrote this very content. */
    for (int tries = 0; tries < 100; tries++) {
        int latest = latest_version(classdir);
        if (latest >= GEN_MAX_VERSION) {
            free(hash);
            return util_error(
                       "'%s' holds v%d, the last version gen writes: move the class elsewhere "
                       "to start again",
                       classdir, latest),
                   UTIL_EINVAL;
        }
        *version = latest;
        if (latest_is(classdir, latest, hash)) {
            free(hash);
            /* unchanged: a latest removed (as a planted one must be) is pointed again */
            char dir[2400];
            return publish(root, classdir,
                           gen_latest_dir(classdir, dir, sizeof(dir)) == 0 ? latest : 0);
        }
        rc = try_version(classdir, content, hash, latest + 1);
        if (rc == 1)
            continue;
        free(hash);
        if (rc)
            return rc;
        *version = latest + 1;
        *created = 1;
        /* a sweep where no run ended ok is kept as its evidence, but latest, which launch
         * scripts, check and env read, stays on the profile it named: a failed run replaced a
         * good profile with one that recommends nothing */
        char dir[2400];
        int named = gen_latest_dir(classdir, dir, sizeof(dir));
        json_t *outcomes = json_object_get(json_object_get(content, "sweep"), "outcomes");
        if (named > 0 && !json_integer_value(json_object_get(outcomes, "ok"))) {
            util_warning("'%s/v%d' records a sweep in which no run ended ok: 'latest' stays on "
                         "v%d (launch scripts, check and env read it)",
                         classdir, latest + 1, named);
            return publish(root, classdir, 0);
        }
        return publish(root, classdir, latest + 1);
    }
    free(hash);
    return util_error("'%s': versions kept appearing while writing: is a gen looping on it?",
                      classdir),
           UTIL_EIO;
}

/* A variable's name as a shell and NCCL take it: a letter or _, then letters, digits and _. */
static int env_name_valid(const char *s)
{
    return s && (s[0] < '0' || s[0] > '9') && util_text_in_set(s, 128, "_");
}

static int profile_bad(const char *path, const char *what)
{
    return util_error("profile '%s': %s: give a profile topotune gen wrote", path, what);
}

int gen_profile_check(const json_t *p, const char *path)
{
    if (!json_is_object(p) || !json_is_string(json_object_get(p, "class")))
        return profile_bad(path, "not a topotune profile (an object with a \"class\")");
    if (!util_valid_id(json_string_value(json_object_get(p, "class"))))
        return profile_bad(path, "\"class\" is not a class id (letters, digits, '.', '_' and "
                                 "'-')");
    json_t *v = json_object_get(p, "version");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000))
        return profile_bad(path, "\"version\" is not a whole number from 1 to 1000000");
    static const char *const texts[] = {"summary", "created", "content_hash"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *t = json_object_get(p, texts[i]);
        if (t && !json_is_string(t) && !json_is_null(t))
            return util_error("profile '%s': \"%s\" is not text: give a profile topotune gen "
                              "wrote",
                              path, texts[i]);
    }
    json_t *vars = json_object_get(p, "variables");
    if (vars && !json_is_array(vars))
        return profile_bad(path, "\"variables\" is not an array");
    /* NCCL reads a few hundred variables: more is an edited file (profiles diff pairs them) */
    if (json_array_size(vars) > 1024)
        return profile_bad(path, "\"variables\" holds more than 1024 entries");
    size_t i;
    json_array_foreach(vars, i, v) {
        json_t *role = json_object_get(v, "role");
        const char *why = !json_is_object(v) ? "is not an object"
                          : !env_name_valid(json_string_value(json_object_get(v, "name")))
                              ? "has no \"name\" of letters, digits and _"
                          : !json_is_string(json_object_get(v, "value")) ? "has no text \"value\""
                          : role && !json_is_string(role) ? "has a \"role\" that is not text"
                                                          : NULL;
        if (why)
            return util_error("profile '%s': variables[%zu] %s: give a profile topotune gen wrote",
                              path, i, why);
    }
    /* the sim backend's numbers are the model's: a profile saying otherwise showed them as
     * measured, without "predicted" or a band */
    const char *backend = json_string_value(json_object_get(p, "backend"));
    if (backend && !strcmp(backend, "sim") && !json_is_true(json_object_get(p, "predicted")))
        return profile_bad(path, "\"backend\" is sim but \"predicted\" is not true (the sim "
                                 "backend's numbers are the model's)");
    return 0;
}

int gen_latest_path_check(const char *path)
{
    char classdir[2100], version[2400];
    snprintf(classdir, sizeof(classdir), "%s", path);
    size_t n = strlen(classdir);
    while (n > 1 && classdir[n - 1] == '/')
        classdir[--n] = '\0';
    char *slash = strrchr(classdir, '/'), *base = slash ? slash + 1 : classdir;
    if (strcmp(base, "latest"))
        return 0;
    if (slash)
        *(slash == classdir ? slash + 1 : slash) = '\0';
    else
        snprintf(classdir, sizeof(classdir), ".");
    return gen_latest_dir(classdir, version, sizeof(version)) < 0 ? -1 : 0;
}

json_t *gen_profile_read(const char *arg, char *path, size_t len)
{
    struct stat st;
    int dir = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, len, dir ? "%s/profile.json" : "%s", arg);
    /* a store's CLASS/latest is read as gen's link to a version folder beside it, as the store's
     * own readers read it: a link planted there, or a version folder that is one, led
     * `check --profile CLASS/latest` to a profile planted elsewhere */
    if (dir && gen_latest_path_check(arg))
        return NULL;
    json_error_t jerr = {.text = ""};
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL; /* a FIFO named profile.json is refused, not waited on */
    /* a profile.json found in the folder named is not followed if it is a link */
    json_t *p = util_file_read_input(path, !dir, 64u << 20, &text, &why)
                    ? NULL
                    : json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &jerr);
    util_buf_release(&text);
    if (!p) {
        if (why)
            util_error("cannot read profile '%s': %s", path, why);
        else
            util_error("cannot read profile '%s': %s (line %d, column %d)", path, jerr.text,
                       jerr.line, jerr.column);
        return NULL;
    }
    if (gen_profile_check(p, path)) {
        json_decref(p);
        return NULL;
    }
    return p;
}
