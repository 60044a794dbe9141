"""SCIM 2.0 conformance of /scim/v2 checked by an independent client: scim2-tester (PyPI) runs its
discovery, create, read, replace and delete checks for Users and Groups through scim2-client.

    scim_conformance.py BASE TOKEN    prints one line per check; exits 1 when any check fails
"""
import sys

import httpx2 as httpx
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

base, token = sys.argv[1], sys.argv[2]
http = httpx.Client(base_url=f"{base}/scim/v2", headers={"Authorization": f"Bearer {token}"}, timeout=30)
client = SyncSCIMClient(http)
results = check_server(client)
failed = 0
for result in results:
    ok = result.status in (Status.SUCCESS, Status.SKIPPED)
    failed += 0 if ok else 1
    title = getattr(result, "title", None) or getattr(result, "check", "")
    print(f"  {'ok  ' if ok else 'FAIL'} {result.status.name.lower():8} {title}: {(result.reason or '')[:200]}")
print(f"{len(results)} checks, {failed} failed")
sys.exit(1 if failed or not results else 0)
