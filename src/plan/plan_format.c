/* plan_format.c — plans as bytes (see man/xdnn-plan.5).
 *
 *   0   "XDNNPLAN"                      magic, 8 bytes
 *   8   u32 format version (1)          little-endian, as every integer here
 *   12  u32 number of sections
 *   16  sections: tag[4] u64 length payload[length]
 *         VERS  xdnn version (text)
 *         DEVI  device fingerprint (text)
 *         GRPH  graph name, NUL, specialized module JSON
 *         PART  JSON array of partitions {name, ops, sig, engine, knobs, candidates, tuned_ms, from_cache,
 *               considered?: [{engine, supported, chosen, cost_us, ms, reason}]}
 *         WKSP  JSON object {total_bytes, buffers}
 *         BLOB  u32 count, then per blob: u32 name length, name, u64 size, bytes
 *         OPTS  (optional) JSON object {const_weights?: bool, dynamic?: [{param, lo, hi}]}: written
 *               only when a plan has one of them; an xdnn that predates it skips it and runs the
 *               plan with the default, exact semantics (weights re-read, one size)
 *   end "CSUM" u64 8 u64 FNV-1a 64 of every byte before "CSUM"
 *
 * The reader checks the magic, then that the checksum trailer is there and
 * matches (so truncation and corruption are found before anything is
 * parsed), then every length against the bytes left.  Unknown sections are
 * skipped (a later version may add some); a missing required one is an error. */
#include "plan/plan.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char plan_magic[8] = {'X', 'D', 'N', 'N', 'P', 'L', 'A', 'N'};

/* ---------------------------------------------------------------- writing */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *b, const void *data, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void put_u32(wbuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(b, x, 4);
}

static void put_u64(wbuf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_section(wbuf *b, const char tag[4], const void *data, size_t len)
{
    put(b, tag, 4);
    put_u64(b, len);
    put(b, data, len);
}

static char *parts_json(const xdnn_plan_t *p)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < p->nparts; i++) {
        const plan_part *q = &p->parts[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", q->name);
        cJSON_AddStringToObject(j, "ops", q->ops ? q->ops : "");
        cJSON_AddStringToObject(j, "sig", q->sig ? q->sig : "");
        cJSON_AddStringToObject(j, "engine", q->engine);
        cJSON_AddStringToObject(j, "knobs", q->knobs);
        cJSON_AddNumberToObject(j, "candidates", q->candidates);
        cJSON_AddNumberToObject(j, "tuned_ms", q->tuned_ms);
        cJSON_AddBoolToObject(j, "from_cache", q->from_cache);
        if (q->ncands) {
            cJSON *cs = cJSON_AddArrayToObject(j, "considered");
            for (int k = 0; k < q->ncands; k++) {
                const plan_candidate *c = &q->cands[k];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "engine", c->engine);
                cJSON_AddBoolToObject(o, "supported", c->supported);
                cJSON_AddBoolToObject(o, "chosen", c->chosen);
                cJSON_AddNumberToObject(o, "cost_us", c->cost_us);
                cJSON_AddNumberToObject(o, "ms", c->ms);
                cJSON_AddStringToObject(o, "reason", c->reason ? c->reason : "");
                cJSON_AddItemToArray(cs, o);
            }
        }
        cJSON_AddItemToArray(a, j);
    }
    char *s = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return s;
}

/* The OPTS section's JSON, NULL when the plan has none of its options. */
static char *opts_json(const xdnn_plan_t *p)
{
    if (!p->const_weights && !p->ndyn)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (p->const_weights)
        cJSON_AddBoolToObject(o, "const_weights", true);
    if (p->ndyn) {
        cJSON *a = cJSON_AddArrayToObject(o, "dynamic");
        for (int i = 0; i < p->ndyn; i++) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "param", p->dyn[i].name);
            cJSON_AddNumberToObject(j, "lo", (double)p->dyn[i].lo);
            cJSON_AddNumberToObject(j, "hi", (double)p->dyn[i].hi);
            cJSON_AddItemToArray(a, j);
        }
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

xdnn_status plan_to_bytes(const xdnn_plan_t *p, unsigned char **data, size_t *len, xdnn_diags_t *d)
{
    *data = NULL;
    *len = 0;
    /* a resized plan's graph is bound to other values than the module it
     * was parsed from: write the module specialized to its own */
    char *own_json = p->resized ? plan_specialized_json(p->g, p->ndyn > 0, d) : NULL;
    if (p->resized && !own_json)
        return xdnn_diags_error_count(d) ? xdnn_diags_status(d) : XDNN_ERR_NOMEM;
    const char *module_json = own_json ? own_json : p->module_json;
    char *opts = opts_json(p);
    wbuf b = {0};
    char *parts = parts_json(p);
    char ws[128];
    snprintf(ws, sizeof ws, "{\"total_bytes\":%" PRIu64 ",\"buffers\":%d}", p->ws.total_bytes, p->ws.nbuffers);
    put(&b, plan_magic, 8);
    put_u32(&b, PLAN_FORMAT_VERSION);
    put_u32(&b, opts ? 7 : 6);
    put_section(&b, "VERS", p->xdnn_version, strlen(p->xdnn_version));
    put_section(&b, "DEVI", p->device, strlen(p->device));
    size_t nl = strlen(p->graph_name), jl = strlen(module_json);
    put(&b, "GRPH", 4);
    put_u64(&b, nl + 1 + jl);
    put(&b, p->graph_name, nl + 1);
    put(&b, module_json, jl);
    free(own_json);
    put_section(&b, "PART", parts ? parts : "", parts ? strlen(parts) : 0);
    put_section(&b, "WKSP", ws, strlen(ws));
    uint64_t blob_len = 4;
    for (int i = 0; i < p->nblobs; i++)
        blob_len += 4 + strlen(p->blobs[i].name) + 8 + p->blobs[i].size;
    put(&b, "BLOB", 4);
    put_u64(&b, blob_len);
    put_u32(&b, (uint32_t)p->nblobs);
    for (int i = 0; i < p->nblobs; i++) {
        size_t n = strlen(p->blobs[i].name);
        put_u32(&b, (uint32_t)n);
        put(&b, p->blobs[i].name, n);
        put_u64(&b, p->blobs[i].size);
        put(&b, p->blobs[i].data, p->blobs[i].size);
    }
    if (opts)
        put_section(&b, "OPTS", opts, strlen(opts));
    uint64_t sum = b.oom ? 0 : fnv1a64(FNV64_INIT, b.p, b.n);
    put(&b, "CSUM", 4);
    put_u64(&b, 8);
    put_u64(&b, sum);
    free(parts);
    bool lost_opts = (p->const_weights || p->ndyn) && !opts;
    free(opts);
    if (b.oom || !parts || lost_opts) {
        free(b.p);
        diag_error(d, XDNN_ERR_NOMEM, xloc_none(), "out of memory writing a plan");
        return XDNN_ERR_NOMEM;
    }
    *data = b.p;
    *len = b.n;
    return XDNN_OK;
}

/* ---------------------------------------------------------------- reading */

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

static xdnn_status bad(xdnn_diags_t *d, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static xdnn_status bad(xdnn_diags_t *d, const char *name, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(d, XDNN_ERR_IO, ((xloc){.file = name}), "corrupt plan: %s", msg);
    return XDNN_ERR_IO;
}

static char *dup_text(const unsigned char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* A section's JSON payload, parsed (NULL when it is not JSON). */
static cJSON *section_json(const unsigned char *p, size_t n)
{
    char *text = dup_text(p, n);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* The optional "considered" list of a partition: the engines its selection asked. */
static xdnn_status read_considered(const char *name, const cJSON *cs, plan_part *q, xdnn_diags_t *d)
{
    if (!cs)
        return XDNN_OK;
    if (!cJSON_IsArray(cs))
        return bad(d, name, "partition %s: \"considered\" is not an array", q->name);
    if (cJSON_GetArraySize(cs) == 0) /* cands stays NULL with ncands 0: the backends fill such a part's list */
        return XDNN_OK;
    q->cands = calloc((size_t)cJSON_GetArraySize(cs) + 1, sizeof *q->cands);
    if (!q->cands)
        return XDNN_ERR_NOMEM;
    const cJSON *o;
    cJSON_ArrayForEach(o, cs)
    {
        const char *eng = jstr(o, "engine"), *why = jstr(o, "reason");
        const cJSON *cost = cJSON_GetObjectItemCaseSensitive(o, "cost_us"), *ms = cJSON_GetObjectItemCaseSensitive(o, "ms");
        if (!eng || !why || strlen(eng) >= 64 || !cJSON_IsNumber(cost) || !cJSON_IsNumber(ms))
            return bad(d, name, "partition %s: an entry of \"considered\" lacks engine, reason, cost_us or ms", q->name);
        plan_candidate *c = &q->cands[q->ncands++];
        snprintf(c->engine, sizeof c->engine, "%s", eng);
        c->supported = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "supported"));
        c->chosen = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "chosen"));
        c->cost_us = cost->valuedouble;
        c->ms = ms->valuedouble;
        if (!(c->reason = strdup(why)))
            return XDNN_ERR_NOMEM;
    }
    return XDNN_OK;
}

static xdnn_status read_parts(const char *name, const unsigned char *p, size_t n, xdnn_plan_t *pl, xdnn_diags_t *d)
{
    cJSON *a = section_json(p, n);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return bad(d, name, "the PART section is not a JSON array");
    }
    int count = cJSON_GetArraySize(a);
    pl->parts = calloc((size_t)(count ? count : 1), sizeof *pl->parts);
    if (!pl->parts) {
        cJSON_Delete(a);
        return XDNN_ERR_NOMEM;
    }
    const cJSON *it;
    xdnn_status s = XDNN_OK;
    cJSON_ArrayForEach(it, a)
    {
        const char *pname = jstr(it, "name"), *eng = jstr(it, "engine"), *knobs = jstr(it, "knobs");
        const cJSON *cand = cJSON_GetObjectItemCaseSensitive(it, "candidates");
        const cJSON *tms = cJSON_GetObjectItemCaseSensitive(it, "tuned_ms");
        if (!pname || !eng || !knobs || !cJSON_IsNumber(cand) || !cJSON_IsNumber(tms) || strlen(eng) >= 64 ||
            strlen(knobs) >= 128) {
            s = bad(d, name, "partition %d of the PART section lacks name, engine, knobs, candidates or tuned_ms", pl->nparts);
            break;
        }
        plan_part *q = &pl->parts[pl->nparts++];
        q->name = strdup(pname);
        q->ops = strdup(jstr(it, "ops") ? jstr(it, "ops") : "");
        q->sig = strdup(jstr(it, "sig") ? jstr(it, "sig") : "");
        snprintf(q->engine, sizeof q->engine, "%s", eng);
        snprintf(q->knobs, sizeof q->knobs, "%s", knobs);
        q->candidates = cand->valueint;
        q->tuned_ms = tms->valuedouble;
        q->from_cache = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "from_cache"));
        if (!q->name || !q->ops || !q->sig) {
            s = XDNN_ERR_NOMEM;
            break;
        }
        if ((s = read_considered(name, cJSON_GetObjectItemCaseSensitive(it, "considered"), q, d)) != XDNN_OK)
            break;
    }
    cJSON_Delete(a);
    return s;
}

static xdnn_status read_workspace(const char *name, const unsigned char *p, size_t n, xdnn_plan_t *pl,
                                  xdnn_diags_t *d)
{
    cJSON *o = section_json(p, n);
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(o, "total_bytes");
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(o, "buffers");
    xdnn_status s = XDNN_OK;
    if (!cJSON_IsNumber(tb) || !cJSON_IsNumber(nb) || !(tb->valuedouble >= 0 && tb->valuedouble <= 9.0e18) ||
        !(nb->valuedouble >= 0 && nb->valuedouble <= INT32_MAX))
        s = bad(d, name, "the WKSP section is not {\"total_bytes\": N, \"buffers\": N}");
    else
        pl->ws = (plan_workspace){.total_bytes = (uint64_t)tb->valuedouble, .nbuffers = nb->valueint};
    cJSON_Delete(o);
    return s;
}

/* OPTS: {const_weights?: bool, dynamic?: [{param, lo, hi}]}. */
static xdnn_status read_opts(const char *name, const unsigned char *p, size_t n, xdnn_plan_t *pl, xdnn_diags_t *d)
{
    cJSON *o = section_json(p, n);
    const cJSON *cw = cJSON_GetObjectItemCaseSensitive(o, "const_weights");
    const cJSON *dy = cJSON_GetObjectItemCaseSensitive(o, "dynamic");
    xdnn_status s = XDNN_OK;
    if (!cJSON_IsObject(o) || (cw && !cJSON_IsBool(cw)) || (dy && !cJSON_IsArray(dy))) {
        s = bad(d, name, "the OPTS section is not {\"const_weights\": BOOL, \"dynamic\": [...]}");
        goto out;
    }
    pl->const_weights = cJSON_IsTrue(cw);
    int count = dy ? cJSON_GetArraySize(dy) : 0;
    if (count && !(pl->dyn = calloc((size_t)count, sizeof *pl->dyn))) {
        s = XDNN_ERR_NOMEM;
        goto out;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, dy)
    {
        const char *param = jstr(it, "param");
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(it, "lo"), *hi = cJSON_GetObjectItemCaseSensitive(it, "hi");
        if (!param || !param[0] || strlen(param) >= sizeof pl->dyn->name || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
            lo->valuedouble < 1 || lo->valuedouble > hi->valuedouble || hi->valuedouble > 9.0e15) {
            s = bad(d, name, "dynamic param %d of the OPTS section is not {\"param\": NAME, \"lo\": N, \"hi\": N} "
                             "with 1 <= lo <= hi", pl->ndyn);
            break;
        }
        plan_dynamic *x = &pl->dyn[pl->ndyn++];
        snprintf(x->name, sizeof x->name, "%s", param);
        x->lo = (int64_t)lo->valuedouble;
        x->hi = (int64_t)hi->valuedouble;
    }
out:
    cJSON_Delete(o);
    return s;
}

static xdnn_status read_blobs(const char *name, const unsigned char *p, size_t n, xdnn_plan_t *pl,
                              xdnn_diags_t *d)
{
    if (n < 4)
        return bad(d, name, "the BLOB section is shorter than its count (%zu bytes)", n);
    uint32_t count = get_u32(p);
    size_t at = 4;
    /* each blob takes at least 12 bytes: a count beyond that is a lie */
    if (count > (n - 4) / 12)
        return bad(d, name, "the BLOB section claims %u blobs in %zu bytes", count, n);
    pl->blobs = calloc(count ? count : 1, sizeof *pl->blobs);
    if (!pl->blobs)
        return XDNN_ERR_NOMEM;
    for (uint32_t i = 0; i < count; i++) {
        if (n - at < 4)
            return bad(d, name, "blob %u is truncated (%zu bytes left)", i, n - at);
        uint32_t nl = get_u32(p + at);
        at += 4;
        if (nl >= sizeof pl->blobs[i].name || n - at < (size_t)nl + 8)
            return bad(d, name, "blob %u has a bad name length %u", i, nl);
        plan_blob *b = &pl->blobs[pl->nblobs++];
        memcpy(b->name, p + at, nl);
        at += nl;
        uint64_t size = get_u64(p + at);
        at += 8;
        if (size > n - at)
            return bad(d, name, "blob %u claims %" PRIu64 " bytes beyond the section", i, size);
        b->data = malloc(size ? size : 1);
        if (!b->data)
            return XDNN_ERR_NOMEM;
        memcpy(b->data, p + at, size);
        b->size = size;
        at += size;
    }
    if (at != n)
        return bad(d, name, "the BLOB section has %zu bytes after its last blob", n - at);
    return XDNN_OK;
}

xdnn_status plan_from_bytes(const char *name, const unsigned char *data, size_t len, xdnn_diags_t *d,
                            xdnn_plan_t **out)
{
    *out = NULL;
    if (len < 8 || memcmp(data, plan_magic, 8) != 0) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = name}),
                   "not an xdnn plan (no XDNNPLAN magic at the start; plans are made by 'xdnn plan')");
        return XDNN_ERR_IO;
    }
    const size_t trailer = 20;
    if (len < 16 + trailer || memcmp(data + len - trailer, "CSUM", 4) != 0 || get_u64(data + len - 16) != 8)
        return bad(d, name, "truncated: the checksum trailer is missing (%zu bytes)", len);
    uint64_t want = get_u64(data + len - 8), got = fnv1a64(FNV64_INIT, data, len - trailer);
    if (want != got)
        return bad(d, name, "checksum mismatch (stored %016" PRIx64 ", computed %016" PRIx64 ")", want, got);
    uint32_t version = get_u32(data + 8);
    if (version != PLAN_FORMAT_VERSION) {
        diag_error(d, XDNN_ERR_UNSUPPORTED, ((xloc){.file = name}),
                   "plan format version %u; this xdnn (%s) reads version %d: rebuild the plan", version,
                   XDNN_VERSION_STRING, PLAN_FORMAT_VERSION);
        return XDNN_ERR_UNSUPPORTED;
    }
    xdnn_plan_t *p = calloc(1, sizeof *p);
    if (!p)
        return XDNN_ERR_NOMEM;
    p->format_version = version;
    uint32_t nsections = get_u32(data + 12);
    size_t at = 16, end = len - trailer;
    unsigned seen = 0;
    xdnn_status s = XDNN_OK;
    static const char tags[][5] = {"VERS", "DEVI", "GRPH", "PART", "WKSP", "BLOB"};
    for (uint32_t i = 0; i < nsections && s == XDNN_OK; i++) {
        if (end - at < 12) {
            s = bad(d, name, "section %u header runs past the end (%zu bytes left)", i, end - at);
            break;
        }
        const unsigned char *tag = data + at;
        uint64_t n = get_u64(data + at + 4);
        at += 12;
        if (n > end - at) {
            s = bad(d, name, "section %u claims %" PRIu64 " bytes beyond the end", i, n);
            break;
        }
        const unsigned char *body = data + at;
        at += n;
        int k = -1;
        for (int t = 0; t < 6; t++)
            if (memcmp(tag, tags[t], 4) == 0)
                k = t;
        if (k < 0 && memcmp(tag, "OPTS", 4) == 0) {
            if (seen & (1u << 6)) {
                s = bad(d, name, "section OPTS appears twice");
                break;
            }
            seen |= 1u << 6;
            s = read_opts(name, body, n, p, d);
            continue;
        }
        if (k < 0)
            continue; /* a later version's section */
        if (seen & (1u << k)) {
            s = bad(d, name, "section %s appears twice", tags[k]);
            break;
        }
        seen |= 1u << k;
        switch (k) {
        case 0:
            if (n >= sizeof p->xdnn_version || memchr(body, 0, n))
                s = bad(d, name, "the VERS section is not a short text (%" PRIu64 " bytes)", n);
            else
                memcpy(p->xdnn_version, body, n);
            break;
        case 1:
            if (n >= sizeof p->device || memchr(body, 0, n))
                s = bad(d, name, "the DEVI section is not a short text (%" PRIu64 " bytes)", n);
            else
                memcpy(p->device, body, n);
            break;
        case 2: {
            const unsigned char *nul = memchr(body, 0, n);
            if (!nul || nul == body || memchr(nul + 1, 0, n - (size_t)(nul + 1 - body))) {
                s = bad(d, name, "the GRPH section is not NAME NUL JSON");
                break;
            }
            p->graph_name = dup_text(body, (size_t)(nul - body));
            p->module_json = dup_text(nul + 1, n - (size_t)(nul + 1 - body));
            if (!p->graph_name || !p->module_json)
                s = XDNN_ERR_NOMEM;
            break;
        }
        case 3: s = read_parts(name, body, n, p, d); break;
        case 4: s = read_workspace(name, body, n, p, d); break;
        case 5: s = read_blobs(name, body, n, p, d); break;
        }
    }
    if (s == XDNN_OK && at != end)
        s = bad(d, name, "%zu bytes between the last section and the checksum", end - at);
    for (int t = 0; t < 6 && s == XDNN_OK; t++)
        if (!(seen & (1u << t)))
            s = bad(d, name, "the %s section is missing", tags[t]);
    if (s != XDNN_OK) {
        xdnn_plan_destroy(p);
        return s;
    }
    *out = p;
    return XDNN_OK;
}
