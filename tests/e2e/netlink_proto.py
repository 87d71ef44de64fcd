# The RDMA netlink family byte by byte, for the tests that speak it
# (netlink_client.py, rdma_link_client.py): they run with this folder on
# sys.path (their own folder).
import errno, os, socket, struct

NETLINK_RDMA = 20
NLDEV = 5                       # RDMA_NL_NLDEV
GET, SET, NEWLINK, DELLINK, PORT_GET, RES_GET, GET_CHARDEV = 1, 2, 3, 4, 5, 9, 15  # RDMA_NLDEV_CMD_*
DEV_INDEX, DEV_NAME, PORT_INDEX = 1, 2, 3       # RDMA_NLDEV_ATTR_*
CHARDEV_TYPE, CHARDEV_NAME, CHARDEV_ABI, CHARDEV = 69, 70, 71, 72
NDEV_NAME, LINK_TYPE = 51, 65                   # RDMA_NLDEV_ATTR_*
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_DUMP = 1, 2, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
seq = 100


def attr(t, data):
    return struct.pack("=HH", 4 + len(data), t) + data + b"\0" * (-len(data) % 4)


def msg(typ, flags, body=b"", length=None):
    global seq
    seq += 1
    return struct.pack("=IHHII", length or 16 + len(body), typ, flags, seq, 0) + body


def sock():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    s.bind((0, 0))
    return s


def messages(data):
    out = []
    while len(data) >= 16:
        ln, typ, flags, sq, pid = struct.unpack_from("=IHHII", data)
        out.append((typ, flags, data[16:ln]))
        data = data[(ln + 3) & ~3:]
    return out


def attrs(body):
    out = {}
    while len(body) >= 4:
        ln, t = struct.unpack_from("=HH", body)
        out[t & 0x3fff] = body[4:ln]
        body = body[(ln + 3) & ~3:]
    return out


def answer(s, req):
    """Send @req; the messages until an error/ack or DONE."""
    s.send(req)
    got = []
    while True:
        for m in messages(s.recv(65536)):
            got.append(m)
            if m[0] in (NLMSG_ERROR, NLMSG_DONE):
                return got


def error_of(got):
    m = got[-1]
    return -struct.unpack_from("=i", m[2])[0] if m[0] == NLMSG_ERROR else None


def name(e):
    return errno.errorcode.get(e, str(e)) if e else "0"
