/* npz.c — NumPy's .npz archives (np.savez): a zip file of NAME.npy entries.
 * An entry is found through the zip's central directory and handed to
 * npy_parse; only stored entries are read (np.savez writes those;
 * np.savez_compressed deflates, which is refused with a message saying so),
 * and no ZIP64 (archives over 4 GB).  Every offset and size comes from the
 * file, so each is checked against its length before it is used.
 *
 *   end of central directory   "PK\5\6", ..., entries (u16 @10), cd size (u32 @12), cd offset (u32 @16)
 *   central directory entry    "PK\1\2", method (u16 @10), compressed (u32 @20), size (u32 @24),
 *                              name len (u16 @28), extra (u16 @30), comment (u16 @32), local offset (u32 @42),
 *                              name @46
 *   local header               "PK\3\4", name len (u16 @26), extra (u16 @28), data @30 + name + extra */
#include "data.h"

#include "core/fileio.h"

#include <stdlib.h>
#include <string.h>

static unsigned rd16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }

static xdnn_status npz_error(const char *path, xdnn_diags_t *d, const char *what)
{
    diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "not a readable .npz: %s", what);
    return XDNN_ERR_IO;
}

xdnn_status npz_parse(const char *path, const unsigned char *buf, size_t len, const char *key, host_tensor *out,
                      xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    /* the end record: the last "PK\5\6" with room for its 22 bytes */
    size_t eocd = SIZE_MAX;
    for (size_t i = len >= 22 ? len - 22 + 1 : 0; i-- > 0 && len - i <= 22 + 65535;)
        if (memcmp(buf + i, "PK\5\6", 4) == 0) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX)
        return npz_error(path, d, "no zip end-of-directory record");
    unsigned entries = rd16(buf + eocd + 10);
    uint32_t cd_size = rd32(buf + eocd + 12), cd_off = rd32(buf + eocd + 16);
    if (cd_off == 0xffffffffu || entries == 0xffffu)
        return npz_error(path, d, "a ZIP64 archive (over 4 GB or 65535 entries), not supported");
    if ((size_t)cd_off > eocd || (size_t)cd_size > eocd - cd_off)
        return npz_error(path, d, "the central directory lies outside the file");
    char want[600];
    snprintf(want, sizeof want, "%s.npy", key);
    /* the last entry of that name, as Python's zipfile (and so np.load) reads a name written twice */
    size_t at = cd_off, found = SIZE_MAX;
    for (unsigned e = 0; e < entries; e++) {
        if (at + 46 > (size_t)cd_off + cd_size || memcmp(buf + at, "PK\1\2", 4) != 0)
            return npz_error(path, d, "a damaged central directory entry");
        unsigned nlen = rd16(buf + at + 28);
        size_t next = at + 46 + nlen + rd16(buf + at + 30) + rd16(buf + at + 32);
        if (next > (size_t)cd_off + cd_size)
            return npz_error(path, d, "a damaged central directory entry");
        if (nlen == strlen(want) && memcmp(buf + at + 46, want, nlen) == 0)
            found = at;
        at = next;
    }
    if (found != SIZE_MAX) {
        at = found;
        unsigned method = rd16(buf + at + 10);
        uint32_t csize = rd32(buf + at + 20), usize = rd32(buf + at + 24), loc = rd32(buf + at + 42);
        if (method != 0) {
            diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}),
                       "'%s' in this .npz is compressed (np.savez_compressed); save it with np.savez", want);
            return XDNN_ERR_IO;
        }
        if (csize != usize || (size_t)loc + 30 > len || memcmp(buf + loc, "PK\3\4", 4) != 0)
            return npz_error(path, d, "a damaged local header");
        size_t data = (size_t)loc + 30 + rd16(buf + loc + 26) + rd16(buf + loc + 28);
        if (data > len || (size_t)csize > len - data)
            return npz_error(path, d, "an entry runs past the end of the file");
        char name[700];
        snprintf(name, sizeof name, "%s#%s", path, key);
        return npy_parse(name, buf + data, csize, out, d);
    }
    diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "no array '%s' in this .npz (%u entries)", key, entries);
    return XDNN_ERR_IO;
}

xdnn_status npz_read(const char *path, const char *key, host_tensor *out, xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    xdnn_status st = file_read_all(path, &buf, &len, d);
    if (st != XDNN_OK)
        return st;
    st = npz_parse(path, (const unsigned char *)buf, len, key, out, d);
    free(buf);
    return st;
}
