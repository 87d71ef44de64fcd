# A client of the RDMA netlink family (tests/e2e/rdma-netlink.sh) that
# speaks it byte by byte, as a program could: the answers iproute2 and
# libibverbs do not ask for, and requests they never send. One line per
# check, "name: what came". Run inside `ibemu run` (the preloaded library
# answers NETLINK_RDMA there: docs/netlink.md).
import errno, os, socket, struct

from netlink_proto import *

try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_STREAM, NETLINK_RDMA)
    print("a stream socket: made")
except OSError as e:
    print("a stream socket: " + errno.errorcode[e.errno])
s = sock()
pid, groups = s.getsockname()
print("getsockname: pid %s groups %d" % ("ours" if pid == os.getpid() else pid, groups))

got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_DUMP))
devs = [attrs(m[2]) for m in got if m[0] == NLDEV << 10 | GET]
print("dump: %d devices, ends with %s, multi %d" %
      (len(devs), "DONE" if got[-1][0] == NLMSG_DONE else got[-1][0],
       all(m[1] & NLM_F_MULTI for m in got)))
print("dump names: " + " ".join(d[DEV_NAME].rstrip(b"\0").decode() for d in devs))

got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK,
                    attr(DEV_INDEX, struct.pack("=I", 0))))
print("doit: %s, then %s" % (attrs(got[0][2])[DEV_NAME].rstrip(b"\0").decode(),
                             "ack" if error_of(got) == 0 else error_of(got)))
got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK,
                    attr(DEV_INDEX, struct.pack("=I", 99))))
print("no such device: " + name(error_of(got)))
got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK))
print("doit without an index: " + name(error_of(got)))
got = answer(s, msg(NLDEV << 10 | RES_GET, NLM_F_REQUEST | NLM_F_ACK))
print("an op with no handler (RES_GET): " + name(error_of(got)))
got = answer(s, msg(7 << 10 | 1, NLM_F_REQUEST | NLM_F_ACK))
print("an unknown client: " + name(error_of(got)))
got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK,
                    struct.pack("=HH", 200, DEV_INDEX) + b"\0" * 4))
print("an attribute longer than its message: " + name(error_of(got)))
got = answer(s, msg(NLDEV << 10 | GET_CHARDEV, NLM_F_REQUEST | NLM_F_DUMP,
                    attr(CHARDEV_TYPE, b"rdma_cm\0")))
print("a dump of a command that has none: " + name(error_of(got)))

for typ, extra in (("uverbs", attr(DEV_INDEX, struct.pack("=I", 0))), ("rdma_cm", b""),
                   ("umad", attr(DEV_INDEX, struct.pack("=I", 0)) +
                    attr(PORT_INDEX, struct.pack("=I", 1))),
                   ("nosuch", b"")):
    got = answer(s, msg(NLDEV << 10 | GET_CHARDEV, NLM_F_REQUEST | NLM_F_ACK,
                        attr(CHARDEV_TYPE, typ.encode() + b"\0") + extra))
    if error_of(got):
        print("chardev %s: %s" % (typ, name(error_of(got))))
        continue
    a = attrs(got[0][2])
    cdev = struct.unpack("=Q", a[CHARDEV])[0]
    dev = a[CHARDEV_NAME].rstrip(b"\0").decode()
    # What the program opens by: the class's dev file, or (rdma_cm, a
    # misc device) the file itself.
    sysfs = {"uverbs": "infiniband_verbs", "umad": "infiniband_mad"}.get(typ)
    if sysfs:
        major, minor = map(int, open("/sys/class/%s/%s/dev" % (sysfs, dev)).read().split(":"))
    else:
        st = os.stat("/dev/infiniband/" + dev)
        major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    print("chardev %s: %s abi %d, dev_t as %s says: %s" %
          (typ, dev, struct.unpack("=Q", a[CHARDEV_ABI])[0], "sysfs" if sysfs else "stat",
           cdev == ((minor & 0xff) | major << 8 | (minor & ~0xff) << 12)))

# 200 dumps in one send: more datagrams than a socket's queue holds at
# once (10); the rest follows as the client reads.
s.send(b"".join(msg(NLDEV << 10 | PORT_GET, NLM_F_REQUEST | NLM_F_DUMP) for _ in range(200)))
done = ports = 0
while done < 200:
    for m in messages(s.recv(65536)):
        done += m[0] == NLMSG_DONE
        ports += m[0] == NLDEV << 10 | PORT_GET
print("200 dumps in one send: %d DONE, %d port messages" % (done, ports))

for what, call in (("a 70000-byte request", lambda: s.send(b"\0" * 70000)),
                   ("to another portid", lambda: s.sendto(msg(NLDEV << 10 | GET, NLM_F_REQUEST),
                                                          (1234, 0)))):
    try:
        call()
        print(what + ": sent")
    except OSError as e:
        print(what + ": " + name(e.errno))
# Garbage, then a request: the garbage is not a message; the request
# is answered.
s.send(b"\xff" * 7)
print("garbage then a request: " + ("ack" if error_of(answer(
    s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK,
           attr(DEV_INDEX, struct.pack("=I", 0))))) == 0 else "no answer"))
s.close()

# 16 sockets at once; the 17th is refused; one closed makes room.
many = [sock() for _ in range(16)]
try:
    sock()
    print("a 17th socket: made")
except OSError as e:
    print("a 17th socket: " + name(e.errno))
many.pop().close()
extra = sock()
print("after a close: " + ("answers" if error_of(answer(extra, msg(
    NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_ACK, attr(DEV_INDEX, struct.pack("=I", 0))))) == 0
    else "silent"))
# A socket's number reused by another kind of socket is not ours any more.
n = many[0].detach()
os.close(n)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("its number reused by a UDP socket (%s): getsockname %s" %
      ("same" if u.fileno() == n else "other", u.getsockname()[0]))
