/* SPDX-License-Identifier: MIT */
/* Whole-file reads, atomic writes, and reads of /sys and /proc through one root. */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include "util/buf.h"

#include <stddef.h>

/*
 * Opens an input to read: only a regular file, opened without blocking (a FIFO,
 * socket, device or directory is refused at once, never waited on; the
 * descriptor blocks as usual afterwards). follow: 1 for a path the user named
 * (a symbolic link is followed), 0 for a file found inside an output or sweep
 * folder (a link as its last component is refused). Returns the descriptor
 * (close-on-exec), or -1 with errno set and *why saying what is there or what
 * went wrong, in words for a message ("no such file", "a symbolic link ...",
 * "not a regular file (a FIFO, socket or device)", "a directory, not a file").
 * Every reader of a file goes through it.
 */
int util_file_open_input(const char *path, int follow, const char **why);

enum util_file_how { UTIL_FILE_TRUNC, UTIL_FILE_APPEND };

/*
 * Opens a file to write inside an output folder: created 0644 when missing,
 * never through a symbolic link (O_NOFOLLOW), only a regular file with no other
 * name (a planted FIFO, device, directory or hard link is refused before
 * anything is cut), then truncated (UTIL_FILE_TRUNC) or appended to
 * (UTIL_FILE_APPEND). Every file a command writes in place goes through it
 * (util_file_write_atomic creates a fresh one and renames it). Returns the
 * descriptor (close-on-exec), or -1 with errno set and *why in words.
 */
int util_file_open_output(const char *path, enum util_file_how how, const char **why);

/*
 * Reads at most max_bytes of the input path (util_file_open_input with follow)
 * into out (appended). Returns 0, UTIL_ENOENT, UTIL_EINVAL (not a regular file,
 * or larger than max_bytes) or UTIL_EIO; *why says which, in words.
 */
int util_file_read_input(const char *path, int follow, size_t max_bytes, struct util_buf *out,
                         const char **why);

/* The last max_bytes (or fewer) of a regular file found inside a folder (a link refused), as
 * util_file_read_regular reads the whole: a log's end, whatever its length. */
int util_file_read_tail(const char *path, size_t max_bytes, struct util_buf *out);

/* util_file_read_input of a path the user named (links followed), without the words. */
int util_file_read(const char *path, size_t max_bytes, struct util_buf *out);

/* util_file_read_input of a file found inside a folder: a symbolic link is refused. */
int util_file_read_regular(const char *path, size_t max_bytes, struct util_buf *out,
                           const char **why);

/*
 * Writes data to path atomically: a temporary file in the same directory,
 * written whole, fsync'ed, then renamed over path, then the directory fsync'ed.
 * Only a missing path or a regular file is replaced: a symbolic link, directory,
 * device, FIFO or socket at path is refused before anything is written.
 * On any failure (a full disk included) the temporary file is removed, path is
 * untouched, an error naming path is printed, and UTIL_EIO is returned.
 */
int util_file_write_atomic(const char *path, const void *data, size_t len);

/*
 * Several files a command writes together, all or none (a report's JSON, Markdown and HTML): each
 * staged as util_file_write_atomic writes, a temporary file beside its path written whole and
 * fsync'ed; renamed over their paths only once every one is staged. Only a rename refused after
 * others succeeded (a folder whose permissions changed meanwhile) leaves some written.
 */
#define UTIL_FILES_MAX 8
struct util_files {
    int n;
    char *path[UTIL_FILES_MAX], *tmp[UTIL_FILES_MAX];
};
#define UTIL_FILES_INIT                                                                            \
    {                                                                                              \
        0                                                                                          \
    }

/* Stages data for path. 0, or UTIL_EIO after an error naming path (nothing left behind). */
int util_files_stage(struct util_files *f, const char *path, const void *data, size_t len);

/* Renames every staged file over its path, in order. 0, or UTIL_EIO after an error naming the
 * first that could not be: those after it are not renamed (util_files_release removes them). */
int util_files_commit(struct util_files *f);

/* Removes what is staged and not committed, and frees f's names. */
void util_files_release(struct util_files *f);

/* 1 when a and b name one existing file (links followed; "-" is no file): an output option
 * naming a command's input would replace what it reads. */
int util_file_same(const char *a, const char *b);

/* 0 when the folder path goes into exists (or path names none); else UTIL_ENOENT after its
 * error: an output checked before long work. */
int util_file_folder_exists(const char *path);

/* 0 where util_file_write_atomic may write path (nothing there, or a regular file); else
 * UTIL_EIO after its error: a caller says so before long work, not after. */
int util_file_replaceable(const char *path);

/*
 * Removes the directory tree name under the directory at (AT_FDCWD: the
 * current one) with unlinkat, never following a symbolic link (a link is
 * removed, not what it points at) and never starting a shell. At most depth
 * levels deep. Returns 0 (also when name does not exist) or UTIL_EIO.
 */
int util_remove_tree_at(int at, const char *name, int depth);

/*
 * The root under which /sys and /proc are read: $TOPOTUNE_SYSFS_ROOT, or "" for
 * the real ones. Tests point it at a captured tree.
 */
const char *util_sysfs_root(void);

/*
 * Reads the first line of a file under the sysfs root (path starts with "/sys"
 * or "/proc"), without its newline, into out (replaced). Returns 0 or UTIL_ENOENT.
 */
int util_sysfs_read_line(const char *path, struct util_buf *out);

/* Same for a whole small file (at most 1 MiB). */
int util_sysfs_read(const char *path, struct util_buf *out);

/*
 * Creates dir and the directories above it that are missing (0755). Returns 0, or -1 with errno
 * set (ENAMETOOLONG for a path of 2 KiB or more).
 */
int util_mkdir_p(const char *dir);

/*
 * Holds dir for the caller's life: the directory flock'ed (removing dir/.lock frees nothing;
 * where the filesystem locks no directory, NFS, dir/.lock is, as every holder there does),
 * close-on-exec (children never hold it), the caller's pid written into dir/.lock for the
 * message a second holder gets. Returns the descriptor (closing it releases the lock), or
 * -1 with errno: EWOULDBLOCK when another process holds it (its pid in holder, or "unknown"),
 * EINVAL, EISDIR or EMLINK when dir/.lock is no regular file of one name (a planted FIFO or hard
 * link is never truncated or written), ELOOP for a link,
 * else why the lock file could not be opened.
 */
int util_lock_dir(const char *dir, char *holder, size_t holder_len);

/*
 * Creates an empty temporary file named PREFIX-XXXXXX in $TMPDIR (else /tmp),
 * its path in path. Returns an open descriptor, or -1. The path is remembered
 * (at most 16 at once) until util_temp_remove: a signal that ends the process
 * removes the file (util_temp_remove_all), which the caller's cleanup never
 * reaches.
 */
int util_temp_file(char *path, size_t len, const char *prefix);

/* Unlinks a path util_temp_file made and forgets it. */
void util_temp_remove(const char *path);

/* Unlinks every temporary file not yet removed. Async-signal-safe (a signal handler's). */
void util_temp_remove_all(void);

/*
 * The path of a companion program installed next to this one: $override_env
 * when set (tests and wrappers), else name in this executable's directory when
 * it is there, else name alone (looked up in PATH). Free the result.
 */
char *util_sibling_program(const char *name, const char *override_env);

/*
 * Finds the shipped data file rel ("spaces/nccl-default.json", "specs/...")
 * under $TOPOTUNE_DATA when set, else next to the program: PREFIX/share/topotune
 * for an installed bin/topotune, the source tree's profiles/ for one built in
 * build/. Returns 0 with the path in out, or -1 when no readable file exists
 * (out then holds the places looked at, for the error message).
 */
struct util_buf;
int util_data_file(const char *rel, struct util_buf *out);

#endif
