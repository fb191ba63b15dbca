#!/usr/bin/env python3
"""The tree a GPU verdict ran on, tied to a commit (scripts/gpu-tests.sh).

  scripts/gpu-tree.py write           on the workstation, before a device call: refuses a working
                                      tree that differs from HEAD (git status not empty); else
                                      writes .gpu-tree, HEAD's hash and each tracked file's SHA-256.
                                      Carry it with the call (the device tool's carry: .gpu-tree).
  scripts/gpu-tree.py verify [ROOT]   on the device: every file .gpu-tree lists has its hash, and
                                      no other file is there but those .gitignore leaves out (and
                                      verdicts gpu-tests.sh wrote in docs/data/gpu-tests/);
                                      prints the commit (exit 0), or each difference (exit 1).

The device's copy of the tree has no git metadata of its own commit, so git cannot say whether it
is that commit's tree; the hashes can.
"""
import fnmatch
import hashlib
import os
import subprocess
import sys

MANIFEST = ".gpu-tree"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write(root):
    status = subprocess.run(["git", "-C", root, "status", "--porcelain"], check=True,
                            capture_output=True, text=True).stdout
    if status.strip():
        sys.stderr.write("gpu-tree: the working tree differs from HEAD; commit first:\n" + status)
        return 1
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    files = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    lines = [f"commit {head}"]
    for path in sorted(f for f in files if f):
        full = os.path.join(root, path)
        if os.path.islink(full):
            lines.append(f"link {os.readlink(full)}  {path}")
        else:
            lines.append(f"{sha256(full)}  {path}")
    with open(os.path.join(root, MANIFEST), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"gpu-tree: {MANIFEST} names {head[:7]}, {len(lines) - 1} files")
    return 0


def ignore_patterns(root):
    """.gitignore's patterns (this repository's: anchored folders, names, globs), and git's own."""
    patterns = [".git/", MANIFEST]
    with open(os.path.join(root, ".gitignore"), encoding="utf-8") as f:
        patterns += [l.strip() for l in f if l.strip() and not l.startswith("#")]
    return patterns


def ignored(rel, is_dir, patterns):
    name = os.path.basename(rel)
    for p in patterns:
        folder_only = p.endswith("/")
        q = p.rstrip("/")
        if folder_only and not is_dir:
            continue
        if q.startswith("/"):
            if fnmatch.fnmatch(rel, q[1:]):
                return True
        elif fnmatch.fnmatch(name, q) or fnmatch.fnmatch(rel, q):
            return True
    return False


def verify(root):
    path = os.path.join(root, MANIFEST)
    if not os.path.exists(path):
        print(f"no {MANIFEST}: run scripts/gpu-tree.py write on the workstation and carry it")
        return 1
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("commit "):
        print(f"{MANIFEST}: its first line names no commit")
        return 1
    commit = lines[0].split()[1]
    listed = {}
    for line in lines[1:]:
        digest, rel = line.split("  ", 1)
        listed[rel] = digest
    differences = []
    for rel, digest in listed.items():
        full = os.path.join(root, rel)
        if digest.startswith("link "):
            if not os.path.islink(full) or os.readlink(full) != digest[5:]:
                differences.append(f"changed link: {rel}")
        elif not os.path.isfile(full):
            differences.append(f"missing: {rel}")
        elif sha256(full) != digest:
            differences.append(f"changed: {rel}")
    patterns = ignore_patterns(root)
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        rel_folder = "" if rel_folder == "." else rel_folder
        dirs[:] = [d for d in dirs if not ignored(os.path.join(rel_folder, d), True, patterns)]
        for name in files:
            rel = os.path.join(rel_folder, name)
            # A verdict an earlier call of gpu-tests.sh wrote on this device copy is not a change
            # to what is tested.
            verdict = rel.startswith("docs/data/gpu-tests/") and rel.endswith(".txt")
            if rel not in listed and not verdict and not ignored(rel, False, patterns):
                differences.append(f"not in {commit[:7]}: {rel}")
    if differences:
        print(f"the tree differs from {commit[:7]} in {len(differences)} files:")
        print("\n".join("   " + d for d in sorted(differences)[:40]))
        return 1
    print(commit[:7])
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("write", "verify"):
        sys.stderr.write(__doc__)
        return 2
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..")
    return write(root) if sys.argv[1] == "write" else verify(root)


if __name__ == "__main__":
    sys.exit(main())
