/* test_kcache.c — the GPU kernel cache's disk files (src/gpu/kcache_file.c):
 * what was written reads back; anything else is a miss, never loaded — a
 * truncated or flipped file, another key, a symlink to a device, a folder;
 * no temp file is left; a folder name past the old 1 KB buffers works.
 * Needs no GPU. */
#include <stdio.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/kcache_file.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int count_temps(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void flip_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL, "open %s", path);
    if (!f)
        return;
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

int main(void)
{
    char base[] = "/tmp/xdnn-kcache-XXXXXX";
    CHECK(mkdtemp(base) != NULL, "mkdtemp");
    /* a deep folder whose name is longer than 1 KB, created on the way */
    char dir[2048];
    int at = snprintf(dir, sizeof dir, "%s", base);
    while (at < 1200)
        at += snprintf(dir + at, sizeof dir - (size_t)at, "/%s", "a-rather-long-folder-name-for-the-cache");
    char path[2200];
    snprintf(path, sizeof path, "%s/00000000000000ab.cubin", dir);
    const char code[] = "pretend this is a cubin \x00\x01\x02 with a NUL inside";
    size_t n = sizeof code;

    CHECK(kcache_write(dir, path, 0xab, code, n), "write");
    CHECK(count_temps(dir) == 0, "a temp file was left behind");
    char *got = NULL;
    size_t len = 0;
    CHECK(kcache_read(path, 0xab, &got, &len) && len == n && memcmp(got, code, n) == 0, "read back");
    free(got);
    CHECK(!kcache_read(path, 0xac, &got, &len) && got == NULL, "a file for another key is a miss");

    flip_byte(path, 32 + 5); /* a byte of the code: the checksum disagrees */
    CHECK(!kcache_read(path, 0xab, &got, &len), "a flipped byte is a miss");
    CHECK(kcache_write(dir, path, 0xab, code, n), "rewrite");
    CHECK(truncate(path, 32 + 10) == 0, "truncate");
    CHECK(!kcache_read(path, 0xab, &got, &len), "a truncated file is a miss");
    CHECK(truncate(path, 5) == 0, "truncate");
    CHECK(!kcache_read(path, 0xab, &got, &len), "a file shorter than its header is a miss");

    CHECK(unlink(path) == 0 && symlink("/dev/zero", path) == 0, "symlink");
    CHECK(!kcache_read(path, 0xab, &got, &len), "a symlink (to a device) is a miss");
    CHECK(unlink(path) == 0 && mkdir(path, 0755) == 0, "mkdir");
    CHECK(!kcache_read(path, 0xab, &got, &len), "a folder is a miss");
    CHECK(!kcache_write(dir, path, 0xab, code, n), "cannot replace a folder");
    CHECK(count_temps(dir) == 0, "a failed write left its temp file");
    CHECK(rmdir(path) == 0, "rmdir");
    CHECK(!kcache_read(path, 0xab, &got, &len), "a missing file is a miss");
    CHECK(!kcache_write(dir, path, 0xab, code, 0), "an empty kernel is not stored");

    char cmd[2300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0, "cleanup");
    return test_summary("kcache");
}
#else
int main(void)
{
    puts("kcache: built without CUDA, nothing to test");
    return 0;
}
#endif
