/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-swapprobe: the instruments of the swap benchmark (bench/swap.sh),
 * run in its guest.
 *
 *   oomkit-swapprobe wake OUT      a timer task: wakes every 100 ms and
 *                                  measures how late each wake-up is
 *   oomkit-swapprobe redis OUT     a redis client on 127.0.0.1:6379 (or the
 *                                  port $OOMKIT_SWAPPROBE_PORT): one GET of
 *                                  a random key:1..30000 every 100 ms
 *   oomkit-swapprobe wait PID S    waits at most S seconds for PID to end
 *
 * wake and redis run until killed.  Each SIGUSR1 ends a phase: the figures
 * of the phase go to OUT.N (N = 1, 2, ...; written whole, then renamed) and
 * the next phase starts from nothing.
 *
 * wake writes "worst_ms=W frozen_s=F wakeups=N wake_span_s=S": W the latest
 * wake-up (late from 100 ms after the wake-up before it), F the sum of the
 * delays of the wake-ups that came a second or more late (the time a user
 * would call the machine frozen), S the phase's length by the task's clock.
 *
 * redis sends on a fixed schedule and measures each reply from the moment
 * its request was due, not from when it could be sent: a client that waited
 * 20 s for redis counts the requests it could not send in that time as
 * late, not as missing (no coordinated omission).  It writes
 * "p99_ms=P max_ms=M ok=N missing=K errors=E redis_span_s=S": K replies
 * that said the key does not exist, E requests that got no reply (redis
 * down, restarted), S the phase's length by the client's clock.
 *
 * wait prints "dead after_s=T" (T from the process's start, as the kernel
 * records it in /proc/PID/stat, to its end) or "alive waited_s=T".
 *
 * redis and wait lock their memory: they are instruments, and a page of
 * theirs swapped out would be their own delay.  wake does not: it is the
 * user's task whose lateness is measured.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES (1u << 18)
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

static volatile sig_atomic_t phase_end;
static unsigned phase;

static void on_usr1(int sig)
{
	(void)sig;
	phase_end = 1;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Writes one line to OUT.N, whole: a reader never sees half of it. */
static void write_phase(const char *out, const char *line)
{
	char path[4096], tmp[4200];
	FILE *f;

	phase++;
	snprintf(path, sizeof(path), "%s.%u", out, phase);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		return;
	}
	fprintf(f, "%s\n", line);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		perror(path);
}

static _Noreturn void wake(const char *out)
{
	uint64_t worst_ns = 0, frozen_ns = 0, n = 0, start = now_ns(CLOCK_MONOTONIC),
		 due = start + 100 * NS_PER_MS;
	char line[256];

	for (;;) {
		struct timespec d = {.tv_sec = (time_t)(due / NS_PER_S), .tv_nsec = (long)(due % NS_PER_S)};
		uint64_t now, late;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
			;
		/* Late from the moment it was due, 100 ms after the last wake-up:
		 * whatever held the task anywhere in its loop (a page of its own
		 * to read back from swap, no CPU) counts. */
		now = now_ns(CLOCK_MONOTONIC);
		late = now > due ? now - due : 0;
		due = now + 100 * NS_PER_MS;
		if (late > worst_ns)
			worst_ns = late;
		if (late >= NS_PER_S)
			frozen_ns += late;
		n++;
		if (phase_end) {
			phase_end = 0;
			snprintf(line, sizeof(line),
				 "worst_ms=%llu frozen_s=%.1f wakeups=%llu wake_span_s=%.1f",
				 (unsigned long long)(worst_ns / NS_PER_MS), (double)frozen_ns / NS_PER_S,
				 (unsigned long long)n, (double)(now - start) / NS_PER_S);
			write_phase(out, line);
			worst_ns = frozen_ns = n = 0;
			start = now;
		}
	}
}

static int redis_connect(void)
{
	const char *port = getenv("OOMKIT_SWAPPROBE_PORT");
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port ? (uint16_t)atoi(port) : 6379),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 30};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* A redis frozen longer than this is counted as down. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads one reply to a GET: 1 a value, 0 no such key, -1 no reply. */
static int redis_reply(int fd)
{
	static char buf[8192];
	size_t have = 0, need = 0;

	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		have += (size_t)r;
		if (!need) {
			char *nl = memchr(buf, '\n', have);
			long len;
			if (!nl)
				continue;
			if (buf[0] != '$')
				return -1;
			len = strtol(buf + 1, NULL, 10);
			if (len < 0)
				return 0;
			need = (size_t)(nl - buf) + 1 + (size_t)len + 2;
			if (need > sizeof(buf))
				return -1;
		}
		if (have >= need)
			return 1;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static _Noreturn void redis(const char *out)
{
	static uint32_t lat_us[MAX_SAMPLES];
	uint64_t ok = 0, missing = 0, errors = 0, due = now_ns(CLOCK_MONOTONIC), start = due;
	unsigned seed = (unsigned)getpid();
	int fd = -1;
	char line[256];

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		char req[128];
		int len, r;

		if (now < due) {
			struct timespec d = {.tv_sec = (time_t)(due / NS_PER_S),
					     .tv_nsec = (long)(due % NS_PER_S)};
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
				;
		}
		if (fd < 0)
			fd = redis_connect();
		seed = seed * 1103515245u + 12345u;
		len = snprintf(req, sizeof(req), "*2\r\n$3\r\nGET\r\n$%d\r\nkey:%u\r\n",
			       4 + snprintf(NULL, 0, "%u", 1 + (seed >> 8) % 30000), 1 + (seed >> 8) % 30000);
		if (fd < 0 || write(fd, req, (size_t)len) != len || (r = redis_reply(fd)) < 0) {
			errors++;
			if (fd >= 0)
				close(fd);
			fd = -1;
			/* Down: try again in 100 ms, the requests due meanwhile are lost. */
			due = now_ns(CLOCK_MONOTONIC) + 100 * NS_PER_MS;
		} else {
			uint64_t done = now_ns(CLOCK_MONOTONIC), l = done > due ? (done - due) / 1000 : 0;
			if (r == 0)
				missing++;
			if (ok < MAX_SAMPLES)
				lat_us[ok] = l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
			ok++;
			due += 100 * NS_PER_MS;
		}
		if (phase_end) {
			uint64_t n = ok < MAX_SAMPLES ? ok : MAX_SAMPLES;
			double p99 = 0, max = 0;
			phase_end = 0;
			if (n) {
				qsort(lat_us, n, sizeof(lat_us[0]), cmp_u32);
				p99 = lat_us[(n * 99 + 99) / 100 - 1] / 1000.0;
				max = lat_us[n - 1] / 1000.0;
			}
			snprintf(line, sizeof(line),
				 "p99_ms=%.1f max_ms=%.1f ok=%llu missing=%llu errors=%llu redis_span_s=%.1f",
				 p99, max, (unsigned long long)ok, (unsigned long long)missing,
				 (unsigned long long)errors,
				 (double)(now_ns(CLOCK_MONOTONIC) - start) / NS_PER_S);
			write_phase(out, line);
			ok = missing = errors = 0;
			/* A backlog is the phase's: the next starts on time. */
			due = start = now_ns(CLOCK_MONOTONIC);
		}
	}
}

static int wait_pid(const char *pid_s, const char *limit_s)
{
	char path[64], buf[1024], *p;
	unsigned long long start_ticks = 0;
	uint64_t start_ns;
	long pid = strtol(pid_s, NULL, 10), limit = strtol(limit_s, NULL, 10);
	int fd, pfd, n;
	struct pollfd pf;

	if (pid <= 0 || limit <= 0) {
		fprintf(stderr, "oomkit-swapprobe wait: bad PID or seconds\n");
		return 2;
	}
	pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
	if (pfd < 0 || n <= 0) {
		fprintf(stderr, "oomkit-swapprobe wait: %ld: %s\n", pid, strerror(errno));
		return 2;
	}
	buf[n] = 0;
	/* Field 22, counted after the comm's closing parenthesis (field 2). */
	p = strrchr(buf, ')');
	for (int f = 2; p && f < 22; f++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start_ticks) != 1) {
		fprintf(stderr, "oomkit-swapprobe wait: %s: no start time\n", path);
		return 2;
	}
	start_ns = start_ticks * (NS_PER_S / (uint64_t)sysconf(_SC_CLK_TCK));
	pf.fd = pfd;
	pf.events = POLLIN;
	for (;;) {
		uint64_t now = now_ns(CLOCK_BOOTTIME);
		long left_ms = (long)((start_ns + (uint64_t)limit * NS_PER_S - now) / NS_PER_MS);
		if (now >= start_ns + (uint64_t)limit * NS_PER_S) {
			printf("alive waited_s=%.1f\n", (double)(now - start_ns) / NS_PER_S);
			return 0;
		}
		if (poll(&pf, 1, (int)left_ms) > 0) {
			printf("dead after_s=%.1f\n", (double)(now_ns(CLOCK_BOOTTIME) - start_ns) / NS_PER_S);
			return 0;
		}
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};

	if (argc == 3 && !strcmp(argv[1], "wake")) {
		sigaction(SIGUSR1, &sa, NULL);
		wake(argv[2]);
	}
	if (argc == 3 && !strcmp(argv[1], "redis")) {
		signal(SIGPIPE, SIG_IGN);
		sigaction(SIGUSR1, &sa, NULL);
		mlockall(MCL_CURRENT | MCL_FUTURE);
		redis(argv[2]);
	}
	if (argc == 4 && !strcmp(argv[1], "wait")) {
		mlockall(MCL_CURRENT | MCL_FUTURE);
		return wait_pid(argv[2], argv[3]);
	}
	fprintf(stderr, "usage: oomkit-swapprobe wake OUT | redis OUT | wait PID SECONDS\n");
	return 2;
}
