#!/usr/bin/env python3
"""include_cycles.py ROOT — fails when two compiled components depend on each other, directly or
through others. A component is a source file and its header (core/session/Session.cpp and .h); it
depends on every other component whose header it or its header includes, directly or through
header-only files (which belong to whoever includes them: CheckpointFormat.h is Checkpoint's). The
layering probes beside this script forbid includes upward between folders; this forbids cycles
inside a folder too (issue 21: Session.cpp defined functions that SessionStore.h declares, while
SessionStore.h includes Session.h).

Prints each cycle as its components and the includes that close it; exit 1 if there is one.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
FOLDERS = ("app", "core", "ui")
SUFFIXES = (".h", ".cpp", ".cu")


def components(root):
    """{compiled component: {component it depends on: 'file includes header'}} over FOLDERS."""
    includes = {}  # component -> [(file, header component, header)]
    compiled = set()
    for folder in FOLDERS:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                stem, suffix = os.path.splitext(name)
                if suffix not in SUFFIXES:
                    continue
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, root)
                component = os.path.splitext(rel)[0]
                if suffix != ".h":
                    compiled.add(component)
                listed = includes.setdefault(component, [])
                with open(path, encoding="utf-8", errors="replace") as f:
                    for header in INCLUDE.findall(f.read()):
                        if header.startswith(tuple(f + "/" for f in FOLDERS)):
                            listed.append((rel, os.path.splitext(header)[0], header))

    def reached(component, seen):
        """The compiled components `component` includes, looking through header-only ones."""
        out = {}
        for rel, target, header in includes.get(component, []):
            if target in compiled:
                out.setdefault(target, f"{rel} includes {header}")
            elif target not in seen:
                seen.add(target)
                for further, why in reached(target, seen).items():
                    out.setdefault(further, f"{rel} includes {header}, which reaches: {why}")
        return out

    graph = {}
    for component in compiled:
        edges = reached(component, {component})
        edges.pop(component, None)
        graph[component] = edges
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm, iteratively; the components of more than one node."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, {})))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, {}))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    result.append(sorted(members))
    return result


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    graph = components(root)
    cycles = strongly_connected(graph)
    for members in cycles:
        print("include cycle: " + " <-> ".join(members))
        for a in members:
            for b, why in sorted(graph[a].items()):
                if b in members:
                    print("  " + why)
    if cycles:
        return 1
    print(f"no include cycle among {len(graph)} components of {', '.join(FOLDERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
