/* SPDX-License-Identifier: MIT */
/*
 * The profile store: ROOT/<class>/v<N>/ directories, never overwritten; a new
 * version only when the content (not the date) changed; ROOT/<class>/latest a
 * symbolic link to the newest; ROOT/index.json listing every class and
 * version. A version is written whole into a hidden temporary directory and
 * renamed into place, so an interrupted gen leaves the previous state intact.
 */
#include "gen/internal.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct gen_emitter *const emitters[] = {
    &gen_emit_env,    &gen_emit_conf,   &gen_emit_tuner,      &gen_emit_torchrun,
    &gen_emit_sbatch, &gen_emit_mpirun, &gen_emit_pytorchjob, &gen_emit_dockerfile,
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

/* The highest v<N> under dir, 0 when none. */
static int latest_version(const char *dir)
{
    DIR *d = opendir(dir);
    int best = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end;
        long v = e->d_name[0] == 'v' ? strtol(e->d_name + 1, &end, 10) : 0;
        if (v > best && *end == '\0')
            best = (int)v;
    }
    if (d)
        closedir(d);
    return best;
}

static int mkdirs(const char *path)
{
    char buf[2048];
    pathf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

static int write_version(const char *tmpdir, const json_t *profile)
{
    char path[2300];
    pathf(path, sizeof(path), "%s/launch", tmpdir);
    if (mkdirs(path))
        return error("cannot create '%s': %s", path, strerror(errno)), UTIL_EIO;
    pathf(path, sizeof(path), "%s/profile.json", tmpdir);
    if (util_json_write(path, profile))
        return UTIL_EIO;
    for (size_t i = 0; i < sizeof(emitters) / sizeof(emitters[0]); i++) {
        struct util_buf out = UTIL_BUF_INIT;
        pathf(path, sizeof(path), "%s/%s", tmpdir, emitters[i]->path);
        int rc = emitters[i]->emit(profile, &out);
        if (!rc)
            rc = util_file_write_atomic(path, out.data ? out.data : "", out.len);
        if (!rc && emitters[i]->executable)
            chmod(path, 0755);
        util_buf_release(&out);
        if (rc)
            return error("cannot write '%s'", emitters[i]->path), UTIL_EIO;
    }
    return 0;
}

static void remove_tree(const char *dir)
{
    char cmd[2300];
    pathf(cmd, sizeof(cmd), "rm -rf '%s'", dir); /* our own temporary directory, quoted */
    if (system(cmd))
        warning("could not remove '%s'", dir);
}

/* latest -> v<N>, replaced atomically through a temporary link. */
static int point_latest(const char *classdir, int version)
{
    char link[2300], tmp[2300], target[32];
    pathf(link, sizeof(link), "%s/latest", classdir);
    pathf(tmp, sizeof(tmp), "%s/.latest.tmp", classdir);
    pathf(target, sizeof(target), "v%d", version);
    unlink(tmp);
    if (symlink(target, tmp) || rename(tmp, link))
        return error("cannot point '%s' at %s: %s", link, target, strerror(errno)), UTIL_EIO;
    return 0;
}

static int write_index(const char *root)
{
    json_t *index = json_object(), *classes = json_object();
    json_object_set_new(index, "schema", json_string("topotune/profiles-index/1"));
    DIR *d = opendir(root);
    for (struct dirent *e; d && (e = readdir(d));) {
        char classdir[2100];
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "index.json"))
            continue;
        if (pathf(classdir, sizeof(classdir), "%s/%s", root, e->d_name))
            continue;
        int latest = latest_version(classdir);
        if (!latest)
            continue;
        json_t *c = json_object(), *versions = json_array();
        for (int v = 1; v <= latest; v++) {
            char p[2200];
            pathf(p, sizeof(p), "%s/v%d/profile.json", classdir, v);
            json_t *prof = access(p, F_OK) == 0 ? json_load_file(p, 0, NULL) : NULL;
            if (!prof)
                continue;
            json_array_append_new(versions,
                                  json_pack("{s:i,s:O,s:O,s:O}", "version", v, "created",
                                            json_object_get(prof, "created"), "content_hash",
                                            json_object_get(prof, "content_hash"), "summary",
                                            json_object_get(prof, "summary")));
            json_decref(prof);
        }
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

int gen_store(const char *root, json_t *content, int *version, int *created)
{
    const char *class_id = json_string_value(json_object_get(content, "class"));
    char classdir[2100], prev[2200];
    pathf(classdir, sizeof(classdir), "%s/%s", root, class_id);
    if (mkdirs(classdir))
        return error("cannot create '%s': %s", classdir, strerror(errno)), UTIL_EIO;
    char *hash = util_json_hash(content);
    int latest = latest_version(classdir);
    *created = 0;
    *version = latest;
    if (latest) {
        pathf(prev, sizeof(prev), "%s/v%d/profile.json", classdir, latest);
        json_t *old = json_load_file(prev, 0, NULL);
        const char *old_hash = json_string_value(json_object_get(old, "content_hash"));
        int same = old_hash && !strcmp(old_hash, hash);
        json_decref(old);
        if (same) {
            free(hash);
            return write_index(root) ? UTIL_EIO : 0;
        }
    }
    json_t *profile = json_deep_copy(content);
    char created_at[32];
    time_t now = time(NULL);
    strftime(created_at, sizeof(created_at), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(profile, "version", json_integer(latest + 1));
    json_object_set_new(profile, "created", json_string(created_at));
    json_object_set_new(profile, "content_hash", json_string(hash));
    free(hash);
    char tmp[2200], final[2200];
    pathf(tmp, sizeof(tmp), "%s/.v%d.tmp-%d", classdir, latest + 1, (int)getpid());
    pathf(final, sizeof(final), "%s/v%d", classdir, latest + 1);
    remove_tree(tmp);
    int rc = write_version(tmp, profile);
    json_decref(profile);
    if (!rc && rename(tmp, final))
        rc = (error("cannot create '%s': %s", final, strerror(errno)), UTIL_EIO);
    if (rc) {
        remove_tree(tmp);
        return rc;
    }
    *version = latest + 1;
    *created = 1;
    rc = point_latest(classdir, latest + 1);
    return rc ? rc : write_index(root) ? UTIL_EIO : 0;
}
