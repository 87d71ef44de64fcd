#!/usr/bin/env python3
# A program in another language that drives /dev/infiniband/umad0 itself,
# with plain open/ioctl/write/read and no libibumad: the ib_umad ABI of
# <rdma/ib_user_mad.h>. Works on real hardware and inside `ibemu run`
# (which an LD_PRELOAD shim such as ibsim's cannot reach).
#
#   ibemu run -- python3 examples/umad_nodeinfo.py 0,1,7,1
import fcntl
import os
import select
import struct
import sys

ENABLE_PKEY = 0x00001B03
REGISTER_AGENT = 0xC01C1B01      # _IOWR(0x1b, 1, struct ib_user_mad_reg_req)
HDR = struct.Struct("=IIIII I I H BBBBBB 16s I H 6x")   # 64 bytes


def main():
    path = [int(p) for p in (sys.argv[1] if len(sys.argv) > 1 else "0").split(",")][1:]
    fd = os.open("/dev/infiniband/umad0", os.O_RDWR)
    fcntl.ioctl(fd, ENABLE_PKEY)
    # id, method_mask[16], qpn, class, class version, oui[3], rmpp version
    req = bytearray(struct.pack("=I16sBBB3sB", 0, bytes(16), 0, 0x81, 1, b"\0\x14\x05", 0))
    req += bytes(28 - len(req))
    fcntl.ioctl(fd, REGISTER_AGENT, req)
    agent = struct.unpack_from("=I", req)[0]

    mad = bytearray(256)
    mad[0:4] = bytes([1, 0x81, 1, 0x01])       # base version, DR SMP, v1, Get
    mad[7] = len(path)                        # hop count
    mad[15] = 9                               # TID
    mad[17] = 0x11                            # NodeInfo
    mad[32:36] = b"\xff\xff\xff\xff"          # DrSLID, DrDLID permissive
    for i, port in enumerate(path):
        mad[129 + i] = port                   # initial path
    hdr = HDR.pack(agent, 0, 1000, 2, 0, 0, 0, 0xFFFF, 0, 0, 0, 0, 0, 0,
                   bytes(16), 0, 0)
    os.write(fd, hdr + bytes(mad))

    select.select([fd], [], [], 5)
    buf = os.read(fd, 64 + 256)
    status = struct.unpack_from("=I", buf, 4)[0]
    if status:
        print("no answer: status %d" % status)
        return 1
    data = buf[64 + 64:]
    kind = {1: "CA", 2: "Switch", 3: "Router"}.get(data[2], "?")
    guid = struct.unpack_from(">Q", data, 12)[0]
    print("%s node GUID 0x%016x, %d ports (from Python, no libibumad)" % (kind, guid, data[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
