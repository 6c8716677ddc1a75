#!/usr/bin/env python3
"""What one idle round trip costs a server (docs/BENCHMARKS.md, "Issue 25"): 20,000 pings, each sent after the
answer to the one before (line protocol PING, or MQTT 3.1.1 PINGREQ after a CONNECT), and the server's CPU time
(from /proc/PID/stat) per round trip.

    scripts/round-trip-cost.py PID PORT line|mqtt
"""
import socket, sys, time, os
def cpu(pid):
    f=open(f"/proc/{pid}/stat").read().split(")")[1].split()
    return (int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK')
pid=int(sys.argv[1]); port=int(sys.argv[2]); kind=sys.argv[3]; n=20000
s=socket.create_connection(("127.0.0.1",port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1)
if kind=="mqtt":
    s.sendall(bytes([0x10,12,0,4])+b"MQTT"+bytes([4,2,0,60,0,0])); s.recv(4)
    req=bytes([0xC0,0]); want=2
else:
    req=b"PING\n"; s.sendall(req); r=s.recv(100); want=len(r)
c0=cpu(pid); t0=time.time()
for i in range(n):
    s.sendall(req); got=0
    while got<want: got+=len(s.recv(100))
t=time.time()-t0; c=cpu(pid)-c0
print(f"{kind}: {n/t:.0f} round trips/s, server CPU {c/n*1e6:.1f} us per round trip")
