/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-config.c - oomkitd.conf parsing: tables of good configurations with
 * the values they must produce, and bad ones with the error line they must
 * produce (file:line, section and key), plus the value syntaxes on their own.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/timing.h"
#include "oomkit.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

static struct config *parse_ok(const char *text)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];
	int r;

	assert_non_null(cfg);
	r = config_parse_string(text, "oomkitd.conf", cfg, errors, sizeof(errors));
	if (r != 0)
		fail_msg("unexpected errors for:\n%s\n---\n%s", text, errors);
	return cfg;
}

static void drop(struct config *cfg)
{
	config_free(cfg);
	free(cfg);
}

static void test_builtin(void **state)
{
	(void)state;
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];

	assert_non_null(cfg);
	if (config_read(NULL, NULL, cfg, errors, sizeof(errors)) != 0)
		fail_msg("the built-in configuration has errors:\n%s", errors);
	assert_string_equal(cfg->source, "(built-in)");
	char chain[128];

	assert_string_equal(cfg->machine, "/sys/fs/cgroup/memory/oomkit");
	assert_int_equal(cfg->machine_limit_bytes, OOMKIT_UNLIMITED);
	config_format_chain(&cfg->chain, chain, sizeof(chain));
	assert_string_equal(chain, "report, kill-lowest, kernel");
	assert_int_equal(cfg->delay_ms, 2000);
	assert_int_equal(cfg->reserve_bytes, 16 * MiB);
	assert_string_equal(cfg->report_dir, "/var/lib/oomkit/reports");
	assert_string_equal(cfg->socket, "/run/oomkit/oomkitd.sock");
	assert_string_equal(cfg->metrics, "/var/lib/oomkit/oomkit.prom");
	assert_int_equal(cfg->metrics_interval_ms, 0);
	assert_false(cfg->readonly_status);
	assert_int_equal(cfg->n_jobs, 0);
	drop(cfg);
}

/* The first example configuration, which scripts and users rely on, word for word. */
static const char issue_example[] =
    "[oomkitd]\n"
    "machine = /sys/fs/cgroup/memory/oomkit   ; parent memcg of all jobs\n"
    "machine_limit = 2G                        ; optional\n"
    "policy = report, kill-lowest, kernel      ; chain for machine-level OOM\n"
    "delay = 2s\n"
    "reserve = 16M\n"
    "report_dir = /var/lib/oomkit/reports\n"
    "socket = /run/oomkit/oomkitd.sock\n"
    "metrics = /var/lib/oomkit/oomkit.prom\n"
    "\n"
    "[job web]\n"
    "priority = 900\n"
    "limit = 512M\n"
    "limit_max = 1G\n"
    "expect = 300M\n"
    "policy = grow, kill-over-expected, kernel\n"
    "kill = process                            ; or: job\n"
    "protect = sshd, postgres\n"
    "owner = 1000                              ; optional delegation\n"
    "\n"
    "# a job with every default\n"
    "[job batch]\n";

static void test_issue_example(void **state)
{
	(void)state;
	struct config *cfg = parse_ok(issue_example);
	const struct config_job *web, *batch;
	char chain[128];

	assert_int_equal(cfg->machine_limit_bytes, 2 * GiB);
	assert_int_equal(cfg->n_jobs, 2);
	web = config_find_job(cfg, "web");
	assert_non_null(web);
	assert_int_equal(web->priority, 900);
	assert_int_equal(web->limit_bytes, 512 * MiB);
	assert_int_equal(web->limit_max_bytes, 1 * GiB);
	assert_int_equal(web->expect_bytes, 300 * MiB);
	config_format_chain(&web->chain, chain, sizeof(chain));
	assert_string_equal(chain, "grow, kill-over-expected, kernel");
	assert_int_equal(web->kill, KILL_PROCESS);
	assert_int_equal(web->n_rules, 2);
	assert_string_equal(web->rules[0].expr.text, "sshd");
	assert_string_equal(web->rules[1].expr.text, "postgres");
	assert_int_equal(web->rules[1].list, RULE_PROTECT);
	assert_true(web->has_owner);
	assert_int_equal(web->owner, 1000);
	assert_int_equal(web->line, 11);

	batch = config_find_job(cfg, "batch");
	assert_non_null(batch);
	assert_int_equal(batch->priority, 500);
	assert_int_equal(batch->limit_bytes, OOMKIT_UNLIMITED);
	assert_int_equal(batch->limit_max_bytes, OOMKIT_UNLIMITED);
	assert_int_equal(batch->expect_bytes, 0);
	assert_false(batch->has_owner);
	config_format_chain(&batch->chain, chain, sizeof(chain));
	assert_string_equal(chain, "report, kernel");
	assert_null(config_find_job(cfg, "nope"));
	drop(cfg);
}

struct good_case {
	const char *text;
	uint64_t limit, limit_max;
	unsigned priority;
	enum kill_scope kill;
};

static void test_good_jobs(void **state)
{
	(void)state;
	static const struct good_case cases[] = {
	    {"[job a]\nlimit = 100M\n", 100 * MiB, 100 * MiB, 500, KILL_PROCESS},
	    {"[job a]\nlimit=64MiB\nlimit_max=128MB\n", 64 * MiB, 128 * MiB, 500, KILL_PROCESS},
	    {"[job a]\nlimit = 1048576\n", 1 * MiB, 1 * MiB, 500, KILL_PROCESS},
	    {"[job a]\nlimit = 1024k\nlimit_max = max\n", 1 * MiB, OOMKIT_UNLIMITED, 500, KILL_PROCESS},
	    {"[job a]\nlimit = 1M\nlimit_max = 1M\n", 1 * MiB, 1 * MiB, 500, KILL_PROCESS},
	    {"[job machines]\n[job a]\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 500, KILL_PROCESS},
	    {"[job a] ; a comment after the header\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 500, KILL_PROCESS},
	    {"[job a]\t\t# another\npriority = 3\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 3, KILL_PROCESS},
	    {"[job a]   \r\npriority = 4\r\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 4, KILL_PROCESS},
	    {"[job a]\npriority = 0\nkill = job\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 0, KILL_JOB},
	    {"[job a]\npriority = 1000\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 1000, KILL_PROCESS},
	    {"; comment\n# comment\n\n[job a]\r\npriority: 7\r\n", OOMKIT_UNLIMITED, OOMKIT_UNLIMITED, 7,
	     KILL_PROCESS},
	    {"[job a]\nlimit = 1G\nlimit_max = 1G", 1 * GiB, 1 * GiB, 500, KILL_PROCESS},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *cfg = parse_ok(cases[i].text);
		assert_in_range(cfg->n_jobs, 1, 2);
		if (cfg->n_jobs == 2)
			cfg->jobs[0] = cfg->jobs[1];
		assert_string_equal(cfg->jobs[0].name, "a");
		assert_int_equal(cfg->jobs[0].limit_bytes, cases[i].limit);
		assert_int_equal(cfg->jobs[0].limit_max_bytes, cases[i].limit_max);
		assert_int_equal(cfg->jobs[0].priority, cases[i].priority);
		assert_int_equal(cfg->jobs[0].kill, cases[i].kill);
		drop(cfg);
	}
}

struct bad_case {
	const char *text;
	const char *errors; /* the whole error text, exactly */
};

#define E "oomkitd.conf:"
#define RANGE_SIZE "(a number with K, M, G or T, or max)"

static const struct bad_case bad_cases[] = {
    /* Syntax of the file. */
    {"[oomkitd]\nbogus = 1\n", E "2: [oomkitd] bogus: unknown key\n"},
    {"[job a]\nbogus = 1\n", E "2: [job a] bogus: unknown key\n"},
    {"[job a]\nmachine = /x\n", E "2: [job a] machine: unknown key\n"},
    {"[jobs]\nx = 1\n", E "1: [jobs]: unknown section (expected [oomkitd] or [job NAME])\n"},
    {"[job a]\n[job a]\n", E "2: [job a]: duplicate job (first at line 1)\n"},
    {"[oomkitd]\n[oomkitd]\n", E "2: [oomkitd]: section given twice\n"},
    {"machine = /x\n", E "1: machine: key outside a section\n"},
    {"[job a]\nlimit = 1M\n  limit_max = 2M\n",
     E "3: [job a]: indented line (continuation lines are not supported)\n"},
    {"[job a\n", E "1: section header without ']'\n"},
    /* The machine rule: a share of RAM + swap or a size. */
    {"[oomkitd]\nmachine_available = 60%\n",
     E "2: [oomkitd] machine_available: '60%' out of range (1% to 50%, or a size)\n"},
    {"[oomkitd]\nmachine_available = 0%\n",
     E "2: [oomkitd] machine_available: '0%' out of range (1% to 50%, or a size)\n"},
    {"[oomkitd]\nmachine_available = 512K\n",
     E "2: [oomkitd] machine_available: '512K' out of range (at least 1M)\n"},
    {"[oomkitd]\nmachine_full_stall = 50\n",
     E "2: [oomkitd] machine_full_stall: bad share '50' (1% to 100%, or 0% for none)\n"},
    {"[oomkitd]\nmachine_full_stall = 101%\n",
     E "2: [oomkitd] machine_full_stall: bad share '101%' (1% to 100%, or 0% for none)\n"},
    {"[oomkitd]\nmachine_full_stall = %\n",
     E "2: [oomkitd] machine_full_stall: bad share '%' (1% to 100%, or 0% for none)\n"},
    {"[oomkitd]\nmachine_full_stall_duration = 500ms\n",
     E "2: [oomkitd] machine_full_stall_duration: '500ms' out of range (1s to 600s)\n"},
    {"[job a]\njust words\n", E "2: [job a]: syntax error: expected 'key = value'\n"},
    {"[oomkitd]\nmachine = "
     "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
     E "2: [oomkitd]: line too long (at most 190 characters)\n"},
    {"[job a]\nlimit = 1M\nlimit = 2M\n", E "3: [job a] limit: given twice\n"},
    {"[oomkitd]\nmetrics_interval = 1s\nmetrics_interval = 2s\n",
     E "3: [oomkitd] metrics_interval: given twice\n"},
    /* Job names. */
    {"[job a/b]\n", E "1: [job a/b]: bad job name 'a/b' (letters, digits, '-', '_', '.'; at most 63)\n"},
    {"[job ..]\n", E "1: [job ..]: bad job name '..' (letters, digits, '-', '_', '.'; at most 63)\n"},
    {"[job ]\n", E "1: [job ]: bad job name '' (letters, digits, '-', '_', '.'; at most 63)\n"},
    {"[job -a]\n", E "1: [job -a]: bad job name '-a' (letters, digits, '-', '_', '.'; at most 63)\n"},
    /* Sizes. */
    {"[oomkitd]\nmachine = /a\n\n[job web]\nlimit = abc\n",
     E "5: [job web] limit: bad size 'abc' " RANGE_SIZE "\n"},
    {"[oomkitd]\nreserve = max\n", E "2: [oomkitd] reserve: bad size 'max' (a number with K, M, G or T)\n"},
    {"[oomkitd]\nmachine_limit = 99999999999999999999G\n",
     E "2: [oomkitd] machine_limit: bad size '99999999999999999999G' " RANGE_SIZE "\n"},
    {"[oomkitd]\nmachine_limit = 17179869184G\n",
     E "2: [oomkitd] machine_limit: bad size '17179869184G' " RANGE_SIZE "\n"},
    {"[job a]\nlimit = 2G\nlimit_max = 1G\n", E "2: [job a] limit: 2G is above limit_max 1G\n"},
    {"[job a]\nlimit_max = 1G\n", E "2: [job a] limit_max: 1G is below the limit (max unless set)\n"},
    {"[job a]\nexpect = max\n", E "2: [job a] expect: bad size 'max' (a number with K, M, G or T)\n"},
    /* Numbers. */
    {"[job a]\npriority = 1001\n", E "2: [job a] priority: '1001' out of range (0 to 1000)\n"},
    {"[job a]\npriority = 99999999999999999999\n",
     E "2: [job a] priority: '99999999999999999999' out of range (0 to 1000)\n"},
    {"[job a]\npriority = -1\n", E "2: [job a] priority: bad number '-1' (0 to 1000)\n"},
    {"[job a]\npriority = 5x\n", E "2: [job a] priority: bad number '5x' (0 to 1000)\n"},
    {"[job a]\npriority = 0x10\n", E "2: [job a] priority: bad number '0x10' (0 to 1000)\n"},
    {"[oomkitd]\nreport_max_count = lots\n",
     E "2: [oomkitd] report_max_count: bad number 'lots' (0 to 1000000)\n"},
    {"[oomkitd]\nreport_max_count = 1000001\n",
     E "2: [oomkitd] report_max_count: '1000001' out of range (0 to 1000000)\n"},
    /* Durations. */
    {"[oomkitd]\ndelay = 2\n",
     E "2: [oomkitd] delay: bad duration '2' (a number with ms or s: 10ms to 600s)\n"},
    {"[oomkitd]\ndelay = 2m\n",
     E "2: [oomkitd] delay: bad duration '2m' (a number with ms or s: 10ms to 600s)\n"},
    {"[oomkitd]\ndelay = 5ms\n", E "2: [oomkitd] delay: '5ms' out of range (10ms to 600s)\n"},
    {"[oomkitd]\ndelay = 601s\n", E "2: [oomkitd] delay: '601s' out of range (10ms to 600s)\n"},
    {"[oomkitd]\ndelay = 0\n", E "2: [oomkitd] delay: '0' out of range (10ms to 600s)\n"},
    {"[oomkitd]\nmetrics_interval = 30\n",
     E "2: [oomkitd] metrics_interval: bad duration '30' (a number with ms or s: 0, or 1s to 86400s)\n"},
    {"[oomkitd]\nmetrics_interval = 10m\n",
     E "2: [oomkitd] metrics_interval: bad duration '10m' (a number with ms or s: 0, or 1s to 86400s)\n"},
    {"[oomkitd]\nmetrics_interval = 999ms\n",
     E "2: [oomkitd] metrics_interval: '999ms' out of range (0, or 1s to 86400s)\n"},
    {"[oomkitd]\nmetrics_interval = 86401s\n",
     E "2: [oomkitd] metrics_interval: '86401s' out of range (0, or 1s to 86400s)\n"},
    /* Chains, enumerations, lists, users. */
    {"[job a]\npolicy = report, kill-oldest\n", E "2: [job a] policy: unknown policy 'kill-oldest'\n"},
    {"[job a]\npolicy = report,,kernel\n", E "2: [job a] policy: empty policy name in 'report,,kernel'\n"},
    {"[job a]\npolicy =\n", E "2: [job a] policy: empty policy name in ''\n"},
    {"[job a]\npolicy = report, kernel,\n", E "2: [job a] policy: empty policy name in 'report, kernel,'\n"},
    {"[job a]\npolicy = report, report, report, report, report, report, report, report, kernel\n",
     E "2: [job a] policy: too many policies (at most 8)\n"},
    {"[oomkitd]\npolicy = grow, kernel\n",
     E "2: [oomkitd] policy: grow applies to jobs, not to the machine\n"},
    {"[job a]\nkill = everything\n", E "2: [job a] kill: 'everything' is not process, job or largest-leaf\n"},
    {"[job a]\nprotect = averyveryverylongname\n",
     E "2: [job a] protect: 'averyveryverylongname' is longer than a process name (15 characters)\n"},
    {"[job a]\nprotect = a, , b\n", E "2: [job a] protect: empty rule in 'a, , b'\n"},
    {"[oomkitd]\nprotect = comm:\n", E "2: [oomkitd] protect: 'comm:' has nothing to match\n"},
    {"[oomkitd]\navoid = user:no-such-user-here\n",
     E "2: [oomkitd] avoid: unknown user 'no-such-user-here'\n"},
    {"[oomkitd]\nprefer = a\nprefer = b\n", E "3: [oomkitd] prefer: given twice\n"},
    {"[job a]\nowner = no-such-user-here\n", E "2: [job a] owner: unknown user 'no-such-user-here'\n"},
    {"[oomkitd]\nreadonly_status = maybe\n",
     E "2: [oomkitd] readonly_status: bad boolean 'maybe' (yes or no)\n"},
    /* Paths. */
    {"[oomkitd]\nmachine = relative/path\n",
     E "2: [oomkitd] machine: 'relative/path' is not an absolute path\n"},
    {"[oomkitd]\nreport_dir = /a/../b\n", E "2: [oomkitd] report_dir: '/a/../b' has a '..' component\n"},
    {"[oomkitd]\nmachine = /\n", E "2: [oomkitd] machine: '/' is the root directory\n"},
    {"[oomkitd]\nmachine = ///\n", E "2: [oomkitd] machine: '///' is the root directory\n"},
    {"[oomkitd]\nmachine = /sys/fs/cgroup/memory/.\n",
     E "2: [oomkitd] machine: '/sys/fs/cgroup/memory/.' has a '.' component\n"},
    {"[oomkitd]\nmachine = /sys/fs/cgroup/memory/./oomkit\n",
     E "2: [oomkitd] machine: '/sys/fs/cgroup/memory/./oomkit' has a '.' component\n"},
    {"[oomkitd]\nmachine = /sys/fs/cgroup/memory/oomkit/..\n",
     E "2: [oomkitd] machine: '/sys/fs/cgroup/memory/oomkit/..' has a '..' component\n"},
    {"[oomkitd]\nmachine = /sys/fs/cgroup/memory/../memory\n",
     E "2: [oomkitd] machine: '/sys/fs/cgroup/memory/../memory' has a '..' component\n"},
    {"[oomkitd]\nmachine = sys/fs/cgroup/memory/oomkit\n",
     E "2: [oomkitd] machine: 'sys/fs/cgroup/memory/oomkit' is not an absolute path\n"},
    {"[oomkitd]\nmachine = ./oomkit\n", E "2: [oomkitd] machine: './oomkit' is not an absolute path\n"},
    {"[oomkitd]\nmachine = /a\x01"
     "b\n",
     E "2: [oomkitd] machine: the path has a control character (byte 0x01)\n"},
    {"[oomkitd]\nmetrics = /\n", E "2: [oomkitd] metrics: '/' is the root directory\n"},
    {"[oomkitd]\nsocket = /run/./oomkitd.sock\n",
     E "2: [oomkitd] socket: '/run/./oomkitd.sock' has a '.' component\n"},
    /* Line ends and headers that libinih would read differently. */
    {"[oomkitd]\rdelay = 5s\r[job a]\rpriority = 1\r",
     E "1: carriage return inside a line (lines end with LF or CR LF, not CR alone)\n"},
    {"[job a]\npriority = 1\rlimit = 2M\n",
     E "2: [job a]: carriage return inside a line (lines end with LF or CR LF, not CR alone)\n"},
    {"[job a]\r\r\npriority = 1\n",
     E "1: carriage return inside a line (lines end with LF or CR LF, not CR alone)\n"},
    {"[job a] priority = 1\n", E "1: [job a]: text after ']' (a key goes on a line of its own)\n"},
    {"[job a]]\n", E "1: [job a]: text after ']' (a key goes on a line of its own)\n"},
    {"[oomkitd]x\n", E "1: [oomkitd]: text after ']' (a key goes on a line of its own)\n"},
    /* Names the daemon uses itself. */
    {"[job machine]\n",
     E "1: [job machine]: the job name 'machine' is reserved (the daemon's name for the machine in reports "
       "and metrics)\n"},
    {"[job memory.limit_in_bytes]\n",
     E "1: [job memory.limit_in_bytes]: the job name 'memory.limit_in_bytes' is reserved (the prefix of "
       "cgroup control files)\n"},
    {"[job cgroup.procs]\n", E
     "1: [job cgroup.procs]: the job name 'cgroup.procs' is reserved (the prefix of cgroup control files)\n"},
    {"[job tasks]\n", E "1: [job tasks]: the job name 'tasks' is reserved (a cgroup control file)\n"},
    {"[job notify_on_release]\n",
     E "1: [job notify_on_release]: the job name 'notify_on_release' is reserved (a cgroup control file)\n"},
    /* Match expressions: a line with an error adds no rule. */
    {"[job a]\nprefer = pid:1\n",
     E "2: [job a] prefer: unknown kind 'pid' (comm, cmdline, exe, uid, user or cgroup)\n"},
    {"[job a]\navoid = ,\n", E "2: [job a] avoid: empty rule in ','\n"},
    {"[job a]\navoid = exe:bin/x\n", E "2: [job a] avoid: 'bin/x' is not an absolute path\n"},
    {"[job a]\nprotect = sshd, cmdline:*\n",
     E "2: [job a] protect: '*' matches every process (write nothing, or a rule that chooses)\n"},
    {"[job a]\nprotect = sshd\nprotect = postgres\n", E "3: [job a] protect: given twice\n"},
    {"[job a]\nprefer = uid:1000\nprefer = uid:1001\n", E "3: [job a] prefer: given twice\n"},
    /* Graceful kills, shedding and hooks. */
    {"[job a]\nkill_signal = 15\n",
     E "2: [job a] kill_signal: bad signal '15' (a name: SIGTERM, SIGUSR1, SIGRTMIN+3, ...)\n"},
    {"[job a]\nkill_signal = SIGFOO\n",
     E "2: [job a] kill_signal: bad signal 'SIGFOO' (a name: SIGTERM, SIGUSR1, SIGRTMIN+3, ...)\n"},
    {"[job a]\nkill_signal = sigterm\n",
     E "2: [job a] kill_signal: bad signal 'sigterm' (a name: SIGTERM, SIGUSR1, SIGRTMIN+3, ...)\n"},
    {"[job a]\nkill_signal = SIGCONT\n", E "2: [job a] kill_signal: SIGCONT does not end a process\n"},
    {"[job a]\nkill_signal = STOP\n", E "2: [job a] kill_signal: SIGSTOP does not end a process\n"},
    {"[job a]\nkill_signal = SIGTERM\n",
     E "2: [job a] kill_signal: SIGTERM needs a kill_grace: how long the process has before SIGKILL\n"},
    {"[job a]\nkill_grace = 500ms\n",
     E "2: [job a] kill_grace: a grace needs a kill_signal other than SIGKILL, which ends a process at "
       "once\n"},
    {"[job a]\nkill_signal = SIGKILL\nkill_grace = 1s\n",
     E "3: [job a] kill_grace: a grace needs a kill_signal other than SIGKILL, which ends a process at "
       "once\n"},
    {"[job a]\nkill_signal = SIGTERM\nkill_grace = 2s\n",
     E "3: [job a] kill_grace: 2s is not shorter than the delay 2s, when the kernel decides\n"},
    {"[job a]\nkill_signal = SIGTERM\nkill_grace = 900ms\n[oomkitd]\ndelay = 500ms\n",
     E "3: [job a] kill_grace: 900ms is not shorter than the delay 500ms, when the kernel decides\n"},
    {"[job a]\nkill_signal = SIGTERM\nkill_grace = 5ms\n",
     E "3: [job a] kill_grace: '5ms' out of range (0, or 10ms to 600s)\n"},
    {"[job a]\npolicy = shed, kernel\nshed_signal = USR1\nshed_wait = 3s\n",
     E "4: [job a] shed_wait: 3s is not shorter than the delay 2s, when the kernel decides\n"},
    {"[job a]\npolicy = shed, kernel\nshed_signal = USR1\nshed_wait = 1s\nkill_signal = SIGINT\nkill_grace = "
     "1s\n",
     E "6: [job a] kill_grace: shed_wait 1s and kill_grace 1s together are not shorter than the delay 2s\n"},
    /* The shed keys say how, shed in the chain says when: not one without the other. */
    {"[job a]\nshed_signal = USR1\nshed_wait = 100ms\n",
     E "2: [job a] shed_signal: needs shed in the job's policy: the job is asked for memory as a step of "
       "its chain\n" E "3: [job a] shed_wait: needs shed in the job's policy: the job is asked for memory "
       "as a step of its chain\n"},
    {"[job a]\nshed_command = /bin/true\npolicy = kill-largest\n",
     E "2: [job a] shed_command: needs shed in the job's policy: the job is asked for memory as a step of "
       "its chain\n"},
    {"[job a]\npolicy = shed, kill-largest\n",
     E "2: [job a] policy: shed needs a shed_signal or a shed_command: how the job is asked to give "
       "memory back\n"},
    {"[job a]\nshed_signal = SIGKILL\n",
     E "2: [job a] shed_signal: SIGKILL cannot be caught: the job could not give memory back on it\n"},
    {"[job a]\nshed_signal = RTMIN+99\n",
     E "2: [job a] shed_signal: bad signal 'RTMIN+99' (a name: SIGTERM, SIGUSR1, SIGRTMIN+3, ...)\n"},
    {"[job a]\nbefore_kill = save-state --now\n",
     E "2: [job a] before_kill: 'save-state' is not an absolute path\n"},
    {"[job a]\nafter_kill = /usr/local//bin/x\n",
     E "2: [job a] after_kill: the program '/usr/local//bin/x' is not an absolute path in normal form\n"},
    {"[job a]\nshed_command = /usr/bin/redis-cli \"FLUSHDB\n",
     E "2: [job a] shed_command: a '\"' is not closed\n"},
    {"[job a]\nbefore_kill = /bin/x\nbefore_kill = /bin/y\n", E "3: [job a] before_kill: given twice\n"},
    /* cgroup patterns: each refused with its reason, a line
     * with an error adds no pattern, and a pattern is one job's only. */
    {"[job a]\ncgroup =\n", E "2: [job a] cgroup: empty pattern in ''\n"},
    {"[job a]\ncgroup = a/b,\n", E "2: [job a] cgroup: empty pattern in 'a/b,'\n"},
    {"[job a]\ncgroup = /system.slice/x.service\n",
     E "2: [job a] cgroup: '/system.slice/x.service' starts with '/': patterns are relative to the cgroup "
       "root\n"},
    {"[job a]\ncgroup = system.slice/../user.slice\n",
     E "2: [job a] cgroup: 'system.slice/../user.slice' has a '..' component\n"},
    {"[job a]\ncgroup = system.slice//x\n",
     E "2: [job a] cgroup: 'system.slice//x' has an empty component\n"},
    {"[job a]\ncgroup = system.slice/\n", E "2: [job a] cgroup: 'system.slice/' has an empty component\n"},
    {"[job a]\ncgroup = ok.slice, system.slice/**\n",
     E "2: [job a] cgroup: 'system.slice/**' has '**' ('*' matches within one component; nothing is "
       "recursive)\n"},
    {"[job a]\ncgroup = a.slice\ncgroup = b.slice, a.slice\n",
     E "3: [job a] cgroup: 'a.slice' given twice (first at line 2)\n"},
    {"[job a]\ncgroup = x/*.scope\n[job b]\npriority = 1\ncgroup = y.slice, x/*.scope\n",
     E "5: [job b] cgroup: 'x/*.scope' is also a pattern of job a (line 2)\n"},
    {"[job a]\ncgroup = p\n[job b]\ncgroup = p\n[job c]\ncgroup = p\n",
     E "4: [job b] cgroup: 'p' is also a pattern of job a (line 2)\n" E
       "6: [job c] cgroup: 'p' is also a pattern of job b (line 4)\n"},
    /* Limits too small to run anything; 0 is not "unlimited". */
    {"[job a]\nlimit = 0\n", E "2: [job a] limit: '0' out of range (at least 1M, or max)\n"},
    {"[job a]\nlimit = 4k\n", E "2: [job a] limit: '4k' out of range (at least 1M, or max)\n"},
    {"[job a]\nlimit = 1048575\n", E "2: [job a] limit: '1048575' out of range (at least 1M, or max)\n"},
    {"[job a]\nlimit_max = 0\n", E "2: [job a] limit_max: '0' out of range (at least 1M, or max)\n"},
    {"[oomkitd]\nmachine_limit = 1\n",
     E "2: [oomkitd] machine_limit: '1' out of range (at least 16M, or max)\n"},
    {"[oomkitd]\nmachine_limit = 0\n",
     E "2: [oomkitd] machine_limit: '0' out of range (at least 16M, or max)\n"},
    {"[oomkitd]\nmachine_limit = 16383K\n",
     E "2: [oomkitd] machine_limit: '16383K' out of range (at least 16M, or max)\n"},
    {"[oomkitd]\nsocket = /run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\n",
     E "2: [oomkitd] socket: path too long (at most 107 characters)\n"},
    {"[oomkitd]\nsocket =\n", E "2: [oomkitd] socket: '' is not an absolute path\n"},
};

static void test_bad(void **state)
{
	(void)state;

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct config cfg_before, *cfg = malloc(sizeof(*cfg));
		char errors[CONFIG_ERRORS_MAX];
		int r;

		assert_non_null(cfg);
		memset(cfg, 0x5a, sizeof(*cfg));
		memcpy(&cfg_before, cfg, sizeof(cfg_before));
		r = config_parse_string(bad_cases[i].text, "oomkitd.conf", cfg, errors, sizeof(errors));
		if (r != -EINVAL)
			fail_msg("case %zu accepted:\n%s", i, bad_cases[i].text);
		if (strcmp(errors, bad_cases[i].errors) != 0)
			fail_msg("case %zu:\n%s\nwanted:\n%sgot:\n%s", i, bad_cases[i].text,
				 bad_cases[i].errors, errors);
		/* Nothing of a bad configuration reaches the caller. */
		assert_memory_equal(cfg, &cfg_before, sizeof(cfg_before));
		free(cfg);
	}
}

/* A value that does not parse is one error, not a cascade of checks on its default. */
static void test_no_cascade(void **state)
{
	(void)state;
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];

	assert_non_null(cfg);
	assert_int_equal(
	    config_parse_string("[job a]\nlimit = abc\nlimit_max = 64M\n", "f", cfg, errors, sizeof(errors)),
	    -EINVAL);
	assert_string_equal(errors,
			    "f:2: [job a] limit: bad size 'abc' (a number with K, M, G or T, or max)\n");
	free(cfg);
}

/* Every error is reported, not only the first, each with its own line. */
static void test_all_errors(void **state)
{
	(void)state;
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];
	const char *text = "[oomkitd]\ndelay = soon\n[job a]\nlimit = x\npriority = 2000\n[job a]\n";

	assert_non_null(cfg);
	assert_int_equal(config_parse_string(text, "f.conf", cfg, errors, sizeof(errors)), -EINVAL);
	assert_non_null(strstr(errors, "f.conf:2: [oomkitd] delay:"));
	assert_non_null(strstr(errors, "f.conf:4: [job a] limit:"));
	assert_non_null(strstr(errors, "f.conf:5: [job a] priority:"));
	assert_non_null(strstr(errors, "f.conf:6: [job a]: duplicate job"));
	free(cfg);
}

static void test_load_file(void **state)
{
	(void)state;
	char path[] = "/tmp/oomkit-test-config-XXXXXX";
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];
	int fd = mkstemp(path);

	assert_non_null(cfg);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[job x]\nlimit = 3M\n", 19), 19);
	close(fd);
	assert_int_equal(config_read(path, NULL, cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg->jobs[0].limit_bytes, 3 * MiB);
	assert_string_equal(cfg->source, path);
	unlink(path);

	assert_int_equal(config_read(path, NULL, cfg, errors, sizeof(errors)), -ENOENT);
	assert_non_null(strstr(errors, path));
	assert_non_null(strstr(errors, "cannot read"));
	assert_int_equal(config_read("/tmp", NULL, cfg, errors, sizeof(errors)), -EINVAL);
	config_free(cfg);
	free(cfg);
}

/* Writes size bytes of the n bytes at text (repeated) to a fresh file;
 * returns its path. */
static char *temp_bytes(const char *text, size_t n, size_t size)
{
	static char path[64];
	size_t off = 0;
	int fd;

	snprintf(path, sizeof(path), "/tmp/oomkit-test-config-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	while (off < size) {
		size_t k = size - off < n ? size - off : n;
		assert_int_equal(write(fd, text, k), (ssize_t)k);
		off += k;
	}
	close(fd);
	return path;
}

static char *temp_file(const char *text, size_t size)
{
	return temp_bytes(text, strlen(text), size);
}

/* What config_read() refuses to read, each with its message; none of it may
 * block (a FIFO without a writer would block an open() without O_NONBLOCK
 * forever, and with it the daemon's loop on SIGHUP). */
static void test_read_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/oomkit-test-config-dir-XXXXXX", fifo[64], want[256];
	char errors[CONFIG_ERRORS_MAX], *path;
	struct config cfg, before;

	memset(&cfg, 0x5a, sizeof(cfg));
	before = cfg;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/oomkitd.conf", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10); /* a blocking open() fails the test instead of hanging it */
	assert_int_equal(config_read(fifo, NULL, &cfg, errors, sizeof(errors)), -EINVAL);
	alarm(0);
	snprintf(want, sizeof(want), "%s: cannot read: not a regular file (a FIFO)\n", fifo);
	assert_string_equal(errors, want);
	unlink(fifo);

	assert_int_equal(config_read(dir, NULL, &cfg, errors, sizeof(errors)), -EINVAL);
	snprintf(want, sizeof(want), "%s: cannot read: not a regular file (a directory)\n", dir);
	assert_string_equal(errors, want);
	rmdir(dir);

	assert_int_equal(config_read("/dev/null", NULL, &cfg, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(errors, "/dev/null: cannot read: not a regular file (a character device)\n");

	assert_int_equal(config_read(dir, NULL, &cfg, errors, sizeof(errors)), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot read: No such file or directory\n", dir);
	assert_string_equal(errors, want);

	path = temp_bytes("[job a]\n\0", 9, 9);
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), -EILSEQ);
	snprintf(want, sizeof(want), "%s: cannot read: contains a NUL byte\n", path);
	assert_string_equal(errors, want);
	unlink(path);

	path = temp_file("; padding\n", 1024 * 1024 + 1);
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), -EFBIG);
	snprintf(want, sizeof(want), "%s: cannot read: larger than 1048576 bytes\n", path);
	assert_string_equal(errors, want);
	unlink(path);

	/* Exactly the largest size is read. */
	path = temp_file("; padding\n", 1024 * 1024);
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg.n_jobs, 0);
	unlink(path);
	memcpy(&cfg, &before, sizeof(cfg));

	/* A file with an error leaves the caller's configuration as it was. */
	path = temp_file("[job a]\nlimit = 0\n", 18);
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), -EINVAL);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	unlink(path);
}

struct machine_case {
	const char *memory_root; /* "v2:/path": a cgroup v2 mount */
	const char *text;	 /* the [oomkitd] section's keys; "" keeps the default machine */
	const char *rel;	 /* NULL: refused with errors; "": the root, machine_is_root */
	const char *errors;
};

#define V1_ROOT_REFUSED(line, root)                                                                          \
	E line ": [oomkitd] machine: '" root "' is the memory cgroup mount itself; the machine must be a "   \
	       "cgroup below it (only a cgroup v2 root can be the machine)\n"
#define JOBS_V2 "[job apps]\ncgroup = user.slice/user-*.slice/user@*.service/app.slice/*\n"

/* The machine must be a cgroup strictly below the memory mount; the checks
 * on its form are made while parsing, the one against the mount when it is
 * known, and --check, start, reload and --release all get both. */
static void test_machine_paths(void **state)
{
	(void)state;
	static const struct machine_case cases[] = {
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory/oomkit\n", "oomkit", NULL},
	    {"/sys/fs/cgroup/memory", "", "oomkit", NULL},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory//oomkit/\n", "oomkit", NULL},
	    {"/sys/fs/cgroup/memory", "machine = //sys//fs/cgroup/memory/a/b//\n", "a/b", NULL},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory/a.../.b\n", "a.../.b", NULL},
	    {"/sys/fs/cgroup/memory/", "machine = /sys/fs/cgroup/memory/x\n", "x", NULL},
	    {"/sys/fs/cgroup", "machine = /sys/fs/cgroup/memory/oomkit\n", "memory/oomkit", NULL},
	    {"/", "machine = /x\n", "x", NULL},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory\n", NULL,
	     V1_ROOT_REFUSED("3", "/sys/fs/cgroup/memory")},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory/\n", NULL,
	     V1_ROOT_REFUSED("3", "/sys/fs/cgroup/memory")},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memory//\n", NULL,
	     V1_ROOT_REFUSED("3", "/sys/fs/cgroup/memory")},
	    {"/sys/fs/cgroup/memory/", "machine = /sys/fs/cgroup//memory\n", NULL,
	     V1_ROOT_REFUSED("3", "/sys/fs/cgroup/memory")},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup/memoryx/oomkit\n", NULL,
	     E "3: [oomkitd] machine: '/sys/fs/cgroup/memoryx/oomkit' is not below the memory cgroup mount "
	       "/sys/fs/cgroup/memory\n"},
	    {"/sys/fs/cgroup/memory", "machine = /sys/fs/cgroup\n", NULL,
	     E "3: [oomkitd] machine: '/sys/fs/cgroup' is not below the memory cgroup mount "
	       "/sys/fs/cgroup/memory\n"},
	    {"/sys/fs/cgroup/memory", "machine = /tmp/oomkit\n", NULL,
	     E "3: [oomkitd] machine: '/tmp/oomkit' is not below the memory cgroup mount "
	       "/sys/fs/cgroup/memory\n"},
	    /* The default follows the mount it is resolved against. */
	    {"/cgroup", "", "oomkit", NULL},
	    {"relative", "", NULL, E " the memory cgroup mount: 'relative' is not an absolute path\n"},
	    /* On cgroup v2 the root itself may be the machine, named
	     * explicitly, with no limit and every job adopting cgroups. */
	    {"v2:/sys/fs/cgroup", "machine = /sys/fs/cgroup\n" JOBS_V2, "", NULL},
	    {"v2:/sys/fs/cgroup/", "machine = /sys/fs/cgroup//\n", "", NULL},
	    {"v2:/sys/fs/cgroup", "machine = /sys/fs/cgroup/oomkit.slice/machine\n[job web]\n",
	     "oomkit.slice/machine", NULL},
	    {"/sys/fs/cgroup", "machine = /sys/fs/cgroup\n", NULL, V1_ROOT_REFUSED("3", "/sys/fs/cgroup")},
	    /* On cgroup v2 a file that names no machine gets the root, never
	     * the v1 default (a cgroup "memory" below the root holding none of
	     * the adopted units); what the root cannot be is refused by line. */
	    {"v2:/sys/fs/cgroup", "", "", NULL},
	    {"v2:/sys/fs/cgroup", JOBS_V2, "", NULL},
	    {"v2:/sys/fs/cgroup/memory/oomkit", "", "", NULL},
	    {"v2:/sys/fs/cgroup", "machine_limit = 1G\n" JOBS_V2, NULL,
	     E "3: [oomkitd] machine_limit: no machine = line, so on cgroup v2 the machine is the root "
	       "/sys/fs/cgroup, which has no limit: name the machine's cgroup with machine = (or leave "
	       "machine_limit out: the root's limit is the RAM, see machine_available)\n"},
	    {"v2:/sys/fs/cgroup", JOBS_V2 "[job web]\npriority = 9\n", NULL,
	     E "5: [job web]: no machine = line, so on cgroup v2 the machine is the root /sys/fs/cgroup, "
	       "where a job adopts cgroups (cgroup =): for jobs of oomkitd's own, name their parent with "
	       "machine =\n"},
	    {"v2:/sys/fs/cgroup", "machine = /sys/fs/cgroup\nmachine_limit = 1G\n" JOBS_V2, NULL,
	     E "4: [oomkitd] machine_limit: the cgroup v2 root has no limit; with machine = /sys/fs/cgroup "
	       "it is the machine's RAM (see machine_available)\n"},
	    {"v2:/sys/fs/cgroup", "machine = /sys/fs/cgroup\n" JOBS_V2 "[job web]\npriority = 9\n", NULL,
	     E "6: [job web]: with the machine at the cgroup v2 root a job adopts cgroups (cgroup =): "
	       "oomkitd makes none of its own beside systemd's\n"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512], errors[CONFIG_ERRORS_MAX], *path;
		struct config cfg, before;
		int r;

		memset(&cfg, 0x5a, sizeof(cfg));
		before = cfg;
		snprintf(text, sizeof(text), "; machine paths\n[oomkitd]\n%s", cases[i].text);
		path = temp_file(text, strlen(text));
		bool v2 = strncmp(cases[i].memory_root, "v2:", 3) == 0;
		struct config_mount mount = {.root = cases[i].memory_root + (v2 ? 3 : 0), .v2 = v2};
		r = config_read(path, &mount, &cfg, errors, sizeof(errors));
		unlink(path);
		/* The expected messages name the file oomkitd.conf. */
		char *p = strstr(errors, path);
		if (p) {
			memmove(p + strlen("oomkitd.conf"), p + strlen(path), strlen(p + strlen(path)) + 1);
			memcpy(p, "oomkitd.conf", strlen("oomkitd.conf"));
		}
		if (cases[i].rel) {
			if (r != 0)
				fail_msg("case %zu refused:\n%s", i, errors);
			assert_string_equal(cfg.machine_rel, cases[i].rel);
			assert_int_equal(cfg.machine_is_root, cases[i].rel[0] == '\0');
			config_free(&cfg);
			continue;
		}
		if (r != -EINVAL)
			fail_msg("case %zu: %s accepted as %s", i, cases[i].text, cfg.machine_rel);
		if (strcmp(errors, cases[i].errors) != 0)
			fail_msg("case %zu:\nwanted:\n%sgot:\n%s", i, cases[i].errors, errors);
		assert_memory_equal(&cfg, &before, sizeof(cfg));
	}
}

/* '#' after a blank starts a comment after a value, as ';' does; a '#' with
 * no blank before it is part of the value. */
static void test_hash_comments(void **state)
{
	(void)state;
	struct config *cfg = parse_ok("[oomkitd] # the daemon\ndelay = 3s # longer\nreserve = 32M\t# tab\n"
				      "[job web] # comment\nlimit = 512M # half\nlimit_max = 1G ; semicolon\n"
				      "before_kill = /bin/echo \"a\" # not an argument\n"
				      "protect = sshd # and nothing else\n");
	char errors[CONFIG_ERRORS_MAX];

	assert_int_equal(cfg->delay_ms, 3000);
	assert_int_equal(cfg->reserve_bytes, 32 * MiB);
	assert_int_equal(cfg->n_jobs, 1);
	assert_int_equal(cfg->jobs[0].limit_bytes, 512 * MiB);
	assert_int_equal(cfg->jobs[0].limit_max_bytes, 1024 * MiB);
	assert_int_equal(cfg->n_commands, 1);
	assert_string_equal(cfg->commands[0].text, "/bin/echo \"a\"");
	assert_int_equal(cfg->n_rules, 1);
	drop(cfg);

	cfg = calloc(1, sizeof(*cfg));
	assert_non_null(cfg);
	assert_int_equal(
	    config_parse_string("[job web]\nlimit = 512M#half\n", "f", cfg, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(
	    errors, "f:2: [job web] limit: bad size '512M#half' (a number with K, M, G or T, or max)\n");
	free(cfg);
}

/* Sizes in percent of the machine's memory: MemTotal as liboomkit reads it
 * from a context's /proc (here a fixture tree, as oomkitd reads its own),
 * passed with the mount; each memory size takes one, a size on disk does
 * not, and out of range or without a known MemTotal is an error at its line. */
static void test_percent_sizes(void **state)
{
	(void)state;
	char root[] = "/tmp/oomkit-test-percent-XXXXXX", path[PATH_MAX + 64], proc[PATH_MAX],
	     memory[PATH_MAX];
	char errors[CONFIG_ERRORS_MAX], *file;
	struct oomkit_system_memory mem;
	struct oomkit_options o;
	oomkit_ctx *ctx;
	struct config cfg;
	unsigned h;

	assert_non_null(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(memory, sizeof(memory), "%s/memory", root);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(memory, 0755), 0);
	snprintf(path, sizeof(path), "%s/meminfo", proc);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("MemTotal:       16777216 kB\nMemFree:         1048576 kB\nMemAvailable:    2097152 kB\n", f);
	fclose(f);
	oomkit_options_init(&o);
	o.proc_root = proc;
	o.memory_root = memory;
	o.cgroup2_root = "";
	o.freezer_root = "";
	o.guardian = false;
	o.protect = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_int_equal(oomkit_system_memory(ctx, &mem), 0);
	oomkit_free(ctx);
	assert_int_equal(mem.total_bytes, 16 * GiB);
	struct config_mount mount = {.root = "/sys/fs/cgroup/memory", .mem_total_bytes = mem.total_bytes};

	const char *good = "[oomkitd]\nmachine_limit = 50%\nmachine_available = 5%\nreserve = 0.5%\n"
			   "hook_memory = 1%\n[job a]\nlimit = 25%\nlimit_max = 100%\nexpect = 12.5%\n";
	file = temp_file(good, strlen(good));
	int r = config_read(file, &mount, &cfg, errors, sizeof(errors));
	if (r != 0)
		fail_msg("percent sizes refused:\n%s", errors);
	assert_int_equal(cfg.machine_limit_bytes, 8 * GiB);
	/* machine_available's percent is a share of RAM + swap, taken when the
	 * machine is looked at (lowmem-rule.h), not of MemTotal now. */
	assert_int_equal(cfg.machine_available.percent, 5);
	assert_int_equal(cfg.machine_available.bytes, 0);
	assert_int_equal(cfg.reserve_bytes, 85897216);
	assert_int_equal(cfg.hook_memory_bytes, 171798528);
	assert_int_equal(cfg.n_jobs, 1);
	assert_int_equal(cfg.jobs[0].limit_bytes, 4 * GiB);
	assert_int_equal(cfg.jobs[0].limit_max_bytes, 16 * GiB);
	assert_int_equal(cfg.jobs[0].expect_bytes, 2 * GiB);
	config_free(&cfg);
	unlink(file);

	/* Each error at its line; all of them at once. */
	const char *bad = "[oomkitd]\nreport_max_bytes = 5%\nmachine_limit = 0.01%\nhook_memory = 50%\n"
			  "[job a]\nlimit = 101%\nlimit_max = 0%\nexpect = 1.234%\n[job b]\nlimit = -5%\n"
			  "expect = 25 %\n";
	file = temp_file(bad, strlen(bad));
	assert_int_equal(config_read(file, &mount, &cfg, errors, sizeof(errors)), -EINVAL);
	char want[2048];
	snprintf(want, sizeof(want),
		 "%s:2: [oomkitd] report_max_bytes: '5%%': a percent of the machine's memory is not a size "
		 "this key takes\n"
		 "%s:3: [oomkitd] machine_limit: '0.01%%' (1676K) out of range (at least 16M, or max)\n"
		 "%s:4: [oomkitd] hook_memory: '50%%' (8G) out of range (4M to 4G)\n"
		 "%s:6: [job a] limit: '101%%' out of range (a percent above 0 and at most 100)\n"
		 "%s:7: [job a] limit_max: '0%%' out of range (a percent above 0 and at most 100)\n"
		 "%s:8: [job a] expect: bad percent '1.234%%' (such as 25%% or 12.5%%)\n"
		 "%s:10: [job b] limit: bad percent '-5%%' (such as 25%% or 12.5%%)\n"
		 "%s:11: [job b] expect: bad percent '25 %%' (such as 25%% or 12.5%%)\n",
		 file, file, file, file, file, file, file, file);
	assert_string_equal(errors, want);
	unlink(file);

	/* Without the machine's size, a percent cannot be resolved: said, not guessed. */
	assert_int_equal(config_parse_string("[job a]\nlimit = 25%\n", "f", &cfg, errors, sizeof(errors)),
			 -EINVAL);
	assert_string_equal(
	    errors, "f:2: [job a] limit: '25%': the machine's memory size (MemTotal) is not known here\n");

	/* The value syntax on its own. */
	assert_int_equal(value_parse_percent("25%", &h), 0);
	assert_int_equal(h, 2500);
	assert_int_equal(value_parse_percent("12.5%", &h), 0);
	assert_int_equal(h, 1250);
	assert_int_equal(value_parse_percent("0.25%", &h), 0);
	assert_int_equal(h, 25);
	assert_int_equal(value_parse_percent("100%", &h), 0);
	assert_int_equal(h, 10000);
	assert_int_equal(value_parse_percent("100.01%", &h), -ERANGE);
	assert_int_equal(value_parse_percent("0.00%", &h), -ERANGE);
	assert_int_equal(value_parse_percent("99999999999999999999999%", &h), -ERANGE);
	assert_int_equal(value_parse_percent("%", &h), -EINVAL);
	assert_int_equal(value_parse_percent("5.%", &h), -EINVAL);
	assert_int_equal(value_parse_percent(".5%", &h), -EINVAL);
	assert_int_equal(value_parse_percent("5%%", &h), -EINVAL);
	assert_int_equal(value_parse_percent("5", &h), -EINVAL);
	assert_true(value_is_percent("5%"));
	assert_false(value_is_percent("5M"));
	assert_false(value_is_percent(""));
	assert_int_equal(value_percent_of(UINT64_MAX, 10000), UINT64_MAX / 4096 * 4096);
	assert_int_equal(value_percent_of(4095, 10000), 0);

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/* The configuration an admin of a systemd machine writes: jobs that adopt
 * units by cgroup =, priorities, a chain, no machine = line.  The machine
 * is the root of the hierarchy it is resolved against (a fixture root here,
 * as the daemon's context gives it), never the v1 default that holds none
 * of the units; on cgroup v1 the default is "oomkit" below the mount. */
static void test_machine_default(void **state)
{
	(void)state;
	static const char natural[] =
	    "[oomkitd]\npolicy = report, kill-lowest, kernel\ndelay = 2s\n\n"
	    "[job redis]\npriority = 900\ncgroup = system.slice/redis-server.service\n\n"
	    "[job web]\npriority = 500\ncgroup = system.slice/nginx.service\n\n"
	    "[job batch]\npriority = 100\ncgroup = system.slice/batch.service\n";
	char errors[CONFIG_ERRORS_MAX], *path = temp_file(natural, strlen(natural));
	struct config cfg;
	static const struct {
		struct config_mount mount;
		const char *machine, *rel;
	} cases[] = {
	    {{.root = "/tmp/fixture/cgroup", .v2 = true, .systemd = true}, "/tmp/fixture/cgroup", ""},
	    {{.root = "/sys/fs/cgroup", .v2 = true, .systemd = true}, "/sys/fs/cgroup", ""},
	    {{.root = "/sys/fs/cgroup/", .v2 = true, .systemd = false}, "/sys/fs/cgroup", ""},
	    {{.root = "/tmp/fixture/memory", .v2 = false}, "/tmp/fixture/memory/oomkit", "oomkit"},
	    {{.root = "/", .v2 = false}, "/oomkit", "oomkit"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (config_read(path, &cases[i].mount, &cfg, errors, sizeof(errors)) != 0)
			fail_msg("case %zu refused:\n%s", i, errors);
		assert_int_equal(cfg.n_jobs, 3);
		assert_false(cfg.builtin);
		assert_int_equal(cfg.machine_line, 0);
		assert_string_equal(cfg.machine, cases[i].machine);
		assert_string_equal(cfg.machine_rel, cases[i].rel);
		assert_int_equal(cfg.machine_is_root, cases[i].mount.v2);
		config_free(&cfg);
	}
	/* Resolved later (the mount not known when the file was read), the
	 * same: the daemon's start reads first, resolves once liboomkit runs. */
	struct config_mount v2 = {.root = "/tmp/fixture/cgroup", .v2 = true, .systemd = true};
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), 0);
	if (config_resolve_machine(&cfg, &v2, errors, sizeof(errors)) != 0)
		fail_msg("resolved later, refused:\n%s", errors);
	assert_string_equal(cfg.machine, "/tmp/fixture/cgroup");
	assert_true(cfg.machine_is_root);
	config_free(&cfg);
	unlink(path);
}

static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
	    {"0", 0, 0},
	    {"1", 0, 1},
	    {"1K", 0, 1024},
	    {"1k", 0, 1024},
	    {"2M", 0, 2 * MiB},
	    {"3G", 0, 3 * GiB},
	    {"1T", 0, 1024 * GiB},
	    {"5MiB", 0, 5 * MiB},
	    {"5MB", 0, 5 * MiB},
	    {"18446744073709551615", 0, UINT64_MAX},
	    {"18446744073709551616", -ERANGE, 0},
	    {"16777216T", -ERANGE, 0},
	    {"", -EINVAL, 0},
	    {"M", -EINVAL, 0},
	    {"1X", -EINVAL, 0},
	    {"1Mi", -EINVAL, 0},
	    {"1 M", -EINVAL, 0},
	    {"-1", -EINVAL, 0},
	    {"0x10", -EINVAL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 42;
		int r = value_parse_size(cases[i].s, false, &v);
		if (r != cases[i].r)
			fail_msg("'%s': r=%d, wanted %d", cases[i].s, r, cases[i].r);
		assert_int_equal(v, cases[i].r == 0 ? cases[i].v : 42);
	}
	uint64_t v;
	assert_int_equal(value_parse_size("max", true, &v), 0);
	assert_int_equal(v, OOMKIT_UNLIMITED);
	assert_int_equal(value_parse_size("max", false, &v), -EINVAL);
}

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
	    {"2s", 0, 2000},	  {"250ms", 0, 250},
	    {"0", 0, 0},	  {"10", -EINVAL, 0},
	    {"1m", -EINVAL, 0},	  {"s", -EINVAL, 0},
	    {"1.5s", -EINVAL, 0}, {"18446744073709551615s", -ERANGE, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 42;
		int r = value_parse_duration(cases[i].s, &v);
		if (r != cases[i].r)
			fail_msg("'%s': r=%d, wanted %d", cases[i].s, r, cases[i].r);
		assert_int_equal(v, cases[i].r == 0 ? cases[i].v : 42);
	}
}

/* A configuration of n jobs "j0".."j<n-1>", each with its own limit and priority. */
static char *many_jobs(unsigned n)
{
	size_t cap = 64 + (size_t)n * 64, off = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	off += (size_t)snprintf(text, cap, "[oomkitd]\nmachine_limit = 4G\n");
	for (unsigned i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, cap - off, "[job j%u]\nlimit = %uM\npriority = %u\n", i,
					1 + i % 64, i % 1001);
	assert_true(off < cap);
	return text;
}

/* The benchmarks measure oomkitd with 10, 100 and 1000 jobs: every one of up to
 * CONFIG_MAX_JOBS is kept, in order, each with its own values. */
static void test_many_jobs(void **state)
{
	(void)state;
	static const unsigned ns[] = {0, 1, 10, 100, 1000, CONFIG_MAX_JOBS};

	assert_true(CONFIG_MAX_JOBS >= 1000);
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		char *text = many_jobs(ns[k]), name[16];
		struct config *cfg = parse_ok(text);
		assert_int_equal(cfg->n_jobs, ns[k]);
		for (unsigned i = 0; i < ns[k]; i++) {
			snprintf(name, sizeof(name), "j%u", i);
			assert_string_equal(cfg->jobs[i].name, name);
			assert_int_equal(cfg->jobs[i].limit_bytes, (1 + i % 64) * MiB);
			assert_int_equal(cfg->jobs[i].priority, i % 1001);
		}
		if (ns[k]) {
			snprintf(name, sizeof(name), "j%u", ns[k] - 1);
			assert_ptr_equal(config_find_job(cfg, name), &cfg->jobs[ns[k] - 1]);
		}
		drop(cfg);
		free(text);
	}
}

/* One job too many is an error at the section that makes it so, and a failed
 * parse leaves a configuration already held (the daemon's running one) as it
 * was, its jobs included: a bad file on reload keeps the old configuration. */
static void test_too_many_jobs(void **state)
{
	(void)state;
	char *text = many_jobs(CONFIG_MAX_JOBS + 1), errors[CONFIG_ERRORS_MAX], want[128];
	struct config *cfg = parse_ok("[job keep]\nlimit = 5M\n"), before = *cfg;

	assert_int_equal(config_parse_string(text, "big.conf", cfg, errors, sizeof(errors)), -EINVAL);
	/* Two header lines, then three lines per job: job N starts at line 3 + 3N. */
	snprintf(want, sizeof(want), "big.conf:%u: [job j%u]: too many jobs (at most %u)\n",
		 3 + 3 * CONFIG_MAX_JOBS, CONFIG_MAX_JOBS, CONFIG_MAX_JOBS);
	assert_string_equal(errors, want);
	assert_memory_equal(cfg, &before, sizeof(before));
	assert_int_equal(cfg->n_jobs, 1);
	assert_string_equal(cfg->jobs[0].name, "keep");
	assert_int_equal(cfg->jobs[0].limit_bytes, 5 * MiB);
	drop(cfg);
	free(text);
}

static void test_signals(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int r, sig;
		const char *name;
	} cases[] = {
	    {"SIGTERM", 0, SIGTERM, "SIGTERM"}, {"TERM", 0, SIGTERM, "SIGTERM"},
	    {"SIGUSR1", 0, SIGUSR1, "SIGUSR1"}, {"KILL", 0, SIGKILL, "SIGKILL"},
	    {"SIGPWR", 0, SIGPWR, "SIGPWR"},	{"SIGRTMIN", 0, 0, "SIGRTMIN"},
	    {"SIGRTMIN+3", 0, 3, "SIGRTMIN+3"}, {"RTMAX-1", 0, -2, NULL},
	    {"SIGRTMAX", 0, -1, NULL},		{"", -EINVAL, 0, NULL},
	    {"SIG", -EINVAL, 0, NULL},		{"15", -EINVAL, 0, NULL},
	    {"sigterm", -EINVAL, 0, NULL},	{"SIGTERM ", -EINVAL, 0, NULL},
	    {"SIGRTMIN-1", -EINVAL, 0, NULL},	{"SIGRTMAX+1", -EINVAL, 0, NULL},
	    {"SIGRTMIN+", -EINVAL, 0, NULL},	{"SIGRTMIN+x", -EINVAL, 0, NULL},
	    {"SIGRTMIN+64", -ERANGE, 0, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int sig = 4242, r = value_parse_signal(cases[i].s, &sig);
		char name[32];
		if (r != cases[i].r)
			fail_msg("'%s': r=%d, wanted %d", cases[i].s, r, cases[i].r);
		if (r < 0) {
			assert_int_equal(sig, 4242);
			continue;
		}
		/* Real-time signals are relative: 0.. up from SIGRTMIN, -1.. down from SIGRTMAX + 1. */
		int want = strstr(cases[i].s, "RT")
			       ? (cases[i].sig >= 0 ? SIGRTMIN + cases[i].sig : SIGRTMAX + 1 + cases[i].sig)
			       : cases[i].sig;
		assert_int_equal(sig, want);
		if (cases[i].name) {
			value_format_signal(sig, name, sizeof(name));
			assert_string_equal(name, cases[i].name);
		}
	}
}

static void test_commands(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int argc;	 /* < 0: refused */
		const char *why; /* exact, when refused */
	} cases[] = {
	    {"/usr/bin/redis-cli FLUSHDB", 2, NULL},
	    {"/usr/local/bin/save-state --job web   --now", 4, NULL},
	    {"  /bin/true  ", 1, NULL},
	    {"/bin/sh -c \"echo $OOMKIT_PID >> /var/log/x; rm -rf *\"", 3, NULL}, /* a shell, asked for */
	    {"/usr/bin/x \"a \\\"quoted\\\" word\" b", 3, NULL},
	    {"/usr/bin/x a|b;c&&d $(e) `f` >g", 5, NULL}, /* nothing is special */
	    {"/usr/bin/x\targ", 2, NULL},
	    {"", -1, "an empty command"},
	    {"   ", -1, "an empty command"},
	    {"redis-cli FLUSHDB", -1, "'redis-cli' is not an absolute path"},
	    {"./x", -1, "'./x' is not an absolute path"},
	    {"/usr/bin/../bin/x", -1, "'/usr/bin/../bin/x' has a '..' component"},
	    {"/usr/bin//x", -1, "the program '/usr/bin//x' is not an absolute path in normal form"},
	    {"/usr/bin/", -1, "the program '/usr/bin/' is not an absolute path in normal form"},
	    {"/", -1, "the program '/' is not an absolute path in normal form"},
	    {"\"/usr/bin/x", -1, "a '\"' is not closed"},
	    {"/usr/bin/x \"a", -1, "a '\"' is not closed"},
	    {"/usr/bin/x \x1b[2J", -1, "the command has a control character"},
	    {"/x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31", 32,
	     NULL},
	    {"/x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32", -1,
	     "more than 32 words"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[512] = "";
		int r = value_parse_command(cases[i].s, why, sizeof(why));
		if (cases[i].argc >= 0) {
			if (r != cases[i].argc)
				fail_msg("'%s': %d words (%s), wanted %d", cases[i].s, r, why, cases[i].argc);
			continue;
		}
		if (r != -EINVAL)
			fail_msg("'%s' accepted", cases[i].s);
		if (strcmp(why, cases[i].why) != 0)
			fail_msg("'%s':\nwanted: %s\ngot:    %s", cases[i].s, cases[i].why, why);
	}
}

/* The words a hook runs with: what value_parse_command() counted, quotes
 * and escapes undone, nothing else touched. */
static void test_command_words(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		const char *words[6];
	} cases[] = {
	    {"/usr/bin/redis-cli -n 1 FLUSHDB", {"/usr/bin/redis-cli", "-n", "1", "FLUSHDB"}},
	    {"  /bin/true  ", {"/bin/true"}},
	    {"/bin/sh -c \"echo $OOMKIT_PID; rm *\"", {"/bin/sh", "-c", "echo $OOMKIT_PID; rm *"}},
	    {"/usr/bin/x \"a \\\"q\\\" \\\\ w\" b", {"/usr/bin/x", "a \"q\" \\ w", "b"}},
	    {"/usr/bin/x a|b;c $(e)", {"/usr/bin/x", "a|b;c", "$(e)"}},
	    {"/usr/bin/x\targ\"\"", {"/usr/bin/x", "arg"}},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[VALUE_COMMAND_MAX], *argv[VALUE_COMMAND_ARGS + 1];
		int n = value_split_command(cases[i].s, buf, sizeof(buf), argv, VALUE_COMMAND_ARGS + 1);
		char why[256];
		assert_int_equal(n, value_parse_command(cases[i].s, why, sizeof(why)));
		for (int w = 0; w < n; w++)
			assert_string_equal(argv[w], cases[i].words[w]);
		assert_null(argv[n]);
		assert_null(cases[i].words[n]);
	}
	char buf[VALUE_COMMAND_MAX], *argv[3];
	assert_int_equal(value_split_command("/x a b c", buf, sizeof(buf), argv, 3), -E2BIG);
	assert_int_equal(value_split_command("   ", buf, sizeof(buf), argv, 3), -EINVAL);
}

/* The keys of graceful kills, shedding and hooks land on their job, and config_read() takes them:
 * the daemon acts on every one. */
static void test_kill_keys(void **state)
{
	(void)state;
	static const char text[] = "[oomkitd]\n"
				   "delay = 5s\n"
				   "[job web]\n"
				   "policy = shed, kill-largest, kernel\n"
				   "kill_signal = SIGTERM\n"
				   "kill_grace = 1500ms\n"
				   "shed_signal = USR1\n"
				   "shed_wait = 2s\n"
				   "before_kill = /usr/local/bin/save-state --job web\n"
				   "after_kill = /usr/bin/logger \"web lost a process\"\n"
				   "shed_command = /usr/bin/redis-cli FLUSHDB\n"
				   "[job plain]\n";
	struct config *cfg = parse_ok(text);
	const struct config_job *web = &cfg->jobs[0], *plain = &cfg->jobs[1];
	char errors[CONFIG_ERRORS_MAX], *path;
	struct config other;

	assert_int_equal(web->kill_signal, SIGTERM);
	assert_int_equal(web->kill_grace_ms, 1500);
	assert_int_equal(web->shed_signal, SIGUSR1);
	assert_int_equal(web->shed_wait_ms, 2000);
	assert_string_equal(web->hooks[HOOK_BEFORE_KILL], "/usr/local/bin/save-state --job web");
	assert_string_equal(web->hooks[HOOK_AFTER_KILL], "/usr/bin/logger \"web lost a process\"");
	assert_string_equal(web->hooks[HOOK_SHED_COMMAND], "/usr/bin/redis-cli FLUSHDB");
	assert_int_equal(plain->kill_signal, SIGKILL);
	assert_int_equal(plain->kill_grace_ms, 0);
	assert_int_equal(plain->shed_signal, 0);
	assert_int_equal(plain->shed_wait_ms, 0);
	for (int h = 0; h < HOOK__COUNT; h++)
		assert_null(plain->hooks[h]);
	drop(cfg);

	path = temp_file(text, strlen(text));
	assert_int_equal(config_read(path, NULL, &other, errors, sizeof(errors)), 0);
	unlink(path);
	/* hook_timeout is a quarter of the delay unless set; hook_memory 64M. */
	assert_int_equal(other.jobs[0].hook_timeout_ms, 1250);
	assert_int_equal(other.hook_memory_bytes, 64ull << 20);
	config_free(&other);

	static const char idle[] = "[job web]\nhook_timeout = 100ms\n";
	assert_int_equal(config_parse_string(idle, "t", &other, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(errors, "t:2: [job web] hook_timeout: needs a hook: before_kill, after_kill or "
				    "shed_command\n");

	static const char late[] =
	    "[oomkitd]\ndelay = 2s\n[job web]\nafter_kill = /bin/true\nhook_timeout = 2s\n";
	path = temp_file(late, strlen(late));
	assert_int_equal(config_read(path, NULL, &other, errors, sizeof(errors)), -EINVAL);
	char want[256];
	snprintf(
	    want, sizeof(want),
	    "%s:5: [job web] hook_timeout: 2s is not shorter than the delay 2s, when the kernel decides\n",
	    path);
	unlink(path);
	assert_string_equal(errors, want);
}

/* metrics_interval: 0 (the default) rewrites the file on events only. */
static void test_metrics_interval(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		uint64_t ms;
	} cases[] = {
	    {"0", 0}, {"0s", 0}, {"1s", 1000}, {"1000ms", 1000}, {"15s", 15000}, {"86400s", 86400000},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "[oomkitd]\nmetrics_interval = %s\n", cases[i].value);
		struct config *cfg = parse_ok(text);
		if (cfg->metrics_interval_ms != cases[i].ms)
			fail_msg("'%s': %llu ms, wanted %llu", cases[i].value,
				 (unsigned long long)cfg->metrics_interval_ms,
				 (unsigned long long)cases[i].ms);
		drop(cfg);
	}
}

static void test_format(void **state)
{
	(void)state;
	char buf[32];

	value_format_size(512 * MiB, buf, sizeof(buf));
	assert_string_equal(buf, "512M");
	value_format_size(1536 * 1024, buf, sizeof(buf));
	assert_string_equal(buf, "1536K");
	value_format_size(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
	value_format_size(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	value_format_size(OOMKIT_UNLIMITED, buf, sizeof(buf));
	assert_string_equal(buf, "max");
	/* Logs and reports: one human format, KiB below 10 MiB, whole MiB above. */
	static const struct {
		uint64_t bytes;
		const char *want;
	} human[] = {
	    {0, "0 KiB"},
	    {1023, "0 KiB"},
	    {512 * 1024, "512 KiB"},
	    {10 * MiB - 1, "10239 KiB"},
	    {10 * MiB, "10 MiB"},
	    {59912 * 1024, "58 MiB"},
	    {73 * MiB + 1, "73 MiB"},
	    {16384 * MiB, "16384 MiB"},
	    {OOMKIT_UNLIMITED, "unlimited"},
	};
	for (size_t i = 0; i < sizeof(human) / sizeof(human[0]); i++) {
		value_format_bytes(human[i].bytes, buf, sizeof(buf));
		assert_string_equal(buf, human[i].want);
	}
	static const struct {
		uint64_t ms;
		const char *want;
	} ago[] = {
	    {0, "0.0 s"},
	    {450, "0.4 s"},
	    {9999, "9.9 s"},
	    {10000, "10 s"},
	    {59999, "59 s"},
	    {60000, "1 min 0 s"},
	    {200000, "3 min 20 s"},
	    {3600000, "1 h 0 min"},
	    {7500000, "2 h 5 min"},
	    {86400000, "1 day 0 h"},
	    {3 * 86400000ull + 4 * 3600000ull, "3 days 4 h"},
	};
	for (size_t i = 0; i < sizeof(ago) / sizeof(ago[0]); i++) {
		value_format_elapsed(ago[i].ms, buf, sizeof(buf));
		assert_string_equal(buf, ago[i].want);
	}
	assert_null(policy_kind_name(POLICY__COUNT));
	assert_string_equal(policy_kind_name(POLICY_KILL_OVER_EXPECTED), "kill-over-expected");
}

/* Every field of a configuration but its name and its lines: what two files
 * that mean the same must agree on. */
static void assert_same_meaning(const struct config *a, const struct config *b)
{
	struct config x = *a, y = *b;

	memset(x.source, 0, sizeof(x.source));
	memset(y.source, 0, sizeof(y.source));
	x.machine_line = y.machine_line = 0;
	x.machine_limit_line = y.machine_limit_line = 0;
	x.policy_line = y.policy_line = x.delay_line = y.delay_line = 0;
	x.builtin = y.builtin = false;
	assert_int_equal(x.n_jobs, 0);
	assert_int_equal(y.n_jobs, 0);
	assert_memory_equal(&x, &y, sizeof(x));
}

/* units/oomkitd.conf, the file installed as /etc/oomkit/oomkitd.conf, says
 * that it holds the built-in defaults: it must mean exactly what no file
 * means, so that the defaults cannot drift apart again. */
static void test_sample_file(void **state)
{
	(void)state;
	const char *root = getenv("OOMKIT_SOURCE_ROOT");
	struct config *sample = malloc(sizeof(*sample)), *builtin = malloc(sizeof(*builtin));
	char path[1024], errors[CONFIG_ERRORS_MAX];

	if (!root)
		skip();
	assert_non_null(sample);
	assert_non_null(builtin);
	snprintf(path, sizeof(path), "%s/units/oomkitd.conf", root);
	if (config_read(path, NULL, sample, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
	assert_int_equal(config_read(NULL, NULL, builtin, errors, sizeof(errors)), 0);
	assert_same_meaning(sample, builtin);
	drop(sample);
	drop(builtin);
}

/* Each default written out in the file's syntax means the same as leaving
 * the key out: the defaults go through the parsers that read the file. */
static void test_defaults_spelled_out(void **state)
{
	(void)state;
	struct config *spelled = parse_ok("[oomkitd]\n"
					  "machine = /sys/fs/cgroup/memory/oomkit\n"
					  "machine_limit = max\n"
					  "machine_available = 2%\n"
					  "machine_full_stall = 60%\n"
					  "machine_full_stall_duration = 30s\n"
					  "policy = report, kill-lowest, kernel\n"
					  "delay = 2s\n"
					  "reserve = 16M\n"
					  "report_dir = /var/lib/oomkit/reports\n"
					  "report_max_count = 100\n"
					  "report_max_bytes = 64M\n"
					  "socket = /run/oomkit/oomkitd.sock\n"
					  "metrics = /var/lib/oomkit/oomkit.prom\n"
					  "readonly_status = no\n"
					  "metrics_interval = 0\n");
	struct config *none = parse_ok("");
	struct config *job =
	    parse_ok("[job a]\npriority = 500\nlimit = max\nlimit_max = max\nexpect = 0\n"
		     "policy = report, kernel\nkill = process\nmanaged_oom_preference = yes\n");
	struct config *bare = parse_ok("[job a]\n");

	assert_same_meaning(spelled, none);
	assert_int_equal(job->n_jobs, 1);
	assert_int_equal(bare->n_jobs, 1);
	job->jobs[0].line = bare->jobs[0].line = 0;
	job->jobs[0].policy_line = bare->jobs[0].policy_line = 0;
	assert_memory_equal(&job->jobs[0], &bare->jobs[0], sizeof(job->jobs[0]));
	drop(spelled);
	drop(none);
	drop(job);
	drop(bare);
}

/* Patterns, in order, on the job that wrote them; a job without one has none. */
static void test_cgroups(void **state)
{
	(void)state;
	struct config *cfg =
	    parse_ok("[job batch]\n"
		     "cgroup = system.slice/batch-*.service, system.slice/nightly.service\n"
		     "priority = 100\n"
		     "cgroup = user.slice/user-*.slice/user@*.service/app.slice/app-*.scope\n"
		     "[job plain]\n"
		     "[job web]\n"
		     "cgroup=system.slice/nginx.service\n");
	const struct config_job *batch = config_find_job(cfg, "batch"),
				*plain = config_find_job(cfg, "plain"), *web = config_find_job(cfg, "web");

	assert_int_equal(cfg->n_cgroups, 4);
	assert_int_equal(batch->n_cgroups, 3);
	assert_string_equal(batch->cgroups[0].pattern, "system.slice/batch-*.service");
	assert_int_equal(batch->cgroups[0].line, 2);
	assert_string_equal(batch->cgroups[1].pattern, "system.slice/nightly.service");
	assert_int_equal(batch->cgroups[1].line, 2);
	assert_string_equal(batch->cgroups[2].pattern,
			    "user.slice/user-*.slice/user@*.service/app.slice/app-*.scope");
	assert_int_equal(batch->cgroups[2].line, 4);
	assert_int_equal(batch->cgroups[2].job, 0);
	assert_int_equal(batch->priority, 100);
	assert_int_equal(plain->n_cgroups, 0);
	assert_null(plain->cgroups);
	assert_int_equal(web->n_cgroups, 1);
	assert_string_equal(web->cgroups[0].pattern, "system.slice/nginx.service");
	assert_int_equal(web->cgroups[0].job, 2);
	drop(cfg);
}

static void test_cgroups_limits(void **state)
{
	(void)state;
	char *text = malloc(64 * 1024), errors[CONFIG_ERRORS_MAX];
	struct config cfg;
	size_t off;

	assert_non_null(text);
	off = (size_t)snprintf(text, 64 * 1024, "[job a]\n");
	for (int i = 0; i < CONFIG_MAX_CGROUPS; i++)
		off += (size_t)snprintf(text + off, 64 * 1024 - off, "cgroup = s/p%d\n", i);
	assert_int_equal(config_parse_string(text, "f", &cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg.jobs[0].n_cgroups, CONFIG_MAX_CGROUPS);
	config_free(&cfg);
	snprintf(text + off, 64 * 1024 - off, "cgroup = s/one-more\n");
	assert_int_equal(config_parse_string(text, "f", &cfg, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(errors, "f:66: [job a] cgroup: too many patterns (at most 64 per job)\n");
	free(text);
}

/* protect, prefer and avoid keep every rule, in order, each on its list:
 * the [oomkitd] section's for the machine, each job's for itself. */
static void test_rules(void **state)
{
	(void)state;
	struct config *cfg = parse_ok("[oomkitd]\n"
				      "avoid = uid:0\n"
				      "[job a]\n"
				      "protect = sshd, uid:0, comm:postgres\n"
				      "prefer = cmdline:*chrome*--type=renderer*\n"
				      "avoid = user:root, cgroup:system.slice/*, exe:/usr/bin/x\n"
				      "[job b]\n"
				      "[job c]\n"
				      "avoid = comm:c\n");
	const struct config_job *a = &cfg->jobs[0], *b = &cfg->jobs[1], *c = &cfg->jobs[2];
	static const struct {
		enum config_rule_list list;
		const char *text;
		unsigned line;
	} want[] = {
	    {RULE_PROTECT, "comm:sshd", 4},	{RULE_PROTECT, "uid:0", 4},
	    {RULE_PROTECT, "comm:postgres", 4}, {RULE_PREFER, "cmdline:*chrome*--type=renderer*", 5},
	    {RULE_AVOID, "uid:0", 6},		{RULE_AVOID, "cgroup:system.slice/*", 6},
	    {RULE_AVOID, "exe:/usr/bin/x", 6},
	};
	char text[512];

	assert_int_equal(a->n_rules, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < a->n_rules; i++) {
		match_format(&a->rules[i].expr, text, sizeof(text));
		assert_string_equal(text, want[i].text);
		assert_int_equal(a->rules[i].list, want[i].list);
		assert_int_equal(a->rules[i].line, want[i].line);
		assert_int_equal(a->rules[i].job, 0);
	}
	assert_int_equal(b->n_rules, 0);
	assert_null(b->rules);
	assert_int_equal(c->n_rules, 1);
	assert_int_equal(c->rules[0].job, 2);
	assert_int_equal(cfg->n_machine_rules, 1);
	assert_int_equal(cfg->machine_rules[0].job, CONFIG_RULE_MACHINE);
	assert_int_equal(cfg->machine_rules[0].list, RULE_AVOID);
	assert_int_equal(cfg->machine_rules[0].line, 2);
	assert_int_equal(cfg->n_rules, 9);
	drop(cfg);
}

static void test_rules_limits(void **state)
{
	(void)state;
	char errors[CONFIG_ERRORS_MAX], text[4096];
	struct config cfg;
	size_t off;

	/* 64 rules of a job are taken, and no more. */
	off = (size_t)snprintf(text, sizeof(text), "[job a]\nprefer = x");
	for (int i = 1; i < CONFIG_MAX_RULES; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, ",x");
	snprintf(text + off, sizeof(text) - off, "\n");
	assert_int_equal(config_parse_string(text, "f", &cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg.jobs[0].n_rules, CONFIG_MAX_RULES);
	config_free(&cfg);
	snprintf(text + off, sizeof(text) - off, ",x\n");
	assert_int_equal(config_parse_string(text, "f", &cfg, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(errors, "f:2: [job a] prefer: too many rules (at most 64 per job)\n");

	/* The same for the machine's. */
	off = (size_t)snprintf(text, sizeof(text), "[oomkitd]\navoid = x");
	for (int i = 1; i <= CONFIG_MAX_RULES; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, ",x");
	snprintf(text + off, sizeof(text) - off, "\n");
	assert_int_equal(config_parse_string(text, "f", &cfg, errors, sizeof(errors)), -EINVAL);
	assert_string_equal(errors, "f:2: [oomkitd] avoid: too many rules (at most 64 per section)\n");
}

/* config_read(), what the daemon calls, takes the patterns too. */
static void test_cgroups_read(void **state)
{
	(void)state;
	char errors[CONFIG_ERRORS_MAX];
	static const char text[] = "[job a]\npriority = 1\ncgroup = system.slice/x.service\n";
	char *path = temp_file(text, strlen(text));
	struct config cfg;

	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg.jobs[0].n_cgroups, 1);
	config_free(&cfg);
	unlink(path);
}

/* Two jobs whose patterns could take the same cgroup, and a delegated job
 * that adopts cgroups, are errors naming the line (and the other job). */
static void test_cgroups_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text, *error;
	} cases[] = {
	    {"[job all]\ncgroup = system.slice/*.service\n[job db]\ncgroup = "
	     "system.slice/postgresql.service\n",
	     "f:4: [job db] cgroup: 'system.slice/postgresql.service' and job all's 'system.slice/*.service' "
	     "(line 2) can match the same cgroup; a cgroup is an instance of one job\n"},
	    {"[job a]\ncgroup = s/batch-*\n[job b]\ncgroup = s/*-17\n",
	     "f:4: [job b] cgroup: 's/*-17' and job a's 's/batch-*' (line 2) can match the same cgroup; a "
	     "cgroup is an instance of one job\n"},
	    {"[job a]\nowner = 0\ncgroup = s/x\n",
	     "f:2: [job a] owner: a job that adopts cgroups (cgroup =) is not delegated: its cgroups are "
	     "their makers' (systemd's)\n"},
	};
	char errors[CONFIG_ERRORS_MAX];
	struct config cfg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(config_parse_string(cases[i].text, "f", &cfg, errors, sizeof(errors)),
				 -EINVAL);
		assert_string_equal(errors, cases[i].error);
	}
	/* One job may have overlapping patterns: a cgroup is its instance once. */
	struct config *ok = parse_ok("[job a]\ncgroup = s/batch-*, s/*-17\n[job b]\ncgroup = t/web-*\n");
	drop(ok);
}

/* config_read(), what the daemon calls, takes every kind of rule now that
 * the policies act on them; a bad one is refused naming file:line, and
 * nothing of the file is applied. */
static void test_rules_read(void **state)
{
	(void)state;
	static const char good[] = "[oomkitd]\nprotect = comm:sshd\n[job a]\nprotect = sshd, uid:0\n"
				   "prefer = comm:x\navoid = cmdline:*y*\n";
	static const char bad[] = "[oomkitd]\nprefer = comm:x\n[job a]\npriority = 3\n"
				  "avoid = exe:bin/y, comm:z\n";
	char errors[CONFIG_ERRORS_MAX], want[1024], *path = temp_file(good, strlen(good));
	struct config cfg;

	if (config_read(path, NULL, &cfg, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
	assert_int_equal(cfg.n_machine_rules, 1);
	assert_int_equal(cfg.jobs[0].n_rules, 4);
	config_free(&cfg);
	unlink(path);

	path = temp_file(bad, strlen(bad));
	memset(&cfg, 0x5a, sizeof(cfg));
	struct config before = cfg;
	assert_int_equal(config_read(path, NULL, &cfg, errors, sizeof(errors)), -EINVAL);
	snprintf(want, sizeof(want), "%s:5: [job a] avoid: 'bin/y' is not an absolute path\n", path);
	assert_string_equal(errors, want);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	unlink(path);
}

static void test_check_self(void **state)
{
	(void)state;
	struct config *cfg = parse_ok("[job a]\ncgroup = user.slice/*, system.slice/*.service\n"
				      "[job b]\ncgroup = system.slice\n");
	char errors[CONFIG_ERRORS_MAX];

	assert_int_equal(config_check_self(cfg, "init.scope", errors, sizeof(errors)), 0);
	assert_string_equal(errors, "");
	assert_int_equal(config_check_self(cfg, "system.slice/oomkitd.service", errors, sizeof(errors)),
			 -EINVAL);
	assert_string_equal(errors,
			    "oomkitd.conf:2: [job a] cgroup: 'system.slice/*.service' takes in oomkitd's "
			    "own cgroup system.slice/oomkitd.service\n"
			    "oomkitd.conf:4: [job b] cgroup: 'system.slice' takes in oomkitd's own cgroup "
			    "system.slice/oomkitd.service\n");
	drop(cfg);
}

/* cgroup_exclude: cgroups a job's patterns match that are not its
 * instances; the self-check and the overlap check count what is left. */
static void test_cgroup_exclude(void **state)
{
	(void)state;
	struct config *cfg =
	    parse_ok("[job services]\ncgroup = system.slice/*.service\n"
		     "cgroup_exclude = system.slice/oomkitd.service, system.slice/systemd-*.service\n"
		     "cgroup_exclude = system.slice/nginx.service\n"
		     "[job web]\ncgroup = system.slice/nginx.service\n"
		     "[job services2]\ncgroup = other.slice/*\n");
	char errors[CONFIG_ERRORS_MAX], text[4096];

	assert_int_equal(cfg->jobs[0].n_excludes, 3);
	assert_string_equal(cfg->jobs[0].excludes[1].pattern, "system.slice/systemd-*.service");
	assert_int_equal(cfg->jobs[1].n_excludes, 0);
	assert_true(config_excluded(cfg, 0, "system.slice/oomkitd.service"));
	assert_true(config_excluded(cfg, 0, "system.slice/systemd-journald.service"));
	assert_false(config_excluded(cfg, 0, "system.slice/batch.service"));
	assert_false(config_excluded(cfg, 2, "system.slice/oomkitd.service"));
	assert_int_equal(config_check_self(cfg, "system.slice/oomkitd.service", errors, sizeof(errors)), 0);
	assert_int_equal(config_check_self(cfg, "system.slice/other.service", errors, sizeof(errors)),
			 -EINVAL);
	assert_string_equal(errors,
			    "oomkitd.conf:2: [job services] cgroup: 'system.slice/*.service' takes in "
			    "oomkitd's own cgroup system.slice/other.service\n");
	drop(cfg);

	/* web overlaps services: allowed only with services excluding it exactly. */
	assert_int_equal(config_parse_string("[job services]\ncgroup = system.slice/*.service\n"
					     "[job web]\ncgroup = system.slice/nginx.service\n",
					     "oomkitd.conf", &(struct config){0}, errors, sizeof(errors)),
			 -EINVAL);
	assert_non_null(strstr(errors,
			       "oomkitd.conf:4: [job web] cgroup: 'system.slice/nginx.service' and job "
			       "services's"));
	assert_int_equal(config_parse_string("[job a]\ncgroup = system.slice/*.service\n"
					     "cgroup_exclude = user.slice/*\n"
					     "[job b]\ncgroup_exclude = x.slice/*\n"
					     "[job c]\ncgroup = c.slice/*\ncgroup_exclude = /abs\n",
					     "oomkitd.conf", &(struct config){0}, errors, sizeof(errors)),
			 -EINVAL);
	assert_non_null(strstr(errors,
			       "oomkitd.conf:3: [job a] cgroup_exclude: 'user.slice/*' matches nothing a "
			       "cgroup = pattern of the job matches\n"));
	assert_non_null(
	    strstr(errors, "oomkitd.conf:5: [job b] cgroup_exclude: 'x.slice/*' matches nothing"));
	assert_non_null(strstr(errors, "oomkitd.conf:8: [job c] cgroup_exclude: "));

	/* The built-in default: a systemd machine on cgroup v2 has one of its
	 * own, which adopts the units and leaves the daemon's out; else none. */
	struct config_mount sd = {.root = "/sys/fs/cgroup", .v2 = true, .systemd = true};
	struct config_mount v1 = {.root = "/sys/fs/cgroup/memory", .v2 = false, .systemd = true};
	struct config_mount v2 = {.root = "/sys/fs/cgroup", .v2 = true, .systemd = false};
	assert_string_equal(config_builtin_text(&v1, text, sizeof(text)), "");
	assert_string_equal(config_builtin_text(&v2, text, sizeof(text)), "");
	assert_string_equal(config_builtin_text(NULL, text, sizeof(text)), "");
	assert_non_null(strstr(config_builtin_text(&sd, text, sizeof(text)), "machine = /sys/fs/cgroup\n"));
	cfg = calloc(1, sizeof(*cfg));
	assert_non_null(cfg);
	if (config_read(NULL, &sd, cfg, errors, sizeof(errors)) != 0)
		fail_msg("the built-in systemd default has errors:\n%s", errors);
	assert_true(cfg->builtin);
	assert_true(cfg->machine_is_root);
	assert_int_equal(cfg->n_jobs, 4);
	const struct config_job *services = config_find_job(cfg, "services");
	assert_non_null(services);
	unsigned si = (unsigned)(services - cfg->jobs);
	assert_int_equal(config_check_self(cfg, "system.slice/oomkitd.service", errors, sizeof(errors)), 0);
	for (const char *const *u =
		 (const char *const[]){"ssh.service", "sshd.service", "systemd-journald.service",
				       "systemd-logind.service", "dbus.service", "systemd-udevd.service",
				       "gdm.service", NULL};
	     *u; u++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "system.slice/%s", *u);
		assert_true(config_excluded(cfg, si, rel));
	}
	assert_false(config_excluded(cfg, si, "system.slice/redis-server.service"));
	drop(cfg);
	cfg = calloc(1, sizeof(*cfg));
	assert_non_null(cfg);
	assert_int_equal(config_read(NULL, &v1, cfg, errors, sizeof(errors)), 0);
	assert_int_equal(cfg->n_jobs, 0);
	assert_true(cfg->builtin);
	drop(cfg);

	/* A file that names no machine and no job (the shipped conffile, with
	 * a key or two uncommented) keeps the built-in scope, its other keys
	 * as written; one that names a machine or a job is its own. */
	static const char *const texts[] = {
	    "; c\n\n[oomkitd]\n;machine = /x\n",
	    "[oomkitd]\nreadonly_status = yes\ndelay = 3s\n",
	    "[oomkitd]\nmachine = /sys/fs/cgroup/oomkit\n",
	    "[job a]\n",
	};
	const unsigned jobs[] = {4, 4, 0, 1};
	for (int i = 0; i < 4; i++) {
		char *path = temp_file(texts[i], strlen(texts[i]));
		cfg = calloc(1, sizeof(*cfg));
		assert_non_null(cfg);
		if (i == 3) {
			/* A job of oomkitd's own needs a machine below the root. */
			assert_int_equal(config_read(path, &sd, cfg, errors, sizeof(errors)), -EINVAL);
			assert_non_null(strstr(errors, ":1: [job a]: no machine = line, so on cgroup v2 the "
						       "machine is the root /sys/fs/cgroup"));
			unlink(path);
			drop(cfg);
			cfg = calloc(1, sizeof(*cfg));
			assert_non_null(cfg);
			path = temp_file(texts[i], strlen(texts[i]));
			assert_int_equal(config_read(path, &v1, cfg, errors, sizeof(errors)), 0);
			assert_int_equal(cfg->n_jobs, 1);
			assert_string_equal(cfg->machine, "/sys/fs/cgroup/memory/oomkit");
			unlink(path);
			drop(cfg);
			continue;
		}
		if (config_read(path, &sd, cfg, errors, sizeof(errors)) != 0)
			fail_msg("%s: %s", texts[i], errors);
		assert_int_equal(cfg->builtin, i < 2);
		assert_int_equal(cfg->n_jobs, jobs[i]);
		assert_int_equal(cfg->machine_is_root, i < 2);
		if (i == 1) {
			assert_true(cfg->readonly_status);
			assert_int_equal(cfg->delay_ms, 3000);
			assert_int_equal(cfg->jobs[0].hook_timeout_ms, 750);
		}
		unlink(path);
		drop(cfg);
		/* On a machine without a default of its own, the file is all. */
		cfg = calloc(1, sizeof(*cfg));
		assert_non_null(cfg);
		path = temp_file(texts[i], strlen(texts[i]));
		assert_int_equal(config_read(path, &v1, cfg, errors, sizeof(errors)), i == 2 ? -EINVAL : 0);
		if (i != 2)
			assert_int_equal(cfg->n_jobs, i == 3 ? 1 : 0);
		unlink(path);
		drop(cfg);
	}
}

/* examples/NAME, parsed into *cfg (skipped outside the source tree). */
static void parse_example(const char *name, struct config *cfg)
{
	const char *root = getenv("OOMKIT_SOURCE_ROOT");
	char path[1024], errors[CONFIG_ERRORS_MAX];
	static char text[64 * 1024];
	FILE *f;

	if (!root)
		skip();
	snprintf(path, sizeof(path), "%s/examples/%s", root, name);
	f = fopen(path, "r");
	if (!f)
		skip();
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	if (config_parse_string(text, path, cfg, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
}

/* The hooks' timings, which the kill path and explain both take from here. */
static void test_hook_timings(void **state)
{
	(void)state;
	struct config *cfg =
	    parse_ok("[oomkitd]\ndelay = 4s\n"
		     "[job a]\nbefore_kill = /bin/true\nhook_timeout = 300ms\n"
		     "[job b]\nbefore_kill = /bin/true\nafter_kill = /bin/true\nhook_timeout = 3s\n"
		     "kill_signal = SIGTERM\nkill_grace = 2s\n"
		     "[job c]\npolicy = shed, kernel\nshed_signal = SIGUSR1\n");
	const struct config_job *a = &cfg->jobs[0], *b = &cfg->jobs[1], *c = &cfg->jobs[2];

	/* The delay less a tenth, less what has passed since the event. */
	assert_int_equal(config_kill_budget_ms(cfg, 0), 3600);
	assert_int_equal(config_kill_budget_ms(cfg, 600), 3000);
	assert_int_equal(config_kill_budget_ms(cfg, 5000), 0);
	/* hook_timeout when it fits; else cut to the budget less the grace. */
	assert_int_equal(config_before_kill_ms(a, true, 3600), 300);
	assert_int_equal(config_before_kill_ms(b, true, 3600), 1600);
	assert_int_equal(config_before_kill_ms(b, true, 3000), 1000);
	/* A whole job's kill has no grace. */
	assert_int_equal(config_before_kill_ms(b, false, 3600), 3000);
	assert_int_equal(config_before_kill_ms(b, false, 2000), 2000);
	/* Under 10ms left: not run. */
	assert_int_equal(config_before_kill_ms(b, true, 2009), 0);
	assert_int_equal(config_before_kill_ms(b, true, 2010), 10);
	assert_int_equal(config_before_kill_ms(a, false, 9), 0);
	assert_int_equal(config_after_kill_ms(cfg, b), 3000);
	/* shed_wait: the job's (a quarter of the delay by default); the machine's own a quarter. */
	assert_int_equal(config_shed_wait_ms(cfg, c), 1000);
	assert_int_equal(config_shed_wait_ms(cfg, NULL), 1000);
	config_free(cfg);
	free(cfg);
}

static void test_kubernetes_preset(void **state)
{
	(void)state;
	struct config cfg;

	parse_example("kubernetes-node.conf", &cfg);
	assert_string_equal(config_find_job(&cfg, "besteffort")->cgroups[0].pattern,
			    "kubepods.slice/kubepods-besteffort.slice/*");
	assert_true(pattern_match(config_find_job(&cfg, "besteffort")->cgroups[0].pattern,
				  "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice"));
	config_free(&cfg);
}

/* Whether rules[0, n) hold the rule KIND:TEXT in list. */
static bool has_rule(const struct config_rule *rules, unsigned n, enum config_rule_list list,
		     enum match_kind kind, const char *text)
{
	for (unsigned i = 0; i < n; i++)
		if (rules[i].list == list && rules[i].expr.kind == kind &&
		    strcmp(rules[i].expr.text, text) == 0)
			return true;
	return false;
}

/* The desktop preset: a person's chain with time to answer, an
 * app killed whole, a terminal tab's or a login's largest command and never
 * its shell, the session last, the desktop's own services protected by
 * cgroup, and every cgroup an instance of one job at most. */
static void test_desktop_preset(void **state)
{
	(void)state;
	char chain[128];
	struct config cfg;
	static const char app[] =
	    "user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4711.scope",
			  tab[] = "user.slice/user-1000.slice/user@1000.service/app.slice/"
				  "app-org.gnome.Terminal.slice/vte-spawn-0b1c.scope",
			  session[] = "user.slice/user-1000.slice/session-2.scope";

	parse_example("desktop.conf", &cfg);
	config_format_chain(&cfg.chain, chain, sizeof(chain));
	assert_string_equal(chain, "report, prompt, kill-largest, kernel");
	assert_int_equal(cfg.delay_ms, 30000);
	const struct config_job *apps = config_find_job(&cfg, "apps"),
				*terms = config_find_job(&cfg, "terminals"),
				*sess = config_find_job(&cfg, "session");
	assert_non_null(apps);
	assert_non_null(terms);
	assert_non_null(sess);
	assert_int_equal(apps->kill, KILL_JOB);
	assert_int_equal(terms->kill, KILL_LARGEST_LEAF);
	assert_int_equal(sess->kill, KILL_LARGEST_LEAF);
	assert_true(apps->priority < terms->priority && terms->priority < sess->priority);
	assert_true(pattern_match(apps->cgroups[0].pattern, app));
	assert_false(pattern_match(apps->cgroups[0].pattern, tab));
	assert_true(pattern_match(terms->cgroups[0].pattern, tab));
	assert_false(pattern_match(terms->cgroups[0].pattern, app));
	assert_true(pattern_match(sess->cgroups[0].pattern, session));
	/* Nothing by name, which any app may take: a login's root processes by uid. */
	assert_int_equal(apps->n_rules, 0);
	assert_true(sess->n_rules == 1 && sess->rules[0].list == RULE_PROTECT &&
		    sess->rules[0].expr.kind == MATCH_UID && sess->rules[0].expr.uid == 0);
	/* The desktop's own services, the display manager and sshd, wherever they run. */
	static const char *const machine_protect[] = {"user.slice/user-*.slice/user@*.service/session.slice",
						      "system.slice/*dm.service", "system.slice/ssh*.service",
						      "init.scope", "user.slice/*/*/init.scope"};
	for (size_t i = 0; i < sizeof(machine_protect) / sizeof(machine_protect[0]); i++)
		assert_true(has_rule(cfg.machine_rules, cfg.n_machine_rules, RULE_PROTECT, MATCH_CGROUP,
				     machine_protect[i]));
	assert_true(pattern_match("system.slice/*dm.service", "system.slice/gdm.service") &&
		    pattern_match("system.slice/*dm.service", "system.slice/sddm.service") &&
		    pattern_match("system.slice/ssh*.service", "system.slice/sshd.service"));
	assert_true(pattern_match("user.slice/*/*/init.scope",
				  "user.slice/user-1000.slice/user@1000.service/init.scope"));
	for (unsigned i = 0; i < cfg.n_machine_rules; i++)
		assert_int_equal(cfg.machine_rules[i].expr.kind, MATCH_CGROUP);
	config_free(&cfg);
}

/* prompt waits half the delay: under 5 s of it, --check warns, naming the
 * chain's line and where the delay comes from. */
static void test_prompt_warnings(void **state)
{
	(void)state;
	char out[2048];
	static const char chains[] = "[oomkitd]\npolicy = report, prompt, kill-lowest, kernel\n%s"
				     "[job a]\npolicy = prompt, kernel\n[job b]\npolicy = report, kernel\n";
	char text[512];

	snprintf(text, sizeof(text), chains, "");
	struct config *cfg = parse_ok(text);
	assert_int_equal(config_prompt_warnings(cfg, out, sizeof(out)), 2);
	assert_string_equal(out,
			    "oomkitd.conf:2: warning: [oomkitd] policy: prompt waits half the delay for an "
			    "answer, 1s (the default delay, 2s): too short for a person to read the question "
			    "and answer; give it a delay of at least 10s\n"
			    "oomkitd.conf:4: warning: [job a] policy: prompt waits half the delay for an "
			    "answer, 1s (the default delay, 2s): too short for a person to read the question "
			    "and answer; give it a delay of at least 10s\n");
	/* Truncated, never overrun; still counted. */
	assert_int_equal(config_prompt_warnings(cfg, out, 40), 2);
	assert_int_equal(strlen(out), 39);
	drop(cfg);

	snprintf(text, sizeof(text), chains, "delay = 9s\n");
	cfg = parse_ok(text);
	assert_int_equal(config_prompt_warnings(cfg, out, sizeof(out)), 2);
	assert_non_null(strstr(out,
			       "oomkitd.conf:5: warning: [job a] policy: prompt waits half the delay for an "
			       "answer, 4500ms (delay = 9s at line 3): too short"));
	drop(cfg);

	/* 10 s: 5 s to answer, enough; a chain without prompt never warns. */
	snprintf(text, sizeof(text), chains, "delay = 10s\n");
	cfg = parse_ok(text);
	assert_int_equal(config_prompt_warnings(cfg, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	drop(cfg);
	cfg = parse_ok("[oomkitd]\ndelay = 100ms\n[job a]\npolicy = kill-largest, kernel\n");
	assert_int_equal(config_prompt_warnings(cfg, out, sizeof(out)), 0);
	drop(cfg);
}

/* The job whose pattern takes REL (a unit's cgroup) or an ancestor of it, or NULL. */
static const char *job_taking(const struct config *cfg, const char *rel)
{
	for (unsigned i = 0; i < cfg->n_cgroups; i++)
		if (pattern_match_self_or_ancestor(cfg->cgroups[i].pattern, rel) &&
		    !config_excluded(cfg, cfg->cgroups[i].job, rel))
			return cfg->jobs[cfg->cgroups[i].job].name;
	return NULL;
}

/* The server preset: batch units first, then the services, the
 * web front last, the databases never (protected by their cgroup), and
 * what keeps the machine reachable in no job. */
static void test_server_preset(void **state)
{
	(void)state;
	char chain[128];
	struct config cfg;

	parse_example("server.conf", &cfg);
	config_format_chain(&cfg.chain, chain, sizeof(chain));
	assert_string_equal(chain, "report, kill-lowest, kernel");
	const struct config_job *batch = config_find_job(&cfg, "batch"),
				*svc = config_find_job(&cfg, "services"), *web = config_find_job(&cfg, "web"),
				*db = config_find_job(&cfg, "databases");
	assert_true(batch && svc && web && db);
	assert_true(batch->priority < svc->priority && svc->priority < web->priority &&
		    web->priority < db->priority);
	static const char *const takes[][2] = {
	    {"batch.slice/nightly-export.service", "batch"},
	    {"batch.slice/run-r0b1c2.scope", "batch"},
	    {"system.slice/cron.service", "services"},
	    {"system.slice/nginx.service", "web"},
	    {"system.slice/php8.2-fpm.service", "web"},
	    {"system.slice/system-postgresql.slice", "databases"},
	    {"system.slice/system-postgresql.slice/postgresql@15-main.service", "databases"},
	    {"system.slice/postgresql.service", "databases"},
	    {"system.slice/mariadb.service", "databases"},
	    {"system.slice/redis-server.service", "databases"},
	    {"system.slice/oomkitd.service", NULL},
	    {"system.slice/systemd-journald.service", NULL},
	    {"system.slice/ssh.service", NULL},
	    {"system.slice/dbus.service", NULL},
	};
	for (size_t i = 0; i < sizeof(takes) / sizeof(takes[0]); i++) {
		const char *job = job_taking(&cfg, takes[i][0]);
		if (!takes[i][1] ? job != NULL : !job || strcmp(job, takes[i][1]) != 0)
			fail_msg("%s: taken by %s, expected %s", takes[i][0], job ? job : "no job",
				 takes[i][1] ? takes[i][1] : "no job");
	}
	/* Every database process is protected, by its cgroup only. */
	assert_true(db->n_rules == 1 && db->rules[0].list == RULE_PROTECT &&
		    db->rules[0].expr.kind == MATCH_CGROUP &&
		    strcmp(db->rules[0].expr.text, "system.slice") == 0);
	assert_int_equal(batch->n_rules + svc->n_rules + web->n_rules + cfg.n_machine_rules, 0);
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_builtin),
	    cmocka_unit_test(test_issue_example),
	    cmocka_unit_test(test_good_jobs),
	    cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_all_errors),
	    cmocka_unit_test(test_load_file),
	    cmocka_unit_test(test_read_refused),
	    cmocka_unit_test(test_machine_paths),
	    cmocka_unit_test(test_machine_default),
	    cmocka_unit_test(test_no_cascade),
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_durations),
	    cmocka_unit_test(test_metrics_interval),
	    cmocka_unit_test(test_many_jobs),
	    cmocka_unit_test(test_too_many_jobs),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_sample_file),
	    cmocka_unit_test(test_defaults_spelled_out),
	    cmocka_unit_test(test_cgroups),
	    cmocka_unit_test(test_cgroups_limits),
	    cmocka_unit_test(test_cgroups_read),
	    cmocka_unit_test(test_cgroups_refused),
	    cmocka_unit_test(test_check_self),
	    cmocka_unit_test(test_cgroup_exclude),
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_rules_limits),
	    cmocka_unit_test(test_rules_read),
	    cmocka_unit_test(test_signals),
	    cmocka_unit_test(test_commands),
	    cmocka_unit_test(test_command_words),
	    cmocka_unit_test(test_kill_keys),
	    cmocka_unit_test(test_hook_timings),
	    cmocka_unit_test(test_kubernetes_preset),
	    cmocka_unit_test(test_desktop_preset),
	    cmocka_unit_test(test_server_preset),
	    cmocka_unit_test(test_prompt_warnings),
	    cmocka_unit_test(test_percent_sizes),
	    cmocka_unit_test(test_hash_comments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
