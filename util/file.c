/* SPDX-License-Identifier: MIT */
/* File helpers: bounded reads, atomic replace, and the sysfs root used by every probe. */
#include "util/file.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_rest(int fd, size_t max_bytes, struct util_buf *out);

/* Reads fd to its end (at most max_bytes) into out, then closes it. */
static int read_fd(int fd, size_t max_bytes, struct util_buf *out)
{
    struct stat st;
    /* a regular file says its size: one past the limit is refused before a byte is read (a
     * 10 GB log would otherwise be read, and held, up to the limit first) */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return UTIL_EINVAL;
    }
    return read_rest(fd, max_bytes, out);
}

/* Reads fd from where it stands to its end (at most max_bytes) into out, then closes it. */
static int read_rest(int fd, size_t max_bytes, struct util_buf *out)
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

/* Words for why an open or an fstat refused path (errno err, or the mode of what is there). */
static const char *open_why(int err)
{
    return err == ELOOP                      ? "a symbolic link (refused: it may point anywhere)"
           : err == ENOENT || err == ENOTDIR ? "no such file"
           : err == EACCES || err == EPERM   ? "permission denied"
           : err == EISDIR                   ? "a directory, not a file"
           : err == ENXIO || err == EINVAL   ? "not a regular file (a FIFO, socket or device)"
           : err == EMLINK ? "a file with another name (a hard link) elsewhere: refused"
                           : strerror(err);
}

/* Refuses what fd is unless a regular file (and, for a file to write, one with no other name). */
static int regular_or_refuse(int fd, int single_link)
{
    struct stat st;
    if (fstat(fd, &st))
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode))
        return EINVAL;
    if (single_link && st.st_nlink > 1)
        return EMLINK;
    /* O_NONBLOCK only kept a FIFO from blocking the open: reads and writes block as usual */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
        return errno;
    return 0;
}

int util_file_open_input(const char *path, int follow, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
    int err = fd < 0 ? errno : regular_or_refuse(fd, 0);
    if (!err)
        return fd;
    if (fd >= 0)
        close(fd);
    *why = open_why(err);
    return errno = err, -1;
}

int util_file_open_output(const char *path, enum util_file_how how, const char **why)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
    int fd = open(path, flags | (how == UTIL_FILE_APPEND ? O_APPEND : 0), 0644);
    int err = fd < 0 ? errno : regular_or_refuse(fd, 1);
    if (!err && how == UTIL_FILE_TRUNC && ftruncate(fd, 0)) /* only once it is ours to cut */
        err = errno;
    if (!err)
        return fd;
    if (fd >= 0)
        close(fd);
    *why = open_why(err);
    return errno = err, -1;
}

int util_file_read_input(const char *path, int follow, size_t max_bytes, struct util_buf *out,
                         const char **why)
{
    static char size_words[64];
    int fd = util_file_open_input(path, follow, why);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR  ? UTIL_ENOENT
               : errno == EINVAL || errno == EISDIR ? UTIL_EINVAL
                                                    : UTIL_EIO;
    int rc = read_fd(fd, max_bytes, out);
    snprintf(size_words, sizeof(size_words), "larger than %zu MiB", max_bytes >> 20);
    *why = rc == UTIL_EINVAL ? size_words : rc ? "read error" : NULL;
    return rc;
}

int util_file_read_tail(const char *path, size_t max_bytes, struct util_buf *out)
{
    const char *why;
    struct stat st;
    int fd = util_file_open_input(path, 0, &why);
    if (fd < 0)
        return UTIL_EIO;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max_bytes)
        lseek(fd, st.st_size - (off_t)max_bytes, SEEK_SET);
    return read_rest(fd, max_bytes, out);
}

int util_file_read(const char *path, size_t max_bytes, struct util_buf *out)
{
    const char *why;
    return util_file_read_input(path, 1, max_bytes, out, &why);
}

int util_file_read_regular(const char *path, size_t max_bytes, struct util_buf *out,
                           const char **why)
{
    return util_file_read_input(path, 0, max_bytes, out, why);
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
    char *copy = util_xstrdup(path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int util_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && strcmp(a, "-") && strcmp(b, "-") && !stat(a, &sa) && !stat(b, &sb) &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int util_file_folder_exists(const char *path)
{
    char dir[4096];
    struct stat st;
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) /* this folder */
        return 0;
    *(slash == dir ? slash + 1 : slash) = '\0';
    if (!stat(dir, &st) && S_ISDIR(st.st_mode))
        return 0;
    util_error("cannot write '%s': its folder '%s' does not exist: create it, or give another path",
               path, dir);
    return UTIL_ENOENT;
}

int util_file_replaceable(const char *path)
{
    /* rename() would replace whatever has the name: a device (as root, /dev/null), a FIFO,
     * a link (not its target), so only a missing name or a regular file is replaced. */
    struct stat st;
    if (lstat(path, &st) || S_ISREG(st.st_mode))
        return 0;
    util_error("cannot write '%s': it is %s, which writing would replace; name a regular file or "
               "a new one (or -, where the option takes it, for standard output)",
               path,
               S_ISLNK(st.st_mode)   ? "a symbolic link"
               : S_ISDIR(st.st_mode) ? "a directory"
                                     : "a device, FIFO or socket");
    return UTIL_EIO;
}

/* data written whole and fsync'ed into a new temporary file beside path: its name (free it), or
 * NULL after an error naming path, nothing left behind */
static char *stage(const char *path, const void *data, size_t len)
{
    if (util_file_replaceable(path))
        return NULL;
    struct util_buf tmp = UTIL_BUF_INIT;
    if (util_buf_addf(&tmp, "%s.tmp.XXXXXX", path)) {
        util_error("cannot write '%s': out of memory", path);
        return NULL;
    }
    int fd = mkstemp(tmp.data);
    if (fd < 0) {
        util_error("cannot write '%s': %s", path, strerror(errno));
        util_buf_release(&tmp);
        return NULL;
    }
    int err = 0;
    if (write_all(fd, data, len) || fsync(fd))
        err = errno ? errno : EIO;
    if (fchmod(fd, 0644) && !err)
        err = errno;
    if (close(fd) && !err)
        err = errno;
    if (err) {
        unlink(tmp.data);
        util_error("cannot write '%s': %s", path, strerror(err));
        util_buf_release(&tmp);
        return NULL;
    }
    return util_buf_detach(&tmp);
}

/* The staged tmp renamed over path; removed when it cannot be. 0 or UTIL_EIO. */
static int commit(const char *path, const char *tmp)
{
    if (rename(tmp, path)) {
        int err = errno;
        unlink(tmp);
        util_error("cannot write '%s': %s", path, strerror(err));
        return UTIL_EIO;
    }
    sync_parent_dir(path);
    return 0;
}

int util_file_write_atomic(const char *path, const void *data, size_t len)
{
    char *tmp = stage(path, data, len);
    int rc = tmp ? commit(path, tmp) : UTIL_EIO;
    free(tmp);
    return rc;
}

int util_files_stage(struct util_files *f, const char *path, const void *data, size_t len)
{
    if (f->n == UTIL_FILES_MAX) {
        util_error("cannot write '%s': more than %d files at once", path, UTIL_FILES_MAX);
        return UTIL_EIO;
    }
    char *tmp = stage(path, data, len);
    if (!tmp)
        return UTIL_EIO;
    f->path[f->n] = util_xstrdup(path);
    f->tmp[f->n++] = tmp;
    return 0;
}

int util_files_commit(struct util_files *f)
{
    for (int i = 0; i < f->n; i++) {
        int rc = commit(f->path[i], f->tmp[i]);
        free(f->tmp[i]);
        f->tmp[i] = NULL; /* renamed or removed: nothing left to release */
        if (rc)           /* the rest stay staged, for util_files_release to remove: no more land */
            return rc;
    }
    return 0;
}

void util_files_release(struct util_files *f)
{
    for (int i = 0; i < f->n; i++) {
        if (f->tmp[i])
            unlink(f->tmp[i]);
        free(f->tmp[i]);
        free(f->path[i]);
    }
    f->n = 0;
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
        return util_xstrdup(forced);
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
    return util_xstrdup(name);
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

/* The temporary files alive, for a signal handler: a slot's path is whole before it is marked
 * used, and unmarked before it changes. */
#define TEMP_MAX 16
static char temp_path[TEMP_MAX][4096];
static volatile sig_atomic_t temp_used[TEMP_MAX];

int util_temp_file(char *path, size_t len, const char *prefix)
{
    const char *dir = getenv("TMPDIR");
    int n = snprintf(path, len, "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", prefix);
    if (n < 0 || (size_t)n >= len)
        return -1;
    int fd = mkstemp(path);
    for (int i = 0; fd >= 0 && i < TEMP_MAX; i++)
        if (!temp_used[i] && strlen(path) < sizeof(temp_path[i])) {
            memcpy(temp_path[i], path, strlen(path) + 1);
            atomic_signal_fence(memory_order_release); /* the path whole before it is used */
            temp_used[i] = 1;
            break;
        }
    return fd;
}

void util_temp_remove(const char *path)
{
    for (int i = 0; i < TEMP_MAX; i++)
        if (temp_used[i] && !strcmp(temp_path[i], path))
            temp_used[i] = 0;
    unlink(path);
}

void util_temp_remove_all(void)
{
    for (int i = 0; i < TEMP_MAX; i++)
        if (temp_used[i]) {
            temp_used[i] = 0;
            unlink(temp_path[i]);
        }
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
    /* the directory itself is locked: a .lock file removed while its holder runs (rm, a clean-up
     * script) let a second holder lock a new one beside it */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd < 0) {
        int err = errno;
        close(dfd);
        return errno = err, -1;
    }
    int bad = regular_or_refuse(fd, 1); /* a planted FIFO or hard link is never cut or written */
    if (bad) {
        close(fd), close(dfd);
        snprintf(holder, holder_len, "unknown");
        return errno = bad, -1;
    }
    /* NFS locks only a file opened for writing, which a directory cannot be: there the file (as
     * every holder on it does: a removed one is not noticed) */
    int held = -1, err = 0;
    if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
        held = dfd;
    else if (errno == EWOULDBLOCK)
        err = EWOULDBLOCK;
    else if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        held = fd;
    else
        err = errno;
    if (held < 0) {
        ssize_t n = err == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
        pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
        snprintf(holder, holder_len, "%s", pid[0] ? pid : "unknown");
        close(fd), close(dfd);
        return errno = err, -1;
    }
    int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len)
        util_warning("cannot write this process's pid into '%s': %s", path, strerror(errno));
    close(held == fd ? dfd : fd);
    return held;
}
