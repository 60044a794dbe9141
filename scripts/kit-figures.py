#!/usr/bin/env python3
"""Prints the plugin kit's figures (issue "Plugin kit 1.0") and, with --check, fails on a kit type
that no plugin uses.

Figures, each measured from the sources (nothing is hard-coded):
- public types the kit declares (structs, enums, protocols, classes, actors, typealiases, nested ones too);
- kit types no plugin names (a plugin: a folder under Plugins/ other than BuiltIn, and the test
  plugin Tests/RiddlePlugin) by name, nor shows through a public member of a type they use;
- kit types the password provider (Plugins/LocalPassword) and the TOTP plugin name;
- the stored properties of the engine's flow record;
- the longest function in the flow engine (Sources/GatehouseCore/Flow);
- compare-and-swap retry loops written in plugins (a `for _ in 0..<N` around an `expectedVersion`);
- dynamic casts to a kit type outside the one registration file (PluginRegistry.swift);
- kit files that name the broker's policy (adding a broker-only policy key touches them);
- and, checked with --check: plugins name no kit type marked `package`: those are the broker's view
  of a declaration (every module of this repository sees them; a plugin built elsewhere does not).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KIT = ROOT / "Sources/GatehousePluginKit"
DECLARATION = re.compile(r"^\s*public\s+(?:final\s+)?(?:indirect\s+)?(struct|enum|protocol|class|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)", re.M)


def swift_files(*folders):
    for folder in folders:
        yield from sorted(pathlib.Path(folder).rglob("*.swift"))


def without_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def kit_types(top_level_only=False):
    types = {}
    for path in swift_files(KIT):
        for match in DECLARATION.finditer(path.read_text()):
            if top_level_only and match.group(0).lstrip("\n")[0] in " \t":
                continue
            types.setdefault(match.group(2), path)
    return types


def without_strings(text):
    """The code without its string literals' text (a label "Key URI Format" names no kit type)."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def names_used(paths, candidates):
    text = "\n".join(without_strings(without_comments(p.read_text())) for p in paths)
    return {name for name in candidates if re.search(r"\b" + re.escape(name) + r"\b", text)}


def plugin_folders():
    folders = [p for p in sorted((ROOT / "Plugins").iterdir()) if p.is_dir() and p.name not in ("BuiltIn", "CLDAP")]
    return folders + [ROOT / "Tests/RiddlePlugin"]


def public_members(name):
    """The public member lines of a kit type: its declaration's body and its extensions' bodies."""
    lines = []
    for path in swift_files(KIT):
        text = without_comments(path.read_text())
        for match in re.finditer(r"(?:struct|enum|protocol|class|actor|extension)\s+" + re.escape(name) + r"\b[^{]*\{", text):
            depth, index = 1, match.end()
            while depth and index < len(text):
                depth += {"{": 1, "}": -1}.get(text[index], 0)
                index += 1
            body = text[match.start() : index]
            lines += [line for line in body.split("\n") if re.match(r"\s*(public|case|associatedtype)\b", line)]
    return lines


def reachable(named, types):
    """Kit types plugins use: those they name, and those the public members of a used type show them
    (`PluginEnvironment.mailer` is an `any Mailer`; a plugin calling it uses `Mailer`)."""
    used, frontier = set(named), list(named)
    while frontier:
        for line in public_members(frontier.pop()):
            for other in types:
                if other not in used and re.search(r"\b" + re.escape(other) + r"\b", line):
                    used.add(other)
                    frontier.append(other)
    return used


def stored_properties(struct_name, folder):
    """The stored properties of a struct: `var`/`let` lines in its body (not nested in a member),
    without a body of their own (a computed property has one) and not static."""
    for path in swift_files(folder):
        lines = without_comments(path.read_text()).split("\n")
        for start, line in enumerate(lines):
            if not re.search(r"\bstruct\s+" + struct_name + r"\b[^{]*\{", line):
                continue
            count, depth = 0, 0
            for body_line in lines[start:]:
                before = depth
                depth += body_line.count("{") - body_line.count("}")
                stripped = body_line.strip()
                if before == 1 and re.match(r"(?:(?:public|internal|private|fileprivate|package)(?:\(set\))?\s+)*(?:var|let)\s", stripped):
                    if "{" not in stripped and not re.search(r"\bstatic\b", stripped):
                        count += 1
                if before > 0 and depth <= 0:
                    break
            return count, path
    return None, None


def longest_function(folder):
    best = (0, "", None)
    for path in swift_files(folder):
        lines = without_comments(path.read_text()).split("\n")
        for start, line in enumerate(lines):
            match = re.search(r"\bfunc\s+([A-Za-z_][A-Za-z0-9_]*)", line)
            if not match:
                continue
            depth, opened = 0, False
            for end in range(start, len(lines)):
                depth += lines[end].count("{") - lines[end].count("}")
                opened = opened or "{" in lines[end]
                if opened and depth <= 0:
                    break
            length = end - start + 1
            if length > best[0]:
                best = (length, match.group(1), path)
    return best


def cas_loops(folders):
    loops = []
    for path in swift_files(*folders):
        lines = path.read_text().split("\n")
        for number, line in enumerate(lines):
            if re.search(r"for\s+_\s+in\s+0\.\.<\s*\d+\s*\{", line):
                window = "\n".join(lines[number : number + 25])
                if re.search(r"\b(?:replace|replaceWithSecret|delete)\([^\n]*version:", window):
                    loops.append(f"{path.relative_to(ROOT)}:{number + 1}")
    return loops


def dynamic_casts(types):
    protocols = set()
    for path in swift_files(KIT):
        protocols |= set(re.findall(r"public\s+protocol\s+([A-Z][A-Za-z0-9_]*)", path.read_text()))
    casts = []
    pattern = re.compile(r"\b(?:as[?!]|is)\s+\(?(?:any\s+)?(" + "|".join(sorted(protocols)) + r")\b")
    for path in swift_files(ROOT / "Sources", ROOT / "Plugins", ROOT / "Tests/RiddlePlugin"):
        if path.name == "PluginRegistry.swift":
            continue
        for number, line in enumerate(without_comments(path.read_text()).split("\n")):
            if pattern.search(line):
                casts.append(f"{path.relative_to(ROOT)}:{number + 1}")
    return casts


def package_only_uses(plugin_sources):
    """Kit types marked `package` (the broker's view of a declaration) that a plugin names."""
    declaration = re.compile(r"^package\s+(?:final\s+)?(?:struct|enum|protocol|class|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)", re.M)
    package = {name for path in swift_files(KIT) for name in declaration.findall(path.read_text())}
    uses = []
    for path in plugin_sources:
        for number, line in enumerate(without_comments(path.read_text()).split("\n")):
            uses += [f"{path.relative_to(ROOT)}:{number + 1}: {name}" for name in sorted(package) if re.search(r"\b" + name + r"\b", line)]
    return uses


def main():
    types = kit_types()
    plugins = plugin_folders()
    plugin_sources = [p for folder in plugins for p in swift_files(folder)]
    named = names_used(plugin_sources, types)
    # A nested type (`PluginEndpoint.Method`) is used with its parent: plugins write `.post`.
    unused = sorted(set(kit_types(top_level_only=True)) - reachable(named, types))
    password = names_used(list(swift_files(ROOT / "Plugins/LocalPassword")), types)
    totp = names_used(list(swift_files(ROOT / "Plugins/TOTP")), types)
    record, record_path = stored_properties("FlowRecord", ROOT / "Sources/GatehouseCore")
    length, function, function_path = longest_function(ROOT / "Sources/GatehouseCore/Flow")
    loops = cas_loops(plugins)
    casts = dynamic_casts(types)
    policy_files = [p for p in swift_files(KIT) if re.search(r"\bPolicy\b", without_comments(p.read_text()))]
    package_uses = package_only_uses(plugin_sources)

    rows = [
        ("public types in the kit", len(types), "<= 70"),
        ("kit types used by no plugin", len(unused), "0"),
        ("kit types a real password provider (local-password) references", len(password), "<= 12"),
        ("kit types the TOTP plugin references", len(totp), "<= 20"),
        ("FlowRecord stored properties", record, "<= 12"),
        (f"longest function in the flow engine ({function})", f"{length} lines", "<= 50"),
        ("hand-written CAS retry loops in plugins", len(loops), "0"),
        ("dynamic casts to kit types outside PluginRegistry.swift", len(casts), "0"),
        ("kit files naming the broker's Policy", len(policy_files), "0"),
        ("plugin uses of the kit's package-only types", len(package_uses), "0"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'now':>10}  goal")
    for name, value, goal in rows:
        print(f"{name:<{width}}  {str(value):>10}  {goal}")
    if "-v" in sys.argv:
        print("\nunused kit types:", ", ".join(unused) or "none")
        print("local-password names:", ", ".join(sorted(password)))
        print("totp names:", ", ".join(sorted(totp)))
        print("CAS loops:", *loops, sep="\n  ")
        print("casts:", *casts, sep="\n  ")
        print("kit files naming Policy:", *[str(p.relative_to(ROOT)) for p in policy_files], sep="\n  ")
        print("package-only uses:", *package_uses, sep="\n  ")
    if "--check" in sys.argv and unused:
        print("\nkit types no plugin uses (move them into the broker, or give them a plugin user):", ", ".join(unused), file=sys.stderr)
        return 1
    if "--check" in sys.argv and package_uses:
        print("\nplugins naming the kit's package-only types (the broker's; use the public API):", *package_uses, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
