/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * privs.c - the daemon gives up what it does not need once it knows what it
 * needs: capabilities (libcap-ng) and system calls (a seccomp allow-list,
 * libseccomp).  Both are set before liboomkit starts, so the guardian that
 * oomkit_new() forks starts under the same limits, and so does every
 * guardian restarted later.
 *
 * Capabilities kept, and why (the daemon runs as uid 0, so files owned by
 * root need none):
 *   CAP_KILL          the victims belong to other users (kill, pidfd_send_signal);
 *   CAP_DAC_OVERRIDE  a delegated job's cgroup.event_control and
 *                     cgroup.procs, and its owner's sub-memcgs, belong to
 *                     the owner;
 *   CAP_CHOWN         delegating a job added on reload;
 *   CAP_IPC_LOCK      mlockall(MCL_FUTURE): later allocations stay locked
 *                     past RLIMIT_MEMLOCK;
 *   CAP_SYS_NICE      oomkit run: moving a process into a job's cgroup is
 *                     checked like changing its scheduling (cgroup v2 runs
 *                     security_task_setscheduler), which a process holding
 *                     capabilities the daemon lacks (a root shell's) refuses
 *                     without it; found by the systemd guest tier;
 *   CAP_SYS_RESOURCE  setup only: oom_score_adj -1000 for the daemon and its
 *                     guardian (a guardian restarted later inherits the
 *                     -1000 floor, so it needs no capability to set it), and
 *                     a machine at the v2 root's PSI trigger, which kernels
 *                     before 6.5 let only it open (the fd stays usable).
 *   CAP_SYS_PTRACE    only if the configuration has an exe: rule:
 *                     /proc/PID/exe of another user's process, or of one
 *                     holding capabilities the daemon lacks, passes the
 *                     kernel's ptrace access check only with it.  The
 *                     ptrace and process_vm_* system calls stay off the
 *                     allow-list; what it opens besides is /proc/PID/mem
 *                     and friends, which the daemon never does.
 * Not kept: CAP_SYS_PTRACE otherwise (the /proc files read - stat, status,
 * cmdline, cgroup, oom_score_adj - are world-readable; without it
 * /proc/PID/mem and friends are out of reach), CAP_SYS_ADMIN, CAP_SETUID and
 * the rest.
 *
 * The allow-list is what the daemon, liboomkit and the C library call at
 * setup, on reload, on the handler path and in the guardian, found by
 * tracing every daemon test and reading the code for rarer paths.  Anything
 * else fails with EPERM rather than killing the daemon (an OOM handler must
 * keep running), and the kernel logs it (SECCOMP_FILTER_FLAG_LOG: an audit
 * record of type 1326 naming the call).  clone3 fails with ENOSYS so that a
 * C library creating a thread falls back to clone, whose flags are checked.
 */
#include <errno.h>
#include <linux/sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cap-ng.h>
#include <seccomp.h>

#include "base/log.h"
#include "base/privs.h"

static const unsigned run_caps[] = {CAP_KILL, CAP_DAC_OVERRIDE, CAP_CHOWN, CAP_IPC_LOCK, CAP_SYS_NICE};

unsigned long long privs_run_caps_mask(void)
{
	unsigned long long mask = 0;
	for (size_t i = 0; i < sizeof(run_caps) / sizeof(run_caps[0]); i++)
		mask |= 1ull << run_caps[i];
	return mask;
}

/* Called without argument checks.  Grouped by who needs them. */
/* clang-format off */
static const int allowed[] = {
	/* files: cgroupfs, /proc, reports, metrics, the configuration */
	SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(lseek),
	SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(close), SCMP_SYS(close_range), SCMP_SYS(fcntl), SCMP_SYS(dup),
	SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fstat), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(newfstatat),
	SCMP_SYS(statx), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink),
	SCMP_SYS(readlinkat), SCMP_SYS(getdents64), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(unlink),
	SCMP_SYS(unlinkat), SCMP_SYS(rmdir), SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2),
	SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(fchown), SCMP_SYS(fchownat),
	/* one daemon per machine, socket and report directory (runlock.c) */
	SCMP_SYS(flock),
	/* systemd's ManagedOOMPreference= (user.oomd_avoid, user.oomd_omit) */
	SCMP_SYS(fgetxattr),
	/* memory: malloc, mlockall */
	SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(madvise),
	SCMP_SYS(mlockall), SCMP_SYS(munlockall), SCMP_SYS(mlock),
	/* the event loops of the daemon, the library and the guardian */
	SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),
	SCMP_SYS(eventfd2), SCMP_SYS(signalfd4), SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime),
	SCMP_SYS(timerfd_gettime), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(inotify_init1),
	SCMP_SYS(inotify_add_watch), SCMP_SYS(inotify_rm_watch),
	/* the kill path */
	SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(process_mrelease), SCMP_SYS(kill),
	SCMP_SYS(tgkill),
	/* ... which steps off the CPU where its victim wakes (kill.c) */
	SCMP_SYS(getcpu), SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_setaffinity),
	/* sockets (their families are checked below) */
	SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept4), SCMP_SYS(connect), SCMP_SYS(getsockopt),
	SCMP_SYS(setsockopt),
	SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(shutdown),
	/* processes: the guardian's fork, the oomkit-guardian program it execs
	 * (a static one: arch_prctl sets its thread pointer), reaping, its
	 * session */
	SCMP_SYS(execve), SCMP_SYS(arch_prctl), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(setsid), SCMP_SYS(set_robust_list), SCMP_SYS(set_tid_address),
	SCMP_SYS(rseq), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(getpid), SCMP_SYS(getppid), SCMP_SYS(gettid),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getresuid),
	SCMP_SYS(getresgid), SCMP_SYS(getgroups), SCMP_SYS(getrlimit), SCMP_SYS(setrlimit), SCMP_SYS(prlimit64),
	SCMP_SYS(capget), SCMP_SYS(capset),
	/* signals and time */
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall),
	SCMP_SYS(sigaltstack), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep), SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time),
	/* the C library: locks, random seeds for malloc and the stack protector */
	SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(sched_yield),
};
/* clang-format on */

/* LeakSanitizer, at exit, stops the threads from a tracer it clones: it
 * lists /proc/self/task, lets the tracer attach and attaches (ptrace), and
 * manages dumpable, pdeathsig and the ptracer with prctl.  Only in a
 * sanitizer build; every other build has the strict list. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
static const int allowed_sanitizer[] = {SCMP_SYS(ptrace), SCMP_SYS(getdents), SCMP_SYS(prctl)};
#else
static const int allowed_sanitizer[] = {-1};
#endif

/* prctl options: the guardian names itself. */
static const int allowed_prctl[] = {PR_SET_NAME, PR_GET_NAME};

/* Namespaces are not the daemon's business; a user namespace would give it
 * back every capability inside. */
#define CLONE_NAMESPACES                                                                                     \
	((scmp_datum_t)(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
			CLONE_NEWPID | CLONE_NEWNET))

/* prctl, socket, socketpair and clone, below. */
#define CHECKED_CALLS 4

static int add_rules(scmp_filter_ctx f)
{
	int r;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if ((r = seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0)) < 0)
			return r;
	for (size_t i = 0; i < sizeof(allowed_sanitizer) / sizeof(allowed_sanitizer[0]); i++)
		if (allowed_sanitizer[i] >= 0 &&
		    (r = seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed_sanitizer[i], 0)) < 0)
			return r;
	for (size_t i = 0; i < sizeof(allowed_prctl) / sizeof(allowed_prctl[0]); i++)
		if ((r = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
					  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)allowed_prctl[i]))) < 0)
			return r;
	/* Unix sockets only: the control socket, the guardian's pair, sd_notify. */
	if ((r = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX))) <
		0 ||
	    (r = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
				  SCMP_A0(SCMP_CMP_EQ, AF_UNIX))) < 0)
		return r;
	/* fork() is clone(2) without namespace flags; clone3 hides its flags in memory. */
	if ((r = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NAMESPACES, 0))) < 0 ||
	    (r = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
		return r;
	return 0;
}

int privs_install_seccomp(void)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r;

	if (!f)
		return -ENOMEM;
	/* A call from another ABI (x32, int 0x80) is refused the same way. */
	if ((r = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM))) < 0 ||
	    (r = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 1)) < 0 || (r = add_rules(f)) < 0)
		goto out;
	/* Logging refused calls needs a 4.14 kernel; without it the filter still holds. */
	(void)seccomp_attr_set(f, SCMP_FLTATR_CTL_LOG, 1);
	r = seccomp_load(f);
out:
	seccomp_release(f);
	return r;
}

/* Keeps what the process has of run_caps, and CAP_SYS_RESOURCE for setup;
 * a capability it lacks (a container may withhold some) cannot be added.
 * Without CAP_SETPCAP the bounding set cannot shrink, and need not: whoever
 * withheld it bounded the process already (the unit's
 * CapabilityBoundingSet=), so only the process's own sets are cut. */
static int limit_caps(bool ptrace)
{
	bool have[sizeof(run_caps) / sizeof(run_caps[0])];
	bool have_resource = capng_have_capability(CAPNG_PERMITTED, CAP_SYS_RESOURCE);
	bool can_bound = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);

	for (size_t i = 0; i < sizeof(run_caps) / sizeof(run_caps[0]); i++)
		have[i] = capng_have_capability(CAPNG_PERMITTED, run_caps[i]);
	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < sizeof(run_caps) / sizeof(run_caps[0]); i++)
		if (have[i] && capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
					    run_caps[i]) < 0)
			return -EINVAL;
	if (ptrace && capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
				   CAP_SYS_PTRACE) < 0)
		return -EINVAL;
	/* Permitted but not in the bounding set: gone for good after setup. */
	if (have_resource && capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_SYS_RESOURCE) < 0)
		return -EINVAL;
	return capng_apply(can_bound ? CAPNG_SELECT_ALL : CAPNG_SELECT_CAPS) < 0 ? -EPERM : 0;
}

int privs_restrict(bool seccomp, bool ptrace)
{
	int r;

	/* Not root (a dry run by a user): there is nothing to give up. */
	if (capng_get_caps_process() < 0)
		return -errno;
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE) {
		/* A user's dry run has no capability to keep, and reads only its own. */
		if (ptrace && !capng_have_capability(CAPNG_PERMITTED, CAP_SYS_PTRACE)) {
			log_err("an exe: rule needs cap_sys_ptrace to read other users' /proc/PID/exe, and "
				"this process does not have it (a unit's CapabilityBoundingSet=?)");
			return -EPERM;
		}
		if ((r = limit_caps(ptrace)) < 0) {
			log_err("cannot drop capabilities: %s", strerror(-r));
			return r;
		}
		char *text = capng_print_caps_text(CAPNG_PRINT_BUFFER, CAPNG_EFFECTIVE);
		log_info("capabilities kept: %s (cap_sys_resource until setup is done)", text ? text : "?");
		free(text);
	}
	if (!seccomp) {
		log_notice("seccomp: off (--no-seccomp); every system call is allowed");
		return 0;
	}
	if ((r = privs_install_seccomp()) < 0) {
		log_err("cannot install the seccomp filter: %s (--no-seccomp runs without it)", strerror(-r));
		return r;
	}
	log_info(
	    "seccomp: %zu system calls allowed, %d more with their arguments checked; any other fails with "
	    "EPERM",
	    sizeof(allowed) / sizeof(allowed[0]), CHECKED_CALLS);
	return 0;
}

int privs_setup_done(void)
{
	if (capng_get_caps_process() < 0)
		return -errno;
	if (!capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_RESOURCE))
		return 0;
	capng_update(CAPNG_DROP, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_SYS_RESOURCE);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0) {
		log_err("cannot drop cap_sys_resource after setup");
		return -EPERM;
	}
	return 0;
}
