#!/usr/bin/env python3
"""The layering rule of docs/architecture.md, checked on the sources against Package.swift.

- GatehousePluginKit (the plugin API) imports no other Gatehouse module, no server, store, driver or NIO;
- GatehouseCore (the broker) imports no server, store, driver, NIO or plugin module;
- a plugin (a target under Plugins/, and the test-only RiddlePlugin) imports only GatehousePluginKit and
  its own libraries: never the broker (GatehouseCore), another plugin, the server, the store or the
  other drivers;
- the client SDK (GatehouseClient) and its demo depend on no other Gatehouse module: the wire contract
  is their only link to the broker;
- every target declares (in Package.swift) each module it imports.

It first checks itself on a made-up package that breaks every rule (each must be reported), then the
real package (`swift package dump-package`). Exit status 1 on any finding.

    Tests/layering/check_layering.py
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Modules of the toolchain and the platform: never declared.
SYSTEM = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Darwin", "Musl", "Synchronization", "Testing", "XCTest",
    "_Concurrency", "CryptoKit", "Security",
}
# The client SDK's targets: no server code, only the wire contract.
CLIENT = {"GatehouseClient", "gatehouse-client-demo"}
# What the core must never import: the HTTP framework, databases, NIO and our own drivers.
DRIVERS = re.compile(r"^(GatehouseServer|GatehouseStore|GatehouseHTTP|GatehouseMail|GatehouseTesting|GatehousePlugins|Hummingbird\w*|GRDB|PostgresNIO|NIO\w*|AsyncHTTPClient|CLDAP)$")
# What a plugin must never import besides other plugins: the broker itself included.
PLUGIN_FORBIDDEN = re.compile(r"^(GatehouseCore|GatehouseServer|GatehouseStore|GatehouseHTTP|GatehouseMail|GatehouseTesting|GatehousePlugins|Hummingbird|HummingbirdCore|GRDB|PostgresNIO)$")
# The plugin kit and the test-only plugin that proves it.
KIT = "GatehousePluginKit"
TEST_PLUGINS = {"RiddlePlugin", "GuideExamples"}
# Imports start a line (an indented `import` is text inside a string literal).
IMPORT = re.compile(r"^(?:@testable\s+|@_exported\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|typealias)\s+)?(\w+)", re.M)


def declared(target):
    names = set()
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.add(dependency[kind][0])
    return names


def target_path(target):
    if target.get("path"):
        return target["path"]
    return os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])


def imports(root, path):
    found = {}
    for folder, _, files in os.walk(os.path.join(root, path)):
        for name in files:
            if name.endswith(".swift"):
                file = os.path.join(folder, name)
                with open(file, encoding="utf-8") as handle:
                    for module in IMPORT.findall(handle.read()):
                        found.setdefault(module, os.path.relpath(file, root))
    return found


def findings(package, root):
    targets = {t["name"]: t for t in package["targets"]}
    # Plugins/BuiltIn (GatehousePlugins) is the list that registers the plugins, not a plugin.
    plugins = {name for name, t in targets.items() if t["type"] == "regular" and target_path(t).startswith("Plugins/") and name != "GatehousePlugins"}
    plugins |= TEST_PLUGINS & set(targets)
    problems = []
    for name, target in sorted(targets.items()):
        if target["type"] in ("system", "binary", "plugin"):
            continue
        dependencies = declared(target)
        used = imports(root, target_path(target))
        for module, file in sorted(used.items()):
            if module not in SYSTEM and module not in dependencies and module != name:
                problems.append(f"{file}: {name} imports {module} without declaring it in Package.swift")
        if name == KIT:
            for module in sorted(set(used) | dependencies):
                if module.startswith("Gatehouse") or DRIVERS.match(module) or module in plugins:
                    problems.append(f"{used.get(module, 'Package.swift')}: {KIT} depends on {module} (the kit stands alone)")
        if name == "GatehouseCore":
            for module in sorted(set(used) | dependencies):
                if DRIVERS.match(module) or module in plugins:
                    problems.append(f"{used.get(module, 'Package.swift')}: GatehouseCore depends on {module} (a server, store, driver, NIO or plugin module)")
        if name in CLIENT:
            for module in sorted(set(used) | dependencies):
                if module.startswith("Gatehouse") and module != "GatehouseClient" or module in plugins or DRIVERS.match(module):
                    problems.append(f"{used.get(module, 'Package.swift')}: client {name} depends on {module} (server code)")
        if name in plugins:
            for module in sorted(set(used) | dependencies):
                if module in plugins and module != name:
                    problems.append(f"{used.get(module, 'Package.swift')}: plugin {name} depends on another plugin, {module}")
                elif PLUGIN_FORBIDDEN.match(module):
                    problems.append(f"{used.get(module, 'Package.swift')}: plugin {name} depends on {module} (the broker, the server, the store or a driver)")
            if KIT not in dependencies:
                problems.append(f"Package.swift: plugin {name} does not depend on {KIT}")
    return problems


def self_test():
    """The rules on a made-up package that breaks each of them: every break must be found."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        sources = {
            "Sources/GatehouseCore/A.swift": "import Foundation\nimport NIOCore\nimport Alpha\n",
            "Plugins/Alpha/A.swift": "import GatehousePluginKit\nimport Beta\nimport GatehouseStore\n",
            "Plugins/Beta/B.swift": "import GatehouseCore\n@testable import Undeclared\n",
            "Sources/GatehousePluginKit/K.swift": "import GatehouseCore\n",
            "Sources/GatehouseClient/C.swift": "import Foundation\nimport GatehouseCore\n",
        }
        for path, text in sources.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as handle:
                handle.write(text)
        package = {"targets": [
            {"name": "GatehouseCore", "type": "regular", "dependencies": [{"product": ["NIOCore", "swift-nio", None, None]}, {"byName": ["Alpha", None]}]},
            {"name": "Alpha", "type": "regular", "path": "Plugins/Alpha", "dependencies": [{"byName": ["GatehousePluginKit", None]}, {"byName": ["Beta", None]}, {"byName": ["GatehouseStore", None]}]},
            {"name": "Beta", "type": "regular", "path": "Plugins/Beta", "dependencies": [{"byName": ["GatehouseCore", None]}]},
            {"name": "GatehousePluginKit", "type": "regular", "dependencies": [{"byName": ["GatehouseCore", None]}]},
            {"name": "GatehouseClient", "type": "regular", "dependencies": [{"byName": ["GatehouseCore", None]}]},
        ]}
        found = "\n".join(findings(package, root))
        expected = [
            "GatehouseCore depends on NIOCore", "GatehouseCore depends on Alpha", "plugin Alpha depends on another plugin, Beta",
            "plugin Alpha depends on GatehouseStore", "Beta imports Undeclared without declaring it", "client GatehouseClient depends on GatehouseCore",
            "plugin Beta depends on GatehouseCore", "plugin Beta does not depend on GatehousePluginKit", "GatehousePluginKit depends on GatehouseCore",
        ]
        missing = [text for text in expected if text not in found]
        if missing:
            print("FAIL the layering check misses what it must find: " + "; ".join(missing))
            sys.exit(1)


def main():
    self_test()
    dump = subprocess.run(["swift", "package", "dump-package", "--package-path", ROOT], capture_output=True, text=True)
    if dump.returncode != 0:
        print("FAIL swift package dump-package: " + dump.stderr)
        return 1
    problems = findings(json.loads(dump.stdout), ROOT)
    for problem in problems:
        print("FAIL " + problem)
    if not problems:
        print("ok   layering: the plugin kit stands alone, the broker imports no driver or plugin, plugins import only the kit and their own libraries, the client SDK no server code, every import is declared")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
