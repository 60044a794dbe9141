#!/usr/bin/env python3
"""docs/writing-a-plugin.md shows the files of Tests/GuideExamples, which `make test` compiles and
runs: each ```swift block right after a line `<!-- file: Name.swift -->` is that file.

    scripts/guide-code.py            # fails when a block and its file differ
    scripts/guide-code.py --write    # writes the guide's blocks into the files
    scripts/guide-code.py --from-files   # writes the files (as `make format` left them) into the guide
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs/writing-a-plugin.md"
FOLDER = ROOT / "Tests/GuideExamples"


def blocks():
    pattern = re.compile(r"^<!-- file: (\S+) -->\n```swift\n(.*?)\n```$", re.M | re.S)
    return {name: code + "\n" for name, code in pattern.findall(GUIDE.read_text())}


def from_files():
    pattern = re.compile(r"^(<!-- file: (\S+) -->\n```swift\n)(.*?)(\n```)$", re.M | re.S)
    text = pattern.sub(lambda m: m.group(1) + (FOLDER / m.group(2)).read_text().rstrip("\n") + m.group(4), GUIDE.read_text())
    GUIDE.write_text(text)


def main():
    if "--from-files" in sys.argv:
        from_files()
    found = blocks()
    differ = []
    for name, code in found.items():
        path = FOLDER / name
        if "--write" in sys.argv:
            path.write_text(code)
        elif not path.exists() or path.read_text() != code:
            differ.append(name)
    if differ:
        print("docs/writing-a-plugin.md and Tests/GuideExamples differ:", ", ".join(differ), "(edit both, or run scripts/guide-code.py --write)", file=sys.stderr)
        return 1
    print(f"the guide's {len(found)} code blocks are the compiled files of Tests/GuideExamples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
