/*
 * gai: resolve a name with the C library's getaddrinfo and print one
 * address per line, so tests can run the same lookup through glibc and
 * musl (docs/agent.md, "Real resolvers"). musl sends a name's search-list
 * candidates in parallel, glibc one after another: the seed's motivating
 * case for server-side search expansion.
 *
 * Usage: gai NAME. Exit status: 0 found, 2 not found (EAI_NONAME,
 * EAI_NODATA), 1 any other failure, with getaddrinfo's message on stderr.
 */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

int main(int argc, char **argv) {
	struct addrinfo hints, *res, *ai;
	char buf[INET6_ADDRSTRLEN];
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: gai NAME\n");
		return 1;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM; /* one result per address */
	rc = getaddrinfo(argv[1], NULL, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "gai: %s: %s\n", argv[1], gai_strerror(rc));
#ifdef EAI_NODATA
		if (rc == EAI_NODATA)
			return 2;
#endif
		return rc == EAI_NONAME ? 2 : 1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		const void *a;
		if (ai->ai_family == AF_INET)
			a = &((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			a = &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(ai->ai_family, a, buf, sizeof buf) != NULL)
			printf("%s\n", buf);
	}
	freeaddrinfo(res);
	return 0;
}
