/*
 * gaibench: N getaddrinfo lookups through the C library's resolver, timed
 * one by one, for bench/podlookup.sh: what a pod's lookups cost as the pod
 * feels them (seed 002), with glibc (gcc) and musl (musl-gcc -static).
 * The lookup is the one test/resolvers/gai.c makes: AF_UNSPEC with
 * SOCK_STREAM, so A and AAAA, one result per address.
 *
 * Usage: gaibench N NAME
 *
 * Every "{i}" in NAME becomes the lookup's number (0 … N-1), so that each
 * lookup asks a name no cache holds yet; a NAME without "{i}" is the same
 * name N times (cached after the first). Prints one line:
 *
 *   lookups=N failed=F seconds=S per_sec=R p50_us=A p99_us=B max_us=C
 *
 * A lookup of "localhost" (from /etc/hosts) before the timed ones is not
 * counted. Percentiles are nearest rank over every lookup, failed or not. Exit status
 * 0 when every lookup found an address, 2 when any did not, 1 on bad usage.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* expand writes pattern into out with every "{i}" replaced by i; -1 when it
 * does not fit. The pattern is never used as a printf format. */
static int expand(const char *pattern, long i, char *out, size_t size) {
	char num[24];
	size_t n = 0, k;
	int len = snprintf(num, sizeof num, "%ld", i);
	while (*pattern != '\0') {
		if (strncmp(pattern, "{i}", 3) == 0) {
			for (k = 0; k < (size_t)len; k++) {
				if (n + 1 >= size)
					return -1;
				out[n++] = num[k];
			}
			pattern += 3;
			continue;
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = *pattern++;
	}
	out[n] = '\0';
	return 0;
}

/* rank returns the nearest-rank percentile p of the n sorted values. */
static double rank(const double *v, long n, double p) {
	long r = (long)(p / 100.0 * n + 0.999999);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

int main(int argc, char **argv) {
	struct addrinfo hints, *res;
	char name[256];
	char *end;
	long n, i, failed = 0;
	double *lat, start, t0, total;

	if (argc != 3 || (n = strtol(argv[1], &end, 10)) < 1 || *end != '\0' || n > 10000000) {
		fprintf(stderr, "usage: gaibench N NAME  (N in 1-10000000; {i} in NAME becomes 0 … N-1)\n");
		return 1;
	}
	lat = malloc(sizeof *lat * (size_t)n);
	if (lat == NULL) {
		fprintf(stderr, "gaibench: out of memory\n");
		return 1;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* Not timed: glibc loads its NSS modules and reads resolv.conf on the
	 * first call, a cost of the process, not of a lookup. */
	if (getaddrinfo("localhost", NULL, &hints, &res) == 0)
		freeaddrinfo(res);
	start = now_us();
	for (i = 0; i < n; i++) {
		if (expand(argv[2], i, name, sizeof name) != 0) {
			fprintf(stderr, "gaibench: name too long\n");
			return 1;
		}
		t0 = now_us();
		if (getaddrinfo(name, NULL, &hints, &res) == 0)
			freeaddrinfo(res);
		else
			failed++;
		lat[i] = now_us() - t0;
	}
	total = now_us() - start;
	qsort(lat, (size_t)n, sizeof *lat, cmp_double);
	printf("lookups=%ld failed=%ld seconds=%.3f per_sec=%.1f p50_us=%.0f p99_us=%.0f max_us=%.0f\n", n, failed,
	       total / 1e6, n / (total / 1e6), rank(lat, n, 50), rank(lat, n, 99), lat[n - 1]);
	free(lat);
	return failed == 0 ? 0 : 2;
}
