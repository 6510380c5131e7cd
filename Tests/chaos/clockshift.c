/* The chaos run's wall clock (Tests/chaos/chaos.py, docs/reliability.md): preloaded into the
 * daemon, it adds an offset to every reading of the real-time clock, so the run can step the
 * daemon's wall clock without touching the machine's. The offset (signed microseconds, 8 bytes)
 * lives in the file CHAOS_CLOCK_OFFSET names, mapped shared: the harness rewrites it and the next
 * reading moves. Only readings are shifted: sleeps and timed waits, which libfaketime also
 * rewrites (and breaks with EINVAL when the offset changes), pass through untouched, and the
 * monotonic clocks the daemon measures elapsed time with are never shifted, as on a machine
 * whose administrator or NTP steps the clock. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static volatile const int64_t *offset;

__attribute__((constructor)) static void load(void) {
    real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    const char *path = getenv("CHAOS_CLOCK_OFFSET");
    if (path == NULL) return;
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return;
    void *map = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, descriptor, 0);
    close(descriptor);
    if (map != MAP_FAILED) offset = (volatile const int64_t *)map;
}

static int64_t shift(void) { return offset == NULL ? 0 : __atomic_load_n(offset, __ATOMIC_RELAXED); }

static void add(struct timespec *time, int64_t microseconds) {
    int64_t nanoseconds = time->tv_nsec + (microseconds % 1000000) * 1000;
    time->tv_sec += microseconds / 1000000 + nanoseconds / 1000000000;
    nanoseconds %= 1000000000;
    if (nanoseconds < 0) {
        nanoseconds += 1000000000;
        time->tv_sec -= 1;
    }
    time->tv_nsec = nanoseconds;
}

int clock_gettime(clockid_t clock, struct timespec *time) {
    int status = real_clock_gettime(clock, time);
    if (status == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) add(time, shift());
    return status;
}

int gettimeofday(struct timeval *restrict value, void *restrict zone) {
    struct timespec now;
    int status = clock_gettime(CLOCK_REALTIME, &now);
    if (status == 0) {
        value->tv_sec = now.tv_sec;
        value->tv_usec = now.tv_nsec / 1000;
    }
    (void)zone;
    return status;
}

time_t time(time_t *result) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (result != NULL) *result = now.tv_sec;
    return now.tv_sec;
}
