// lookups: glibc's resolver under test. It resolves NAME with getaddrinfo
// (AF_UNSPEC: glibc sends the A and AAAA queries in parallel from one
// socket, as every glibc program does) COUNT times, RATE lookups a second
// (0: as fast as possible) in each of THREADS threads, and prints a line for
// every failed lookup and every lookup slower than 1 s, then a summary.
// NAME @FILE takes the names of FILE (one a line) in turn instead. With
// LOOKUPS_STOP_FILE set, COUNT is at most: it stops once that file exists.
//
//   END lookups=N failed=F slow=S p50_us=.. p99_us=.. max_us=..
//
// Built static (gcc -static -O2 -pthread), so it runs in any image.
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char **names;
static long nnames;
static long count, rate, threads;
static long *latencies; // microseconds, one per lookup
static long failed, slow, done;
static const char *stop_file;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void pace(long start, long i) {
	if (rate <= 0) return;
	long due = start + i * 1000000L / rate, wait = due - now_us();
	if (wait > 0) {
		struct timespec ts = {wait / 1000000L, (wait % 1000000L) * 1000};
		nanosleep(&ts, NULL);
	}
}

static int lookup(const char *name) {
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int err = getaddrinfo(name, NULL, &hints, &res);
	if (res) freeaddrinfo(res);
	return err;
}

static void *run(void *arg) {
	long first = (long)arg, start = now_us();
	for (long i = first; i < count; i += threads) {
		pace(start, (i - first) / threads);
		if (stop_file && access(stop_file, F_OK) == 0) break;
		long t0 = now_us();
		int err = lookup(names[i % nnames]);
		long took = now_us() - t0;
		latencies[i] = took;
		pthread_mutex_lock(&mu);
		done++;
		if (err) {
			failed++;
			printf("FAIL %ld us: %s\n", took, gai_strerror(err));
		} else if (took > 1000000L) {
			slow++;
			printf("SLOW %ld us\n", took);
		}
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

// read_names reads the names of path, one a line, into names.
static int read_names(const char *path) {
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char line[512];
	long cap = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0]) continue;
		if (nnames == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
		names[nnames++] = strdup(line);
	}
	fclose(f);
	if (nnames == 0) {
		fprintf(stderr, "%s: no names\n", path);
		return -1;
	}
	return 0;
}

static int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: lookups NAME RATE COUNT [THREADS]\n");
		return 2;
	}
	if (argv[1][0] == '@') {
		if (read_names(argv[1] + 1) != 0) return 2;
	} else {
		names = &argv[1];
		nnames = 1;
	}
	rate = atol(argv[2]);
	count = atol(argv[3]);
	threads = argc > 4 ? atol(argv[4]) : 1;
	if (count < 1 || threads < 1 || rate < 0) {
		fprintf(stderr, "lookups: COUNT and THREADS must be at least 1, RATE at least 0\n");
		return 2;
	}
	stop_file = getenv("LOOKUPS_STOP_FILE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	latencies = calloc(count, sizeof *latencies);
	for (long i = 0; i < count; i++) latencies[i] = -1; // not looked up (stopped early)
	pthread_t *ids = calloc(threads, sizeof *ids);
	for (long i = 0; i < threads; i++) pthread_create(&ids[i], NULL, run, (void *)i);
	for (long i = 0; i < threads; i++) pthread_join(ids[i], NULL);
	qsort(latencies, count, sizeof *latencies, cmp);
	long *took = latencies + (count - done); // the -1 of lookups never made sort first
	if (done == 0) {
		fprintf(stderr, "lookups: stopped before the first lookup\n");
		return 1;
	}
	printf("END lookups=%ld failed=%ld slow=%ld p50_us=%ld p99_us=%ld max_us=%ld\n", done, failed, slow,
	       took[done / 2], took[done * 99 / 100], took[done - 1]);
	return 0;
}
