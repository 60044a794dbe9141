#!/usr/bin/env python3
"""A real SMTP server for Gatehouse's tests (aiosmtpd, from PyPI): it accepts mail on 127.0.0.1 and
writes each message, raw, to its own file in --maildir, so tests read the code from what was
really delivered.

  --security none       plain SMTP
  --security starttls   offers STARTTLS (--cert/--key); AUTH only after it
  --security tls        implicit TLS from the first byte
  --username/--password require AUTH (PLAIN or LOGIN) with these credentials
  --refuse ADDRESS      answers 550 to RCPT TO for this address
  --login-only          offers AUTH LOGIN only

Writes the port it listens on to --port-file once it accepts connections. Stops on SIGTERM.
"""
import argparse
import asyncio
import os
import signal
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP


class Maildir:
    def __init__(self, folder, refused):
        self.folder = folder
        self.refused = set(a.lower() for a in refused)
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refused:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        name = "%d-%06d.eml" % (int(time.time() * 1000), self.count)
        temporary = os.path.join(self.folder, "." + name)
        with open(temporary, "wb") as out:
            out.write(("X-Envelope-From: %s\r\n" % envelope.mail_from).encode())
            out.write(("X-Envelope-To: %s\r\n" % ",".join(envelope.rcpt_tos)).encode())
            out.write(envelope.original_content)
        os.rename(temporary, os.path.join(self.folder, name))
        return "250 Message accepted for delivery"


class Credentials:
    def __init__(self, username, password):
        self.username = username.encode()
        self.password = password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        if isinstance(auth_data, LoginPassword) and auth_data.login == self.username and auth_data.password == self.password:
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--maildir", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--security", choices=["none", "starttls", "tls"], default="none")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--refuse", action="append", default=[])
    parser.add_argument("--login-only", action="store_true", help="offer AUTH LOGIN but not PLAIN")
    args = parser.parse_args()
    os.makedirs(args.maildir, exist_ok=True)

    context = None
    if args.security != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)

    options = dict(hostname="127.0.0.1", port=args.port or free_port(), server_hostname="gatehouse-test-smtp")
    if args.username:
        options.update(authenticator=Credentials(args.username, args.password), auth_required=True, auth_require_tls=args.security == "starttls")
        # With implicit TLS aiosmtpd does not see the TLS layer under it; the connection is encrypted all the same.
        if args.login_only:
            options.update(auth_exclude_mechanism=["PLAIN"])
    if args.security == "starttls":
        options.update(tls_context=context, require_starttls=True)
    elif args.security == "tls":
        options.update(ssl_context=context)
    controller = Controller(Maildir(args.maildir, args.refuse), **options)
    controller.start()
    with open(args.port_file + ".tmp", "w") as out:
        out.write(str(controller.port))
    os.rename(args.port_file + ".tmp", args.port_file)

    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.run_until_complete(stop.wait())
    controller.stop()


def free_port():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from free_port import free_port as pick  # a port outside the kernel's ephemeral range
    return pick()


if __name__ == "__main__":
    sys.exit(main())
