#!/usr/bin/env python3
"""verbs_cmp.py DEV PORT...: ibv_devinfo -v against ibstat and smpquery.

Prints one line per field of each port: "port P FIELD same VALUE" or
"port P FIELD DIFF verbs=X other=Y". Run inside `ibemu run` by verbs.sh.
"""
import re
import subprocess
import sys


# smpquery's LinkSpeedExtActive (lane signalling rate) as verbs names it.
EXT_SPEEDS = {"14.0625 Gbps": "14.0 Gbps", "25.78125 Gbps": "25.0 Gbps",
              "53.125 Gbps": "50.0 Gbps", "106.25 Gbps": "100.0 Gbps"}


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def main():
    dev, ports = sys.argv[1], sys.argv[2:]
    parts = re.split(r"^\t\tport:\t(\d+)\n", run("ibv_devinfo", "-v", "-d", dev), flags=re.M)
    verbs = {parts[i]: dict(re.findall(r"^\t\t\t(\w+):\s+(.*)$", parts[i + 1], re.M))
             for i in range(1, len(parts), 2)}
    for p in ports:
        v = verbs[p]
        st = dict(re.findall(r"^\s*([A-Za-z ]+): (.*)$", run("ibstat", dev, p), re.M))
        sq = dict(re.findall(r"^(\w+):\.+(.*)$",
                             run("smpquery", "-C", dev, "-D", "portinfo", "0", p), re.M))
        states = {"Down": "PORT_DOWN", "Initializing": "PORT_INIT", "Armed": "PORT_ARMED",
                  "Active": "PORT_ACTIVE"}
        phys = {"LinkUp": "LINK_UP", "Polling": "POLLING", "Disabled": "DISABLED"}
        checks = [
            ("state", v["state"].split()[0], states.get(st["State"], st["State"])),
            ("port_lid", v["port_lid"], st["Base lid"]),
            ("sm_lid", v["sm_lid"], st["SM lid"]),
            ("port_lmc", int(v["port_lmc"], 16), int(st["LMC"])),
            ("port_cap_flags", int(v["port_cap_flags"], 16), int(st["Capability mask"], 16)),
            ("phys_state", v["phys_state"].split()[0],
             phys.get(st["Physical state"], st["Physical state"])),
            ("link_layer", v["link_layer"], st["Link layer"]),
            ("subnet_timeout", v["subnet_timeout"], sq["SubnetTimeout"]),
            ("sm_sl", v["sm_sl"], sq["SMSL"]),
            ("active_width", v["active_width"].split()[0], sq["LinkWidthActive"]),
            ("active_speed", v["active_speed"].split(" (")[0],
             EXT_SPEEDS.get(sq.get("LinkSpeedExtActive"), sq["LinkSpeedActive"])),
            ("max_mtu", v["max_mtu"].split()[0], sq["MtuCap"]),
            ("active_mtu", v["active_mtu"].split()[0], sq["NeighborMTU"]),
            ("max_vl_num", int(v["max_vl_num"].split()[0]),
             int(sq["VLCap"].split("-")[1]) + 1),
            ("gid_tbl_len", v["gid_tbl_len"], sq["GuidCap"]),
        ]
        for name, mine, other in checks:
            if str(mine) == str(other):
                print(f"port {p} {name} same {mine}")
            else:
                print(f"port {p} {name} DIFF verbs={mine} other={other}")
        print(f"port {p} IsSM {'yes' if int(v['port_cap_flags'], 16) & 2 else 'no'}")


if __name__ == "__main__":
    main()
