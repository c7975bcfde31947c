#!/usr/bin/env python3
"""The plain-script reference for the backfill benchmark (issue 15).

What a careful engineer would write in an afternoon instead of diffidx: for
every commit (oldest first, merges against their first parent), parse both
sides of every changed C# or Rust file with tree-sitter, list the declarations
of each side (qualified name, kind, a hash of their tokens without comments),
and label each ADDED, DELETED, MODIFIED or UNCHANGED. No notes, no store.

Its only use is a yardstick measured on the same machine as diffidx: the
issue's target of 400 commits/s was set against 57-66 commits/s of such a
script, so "commits/s of diffidx / commits/s of this script" is the
machine-relative form of the target. It prints one line:

    <commits> commits in <seconds> s: <rate> commits/s (<files> file sides parsed)

Usage (the packages from PyPI, in a venv of its own):

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install tree-sitter tree-sitter-c-sharp tree-sitter-rust
    /tmp/ref/bin/python benches/reference/plain_script.py REPO
"""

import hashlib
import subprocess
import sys
import time

import tree_sitter
import tree_sitter_c_sharp
import tree_sitter_rust

# Declarations and containers by language: node kind -> symbol kind.
LANGUAGES = {
    ".cs": (
        tree_sitter_c_sharp.language(),
        {
            "namespace_declaration": "namespace",
            "file_scoped_namespace_declaration": "namespace",
            "class_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "destructor_declaration": "destructor",
            "property_declaration": "property",
            "operator_declaration": "operator",
            "indexer_declaration": "indexer",
            "delegate_declaration": "delegate",
        },
    ),
    ".rs": (
        tree_sitter_rust.language(),
        {
            "mod_item": "module",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "function_item": "function",
            "function_signature_item": "function",
        },
    ),
}


def name_of(node):
    name = node.child_by_field_name("name") or node.child_by_field_name("type")
    return name.text.decode("utf-8", "replace") if name is not None else "?"


def token_hash(node):
    """A hash of the node's tokens, comments left out (whitespace never is a token)."""
    digest = hashlib.blake2b(digest_size=16)
    stack = [node]
    while stack:
        n = stack.pop()
        if "comment" in n.type:
            continue
        if n.child_count == 0:
            digest.update(n.text)
            digest.update(b"\0")
        else:
            stack.extend(reversed(n.children))
    return digest.hexdigest()


def declarations(parser, kinds, source):
    """qualname + kind -> token hash, for every declaration of `source`."""
    found = {}
    stack = [(parser.parse(source).root_node, "")]
    while stack:
        node, prefix = stack.pop()
        for child in node.children:
            kind = kinds.get(child.type)
            if kind is None:
                stack.append((child, prefix))
                continue
            qualname = f"{prefix}.{name_of(child)}" if prefix else name_of(child)
            found[(qualname, kind)] = token_hash(child)
            stack.append((child, qualname))
    return found


class Blobs:
    """One `git cat-file --batch` for every blob read."""

    def __init__(self, repo):
        self.proc = subprocess.Popen(
            ["git", "-C", repo, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, oid):
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3:
            return b""
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data


def changes(repo):
    """(commit, [(old blob, new blob, path)]) oldest first, from one `git log`."""
    log = subprocess.run(
        [
            "git", "-C", repo, "log", "--reverse", "--raw", "--no-abbrev", "--no-renames",
            "--diff-merges=first-parent", "--format=%x00%H",
        ],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "replace")
    for chunk in log.split("\0")[1:]:
        lines = chunk.strip("\n").split("\n")
        files = []
        for line in lines[1:]:
            if not line.startswith(":"):
                continue
            meta, path = line.split("\t", 1)
            _, _, old, new, _ = meta.split(" ")
            files.append((old, new, path))
        yield lines[0], files


def main():
    repo = sys.argv[1]
    parsers = {}
    for ext, (language, kinds) in LANGUAGES.items():
        parsers[ext] = (tree_sitter.Parser(tree_sitter.Language(language)), kinds)
    blobs = Blobs(repo)
    zero = "0" * 40
    started = time.monotonic()
    commits = sides = 0
    labels = {"ADDED": 0, "DELETED": 0, "MODIFIED": 0, "UNCHANGED": 0}
    for _, files in changes(repo):
        commits += 1
        for old, new, path in files:
            ext = path[path.rfind("."):]
            if ext not in parsers:
                continue
            parser, kinds = parsers[ext]
            before = declarations(parser, kinds, blobs.read(old)) if old != zero else {}
            after = declarations(parser, kinds, blobs.read(new)) if new != zero else {}
            sides += (old != zero) + (new != zero)
            for key, digest in after.items():
                if key not in before:
                    labels["ADDED"] += 1
                elif before[key] != digest:
                    labels["MODIFIED"] += 1
                else:
                    labels["UNCHANGED"] += 1
            labels["DELETED"] += sum(1 for key in before if key not in after)
    took = time.monotonic() - started
    print(
        f"{commits} commits in {took:.2f} s: {commits / took:.0f} commits/s "
        f"({sides} file sides parsed; {labels})"
    )


if __name__ == "__main__":
    main()
