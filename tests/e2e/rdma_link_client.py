# `rdma link add`, `rdma link delete` and `rdma dev set NAME name` as a
# program could send them byte by byte (tests/e2e/rdma-link.sh), and the
# emulator's FAST_RDMA_LINK as a hostile client of its fast socket would:
# the kernel's errnos for what iproute2 never sends. Run inside
# `ibemu run --roce -a host1 -a host3` (ibemu0 on eth0/eth1, ibemu1 on
# eth2/eth3). One line per check, "name: what came".
import struct, sys

from netlink_proto import *
import fast_proto

s = sock()


def newlink(dev=None, typ=None, ndev=None, raw=None):
    body = b""
    for t, v in ((DEV_NAME, dev), (LINK_TYPE, typ), (NDEV_NAME, ndev)):
        if v is not None:
            body += attr(t, v.encode() + b"\0")
    return name(error_of(answer(s, msg(NLDEV << 10 | NEWLINK, NLM_F_REQUEST | NLM_F_ACK,
                                       raw if raw is not None else body))))


def index_attr(i):
    return attr(DEV_INDEX, struct.pack("=I", i))


def set_name(i, new):
    return name(error_of(answer(s, msg(NLDEV << 10 | SET, NLM_F_REQUEST | NLM_F_ACK,
                                       index_attr(i) + attr(DEV_NAME, new + b"\0")))))


def dellink(i):
    return name(error_of(answer(s, msg(NLDEV << 10 | DELLINK, NLM_F_REQUEST | NLM_F_ACK,
                                       index_attr(i)))))


def names():
    got = answer(s, msg(NLDEV << 10 | GET, NLM_F_REQUEST | NLM_F_DUMP))
    return " ".join(attrs(m[2])[DEV_NAME].rstrip(b"\0").decode() for m in got
                    if m[0] == NLDEV << 10 | GET)


print("no netdev attribute: " + newlink("rxe0", "rxe"))
print("an empty name: " + newlink("", "rxe", "eth0"))
print("a 65-byte name: " + newlink("r" * 65, "rxe", "eth0"))
print("a 64-byte name: %s, named %d bytes" % (newlink("r" * 64, "rxe", "eth0"),
                                              len(names().split()[0])))
print("its delete: %s, %s" % (dellink(0), names()))
print("a device never linked: " + dellink(1))
print("no such device index: " + dellink(7))
print("a set with no name: " + name(error_of(answer(s, msg(
    NLDEV << 10 | SET, NLM_F_REQUEST | NLM_F_ACK, index_attr(0))))))
print("renamed to an empty name: " + set_name(0, b""))
print("renamed with a slash: " + set_name(0, b"a/b"))
print("renamed to the other's name: " + set_name(0, b"ibemu1"))
print("renamed to its own name: " + set_name(0, b"ibemu0"))
# Renames back and forth, each answered before the next: the daemon's
# notices to the kernel keep up, and the names end as they began.
ok = sum(set_name(0, b"x%d" % k) == "0" for k in range(500))
print("500 renames: %d, back: %s, %s" % (ok, set_name(0, b"ibemu0"), names()))

# The fast socket's own op, as a client that is not the library sends it.
c = fast_proto.chan()
for label, arg, payload in (("no strings", fast_proto.LINK_ADD, b""),
                            ("two strings for three", fast_proto.LINK_ADD, b"a\0rxe\0"),
                            ("a string without its NUL", fast_proto.LINK_DEL, b"ibemu0"),
                            ("a string too many", fast_proto.LINK_DEL, b"ibemu0\0x\0"),
                            ("an op there is not", 99, b"ibemu0\0"),
                            ("a rename of no device", fast_proto.LINK_RENAME, b"nosuch\0y\0")):
    ret, _ = fast_proto.ask(c, fast_proto.RDMA_LINK, arg, payload)
    print("fast %s: %s" % (label, name(-ret)))
print("still: " + names())
