#!/usr/bin/env python3
"""The licences of what the release binary contains and links, for the tarball and the Debian package.

`--out DIR` copies every Swift package's licence and notice files (the packages are compiled into the
binary), the Swift runtime's licence (linked in statically) and writes DIR/README.md listing them
with their versions, plus the Debian libraries the binary loads and the packages that ship them.
DIR/manifest.json holds the same list; `--debian-copyright MANIFEST` prints debian/copyright from it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

EMBEDDED = [("icu", "the Swift runtime's Foundation", "libicu72"), ("zlib", "the Swift runtime's Foundation", "zlib1g"), ("libyaml", "Yams", "libyaml-0-2")]
EMBEDDED_LICENCES = {"icu": "ICU", "zlib": "Zlib", "libyaml": "Expat"}
LICENCE_FILE = re.compile(r"^(licen[cs]e|notice|copying)(\.(txt|md))?$", re.IGNORECASE)


def kind(text):
    if "Apache License" in text and "Version 2.0" in text:
        return "Apache-2.0"
    if "Permission is hereby granted, free of charge" in text:
        return "Expat"
    if "Redistribution and use in source and binary forms" in text:
        return "BSD-3-clause" if "Neither the name" in text or "neither the name" in text else "BSD-2-clause"
    if "Permission to use, copy, modify, and/or distribute" in text:
        return "ISC"
    return "other"


def resolved_versions(root):
    path = os.path.join(root, "Package.resolved")
    if not os.path.exists(path):
        return {}
    pins = json.load(open(path)).get("pins", [])
    return {pin["location"].rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]: pin["state"].get("version") or pin["state"].get("revision", "")[:12] for pin in pins}


def shared_libraries(binary):
    libraries = []
    for line in subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if not match:
            continue
        package = "?"
        # dpkg knows a file by the path its package ships, which merged /usr may hide behind another.
        for path in dict.fromkeys([match.group(2), os.path.realpath(match.group(2)), re.sub(r"^/usr/lib/", "/lib/", os.path.realpath(match.group(2)))]):
            owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
            if owner.returncode == 0:
                package = owner.stdout.split(":", 1)[0]
                break
        libraries.append({"library": match.group(1), "package": package})
    return libraries


def collect(args):
    os.makedirs(args.out, exist_ok=True)
    versions = resolved_versions(args.package_root)
    packages = []
    for name in sorted(os.listdir(args.checkouts)):
        checkout = os.path.join(args.checkouts, name)
        if not os.path.isdir(checkout):
            continue
        files = []
        for folder, subfolders, names in os.walk(checkout):
            subfolders[:] = [s for s in subfolders if not s.startswith(".") and s.lower() not in ("tests", "test", "benchmarks", "docs", "examples")]
            for file in names:
                if LICENCE_FILE.match(file):
                    relative = os.path.relpath(os.path.join(folder, file), checkout)
                    target = os.path.join(args.out, name, relative)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.copyfile(os.path.join(folder, file), target)
                    files.append(relative)
        if not files:
            sys.exit(f"licences: {name} has no licence file")
        main = sorted(files, key=lambda f: (f.count("/"), not f.lower().startswith("licen")))[0]
        licence = kind(open(os.path.join(checkout, main), errors="replace").read())
        packages.append({"name": name, "version": versions.get(name, "?"), "licence": licence, "files": sorted(files)})
    os.makedirs(os.path.join(args.out, "swift-runtime"), exist_ok=True)
    shutil.copyfile(args.swift_licence, os.path.join(args.out, "swift-runtime", "LICENSE.txt"))
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    packages.append({"name": "swift-runtime", "version": swift[0] if swift else "?", "licence": "Apache-2.0", "files": ["LICENSE.txt"]})
    # C libraries compiled in by the Swift runtime (Foundation: ICU, zlib) and by Yams (libyaml):
    # their notices, from Debian's packages of the same libraries on the build machine.
    for name, package, debian_doc in EMBEDDED:
        source = f"/usr/share/doc/{debian_doc}/copyright"
        if not os.path.exists(source):
            sys.exit(f"licences: {source} is missing: apt-get install {debian_doc} (make release installs it)")
        os.makedirs(os.path.join(args.out, name), exist_ok=True)
        shutil.copyfile(source, os.path.join(args.out, name, "copyright"))
        packages.append({"name": name, "version": f"compiled into {package}", "licence": EMBEDDED_LICENCES[name], "files": ["copyright"]})
    libraries = shared_libraries(args.binary)
    json.dump({"packages": packages, "libraries": libraries}, open(os.path.join(args.out, "manifest.json"), "w"), indent=1)
    with open(os.path.join(args.out, "README.md"), "w") as readme:
        readme.write("# Licences of what the gatehouse binary contains and links\n\n")
        readme.write("Compiled into the binary (each folder here holds the package's licence and notice files):\n\n")
        readme.write("| package | version | licence |\n|---|---|---|\n")
        for package in packages:
            readme.write(f"| {package['name']} | {package['version']} | {package['licence']} |\n")
        readme.write("\nLoaded at run time from the system (their licences are in /usr/share/doc/PACKAGE/copyright):\n\n")
        readme.write("| library | Debian package |\n|---|---|\n")
        for library in libraries:
            readme.write(f"| {library['library']} | {library['package']} |\n")


def debian_copyright(manifest_path):
    manifest = json.load(open(manifest_path))
    folder = os.path.dirname(manifest_path)
    print("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    print("Upstream-Name: gatehouse")
    print("Comment: /usr/bin/gatehouse is statically linked with the Swift runtime and the Swift")
    print(" packages below; their licence and notice files are in /usr/share/doc/gatehouse/licences.")
    print()
    print("Files: *")
    print("Copyright: 2026 The Gatehouse maintainers")
    print("License: Gatehouse")
    texts = {}
    for package in manifest["packages"]:
        print()
        print(f"Files: embedded/{package['name']}/*")
        print(f"Copyright: The {package['name']} authors (see /usr/share/doc/gatehouse/licences/{package['name']})")
        print(f"License: {package['licence']}")
        if package["files"] == ["copyright"]:
            # Debian's copyright file of the same library, verbatim (Policy 12.5): its notices and licence.
            notice = open(os.path.join(folder, package["name"], "copyright"), errors="replace").read()
            texts.setdefault(package["licence"], f"As {package['name']} is {package['version']}, from Debian's copyright file of the library:\n\n{notice}")
            continue
        if package["licence"] not in ("Apache-2.0",) and package["licence"] not in texts:
            main = sorted(package["files"], key=lambda f: (f.count("/"), not f.lower().startswith("licen")))[0]
            texts[package["licence"]] = open(os.path.join(folder, package["name"], main), errors="replace").read()
    print()
    print("License: Gatehouse")
    print(" The Gatehouse maintainers have not published Gatehouse under a licence yet;")
    print(" until they do, all rights are reserved.")
    print()
    print("License: Apache-2.0")
    print(" On Debian systems the full text of the Apache License, Version 2.0 is in")
    print(" /usr/share/common-licenses/Apache-2.0.")
    for licence, text in sorted(texts.items()):
        print()
        print(f"License: {licence}")
        for line in text.strip().splitlines():
            print(" " + (line.rstrip() if line.strip() else "."))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkouts")
    parser.add_argument("--package-root", default=".")
    parser.add_argument("--swift-licence")
    parser.add_argument("--binary")
    parser.add_argument("--out")
    parser.add_argument("--debian-copyright", metavar="MANIFEST")
    args = parser.parse_args()
    if args.debian_copyright:
        debian_copyright(args.debian_copyright)
    else:
        collect(args)


if __name__ == "__main__":
    main()
