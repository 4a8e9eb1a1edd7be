/*
 * floordns: the kernel floor of the DNS comparison. It answers every query
 * on one UDP socket with one fixed A record (10.96.0.1), with no lookup:
 * what remains is the kernel's cost of receiving a query and sending its
 * answer, batched with recvmmsg/sendmmsg as skydns's fast path batches.
 * bench/dns.sh builds it with gcc; usage: floordns ADDR PORT (IPv4).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum { BATCH = 64, READ_SIZE = 4096, HEADER = 12 };

/* The answer record: a pointer to the question's name, A, IN, TTL 300,
 * 4 bytes of address. */
static const unsigned char record[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 10, 96, 0, 1};

static unsigned char queries[BATCH][READ_SIZE];
static unsigned char answers[BATCH][READ_SIZE + sizeof record];

/* answer writes to out the answer to the query q of n bytes and returns
 * its length, or 0 when q has no complete question. */
static size_t answer(unsigned char *out, const unsigned char *q, size_t n) {
	size_t end = HEADER;
	while (end < n && q[end] != 0) {
		if (q[end] > 63)
			return 0; /* compressed or not a label */
		end += 1 + q[end];
	}
	end += 1 + 4; /* the root label, type and class */
	if (n < HEADER + 5 || end > n)
		return 0;
	memcpy(out, q, end);
	out[2] = 0x84 | (q[2] & 0x01); /* QR, AA, the query's RD */
	out[3] = 0;
	memcpy(out + 4, "\0\1\0\1\0\0\0\0", 8); /* QD 1, AN 1, NS 0, AR 0 */
	memcpy(out + end, record, sizeof record);
	return end + sizeof record;
}

static int listen_on(const char *host, const char *port) {
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port))};
	int rcvbuf = 4 << 20;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "floordns: bad address %s\n", host);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		fprintf(stderr, "floordns: bind %s:%s: %s\n", host, port, strerror(errno));
		return -1;
	}
	return fd;
}

/* send_all writes the first k answers, skipping one that fails. */
static void send_all(int fd, struct mmsghdr *out, int k) {
	int sent = 0;
	while (sent < k) {
		int n = sendmmsg(fd, out + sent, (unsigned)(k - sent), 0);
		if (n < 0 && errno == EINTR)
			continue;
		sent += n > 0 ? n : 1;
	}
}

int main(int argc, char **argv) {
	static struct mmsghdr in[BATCH], out[BATCH];
	static struct iovec in_iov[BATCH], out_iov[BATCH];
	static struct sockaddr_in from[BATCH];
	if (argc != 3) {
		fprintf(stderr, "usage: floordns ADDR PORT\n");
		return 2;
	}
	int fd = listen_on(argv[1], argv[2]);
	if (fd < 0)
		return 1;
	for (int i = 0; i < BATCH; i++) {
		in_iov[i] = (struct iovec){queries[i], READ_SIZE};
		in[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_iov = &in_iov[i], .msg_iovlen = 1};
		out[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_namelen = sizeof from[i], .msg_iov = &out_iov[i], .msg_iovlen = 1};
	}
	for (;;) {
		for (int i = 0; i < BATCH; i++)
			in[i].msg_hdr.msg_namelen = sizeof from[i];
		int n = recvmmsg(fd, in, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("floordns: recvmmsg");
			return 1;
		}
		int k = 0;
		for (int i = 0; i < n; i++) {
			size_t len = answer(answers[k], queries[i], in[i].msg_len);
			if (len == 0)
				continue;
			out_iov[k] = (struct iovec){answers[k], len};
			out[k].msg_hdr.msg_name = &from[i];
			k++;
		}
		send_all(fd, out, k);
	}
}
