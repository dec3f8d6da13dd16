/* bench_workers.c — `xdnn bench --devices all|0,1,...` (one worker process per
 * GPU) and `--workers N` (N on the CPU: the same code, which is how CI tests
 * it).  The parent hands out cases, collects rows, and the command prints them
 * in input order as one table, CSV or JSONL, as if one process had run them.
 *
 * A worker is this binary again (fork + exec of /proc/self/exe with the
 * command's own arguments and --worker), so it starts clean: no CUDA context
 * or OpenMP pool crosses a fork.  A GPU worker sees only its GPU
 * (CUDA_VISIBLE_DEVICES narrowed to it: device 0 inside, the same tune-cache
 * key on identical GPUs).  Channels:
 *   fd 3     a socket: the parent writes case indices ("17\n"), the worker
 *            answers {"ready":NCASES,"fingerprint":FP} once, then one JSONL
 *            row per case with "case" and "code" added;
 *   1 and 2  one pipe, relayed line by line to stderr behind "[gpu 1] ".
 * Scheduling is dynamic: an idle worker gets the costliest case left (the
 * bench's own flops/bytes estimate), so a slow case cannot hold up a
 * precomputed share.  A worker that dies, or spends more than --timeout
 * seconds on one case, is killed; that case is failed with the reason, the
 * other rows stay, and a fresh worker takes the slot (a slot that dies three
 * times in a row without finishing a case is given up).
 *
 * Test hook: XDNN_BENCH_FAULT=crash:K or hang:K makes a worker die (SIGKILL)
 * or hang when it is handed case K (0-based, input order). */
#include "bench.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { WORKER_FD = 3, MAX_DEATHS_IN_A_ROW = 3 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bytes read from a descriptor, cut into lines. */
typedef struct linebuf {
    char *data;
    size_t len, cap;
} linebuf;

static bool linebuf_add(linebuf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *nd = realloc(b->data, cap);
        if (!nd)
            return false;
        b->data = nd;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return true;
}

/* The next complete line (its '\n' replaced by 0) into *line, or false;
 * consumed with linebuf_drop. */
static bool linebuf_line(linebuf *b, char **line, size_t *used)
{
    char *nl = b->len ? memchr(b->data, '\n', b->len) : NULL;
    if (!nl)
        return false;
    *nl = 0;
    *line = b->data;
    *used = (size_t)(nl - b->data) + 1;
    return true;
}

static void linebuf_drop(linebuf *b, size_t used)
{
    memmove(b->data, b->data + used, b->len - used);
    b->len -= used;
    b->data[b->len] = 0;
}

/* ------------------------------------------------------------------ the worker's side */

/* One row and its newline in one write where the socket takes it, else in
 * parts (EINTR retried). */
static bool send_json(int fd, cJSON *j)
{
    char *text = cJSON_PrintUnformatted(j);
    size_t len = text ? strlen(text) + 1 : 0, sent = 0;
    if (text)
        text[len - 1] = '\n'; /* the NUL goes: the row is sent by length */
    while (sent < len) {
        ssize_t w = write(fd, text + sent, len - sent);
        if (w > 0)
            sent += (size_t)w;
        else if (w == 0 || errno != EINTR)
            break;
    }
    bool ok = text && sent == len;
    cJSON_free(text);
    cJSON_Delete(j);
    return ok;
}

/* XDNN_BENCH_FAULT=crash:K|hang:K (tests only): misbehave on case K. */
static void test_fault(int index)
{
    const char *f = getenv("XDNN_BENCH_FAULT");
    const char *colon = f ? strchr(f, ':') : NULL;
    if (!colon || atoi(colon + 1) != index)
        return;
    if (strncmp(f, "crash:", 6) == 0)
        kill(getpid(), SIGKILL);
    if (strncmp(f, "hang:", 5) == 0)
        for (;;)
            pause();
}

int bench_worker_serve(const bench_opts *o, const bench_case *const *cases, int ncases, bool use_gpu, const char *fp)
{
    FILE *in = fdopen(dup(WORKER_FD), "r");
    if (!in) {
        fprintf(stderr, "xdnn bench --worker: fd %d is not the parent's socket (--worker is internal)\n", WORKER_FD);
        return XDNN_ERR_USAGE;
    }
    cJSON *ready = cJSON_CreateObject();
    cJSON_AddNumberToObject(ready, "ready", ncases);
    cJSON_AddStringToObject(ready, "fingerprint", fp);
    int status = send_json(WORKER_FD, ready) ? XDNN_OK : XDNN_ERR_IO;
    char *line = NULL;
    size_t cap = 0;
    while (status == XDNN_OK && getline(&line, &cap, in) > 0) {
        char *end;
        long k = strtol(line, &end, 10);
        if (end == line || *end != '\n' || k < 0 || k >= ncases) {
            fprintf(stderr, "xdnn bench --worker: bad case index from the parent: %s", line);
            status = XDNN_ERR_INTERNAL;
            break;
        }
        test_fault((int)k);
        bench_result r;
        bench_run_case(cases[k], o, use_gpu, fp, &r);
        cJSON *j = bench_result_json(&r, o);
        cJSON_AddNumberToObject(j, "case", (double)k);
        cJSON_AddNumberToObject(j, "code", r.code);
        free(r.parts);
        fflush(stderr);
        if (!send_json(WORKER_FD, j))
            status = XDNN_ERR_IO;
    }
    free(line);
    fclose(in);
    return status;
}

/* ------------------------------------------------------------------ the parent's side */

typedef struct worker {
    char label[32];         /* "gpu 1", "worker 2" */
    int device;             /* GPU ordinal, -1 on the CPU */
    pid_t pid;              /* 0: not running */
    int sock, err;          /* -1 when closed */
    linebuf in, errb;
    bool ready;
    char fp[512];           /* its device's fingerprint (from "ready") */
    int current;            /* index into sel of the case it runs, -1 when idle */
    double started;         /* when it got that case */
    int deaths;             /* in a row, since its last finished case */
    bool retired;
} worker;

typedef struct pool {
    const bench_opts *o;
    const bench_case *const *cases;
    const int *sel;
    bench_result *res;
    bool *done;
    int ndone, nsel;
    int lost;               /* cases failed with their worker */
    char *exe;
    char **argv;            /* exe, bench, the command's arguments, --worker, NULL */
    char **envp[BENCH_MAX_WORKERS];
    worker w[BENCH_MAX_WORKERS];
    int n;
    bool progress;
    double t0;              /* when the pool started: the ETA's clock */
} pool;

static void relay(worker *w, bool flush_partial)
{
    char *line;
    size_t used;
    while (linebuf_line(&w->errb, &line, &used)) {
        fprintf(stderr, "[%s] %s\n", w->label, line);
        linebuf_drop(&w->errb, used);
    }
    if (flush_partial && w->errb.len) {
        fprintf(stderr, "[%s] %s\n", w->label, w->errb.data);
        linebuf_drop(&w->errb, w->errb.len);
    }
}

/* Read what is there; false at end of file or on an error. */
static bool pull(int fd, linebuf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n > 0) {
            if (!linebuf_add(b, chunk, (size_t)n))
                return false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

/* The child's environment: the parent's, with CUDA_VISIBLE_DEVICES naming the
 * worker's GPU (within an existing list, as --device N counts). */
static char **worker_env(int device)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (device < 0 || strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0)
            env[k++] = environ[i];
    if (device >= 0) {
        char vis[256], why[256];
        if (!cli_visible_device(device, vis, sizeof vis, why, sizeof why)) {
            fprintf(stderr, "xdnn bench: %s\n", why);
            free(env);
            return NULL;
        }
        size_t len = strlen(vis) + 22;
        env[k] = malloc(len);
        if (!env[k]) {
            free(env);
            return NULL;
        }
        snprintf(env[k], len, "CUDA_VISIBLE_DEVICES=%s", vis);
    }
    return env;
}

static void free_env(char **env, int device)
{
    if (env && device >= 0) { /* only the last entry is ours */
        size_t n = 0;
        while (env[n])
            n++;
        free(env[n - 1]);
    }
    free(env);
}

/* Put `from` at `to` in the child, inherited across exec. */
static void move_fd(int from, int to)
{
    if (from == to)
        fcntl(to, F_SETFD, 0);
    else
        dup2(from, to);
}

static bool spawn(pool *p, int slot)
{
    worker *w = &p->w[slot];
    int sv[2], ep[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    if (pipe2(ep, O_CLOEXEC) != 0) {
        close(sv[0]), close(sv[1]);
        return false;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]), close(ep[0]), close(ep[1]);
        return false;
    }
    if (pid == 0) { /* only async-signal-safe calls from here to exec */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the parent's end is the worker's */
        if (getppid() != parent)
            _exit(127);
        move_fd(ep[1], 1);
        move_fd(ep[1], 2);
        move_fd(sv[1], WORKER_FD);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            move_fd(nul, 0);
        execve(p->exe, p->argv, p->envp[slot]);
        static const char msg[] = "xdnn bench: cannot start a worker (execve failed)\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    close(sv[1]);
    close(ep[1]);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(ep[0], F_SETFL, O_NONBLOCK);
    w->pid = pid;
    w->sock = sv[0];
    w->err = ep[0];
    w->ready = false;
    w->current = -1;
    w->in.len = w->errb.len = 0;
    return true;
}

static void describe_exit(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(buf, len, "stopped");
}

/* Wait up to `grace` seconds for the worker to end, then kill it; relay the
 * rest of its output; *how says how it ended. */
static void reap(worker *w, double grace, char *how, size_t len)
{
    int st = 0;
    double until = now_s() + grace;
    pid_t got;
    while ((got = waitpid(w->pid, &st, WNOHANG)) == 0 && now_s() < until) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (got == 0) {
        kill(w->pid, SIGKILL);
        while ((got = waitpid(w->pid, &st, 0)) < 0 && errno == EINTR)
            ;
    }
    describe_exit(st, how, len);
    if (w->err >= 0) {
        int fl = fcntl(w->err, F_GETFL);
        fcntl(w->err, F_SETFL, fl & ~O_NONBLOCK); /* the writer is gone: read to the end */
        pull(w->err, &w->errb);
        relay(w, true);
        close(w->err);
    }
    if (w->sock >= 0)
        close(w->sock);
    w->sock = w->err = -1;
    w->pid = 0;
}

static void finish_case(pool *p, int k, bench_result *r)
{
    p->res[k] = *r;
    p->done[k] = true;
    p->ndone++;
    if (p->progress) /* the case just finished: several run at once */
        bench_progress(p->ndone, p->ndone, p->nsel, r->key, now_s() - p->t0);
}

static void lose_case(pool *p, worker *w, int k, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s %s while running this case", w->label, why);
    bench_result r;
    bench_lost_case(p->cases[p->sel[k]], p->o, w->device >= 0, w->fp, msg, &r);
    r.index = p->sel[k];
    finish_case(p, k, &r);
    p->lost++;
}

/* The worker is gone (why NULL: it ended by itself) or was killed by us (why says why):
 * reap it, fail the case it was running, start a fresh one in its slot. */
static void worker_down(pool *p, worker *w, const char *why)
{
    char how[128], reason[256];
    reap(w, why ? 0 : 2, how, sizeof how);
    snprintf(reason, sizeof reason, "%s", why ? why : how);
    if (!w->ready) {
        fprintf(stderr, "xdnn bench: %s failed to start (%s); giving its slot up\n", w->label, reason);
        w->retired = true;
        return;
    }
    if (w->current >= 0) {
        fprintf(stderr, "xdnn bench: %s %s on case %d; its other rows are kept\n", w->label, reason,
                p->sel[w->current]);
        lose_case(p, w, w->current, reason);
        w->current = -1;
    } else {
        fprintf(stderr, "xdnn bench: %s %s between cases\n", w->label, reason);
    }
    if (++w->deaths >= MAX_DEATHS_IN_A_ROW) {
        fprintf(stderr, "xdnn bench: %s died %d times in a row; giving its slot up\n", w->label, w->deaths);
        w->retired = true;
    } else if (p->ndone < p->nsel && !spawn(p, (int)(w - p->w))) {
        fprintf(stderr, "xdnn bench: cannot restart %s: %s\n", w->label, strerror(errno));
        w->retired = true;
    }
}

/* One line from a worker's socket: "ready", or the row of its case. */
static void take_line(pool *p, worker *w, char *line)
{
    cJSON *j = cJSON_Parse(line);
    const cJSON *ready = cJSON_GetObjectItemCaseSensitive(j, "ready");
    char why[256] = "";
    if (!w->ready && cJSON_IsNumber(ready)) {
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(j, "fingerprint");
        snprintf(w->fp, sizeof w->fp, "%s", cJSON_IsString(fp) ? fp->valuestring : "");
        if (ready->valueint != p->o->ncases)
            snprintf(why, sizeof why, "expanded %d cases, the parent %d (did a batch file change?)", ready->valueint,
                     p->o->ncases);
        else
            w->ready = true;
    } else if (w->ready && w->current >= 0) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "case");
        bench_result r;
        if (!cJSON_IsNumber(c) || c->valueint != p->sel[w->current])
            snprintf(why, sizeof why, "answered for another case than case %d", p->sel[w->current]);
        else if (bench_result_from_json(j, &r, why, sizeof why)) {
            r.index = p->sel[w->current];
            finish_case(p, w->current, &r);
            w->current = -1;
            w->deaths = 0;
        }
    } else {
        snprintf(why, sizeof why, "sent a line out of turn");
    }
    cJSON_Delete(j);
    if (why[0]) {
        char msg[400];
        snprintf(msg, sizeof msg, "broke the protocol (%s)", why);
        kill(w->pid, SIGKILL);
        worker_down(p, w, msg);
    }
}

/* Read a worker's output.  Any step may end the worker (and start a fresh one
 * in its slot): then the old descriptors' news is stale, hence the pid check. */
static void service(pool *p, worker *w, short sock_ev, short err_ev)
{
    pid_t pid = w->pid;
    if (err_ev && w->err >= 0) {
        bool open = pull(w->err, &w->errb);
        relay(w, false);
        if (!open) {
            close(w->err);
            w->err = -1;
        }
    }
    if (sock_ev && w->sock >= 0) {
        bool open = pull(w->sock, &w->in);
        char *line;
        size_t used;
        while (w->pid == pid && linebuf_line(&w->in, &line, &used)) {
            take_line(p, w, line);
            if (w->pid == pid)
                linebuf_drop(&w->in, used);
        }
        if (!open && w->pid == pid)
            worker_down(p, w, NULL);
    }
}

static void hand_out(pool *p, const int *order, int *next)
{
    for (int i = 0; i < p->n && *next < p->nsel; i++) {
        worker *w = &p->w[i];
        if (!w->pid || !w->ready || w->current >= 0)
            continue;
        char msg[32];
        int k = order[(*next)++];
        snprintf(msg, sizeof msg, "%d\n", p->sel[k]);
        w->current = k;
        w->started = now_s();
        if (send(w->sock, msg, strlen(msg), MSG_NOSIGNAL) != (ssize_t)strlen(msg)) {
            kill(w->pid, SIGKILL);
            worker_down(p, w, "stopped reading its cases");
        }
    }
}

/* Poll every live worker once (up to a second), then enforce --timeout. */
static void wait_round(pool *p)
{
    struct pollfd fds[2 * BENCH_MAX_WORKERS];
    int owner[2 * BENCH_MAX_WORKERS], nfds = 0;
    for (int i = 0; i < p->n; i++) {
        if (!p->w[i].pid)
            continue;
        if (p->w[i].sock >= 0)
            fds[nfds] = (struct pollfd){.fd = p->w[i].sock, .events = POLLIN}, owner[nfds++] = i;
        if (p->w[i].err >= 0)
            fds[nfds] = (struct pollfd){.fd = p->w[i].err, .events = POLLIN}, owner[nfds++] = -1 - i;
    }
    if (poll(fds, (nfds_t)nfds, 1000) > 0)
        for (int f = 0; f < nfds; f++) {
            worker *w = &p->w[owner[f] >= 0 ? owner[f] : -1 - owner[f]];
            if (fds[f].revents && w->pid)
                service(p, w, owner[f] >= 0 ? fds[f].revents : 0, owner[f] < 0 ? fds[f].revents : 0);
        }
    double now = now_s();
    for (int i = 0; i < p->n && p->o->timeout_s > 0; i++) {
        worker *w = &p->w[i];
        if (w->pid && w->current >= 0 && now - w->started > p->o->timeout_s) {
            char why[96];
            snprintf(why, sizeof why, "timed out after %g s (killed)", p->o->timeout_s);
            kill(w->pid, SIGKILL);
            worker_down(p, w, why);
        }
    }
}

static void pool_init(pool *p, const bench_opts *o)
{
    for (int i = 0; i < p->n; i++) {
        worker *w = &p->w[i];
        w->device = o->ndevices ? o->devices[i] : -1;
        snprintf(w->label, sizeof w->label, o->ndevices ? "gpu %d" : "worker %d", o->ndevices ? w->device : i + 1);
        w->sock = w->err = -1;
        w->current = -1;
        p->envp[i] = worker_env(w->device);
        if (!p->envp[i] || !spawn(p, i)) {
            fprintf(stderr, "xdnn bench: cannot start %s%s%s\n", w->label, p->envp[i] ? ": " : "",
                    p->envp[i] ? strerror(errno) : "");
            w->retired = true;
        }
    }
}

xdnn_status bench_workers_run(const bench_opts *o, char *const *argv, int argc, const bench_case *const *cases,
                              const int *sel, const double *cost, int nsel, bench_result *res)
{
    pool *p = calloc(1, sizeof *p);
    int *order = bench_cost_order(cost, NULL, nsel);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!p || !order || n <= 0) {
        free(p), free(order);
        fprintf(stderr, "xdnn bench: cannot start workers: %s\n", n <= 0 ? "no /proc/self/exe" : "out of memory");
        return n <= 0 ? XDNN_ERR_IO : XDNN_ERR_NOMEM;
    }
    exe[n] = 0;
    p->o = o, p->cases = cases, p->sel = sel, p->res = res, p->nsel = nsel, p->exe = exe;
    p->n = o->nworkers < nsel ? o->nworkers : nsel; /* no idle workers (a small shard) */
    p->done = calloc((size_t)nsel + 1, sizeof *p->done);
    p->argv = calloc((size_t)argc + 3, sizeof *p->argv);
    if (!p->done || !p->argv) {
        free(p->done), free(p->argv), free(p), free(order);
        return XDNN_ERR_NOMEM;
    }
    p->argv[0] = exe;
    for (int i = 0; i < argc; i++)
        p->argv[1 + i] = argv[i];
    p->argv[argc + 1] = (char *)(uintptr_t) "--worker";
    p->progress = bench_progress_on(o);
    p->t0 = now_s();
    pool_init(p, o);
    int next = 0;
    for (;;) {
        hand_out(p, order, &next);
        bool alive = false, busy = false;
        for (int i = 0; i < p->n; i++) {
            alive |= p->w[i].pid != 0;
            busy |= p->w[i].pid && p->w[i].current >= 0;
        }
        if (p->ndone == nsel || (!alive && !busy))
            break;
        wait_round(p);
    }
    if (p->progress)
        fprintf(stderr, "\r\033[K");
    for (int i = 0; i < p->n; i++) /* end of the cases: each worker reads EOF and exits */
        if (p->w[i].pid && p->w[i].sock >= 0)
            shutdown(p->w[i].sock, SHUT_WR);
    for (int i = 0; i < p->n; i++) {
        char how[128];
        if (p->w[i].pid)
            reap(&p->w[i], 10, how, sizeof how);
        free(p->w[i].in.data);
        free(p->w[i].errb.data);
        free_env(p->envp[i], p->w[i].device);
    }
    int unrun = 0;
    for (int k = 0; k < nsel; k++) /* no worker left for these */
        if (!p->done[k]) {
            bench_result r;
            bench_lost_case(cases[sel[k]], o, o->ndevices > 0, "",
                            "not run: every worker failed to start or was given up (see the messages above)", &r);
            r.index = sel[k];
            res[k] = r;
            unrun++;
        }
    if (unrun)
        fprintf(stderr, "xdnn bench: %d case%s not run: no worker left\n", unrun, unrun == 1 ? "" : "s");
    if (p->lost)
        fprintf(stderr, "xdnn bench: %d case%s lost with a crashed or hung worker (failed rows, status 9)\n", p->lost,
                p->lost == 1 ? "" : "s");
    free(p->done);
    free(p->argv);
    free(p);
    free(order);
    return XDNN_OK;
}
