/* SPDX-License-Identifier: MIT */
/* File helpers: bounded reads, atomic replace, and the sysfs root used by every probe. */
#include "util/file.h"
#include "util/error.h"
#include "util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads fd to its end (at most max_bytes) into out, then closes it. */
static int read_fd(int fd, size_t max_bytes, struct util_buf *out)
{
    char chunk[8192];
    size_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = UTIL_EIO;
            break;
        }
        if (n == 0)
            break;
        total += (size_t)n;
        if (total > max_bytes) {
            rc = UTIL_EINVAL;
            break;
        }
        if (util_buf_add(out, chunk, (size_t)n)) {
            rc = UTIL_ENOMEM;
            break;
        }
    }
    close(fd);
    return rc;
}

int util_file_read(const char *path, size_t max_bytes, struct util_buf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? UTIL_ENOENT : UTIL_EIO;
    return read_fd(fd, max_bytes, out);
}

int util_file_read_regular(const char *path, size_t max_bytes, struct util_buf *out,
                           const char **why)
{
    static char size_words[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        *why = errno == ELOOP ? "a symbolic link (refused: it may point anywhere)"
               : errno == ENOENT || errno == ENOTDIR ? "no such file"
               : errno == EACCES                     ? "permission denied"
                                                     : strerror(errno);
        return errno == ENOENT || errno == ENOTDIR ? UTIL_ENOENT : UTIL_EIO;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        *why = S_ISDIR(st.st_mode) ? "a directory, not a file"
                                   : "not a regular file (a FIFO, socket or device)";
        close(fd);
        return UTIL_EINVAL;
    }
    int rc = read_fd(fd, max_bytes, out);
    snprintf(size_words, sizeof(size_words), "larger than %zu MiB", max_bytes >> 20);
    *why = rc == UTIL_EINVAL ? size_words : rc ? "read error" : NULL;
    return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* fsync of the directory makes the rename itself durable. */
static void sync_parent_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int util_file_write_atomic(const char *path, const void *data, size_t len)
{
    struct util_buf tmp = UTIL_BUF_INIT;
    if (util_buf_addf(&tmp, "%s.tmp.XXXXXX", path))
        return UTIL_ENOMEM;
    int fd = mkstemp(tmp.data);
    if (fd < 0) {
        error("cannot write '%s': %s", path, strerror(errno));
        util_buf_release(&tmp);
        return UTIL_EIO;
    }
    int err = 0;
    if (write_all(fd, data, len) || fsync(fd))
        err = errno ? errno : EIO;
    if (fchmod(fd, 0644) && !err)
        err = errno;
    if (close(fd) && !err)
        err = errno;
    if (!err && rename(tmp.data, path))
        err = errno;
    if (err) {
        unlink(tmp.data);
        error("cannot write '%s': %s", path, strerror(err));
        util_buf_release(&tmp);
        return UTIL_EIO;
    }
    sync_parent_dir(path);
    util_buf_release(&tmp);
    return 0;
}

const char *util_sysfs_root(void)
{
    const char *root = getenv("TOPOTUNE_SYSFS_ROOT");
    return root ? root : "";
}

int util_sysfs_read(const char *path, struct util_buf *out)
{
    struct util_buf full = UTIL_BUF_INIT;
    util_buf_reset(out);
    if (util_buf_addf(&full, "%s%s", util_sysfs_root(), path))
        return UTIL_ENOMEM;
    int rc = util_file_read(full.data, 1 << 20, out);
    util_buf_release(&full);
    return rc ? UTIL_ENOENT : 0;
}

int util_sysfs_read_line(const char *path, struct util_buf *out)
{
    int rc = util_sysfs_read(path, out);
    if (rc)
        return rc;
    char *nl = strchr(util_buf_str(out), '\n');
    if (nl) {
        *nl = '\0';
        out->len = (size_t)(nl - out->data);
    }
    return 0;
}

char *util_sibling_program(const char *name, const char *override_env)
{
    const char *forced = override_env ? getenv(override_env) : NULL;
    if (forced && *forced)
        return strdup(forced);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s/%s", dirname(self), name);
        if (access(b.data, X_OK) == 0)
            return util_buf_detach(&b);
        util_buf_release(&b);
    }
    return strdup(name);
}

int util_remove_tree_at(int at, const char *name, int depth)
{
    if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
        return 0; /* a file, a link, or nothing */
    if (depth <= 0)
        return UTIL_EIO;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return UTIL_EIO;
    }
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc |= util_remove_tree_at(dirfd(d), e->d_name, depth - 1);
    closedir(d);
    if (rc || unlinkat(at, name, AT_REMOVEDIR))
        return UTIL_EIO;
    return 0;
}

int util_data_file(const char *rel, struct util_buf *out)
{
    const char *data = getenv("TOPOTUNE_DATA");
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0)
        self[n] = '\0';
    const char *bindir = n > 0 ? dirname(self) : ".";
    struct util_buf tried = UTIL_BUF_INIT;
    for (int i = 0; i < 3; i++) {
        util_buf_reset(out);
        if (i == 0 && !(data && *data))
            continue;
        if (i == 0)
            util_buf_addf(out, "%s/%s", data, rel);
        else /* installed (PREFIX/bin -> PREFIX/share/topotune), then built (build/ -> profiles/) */
            util_buf_addf(out, "%s/../%s/%s", bindir, i == 1 ? "share/topotune" : "profiles", rel);
        if (access(util_buf_str(out), R_OK) == 0) {
            util_buf_release(&tried);
            return 0;
        }
        util_buf_addf(&tried, "%s%s", tried.len ? ", " : "", util_buf_str(out));
    }
    util_buf_reset(out);
    util_buf_adds(out, util_buf_str(&tried));
    util_buf_release(&tried);
    return -1;
}

int util_temp_file(char *path, size_t len, const char *prefix)
{
    const char *dir = getenv("TMPDIR");
    int n = snprintf(path, len, "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", prefix);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return mkstemp(path);
}

int util_mkdir_p(const char *dir)
{
    char buf[2048];
    if (!dir[0])
        return errno = ENOENT, -1;
    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
        return errno = ENAMETOOLONG, -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') { /* each parent in turn; one that exists is fine */
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int util_lock_dir(const char *dir, char *holder, size_t holder_len)
{
    char path[2100], pid[32] = "";
    if (snprintf(path, sizeof(path), "%s/.lock", dir) >= (int)sizeof(path))
        return errno = ENAMETOOLONG, -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int err = errno;
        ssize_t n = err == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
        pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
        snprintf(holder, holder_len, "%s", pid[0] ? pid : "unknown");
        close(fd);
        return errno = err, -1;
    }
    int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len)
        warning("cannot write this process's pid into '%s': %s", path, strerror(errno));
    return fd;
}
