/* parallel.c: a small pthread pool behind ct_parallel_for. Workers are started on first use
 * and forgotten in a forked child (DataLoader workers fork), where they are started afresh. */
#include "parallel.h"
#include "ctorch.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define CT_MAX_THREADS 64

typedef struct {
    void (*fn)(int64_t, int64_t, void *);
    void *ctx;
    int64_t n;
    int nchunks;
} Job;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static int pool_started = 0;   /* worker threads running (excluding the caller) */
static int num_threads = 0;    /* 0: not yet decided */
static Job pool_job;
static uint64_t pool_generation = 0;
static int pool_next_chunk = 0;
static int pool_pending = 0;
static _Thread_local int in_worker = 0;
static int pool_busy = 0; /* a job is running: concurrent callers run inline */

static void run_chunk(const Job *job, int c)
{
    int64_t begin = job->n * c / job->nchunks;
    int64_t end = job->n * (c + 1) / job->nchunks;
    if (begin < end) {
        job->fn(begin, end, job->ctx);
    }
}

static void *worker_main(void *arg)
{
    uint64_t seen = 0;
    in_worker = 1;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        while (pool_generation == seen) {
            pthread_cond_wait(&pool_work, &pool_lock);
        }
        seen = pool_generation;
        while (pool_next_chunk < pool_job.nchunks) {
            int c = pool_next_chunk++;
            Job job = pool_job;
            pthread_mutex_unlock(&pool_lock);
            run_chunk(&job, c);
            pthread_mutex_lock(&pool_lock);
            if (--pool_pending == 0) {
                pthread_cond_signal(&pool_done);
            }
        }
    }
    return NULL;
}

static void after_fork_in_child(void)
{
    /* The workers do not exist in the child; start new ones on demand. */
    pthread_mutex_init(&pool_lock, NULL);
    pthread_cond_init(&pool_work, NULL);
    pthread_cond_init(&pool_done, NULL);
    pool_started = 0;
    pool_busy = 0;
    pool_pending = 0;
    pool_next_chunk = 0;
}

static void decide_num_threads(void)
{
    static int atfork_registered = 0;
    if (!atfork_registered) {
        pthread_atfork(NULL, NULL, after_fork_in_child);
        atfork_registered = 1;
    }
    if (num_threads == 0) {
        const char *env = getenv("CTORCH_NUM_THREADS");
        if (env == NULL) {
            env = getenv("OMP_NUM_THREADS");
        }
        long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
        num_threads = n < 1 ? 1 : n > CT_MAX_THREADS ? CT_MAX_THREADS : (int)n;
    }
}

int ct_get_num_threads(void)
{
    decide_num_threads();
    return num_threads;
}

void ct_set_num_threads(int n)
{
    decide_num_threads();
    num_threads = n < 1 ? 1 : n > CT_MAX_THREADS ? CT_MAX_THREADS : n;
}

void ct_parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t, int64_t, void *), void *ctx)
{
    if (n <= 0) {
        return;
    }
    decide_num_threads();
    int64_t chunks = grain > 0 ? n / grain : n;
    if (chunks > num_threads) {
        chunks = num_threads;
    }
    if (chunks <= 1 || in_worker) {
        fn(0, n, ctx);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    if (pool_busy) { /* another thread (with the GIL released) owns the pool */
        pthread_mutex_unlock(&pool_lock);
        fn(0, n, ctx);
        return;
    }
    pool_busy = 1;
    while (pool_started < num_threads - 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0) {
            break;
        }
        pthread_detach(t);
        pool_started++;
    }
    if (pool_started == 0) {
        pool_busy = 0;
        pthread_mutex_unlock(&pool_lock);
        fn(0, n, ctx);
        return;
    }
    pool_job.fn = fn;
    pool_job.ctx = ctx;
    pool_job.n = n;
    pool_job.nchunks = (int)chunks;
    pool_next_chunk = 0;
    pool_pending = (int)chunks;
    pool_generation++;
    pthread_cond_broadcast(&pool_work);
    /* The caller takes chunks too. */
    in_worker = 1;
    while (pool_next_chunk < pool_job.nchunks) {
        int c = pool_next_chunk++;
        Job job = pool_job;
        pthread_mutex_unlock(&pool_lock);
        run_chunk(&job, c);
        pthread_mutex_lock(&pool_lock);
        pool_pending--;
    }
    in_worker = 0;
    while (pool_pending > 0) {
        pthread_cond_wait(&pool_done, &pool_lock);
    }
    pool_busy = 0;
    pthread_mutex_unlock(&pool_lock);
}
