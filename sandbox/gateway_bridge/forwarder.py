"""TCP -> Unix socket forwarder run inside a sandbox (Python stdlib only).

Usage: python3 forwarder.py PORT SOCKET_PATH

Listens on 127.0.0.1:PORT, then detaches: the parent exits 0 only once the port accepts
connections, so `python3 forwarder.py 8787 /run/rollgate/gw.sock && agent ...` never races.
Each TCP connection is piped both ways to a fresh connection on SOCKET_PATH (the rollout's
gateway socket); bytes are relayed as they arrive, so SSE streams stay live.
"""

import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def handle(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(128)
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:
        client, _ = server.accept()
        threading.Thread(target=handle, args=(client, path), daemon=True).start()


if __name__ == "__main__":
    main()
