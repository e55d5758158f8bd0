/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sdbus-helper.c - oomkitd-systemd, the process through which oomkitd
 * changes what systemd owns (sd-bus, org.freedesktop.systemd1.Manager):
 *
 *   oomkitd-systemd --parent PID --state FILE   with the daemon's pair as fd 3
 *   oomkitd-systemd --release FILE              for `oomkitd --release`
 *
 * systemd's cgroup delegation document says that the attributes of a cgroup
 * systemd made for a unit are systemd's: a program that writes memory.high
 * itself is overwritten at the next daemon-reload and lied about by
 * `systemctl show`.  The daemon's library still writes the hold itself (it
 * must take effect within the OOM's delay, whatever PID 1 is doing) and the
 * daemon sends each change here; this process makes the same change through
 * systemd, SetUnitProperties(unit, runtime=true, MemoryHigh=, MemoryMax=), so
 * systemd writes the same values and keeps them across a reload or a restart
 * of the unit.  It starts transient scopes for `oomkit run` too.
 *
 * A unit's own MemoryHigh= and MemoryMax= are read before the first change
 * and kept in FILE (one line a unit: name, high, max, which of them were
 * changed), so that they are put back when the daemon stops, when it dies
 * (the daemon's pidfd: this process outlives it for that), or by
 * `oomkitd --release` if both were killed.  A release of the hold (memory.high
 * "max") is the unit's own MemoryHigh= again.
 *
 * D-Bus lives here, never in the daemon: libsystemd is neither linked into
 * the daemon nor locked in its memory, and nothing on its handler path waits
 * for a bus.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "common/sdbus-wire.h"

#define SOCK_FD 3
#define INFINITY_BYTES UINT64_MAX
/* How long a transient scope's start job may take. */
#define SCOPE_TIMEOUT_US (10ull * 1000 * 1000)

#define HAS_HIGH 1u
#define HAS_MAX 2u

struct unit {
	char name[SDBUS_UNIT_MAX];
	uint64_t orig_high, orig_max; /* the unit's own, before any change */
	uint64_t high, max;	      /* what systemd was last told */
	unsigned changed;	      /* HAS_*: which of them were changed */
};

static struct unit *units;
static size_t n_units, cap_units;
static const char *state_path;
static sd_bus *bus;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(2, line, (size_t)n);
}

/* Unit names are [A-Za-z0-9:_.\@-] (unit_name_is_valid()); anything else
 * in the state file, or from the daemon, is refused. */
static bool valid_unit(const char *s)
{
	size_t n = strnlen(s, SDBUS_UNIT_MAX);
	if (n == 0 || n >= SDBUS_UNIT_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr(":_.\\@-", s[i])))
			return false;
	return strchr(s, '.') != NULL;
}

static const char *unit_interface(const char *unit)
{
	static const char *const types[][2] = {
	    {".service", "org.freedesktop.systemd1.Service"}, {".scope", "org.freedesktop.systemd1.Scope"},
	    {".slice", "org.freedesktop.systemd1.Slice"},     {".socket", "org.freedesktop.systemd1.Socket"},
	    {".mount", "org.freedesktop.systemd1.Mount"},     {".swap", "org.freedesktop.systemd1.Swap"},
	};
	size_t n = strlen(unit);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t k = strlen(types[i][0]);
		if (n > k && strcmp(unit + n - k, types[i][0]) == 0)
			return types[i][1];
	}
	return NULL;
}

/* ------------------------------------------------------------ state file */

static void save_state(void)
{
	char tmp[4096];
	if (!state_path || snprintf(tmp, sizeof(tmp), "%s.new", state_path) >= (int)sizeof(tmp))
		return;
	FILE *f = fopen(tmp, "we");
	if (!f) {
		say("<4>%s: %s", tmp, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n_units; i++)
		fprintf(f, "%s %" PRIu64 " %" PRIu64 " %u\n", units[i].name, units[i].orig_high,
			units[i].orig_max, units[i].changed);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		say("<4>%s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		return;
	}
	fclose(f);
	if (rename(tmp, state_path) < 0)
		say("<4>%s: %s", state_path, strerror(errno));
}

static struct unit *add_unit(const char *name)
{
	if (n_units == cap_units) {
		size_t cap = cap_units ? cap_units * 2 : 16;
		struct unit *t = realloc(units, cap * sizeof(*t));
		if (!t)
			return NULL;
		units = t;
		cap_units = cap;
	}
	struct unit *u = &units[n_units++];
	memset(u, 0, sizeof(*u));
	memcpy(u->name, name, strlen(name) + 1);
	return u;
}

static struct unit *find_unit(const char *name)
{
	for (size_t i = 0; i < n_units; i++)
		if (strcmp(units[i].name, name) == 0)
			return &units[i];
	return NULL;
}

/* The units a previous helper changed: their originals are the ones to put
 * back, not what they hold now (the hold, if nobody put it back). */
static int load_state(const char *path)
{
	FILE *f = fopen(path, "re");
	char name[SDBUS_UNIT_MAX + 1];
	uint64_t high, max;
	unsigned changed;
	int line = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		int k = fscanf(f, "%256s %" SCNu64 " %" SCNu64 " %u", name, &high, &max, &changed);
		if (k == EOF)
			break;
		line++;
		if (k != 4 || !valid_unit(name) || changed > (HAS_HIGH | HAS_MAX)) {
			say("<4>%s:%d: not a unit line; the rest is ignored", path, line);
			break;
		}
		if (find_unit(name))
			continue;
		struct unit *u = add_unit(name);
		if (!u)
			break;
		*u = (struct unit){
		    .orig_high = high, .orig_max = max, .high = high, .max = max, .changed = changed};
		memcpy(u->name, name, strlen(name) + 1);
	}
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------ the bus */

/* The system bus, connected now.  sd-bus finishes its handshake only when
 * the bus is used, and dbus-daemon closes a connection that has not
 * authenticated within its auth_timeout (30 s on Debian): a helper with
 * nothing to tell systemd for that long would find its bus closed at its
 * first change.  A method call of the bus's own completes the handshake. */
static int connect_bus(void)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;

	bus = sd_bus_flush_close_unref(bus);
	int r = sd_bus_open_system(&bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				       "org.freedesktop.DBus", "GetId", &err, &reply, NULL);
	if (r < 0)
		say("<3>cannot connect to the system bus: %s", err.message ? err.message : strerror(-r));
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	return r;
}

/* After a call failed with r: whether the bus was gone (dbus-daemon closed
 * the connection, or was restarted) and is connected again, for one retry. */
static bool reconnected(int r)
{
	if (r != -ENOTCONN && r != -ECONNRESET && r != -EPIPE)
		return false;
	say("<4>the system bus connection is gone (%s): connecting again", strerror(-r));
	return connect_bus() >= 0;
}

/* ------------------------------------------------------------ systemd */

static int get_limit_once(const char *unit, const char *prop, uint64_t *ret, sd_bus_error *err)
{
	char *path = NULL;
	const char *iface = unit_interface(unit);
	int r = iface ? sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path) : -EINVAL;
	if (r >= 0)
		r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, iface, prop, err, 't',
						ret);
	free(path);
	return r;
}

static int get_limit(const char *unit, const char *prop, uint64_t *ret)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int r = get_limit_once(unit, prop, ret, &err);

	if (r < 0 && reconnected(r)) {
		sd_bus_error_free(&err);
		r = get_limit_once(unit, prop, ret, &err);
	}
	if (r < 0)
		say("<4>%s: cannot read %s: %s", unit, prop, err.message ? err.message : strerror(-r));
	sd_bus_error_free(&err);
	return r;
}

/* SetUnitProperties(unit, runtime=true, the props of mask). */
static int set_limits_once(const char *unit, unsigned mask, uint64_t high, uint64_t max, sd_bus_error *err)
{
	sd_bus_message *m = NULL, *reply = NULL;
	int r =
	    sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
					   "org.freedesktop.systemd1.Manager", "SetUnitProperties");
	if (r >= 0)
		r = sd_bus_message_append(m, "sb", unit, 1);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	if (r >= 0 && (mask & HAS_HIGH))
		r = sd_bus_message_append(m, "(sv)", "MemoryHigh", "t", high);
	if (r >= 0 && (mask & HAS_MAX))
		r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", max);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_call(bus, m, 0, err, &reply);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return r;
}

static int set_limits(const char *unit, unsigned mask, uint64_t high, uint64_t max)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int r = set_limits_once(unit, mask, high, max, &err);

	if (r < 0 && reconnected(r)) {
		sd_bus_error_free(&err);
		r = set_limits_once(unit, mask, high, max, &err);
	}
	if (r < 0)
		say("<4>%s: SetUnitProperties: %s", unit, err.message ? err.message : strerror(-r));
	sd_bus_error_free(&err);
	return r;
}

/* Which of the unit's two properties differ from what systemd is known to have. */
static unsigned differs(const struct unit *u, uint64_t high, uint64_t max)
{
	return (high != u->high ? HAS_HIGH : 0) | (max != u->max ? HAS_MAX : 0);
}

static void on_set(const struct sdbus_msg *msg)
{
	uint64_t high, max;
	struct unit *u = find_unit(msg->unit);
	bool fresh = !u;

	if (!u) {
		if (get_limit(msg->unit, "MemoryHigh", &high) < 0 ||
		    get_limit(msg->unit, "MemoryMax", &max) < 0 || !(u = add_unit(msg->unit)))
			return;
		u->orig_high = u->high = high;
		u->orig_max = u->max = max;
	}
	/* Released: the unit's own MemoryHigh= again. */
	high = msg->high_bytes == INFINITY_BYTES ? u->orig_high : msg->high_bytes;
	unsigned mask = differs(u, high, msg->max_bytes);
	/* The same values again: the daemon writes a limit again when someone
	 * wrote over it, and whoever did may have told systemd (an admin's
	 * set-property), so what systemd has is asked again. */
	if (!mask && !fresh) {
		if (get_limit(u->name, "MemoryHigh", &u->high) < 0 ||
		    get_limit(u->name, "MemoryMax", &u->max) < 0)
			return;
		mask = differs(u, high, msg->max_bytes);
	}
	if (!mask)
		return;
	/* Recorded before systemd is told: a crash between the two leaves a
	 * unit to put back, never a change nobody knows of. */
	unsigned before = u->changed;
	u->changed |= mask;
	if (u->changed != before)
		save_state();
	if (set_limits(u->name, mask, high, msg->max_bytes) >= 0) {
		u->high = high;
		u->max = msg->max_bytes;
	}
}

/* Puts every unit's own MemoryHigh=/MemoryMax= back. */
static int restore_all(void)
{
	int failed = 0;
	for (size_t i = 0; i < n_units; i++) {
		struct unit *u = &units[i];
		if (u->changed && set_limits(u->name, u->changed, u->orig_high, u->orig_max) < 0) {
			/* A transient unit that is gone needs nothing. */
			failed++;
		}
	}
	if (n_units)
		say("<5>put back MemoryHigh=/MemoryMax= of %zu systemd units%s", n_units,
		    failed ? " (some failed: see above)" : "");
	if (state_path)
		unlink(state_path);
	n_units = 0;
	return failed ? -EIO : 0;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	char **want = userdata;
	const char *path, *unit, *result;
	uint32_t id;
	(void)ret_error;
	if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0 && *want &&
	    strcmp(path, *want) == 0) {
		free(*want);
		*want = strdup(strcmp(result, "done") == 0 ? "" : result);
	}
	return 0;
}

/* StartTransientUnit(unit, "fail", PIDs=[pid], Slice=slice), as
 * `systemd-run --scope` does, then the start job's end. */
static int start_scope_once(const struct sdbus_msg *msg, char *error, size_t error_len)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_slot *slot = NULL;
	char *job = NULL;
	const char *job_path;
	int r = sd_bus_match_signal(bus, &slot, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				    "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed, &job);
	if (r >= 0)
		r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
						   "/org/freedesktop/systemd1",
						   "org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", msg->unit, "fail");
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sv)", 3, "PIDs", "au", 1, msg->pid, "Slice", "s", msg->slice,
					  "Description", "s", "oomkit run");
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r >= 0)
		r = sd_bus_call(bus, m, 0, &err, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &job_path);
	if (r >= 0 && !(job = strdup(job_path)))
		r = -ENOMEM;
	/* job is the path until JobRemoved names it, then its result. */
	for (uint64_t end = 0; r >= 0 && job && job[0] == '/';) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
		if (!end)
			end = now + SCOPE_TIMEOUT_US;
		if (now >= end) {
			r = -ETIMEDOUT;
			break;
		}
		if ((r = sd_bus_process(bus, NULL)) > 0)
			continue;
		if (r >= 0)
			r = sd_bus_wait(bus, end - now);
	}
	if (r >= 0 && job && job[0]) {
		snprintf(error, error_len, "the scope's start job ended \"%s\"", job);
		r = -EIO;
	} else if (r < 0) {
		snprintf(error, error_len, "StartTransientUnit: %s",
			 err.message ? err.message : strerror(-r));
	}
	free(job);
	sd_bus_slot_unref(slot);
	sd_bus_error_free(&err);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 0;
}

static int start_scope(const struct sdbus_msg *msg, char *error, size_t error_len)
{
	int r = start_scope_once(msg, error, error_len);

	if (r < 0 && reconnected(r))
		r = start_scope_once(msg, error, error_len);
	return r;
}

/* ------------------------------------------------------------ main */

/* One helper at a time on a state file: a new daemon's (or --release) waits
 * while the helper of the one before puts its units back, so that a late
 * "put back" never undoes a new hold. */
static void lock_state(const char *path)
{
	char lock[4096];
	if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock))
		return;
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0)
		say("<4>%s: %s", lock, strerror(errno));
	/* Held until this process exits. */
}

static void answer(uint32_t op, uint64_t id, int result, const char *error)
{
	struct sdbus_msg m = {.op = op, .id = id, .result = result};
	if (error)
		snprintf(m.error, sizeof(m.error), "%s", error);
	(void)send(SOCK_FD, &m, sizeof(m), MSG_NOSIGNAL);
}

static void serve(int parent_pidfd)
{
	struct pollfd p[2] = {{.fd = SOCK_FD, .events = POLLIN}, {.fd = parent_pidfd, .events = POLLIN}};
	struct sdbus_msg m;

	for (;;) {
		if (poll(p, parent_pidfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents) {
			say("<4>oomkitd exited; putting the systemd units back");
			break;
		}
		ssize_t n = recv(SOCK_FD, &m, sizeof(m), 0);
		if (n <= 0) /* the daemon closed its end: it is gone */
			break;
		if (n != (ssize_t)sizeof(m))
			continue;
		m.unit[sizeof(m.unit) - 1] = m.slice[sizeof(m.slice) - 1] = '\0';
		if (m.op == SDBUS_QUIT) {
			int r = restore_all();
			answer(SDBUS_DONE, m.id, r, NULL);
			return;
		}
		if (!valid_unit(m.unit) || !unit_interface(m.unit))
			continue;
		if (m.op == SDBUS_SET) {
			on_set(&m);
		} else if (m.op == SDBUS_SCOPE) {
			char error[160] = "";
			int r = valid_unit(m.slice) ? start_scope(&m, error, sizeof(error)) : -EINVAL;
			answer(SDBUS_DONE, m.id, r, error[0] ? error : NULL);
		}
	}
	(void)restore_all();
}

int main(int argc, char **argv)
{
	const char *release = NULL;
	long parent = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--parent") == 0)
			parent = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--state") == 0)
			state_path = argv[i + 1];
		else if (strcmp(argv[i], "--release") == 0)
			release = argv[i + 1];
	}
	if (!release && (parent <= 0 || !state_path)) {
		say("oomkitd-systemd: started by oomkitd only (--parent PID --state FILE, or --release "
		    "FILE)");
		return 2;
	}
	/* Keeps running when the daemon's stop sends SIGTERM to it as well. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int r = connect_bus();
	if (r < 0)
		return 1;
	lock_state(release ? release : state_path);
	if (release) {
		state_path = release;
		if ((r = load_state(release)) < 0)
			say("<3>%s: %s", release, strerror(-r));
		else
			r = restore_all();
		sd_bus_flush_close_unref(bus);
		return r < 0 ? 1 : 0;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)parent, 0);
	/* What a helper before this one left changed goes back first, before
	 * the daemon holds anything again. */
	if ((r = load_state(state_path)) < 0)
		say("<4>%s: %s", state_path, strerror(-r));
	else
		(void)restore_all();
	answer(SDBUS_READY, 0, 0, NULL);
	serve(pidfd);
	sd_bus_flush_close_unref(bus);
	return 0;
}
