/**
 * The egress proxy's program: Python 3 (the offline base image has it, so the
 * proxy needs no image of its own), run as `python3 -c SCRIPT CONFIG_JSON`.
 * It serves HTTP CONNECT and plain HTTP proxying and forwards only to the
 * hosts of its rules — exact host name, case-insensitive, optionally limited
 * to ports; everything else gets 403. Every decision is one JSON line in its
 * log file, which the host reads (docker/egress-proxy.ts). Kept here as a
 * string so the package carries no separate asset; `python3 -c SCRIPT
 * --check` reads request heads and rules as JSON on stdin and prints its
 * decisions, which is how the unit tests drive the same parser and matcher.
 * No backquote or dollar-brace below: this is a String.raw template.
 */
export const EGRESS_PROXY_SCRIPT = String.raw`
import json, os, select, socket, sys, threading, time

MAX_HEAD = 65536
CONNECT_TIMEOUT = 10.0
HOP_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


class Refused(Exception):
    pass


def parse_head(head):
    """Request line and headers of a request head (bytes up to the blank line)."""
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise Refused("malformed request line")
    headers = []
    for line in lines[1:]:
        if line == "":
            continue
        name, sep, value = line.partition(":")
        if sep == "" or name.strip() != name or name == "":
            raise Refused("malformed header")
        headers.append((name, value.strip()))
    return parts[0], parts[1], parts[2], headers


def split_authority(authority, default_port):
    """host and port of host[:port] or [v6][:port]; the host in lower case without a trailing dot."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise Refused("malformed address")
        host, rest = authority[1:end], authority[end + 1:]
        if rest != "" and not rest.startswith(":"):
            raise Refused("malformed address")
        port_text = rest[1:] if rest else ""
    else:
        host, sep, port_text = authority.partition(":")
        if sep == "":
            port_text = ""
        elif port_text == "":
            raise Refused("malformed port")
    if port_text == "":
        port = default_port
    elif port_text.isdigit() and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise Refused("malformed port")
    host = host.lower().rstrip(".")
    if host == "" or any(c in host for c in "/@ \t?#"):
        raise Refused("malformed host")
    return host, port


def target_of(method, target, headers):
    """Where a request goes: (host, port, path to send upstream; None for CONNECT)."""
    if method == "CONNECT":
        if ":" not in target:
            raise Refused("CONNECT needs host:port")
        host, port = split_authority(target, 0)
        return host, port, None
    lower = target.lower()
    if lower.startswith("http://"):
        rest = target[7:]
        cut = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
        authority, path = rest[:cut], rest[cut:]
        if "@" in authority:
            raise Refused("credentials in the URL")
        if not path.startswith("/"):
            path = "/" + path
        host, port = split_authority(authority, 80)
        return host, port, path
    if lower.startswith("https://"):
        raise Refused("https:// needs CONNECT")
    if target.startswith("/"):
        hosts = [v for n, v in headers if n.lower() == "host"]
        if len(hosts) != 1:
            raise Refused("no single Host header")
        host, port = split_authority(hosts[0], 80)
        return host, port, target
    raise Refused("unsupported request target")


def allowed(rules, host, port):
    for rule in rules:
        if rule["host"] == host and (rule.get("ports") is None or port in rule["ports"]):
            return True
    return False


def decide(head, rules):
    try:
        method, target, version, headers = parse_head(head)
        host, port, path = target_of(method, target, headers)
    except Refused as e:
        return {"verdict": "error", "reason": str(e)}
    out = {"method": method, "host": host, "port": port}
    out["verdict"] = "allowed" if allowed(rules, host, port) else "refused"
    return out


def upstream_head(head, path):
    method, target, version, headers = parse_head(head)
    host_header = target[7:].split("/", 1)[0].split("?", 1)[0] if target.lower().startswith("http://") else None
    lines = [method + " " + path + " " + version]
    for name, value in headers:
        if name.lower() in HOP_HEADERS:
            continue
        if host_header is not None and name.lower() == "host":
            continue
        lines.append(name + ": " + value)
    if host_header is not None:
        lines.append("Host: " + host_header)
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


LOG_LOCK = threading.Lock()


def log(config, record):
    record["t"] = round(time.time(), 3)
    with LOG_LOCK:
        with open(config["log"], "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


def reply(conn, status, text):
    body = ("authbench egress proxy: " + text + "\n").encode()
    conn.sendall(("HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " + str(len(body)) + "\r\nConnection: close\r\n\r\n").encode() + body)


def pipe(a, b):
    socks = [a, b]
    while True:
        readable, _, _ = select.select(socks, [], [], 300)
        if not readable:
            return
        for s in readable:
            data = s.recv(65536)
            if not data:
                return
            (b if s is a else a).sendall(data)


def handle(conn, config):
    upstream = None
    try:
        conn.settimeout(30)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(8192)
            if not chunk:
                return
            data += chunk
            if len(data) > MAX_HEAD:
                break
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep == b"":
            log(config, {"verdict": "error", "reason": "request head too large"})
            return reply(conn, "400 Bad Request", "request head too large")
        verdict = decide(head, config["rules"])
        if verdict["verdict"] == "error":
            log(config, verdict)
            return reply(conn, "400 Bad Request", verdict["reason"])
        if verdict["verdict"] == "refused":
            log(config, verdict)
            return reply(conn, "403 Forbidden", "host not allowed: " + verdict["host"] + ":" + str(verdict["port"]))
        method, target, version, headers = parse_head(head)
        host, port, path = target_of(method, target, headers)
        try:
            upstream = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        except OSError as e:
            verdict["verdict"] = "failed"
            verdict["reason"] = str(e)
            log(config, verdict)
            return reply(conn, "502 Bad Gateway", "cannot reach " + host + ":" + str(port))
        log(config, verdict)
        conn.settimeout(None)
        upstream.settimeout(None)
        if path is None:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
        else:
            upstream.sendall(upstream_head(head, path) + rest)
        pipe(conn, upstream)
    except OSError:
        pass
    finally:
        for s in (upstream, conn):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def bind_address(config):
    """Its own address on the task's network (its alias resolves there only): nothing upstream reaches it."""
    for _ in range(100):
        try:
            return socket.gethostbyname(config["bind"])
        except OSError:
            time.sleep(0.1)
    raise SystemExit("cannot resolve " + config["bind"])


def serve(config):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((bind_address(config), config["port"]))
    listener.listen(128)
    open(config["log"], "a").close()
    with open(config["ready"], "w") as f:
        f.write("ready\n")
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn, config), daemon=True).start()


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        out = []
        for case in json.load(sys.stdin):
            head = case["head"].encode("latin-1")
            verdict = decide(head, case["rules"])
            if verdict["verdict"] == "allowed" and verdict["method"] != "CONNECT":
                method, target, version, headers = parse_head(head)
                verdict["upstream"] = upstream_head(head, target_of(method, target, headers)[2]).decode("latin-1")
            out.append(verdict)
        json.dump(out, sys.stdout)
    else:
        serve(json.loads(sys.argv[1]))
`;
