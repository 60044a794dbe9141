#!/usr/bin/env python3
"""The broker under slow clients, kill -9 crashes and peer outages, and the scan of every test log
for the secrets the tests used. Driven by Tests/hardening/run.sh, which starts the real peers
(slapd, an SMTP server, the custom API stand-in) and owns the work folder.

  hardening.py slow     --base URL --idle-timeout S
  hardening.py crash    --base URL --admin-token T --db FILE --rounds N -- BROKER COMMAND...
  hardening.py outages  --base URL --admin-token T --work DIR --repo DIR --api-secret S ...
  hardening.py scan     --logs DIR

Every phase prints one line per check ("ok   ..." / "FAIL ...") and exits non-zero on a failure.
"""
import argparse, json, os, random, signal, socket, sqlite3, subprocess, sys, threading, time, uuid
import requests

failures = 0


def check(description, condition, detail=""):
    global failures
    if condition:
        print(f"ok   {description}")
    else:
        failures += 1
        print(f"FAIL {description}" + (f": {detail}" if detail else ""))


def host_port(base):
    host, port = base.split("//")[1].split(":")
    return host, int(port)


# MARK: - slow clients

def slow(args):
    host, port = host_port(args.base)
    idle = [socket.create_connection((host, port)) for _ in range(150)]
    trickling = [socket.create_connection((host, port)) for _ in range(30)]
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 200 + b"\r\n\r\n"
    stop = threading.Event()
    cut_off = {}

    def trickle(index, sock):
        for byte in head:
            if stop.is_set():
                return
            try:
                sock.send(bytes([byte]))
            except OSError:
                cut_off[index] = time.time()
                return
            time.sleep(0.5)

    threads = [threading.Thread(target=trickle, args=(i, s), daemon=True) for i, s in enumerate(trickling)]
    for thread in threads:
        thread.start()

    # A body sent a byte a second: answered 408 once the body deadline passes.
    body_answer = {}

    def slow_body():
        sock = socket.create_connection((host, port))
        sock.send(b"POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
        started = time.time()
        sock.settimeout(0.05)
        while time.time() - started < 20:
            try:
                sock.send(b"a")
                data = sock.recv(4096)
                if data:
                    body_answer["status"] = data.split(b" ")[1].decode()
                    body_answer["after"] = time.time() - started
                    return
                body_answer["status"] = "closed"
                return
            except socket.timeout:
                pass
            except OSError:
                body_answer["status"] = "closed"
                return
            time.sleep(1)

    body_thread = threading.Thread(target=slow_body, daemon=True)
    body_thread.start()

    # Meanwhile everyone else is served at once.
    latencies = []
    for _ in range(20):
        started = time.time()
        response = requests.get(f"{args.base}/healthz", timeout=5)
        latencies.append(time.time() - started)
        assert response.status_code == 200
    check(f"with 181 slow sockets open, 20 fresh requests are served (slowest {max(latencies) * 1000:.0f} ms)", max(latencies) < 1.0)

    time.sleep(args.idle_timeout + 2)
    closed = 0
    for sock in idle:
        sock.settimeout(1)
        try:
            closed += 1 if sock.recv(1) == b"" else 0
        except (ConnectionResetError, socket.timeout, OSError) as error:
            closed += 0 if isinstance(error, socket.timeout) else 1
    check(f"150 connections that sent nothing are closed after the idle timeout ({closed}/150)", closed == 150)
    stop.set()
    for thread in threads:
        thread.join(timeout=2)
    trickled_closed = 0
    for sock in trickling:
        sock.settimeout(1)
        try:
            trickled_closed += 1 if sock.recv(1) == b"" else 0
        except socket.timeout:
            pass
        except OSError:
            trickled_closed += 1
    check(f"30 connections sending their head a byte every 0.5 s are cut off ({trickled_closed}/30)", trickled_closed == 30)
    body_thread.join(timeout=25)
    check(f"a body sent a byte a second is answered 408 ({body_answer})", body_answer.get("status") == "408" and body_answer.get("after", 99) < 15)
    check("the broker still serves afterwards", requests.get(f"{args.base}/readyz", timeout=5).status_code == 200)
    for sock in idle + trickling:
        sock.close()


# MARK: - crash

class Broker:
    def __init__(self, command, base, log):
        self.command, self.base, self.log = command, base, log
        self.process = None

    def start(self):
        self.process = subprocess.Popen(self.command, stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        for _ in range(200):
            try:
                if requests.get(f"{self.base}/healthz", timeout=0.5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                raise SystemExit(f"the broker exited: see {self.log}")
            time.sleep(0.05)
        raise SystemExit("the broker did not come up")

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=15)


def flow(base, app, provider, answer, purpose="authenticate", auth=None, scope=None):
    body = {"app": app, "provider": provider, "purpose": purpose}
    if scope:
        body["scope"] = scope
    started = requests.post(f"{base}/v1/flows", json=body, auth=auth, timeout=10)
    if started.status_code >= 300:
        return started
    return requests.post(f"{base}/v1/flows/{started.json()['flow']}", json={"answer": answer}, auth=auth, timeout=10)


def crash(args):
    broker = Broker(args.command, args.base, args.log)
    admin = {"Authorization": f"Bearer {args.admin_token}"}
    totals = {"sign-ups": 0, "rotations": 0, "admin writes": 0}
    secrets = open(args.secrets, "a")
    for round_number in range(args.rounds):
        broker.start()
        signed_up, rotations, apps, unanswered = [], [], [], set()
        pool, lock, stop = [], threading.Lock(), threading.Event()

        def sign_ups(worker):
            while not stop.is_set():
                name = f"crash-{round_number}-{worker}-{uuid.uuid4().hex[:8]}"
                password = f"pw-{uuid.uuid4().hex}"
                try:
                    answer = flow(args.base, "native", "local", {"username": name, "password": password}, purpose="register", scope="openid offline_access")
                except requests.RequestException:
                    continue
                if answer.status_code == 200 and answer.json().get("status") == "completed":
                    tokens = answer.json()["tokens"]
                    with lock:
                        signed_up.append(answer.json()["account"]["id"])
                        pool.append(tokens["refresh_token"])
                        secrets.write(f"{password}\n{tokens['refresh_token']}\n{tokens['access_token']}\n")

        def refreshes():
            while not stop.is_set():
                with lock:
                    token = pool.pop(random.randrange(len(pool))) if pool else None
                if token is None:
                    time.sleep(0.01)
                    continue
                try:
                    answer = requests.post(
                        f"{args.base}/oauth2/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": "native"}, timeout=10
                    )
                except requests.RequestException:
                    # Sent, never answered: the broker may or may not have rotated it before the kill.
                    with lock:
                        unanswered.add(token)
                    continue
                if answer.status_code == 200:
                    new = answer.json()["refresh_token"]
                    with lock:
                        rotations.append((token, new))
                        pool.append(new)
                        secrets.write(f"{new}\n")

        def admin_writes():
            index = 0
            while not stop.is_set():
                app_id = f"crash-{round_number}-{index}"
                index += 1
                try:
                    answer = requests.post(f"{args.base}/admin/v1/apps", json={"id": app_id, "confidential": True}, headers=admin, timeout=10)
                except requests.RequestException:
                    continue
                if answer.status_code == 201:
                    with lock:
                        apps.append(app_id)
                        secrets.write(f"{answer.json()['client_secret']}\n")

        threads = [threading.Thread(target=sign_ups, args=(w,)) for w in range(3)] + [threading.Thread(target=refreshes) for _ in range(2)]
        threads.append(threading.Thread(target=admin_writes))
        for thread in threads:
            thread.start()
        time.sleep(random.uniform(1.0, 2.0))
        broker.kill9()
        stop.set()
        for thread in threads:
            thread.join()
        secrets.flush()
        integrity = sqlite3.connect(args.db).execute("PRAGMA integrity_check").fetchone()[0]
        check(f"round {round_number + 1}: after kill -9, PRAGMA integrity_check is {integrity}", integrity == "ok")

        broker.start()
        missing_accounts = [a for a in signed_up if requests.get(f"{args.base}/admin/v1/users/{a}", headers=admin, timeout=10).status_code != 200]
        check(f"round {round_number + 1}: all {len(signed_up)} answered sign-ups have their account", not missing_accounts, str(missing_accounts[:3]))
        missing_events = [
            a for a in signed_up
            if not requests.get(f"{args.base}/admin/v1/audit", params={"user": a, "type": "account.created"}, headers=admin, timeout=10).json()
        ]
        check(f"round {round_number + 1}: and their account.created audit events", not missing_events, str(missing_events[:3]))
        missing_apps = [a for a in apps if requests.get(f"{args.base}/admin/v1/apps/{a}", headers=admin, timeout=10).status_code != 200]
        unaudited = [
            a for a in apps if not requests.get(f"{args.base}/admin/v1/audit", params={"app": a, "type": "app.created"}, headers=admin, timeout=10).json()
        ]
        check(f"round {round_number + 1}: all {len(apps)} answered admin writes are there, with their audit events", not missing_apps and not unaudited, f"{missing_apps[:3]} {unaudited[:3]}")
        db = sqlite3.connect(args.db)
        half = db.execute(
            "SELECT family_id, COUNT(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL GROUP BY family_id HAVING COUNT(*) > 1"
        ).fetchall()
        check(f"round {round_number + 1}: no refresh family is half-rotated (at most one live token each)", not half, str(half[:3]))
        # The newest answered token of each chain works (its rotation was answered, so it is durable)...
        rotated_away = {old for old, _ in rotations}
        newest = [new for _, new in rotations if new not in rotated_away and new not in unanswered]
        dead = []
        for token in newest:
            answer = requests.post(f"{args.base}/oauth2/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": "native"}, timeout=10)
            if answer.status_code != 200:
                dead.append(answer.text[:80])
            else:
                secrets.write(f"{answer.json()['refresh_token']}\n")
        check(f"round {round_number + 1}: the newest token of each of {len(newest)} answered rotations still refreshes", not dead, str(dead[:2]))
        # ...and a token whose rotation was answered can never be used again.
        reused = [
            old for old, _ in rotations
            if requests.post(f"{args.base}/oauth2/token", data={"grant_type": "refresh_token", "refresh_token": old, "client_id": "native"}, timeout=10).status_code != 400
        ]
        check(f"round {round_number + 1}: none of the {len(rotations)} rotated-away tokens works again", not reused)
        broker.stop()
        totals["sign-ups"] += len(signed_up)
        totals["rotations"] += len(rotations)
        totals["admin writes"] += len(apps)
    print(f"crash test: {args.rounds} kill -9 rounds; answered before the kills: " + ", ".join(f"{v} {k}" for k, v in totals.items()))
    check("the crash load did real work in every category", all(v > 0 for v in totals.values()), str(totals))


# MARK: - outages

def outages(args):
    admin = {"Authorization": f"Bearer {args.admin_token}"}
    results = {"ldap": [], "email": [], "custom": []}
    stop = threading.Event()
    expected = {"ldap": "provider_unavailable", "email": "delivery_failed", "custom": "custom_api_unreachable"}

    def attempt(kind):
        if kind == "ldap":
            return flow(args.base, "native", "corp-ldap", {"username": "alice", "password": "alice-password-1"})
        if kind == "email":
            return flow(args.base, "native", "email", {"email": f"load-{uuid.uuid4().hex[:6]}@example.com"})
        return flow(args.base, "native", "bank", {"customData": {"subject": "cust-9"}})

    def load(kind):
        while not stop.is_set():
            started = time.time()
            try:
                answer = attempt(kind)
                body = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else {}
                results[kind].append((time.time(), answer.status_code, body.get("error") or body.get("status"), started))
            except requests.RequestException as error:
                results[kind].append((time.time(), 0, str(error)[:60], started))
            time.sleep(0.05)

    def readiness():
        return requests.get(f"{args.base}/admin/v1/readiness", headers=admin, timeout=10)

    threads = [threading.Thread(target=load, args=(k,)) for k in results]
    for thread in threads:
        thread.start()
    marks = {}
    time.sleep(1)
    for kind, stop_peer, start_peer in [("ldap", args.stop_ldap, args.start_ldap), ("email", args.stop_smtp, args.start_smtp), ("custom", args.stop_api, args.start_api)]:
        subprocess.run(stop_peer, shell=True, check=True)
        # Down means the port refuses connections, not merely that a signal was sent.
        port = {"ldap": args.ldap_port, "email": args.smtp_port, "custom": args.api_port}[kind]
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                time.sleep(0.05)
            except OSError:
                break
        else:
            check(f"{kind}: the peer stopped accepting connections", False, f"port {port} still accepts")
        down = time.time()
        time.sleep(3.5)
        name = {"ldap": "corp-ldap", "email": "email", "custom": "bank"}[kind]
        ready = readiness()
        health = ready.json()["checks"].get(name, {})
        check(f"{kind} down: /admin/v1/readiness answers 503 with {name} unhealthy and why ({health.get('detail', '')[:60]})", ready.status_code == 503 and not health.get("healthy", True) and health.get("detail"))
        public = requests.get(f"{args.base}/readyz", timeout=10)
        check(f"{kind} down: /readyz answers 503 with the status only", public.status_code == 503 and public.json() == {"status": "unavailable"})
        # The peer listens a moment before its start command returns: what ends after this may
        # have reached it.
        restarting = time.time()
        subprocess.run(start_peer, shell=True, check=True)
        up = time.time()
        time.sleep(3)
        marks[kind] = (down, restarting, up)
        check(f"{kind} back: readiness is ready again without a restart", readiness().status_code == 200)
    stop.set()
    for thread in threads:
        thread.join()

    for kind, (down, restarting, up) in marks.items():
        # Sign-ins started after the peer was killed and answered before it came back.
        during = [r for r in results[kind] if down + 0.2 < r[3] and r[0] < restarting]
        after = [r for r in results[kind] if r[3] > up + 2]
        everything = results[kind]
        server_errors = [r for r in everything if r[1] >= 500 and r[2] != expected[kind]]
        check(f"{kind}: {len(everything)} sign-ins under load, none answered 5xx other than 503 {expected[kind]}", not server_errors, str(server_errors[:3]))
        unexpected = [r for r in during if r[1] != 503 or r[2] != expected[kind]]
        check(f"{kind}: while the peer is down, sign-ins get 503 {expected[kind]} ({len(during)} tried)", during and not unexpected, str(unexpected[:5]))
        check(f"{kind}: after the peer is back, sign-ins succeed again without a broker restart", after and after[-1][1] == 200, str(after[-3:]))


# MARK: - log scan

def scan(args):
    logs = [os.path.join(args.logs, name) for name in sorted(os.listdir(args.logs)) if name.endswith(".log")]
    secrets = set()
    for name in os.listdir(args.logs):
        if name.endswith(".secrets"):
            secrets |= {line.strip() for line in open(os.path.join(args.logs, name), errors="replace") if len(line.strip()) >= 8}
    patterns = {"PRIVATE KEY", "client_secret=", "password="}
    hits = []
    size = 0
    for path in logs:
        text = open(path, errors="replace").read()
        size += len(text)
        for secret in secrets | patterns:
            if secret in text:
                hits.append(f"{os.path.basename(path)}: {secret[:6]}…")
    print(f"log scan: {len(logs)} logs ({size // 1024} KiB: {', '.join(os.path.basename(p) for p in logs)}) against {len(secrets)} secrets the tests used and {len(patterns)} patterns")
    check("no password, code, client secret, token, key or admin token appears in any test log", not hits and len(logs) > 0 and len(secrets) > 0, str(hits[:10]))


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="phase", required=True)
p = sub.add_parser("slow")
p.add_argument("--base", required=True)
p.add_argument("--idle-timeout", type=float, required=True)
p = sub.add_parser("crash")
p.add_argument("--base", required=True)
p.add_argument("--admin-token", required=True)
p.add_argument("--db", required=True)
p.add_argument("--log", required=True)
p.add_argument("--secrets", required=True)
p.add_argument("--rounds", type=int, default=5)
p.add_argument("command", nargs=argparse.REMAINDER)
p = sub.add_parser("outages")
p.add_argument("--base", required=True)
p.add_argument("--admin-token", required=True)
for name in ["stop-ldap", "start-ldap", "stop-smtp", "start-smtp", "stop-api", "start-api"]:
    p.add_argument(f"--{name}", required=True)
for name in ["ldap-port", "smtp-port", "api-port"]:
    p.add_argument(f"--{name}", type=int, required=True)
p = sub.add_parser("scan")
p.add_argument("--logs", required=True)
args = parser.parse_args()
if getattr(args, "command", None) and args.command[0] == "--":
    args.command = args.command[1:]
{"slow": slow, "crash": crash, "outages": outages, "scan": scan}[args.phase](args)
sys.exit(1 if failures else 0)
