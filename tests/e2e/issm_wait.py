# issm as an SM sees it (docs/umad.md §7), for the tests of an attached
# host's issm files (many-hosts.sh, many-hosts-ssh.sh): held, IsSM is set
# in the port's cap_mask; a second non-blocking open is EAGAIN; a blocking
# one waits until the holder closes; a signal ends that wait (and the
# wait is gone: the port is free for the next open); the last close
# clears IsSM. Prints one line per fact.
import errno, os, signal, sys, time

ISSM = "/dev/infiniband/issm0"
CAP = "/sys/class/infiniband/ibemu0/ports/1/cap_mask"


def is_sm():
    return int(open(CAP).read(), 16) >> 1 & 1


def until(cond, deadline=5):
    """Poll @cond until true, at most @deadline s (a FUSE file's release
    comes after close(2) returns: docs/fuse-cuse.md, point 8)."""
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)
    return True


def take():
    """A non-blocking open, tried until the last holder's release has
    come (5 s at most): the fd, or the errno's name."""
    got = []

    def once():
        try:
            got.append(os.open(ISSM, os.O_RDONLY | os.O_NONBLOCK))
        except OSError as e:
            got.append(errno.errorcode[e.errno])
        return isinstance(got[-1], int)
    until(once)
    return got[-1]


def in_open(pid, deadline=10):
    """Wait until @pid sits in openat (257), at most @deadline s."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with open("/proc/%d/syscall" % pid) as f:
            if f.read().split()[0] == "257":
                return True
        time.sleep(0.02)
    return False


class Interrupted(Exception):
    pass


def child(how, held):
    os.close(held)      # the parent's: a forked copy would hold it too
    if how == "signal":
        def on_usr1(sig, frame):
            raise Interrupted()
        signal.signal(signal.SIGUSR1, on_usr1)
    try:
        fd = os.open(ISSM, os.O_RDONLY)
        print("issm blocking open: got it, IsSM", is_sm(), flush=True)
        os.close(fd)
    except Interrupted:
        print("issm blocking open: interrupted by a signal", flush=True)
    os._exit(0)


print("issm before: IsSM", is_sm(), flush=True)
fd = os.open(ISSM, os.O_RDONLY | os.O_NONBLOCK)
print("issm held: IsSM", is_sm(), flush=True)
try:
    os.open(ISSM, os.O_RDONLY | os.O_NONBLOCK)
    print("issm second: opened", flush=True)
except OSError as e:
    print("issm second:", errno.errorcode[e.errno], flush=True)

pid = os.fork()
if pid == 0:
    child("wait", fd)
print("issm waiter blocked:", in_open(pid), flush=True)
os.close(fd)
os.waitpid(pid, 0)

fd = take()             # the waiter that got it has closed it again
pid = os.fork()
if pid == 0:
    child("signal", fd)
print("issm second waiter blocked:", in_open(pid), flush=True)
os.kill(pid, signal.SIGUSR1)
os.waitpid(pid, 0)
os.close(fd)
fd = take()
print("issm after the interrupted wait:", "free" if isinstance(fd, int) else fd, flush=True)
if isinstance(fd, int):
    os.close(fd)
until(lambda: is_sm() == 0)
print("issm closed: IsSM", is_sm(), flush=True)
