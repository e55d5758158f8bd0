/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * qexit: ends the qemu guest with a status through the isa-debug-exit device.
 *
 *   qexit CODE        (CODE 0..255)
 *
 * qemu is started with "-device isa-debug-exit,iobase=0xf4,iosize=0x04"; a byte
 * written to port 0xf4 makes qemu exit at once with status (CODE << 1) | 1.
 * qemu's status is otherwise meaningless (a powered-off and a panicked guest
 * both give 0), so this is how the guest init hands the test result to vm.sh.
 * Runs as PID 1's child in the guest, which has the I/O port privilege.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>

#define QEXIT_PORT 0xf4

int main(int argc, char **argv)
{
	char *end;
	unsigned long code;

	if (argc != 2) {
		fprintf(stderr, "usage: qexit CODE\n");
		return 2;
	}
	errno = 0;
	code = strtoul(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || code > 255) {
		fprintf(stderr, "qexit: bad code '%s'\n", argv[1]);
		return 2;
	}
	if (ioperm(QEXIT_PORT, 1, 1) != 0) {
		fprintf(stderr, "qexit: ioperm: %s\n", strerror(errno));
		return 1;
	}
	outb((unsigned char)code, QEXIT_PORT);
	/* Still running: this machine has no isa-debug-exit device at that port. */
	fprintf(stderr, "qexit: no isa-debug-exit device at port 0x%x\n", QEXIT_PORT);
	return 1;
}
