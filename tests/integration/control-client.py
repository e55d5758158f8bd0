#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# control-client.py - hostile and plain clients of oomkitd's control socket for
# the tests (run as any uid; it needs only the socket):
#
#   flood SOCK           sends junk requests without ever reading until the daemon
#                        stops taking them; prints "accepted BYTES", then waits (still
#                        not reading) for the daemon to drop it: "dropped after S s"
#   hold SOCK N          opens N connections that send nothing ("connected N"), waits
#                        for each to be refused or dropped: "held K refused R MESSAGE",
#                        "dropped first at TIME" (time.time() of the first drop)
#   hold-seq SOCK UID:GID:N:FILE...  root, for each in turn: a child as UID
#                        holds N connections ("hold"; N "drip": "drip"), its
#                        output in FILE; the next starts once it connected
#   drip SOCK            sends a request a byte at a time, never its newline
#   listen SOCK N STOP   N listeners, as desktop agents are ("prompt", then reading
#                        what comes): "listening K refused R MESSAGE"; then reads
#                        until the file STOP exists, printing "asked ID" for each
#                        question and "dropped" for each connection the daemon
#                        closes; "stopped" at the end
#   ask SOCK LINE...     sends each LINE, prints each reply frame's lines
#   frame SOCK LINE      prints the raw bytes of the reply to LINE (repr per line)
#   fd-run SOCK JOB PIDFILE  the pid-reuse exploit: connects, forks a child that keeps
#                        the connection, exits; the child waits for PIDFILE (the test
#                        puts another process at the first pid meanwhile), then sends
#                        "run JOB" and prints the reply's first line
#   reuse-sender SOCK JOB DIR  the same, for the request's sender: junk stalls the
#                        connection, a child queues "run JOB" behind it and exits
#                        (DIR/gone: its pid), the test puts another process there
#                        (DIR/go), then the replies are read: the run's first line
#   split-run SOCK JOB   "run JOB" sent in two pieces by two processes
#   forge-creds SOCK PID sendmsg with SCM_CREDENTIALS naming PID: prints the errno name
import errno
import os
import select
import socket
import struct
import sys
import time

WAIT = 60  # bounded: a daemon that never drops us fails the test, not hangs it


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def hung_up(s, timeout):
    """Waits, without reading, for the daemon to close its end."""
    p = select.poll()
    p.register(s, select.POLLHUP | select.POLLERR)
    return bool(p.poll(timeout * 1000))


LEFT = {}  # what a socket received past the frame returned last


def read_frame(s, timeout=30):
    buf = LEFT.pop(s.fileno(), b"")
    deadline = time.monotonic() + timeout
    while True:
        at = 0
        while True:
            nl = buf.find(b"\n", at)
            if nl < 0:
                break
            if buf[at:nl] == b".":
                LEFT[s.fileno()] = buf[nl + 1:]
                return buf[:at].split(b"\n")[:-1]
            at = nl + 1
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            return None
        if not chunk:
            return None
        buf += chunk


def flood(path):
    s = connect(path)
    s.setblocking(False)
    junk = b"junk request that is not a command\n" * 4096
    sent, stalled_since = 0, None
    limit = 64 << 20
    while sent < limit:
        try:
            sent += s.send(junk)
            stalled_since = None
        except BlockingIOError:
            stalled_since = stalled_since or time.monotonic()
            if time.monotonic() - stalled_since > 2:
                break
            select.select([], [s], [], 0.2)
        except (BrokenPipeError, ConnectionResetError):
            break
    print("accepted %d" % sent, flush=True)
    start = time.monotonic()
    if hung_up(s, WAIT):
        print("dropped after %.1f s" % (time.monotonic() - start), flush=True)
    else:
        print("not dropped", flush=True)


def hold(path, n, ready=None):
    conns = [connect(path) for _ in range(n)]
    print("connected %d" % n, flush=True)
    if ready:
        ready.write("x")
        ready.close()
    held, refused, msg, drops = 0, 0, "", []
    for s in conns:
        # A refused connection gets its error, then the end; a held one
        # nothing, until the daemon drops it.
        p = select.poll()
        p.register(s, select.POLLIN | select.POLLHUP)
        if not p.poll(WAIT * 1000):
            print("not dropped", flush=True)
            return
        data = s.recv(4096)
        if data.startswith(b"error"):
            refused += 1
            msg = data.decode(errors="replace").split("\n")[0]
        else:
            held += 1
            drops.append(time.time())
    print("held %d refused %d %s" % (held, refused, msg), flush=True)
    if drops:
        print("dropped first at %.3f" % min(drops), flush=True)


def listen(path, n, stop):
    conns, refused, msg = [], 0, ""
    for _ in range(n):
        s = connect(path)
        try:
            s.sendall(b"prompt\n")
        except OSError:
            pass  # refused and closed already: its reason is there to read
        got = read_frame(s)
        if got and got[0] == b"ok":
            conns.append(s)
        else:
            refused += 1
            msg = (got[0] if got else b"(no reply)").decode(errors="replace")
    print("listening %d refused %d %s" % (len(conns), refused, msg), flush=True)
    p = select.poll()
    for s in conns:
        p.register(s, select.POLLIN | select.POLLHUP)
    by_fd = {s.fileno(): s for s in conns}
    deadline = time.monotonic() + 3 * WAIT
    while not os.path.exists(stop) and time.monotonic() < deadline:
        for fd, _ in p.poll(100):
            data = by_fd[fd].recv(65536)
            if not data:
                p.unregister(fd)
                print("dropped", flush=True)
                continue
            for line in data.split(b"\n"):
                if line.startswith(b"oom\t"):
                    print("asked %s" % line.split(b"\t")[1].decode(), flush=True)
    print("stopped", flush=True)


def drip(path, ready=None):
    s = connect(path)
    print("connected", flush=True)
    if ready:
        ready.write("x")
        ready.close()
    start = time.monotonic()
    for b in b"status" * 1000:
        try:
            s.send(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            break
        if hung_up(s, 0.3):
            break
        if time.monotonic() - start > WAIT:
            print("not dropped", flush=True)
            return
    print("dropped after %.1f s" % (time.monotonic() - start), flush=True)


def hold_seq(path, specs):
    """Root starts every holder from one interpreter: for each UID:GID:N:FILE
    (N connections held, or "drip") it forks a child that becomes UID and
    connects, and waits for it before the next.  The connections are made
    in their order within a fork each, not an interpreter's start each: a
    loaded machine took longer than the daemon's idle limit to start eight
    interpreters, and the first holders were dropped before the last came."""
    children = []
    for spec in specs:
        uid, gid, n, out = spec.split(":", 3)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.setgroups([])
            os.setresgid(int(gid), int(gid), int(gid))
            os.setresuid(int(uid), int(uid), int(uid))
            sys.stdout = os.fdopen(1, "w")
            ready = os.fdopen(w, "w")
            try:
                if n == "drip":
                    drip(path, ready)
                else:
                    hold(path, int(n), ready)
            finally:
                sys.stdout.flush()
                os._exit(0)
        os.close(w)
        os.read(r, 1)  # the child's connections are made (or it failed)
        os.close(r)
        children.append(pid)
    print("all connected", flush=True)
    for pid in children:
        os.waitpid(pid, 0)


def ask(path, lines):
    s = connect(path)
    for line in lines:
        s.sendall(line.encode() + b"\n")
        frame = read_frame(s)
        if frame is None:
            print("(no reply)")
            return
        for f in frame:
            print(f.decode(errors="backslashreplace"))
    sys.stdout.flush()


def frame(path, line):
    s = connect(path)
    s.sendall(line.encode() + b"\n")
    got = read_frame(s)
    for f in got or []:
        print(repr(f))


def fd_run(path, job, pidfile):
    s = connect(path)
    child = os.fork()
    if child:
        print(os.getpid(), flush=True)  # the pid the daemon recorded at connect
        os._exit(0)
    sys.stdout.close()
    deadline = time.monotonic() + WAIT
    while not os.path.exists(pidfile) and time.monotonic() < deadline:
        time.sleep(0.02)
    s.sendall(("run %s\n" % job).encode())
    got = read_frame(s)
    with open(pidfile + ".reply", "w") as f:
        f.write((got[0].decode(errors="replace") if got else "(no reply)") + "\n")
    os._exit(0)


def reuse_sender(path, job, d):
    s = connect(path)
    # Junk first, and no reading: the daemon's replies fill this socket and
    # it stops reading, with junk still queued ahead of the request below.
    s.sendall(b"junk\n" * ((100 << 10) // 5))
    child = os.fork()
    if child == 0:
        s.sendall(("run %s\n" % job).encode())
        os._exit(0)
    os.waitpid(child, 0)  # gone, and its pid free for another process
    with open(d + "/gone", "w") as f:
        f.write("%d\n" % child)
    deadline = time.monotonic() + WAIT
    while not os.path.exists(d + "/go") and time.monotonic() < deadline:
        time.sleep(0.02)
    while True:
        got = read_frame(s)
        if got is None:
            print("(no reply)")
            return
        if not got[0].startswith(b"error unknown command"):
            print(got[0].decode(errors="replace"))
            return


def split_run(path, job):
    s = connect(path)
    line = ("run %s\n" % job).encode()
    child = os.fork()
    if child == 0:
        s.sendall(line[:3])
        os._exit(0)
    os.waitpid(child, 0)
    s.sendall(line[3:])
    got = read_frame(s)
    print(got[0].decode(errors="replace") if got else "(no reply)")


def forge_creds(path, pid):
    s = connect(path)
    creds = struct.pack("iII", pid, os.getuid(), os.getgid())
    try:
        s.sendmsg([b"status\n"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
        print("sent")
    except OSError as e:
        print(errno.errorcode[e.errno])


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "flood":
        flood(path)
    elif cmd == "hold":
        hold(path, int(sys.argv[3]))
    elif cmd == "drip":
        drip(path)
    elif cmd == "hold-seq":
        hold_seq(path, sys.argv[3:])
    elif cmd == "listen":
        listen(path, int(sys.argv[3]), sys.argv[4])
    elif cmd == "ask":
        ask(path, sys.argv[3:])
    elif cmd == "frame":
        frame(path, sys.argv[3])
    elif cmd == "fd-run":
        fd_run(path, sys.argv[3], sys.argv[4])
    elif cmd == "reuse-sender":
        reuse_sender(path, sys.argv[3], sys.argv[4])
    elif cmd == "split-run":
        split_run(path, sys.argv[3])
    elif cmd == "forge-creds":
        forge_creds(path, int(sys.argv[3]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
