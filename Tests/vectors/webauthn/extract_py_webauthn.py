#!/usr/bin/env python3
# Usage: pip download --no-binary :all: --no-deps webauthn==3.0.1; tar xzf webauthn-3.0.1.tar.gz
#        Tests/vectors/webauthn/extract_py_webauthn.py webauthn-3.0.1/tests > Tests/vectors/webauthn/py_webauthn-3.0.1.json
"""Extracts the registration and authentication vectors of py_webauthn's test suite (the sdist on
PyPI) into one JSON file: each call to verify_registration_response / verify_authentication_response
with its literal arguments, the time the test sets, and whether the test expects it to pass."""
import ast, base64, json, sys, os, datetime

root = sys.argv[1]
vectors = []

def literal(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "base64url_to_bytes":
        value = literal(node.args[0], env)
        return {"b64url": value} if isinstance(value, str) else None
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "datetime":
        parts = [literal(a, env) for a in node.args]
        return datetime.datetime(*parts).replace(tzinfo=datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(node, ast.List):
        return [literal(e, env) for e in node.elts]
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return None

for name in sorted(os.listdir(root)):
    if not (name.startswith("test_verify_registration_response") or name == "test_verify_authentication_response.py"):
        continue
    if "pqc" in name or "safetynet" in name:
        continue
    tree = ast.parse(open(os.path.join(root, name)).read())
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef) or not func.name.startswith("test"):
            continue
        env, time = {}, None
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = literal(node.value, env)
                if value is not None:
                    env[node.targets[0].id] = value
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "set_time":
                time = literal(node.args[0], env)
        raises = any(isinstance(n, ast.Call) and getattr(n.func, "attr", "").startswith("assertRaises") for n in ast.walk(func))
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("verify_registration_response", "verify_authentication_response"):
                args = {k.arg: literal(k.value, env) for k in node.keywords}
                if not isinstance(args.get("credential"), str):
                    continue
                kind = "registration" if node.func.id == "verify_registration_response" else "authentication"
                fmt = None
                for n in ast.walk(func):
                    if isinstance(n, ast.Compare) and ast.unparse(n.left) == "verification.fmt":
                        fmt = ast.unparse(n.comparators[0]).split(".")[-1].lower().replace("_", "-")
                vectors.append({
                    "source": f"py_webauthn 3.0.1 tests/{name}::{func.name}", "ceremony": kind,
                    "credential": json.loads(args["credential"]),
                    "challenge": args.get("expected_challenge"),
                    "origins": args["expected_origin"] if isinstance(args.get("expected_origin"), list) else [args.get("expected_origin")],
                    "rpID": args.get("expected_rp_id"),
                    "requireUserVerification": args.get("require_user_verification", False),
                    "credentialPublicKey": args.get("credential_public_key"), "signCount": args.get("credential_current_sign_count"),
                    "time": time, "expectedFormat": fmt, "expectedToPass": not raises,
                })
json.dump({"about": "Vectors extracted from the tests of py_webauthn 3.0.1 (https://pypi.org/project/webauthn/, BSD-3-Clause, Copyright (c) Duo Security) by Tests/vectors/webauthn/extract_py_webauthn.py; each is the credential a test verifies with the arguments it verifies it with, and whether that test expects it to pass.", "vectors": vectors}, sys.stdout, indent=1)
