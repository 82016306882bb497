#!/usr/bin/env python3
"""Makes a home like a developer's, the same for the same arguments: what
the sweep's tests and scripts/benchmark-sweep walk.

usage: mkhome.py ROOT [PROJECTS] [SEED]

ROOT gets user data (Documents/, Pictures/: files of 1-64 KiB), the XDG
cache (.cache/: many small files), package managers' caches (.npm/_cacache,
.cargo/registry, .m2/repository, .gradle/caches), and PROJECTS projects
(default 800) under code/pNNN-KIND, the kinds in turn:

    node    package.json     node_modules/ (packages, some nested)
    rust    Cargo.toml       target/debug/{deps,build,incremental}/
    python  pyproject.toml   .venv/ (pyvenv.cfg, lib/.../site-packages),
                             and pkg/__pycache__/ beside the sources
    swift   Package.swift    .build/
    php     composer.json    vendor/
    elixir  mix.exs          _build/ and deps/
    gradle  build.gradle     .gradle/ and build/
    decoy   (no sentinel)    node_modules/ and target/ that no sentinel
                             justifies: a sweep must leave them alone

Every third project is a git work tree (`git init -q`, when git is
installed) whose .gitignore ignores `*.log` and `out/`, with three `*.log`
files and an `out/` directory. Nothing is marked. Files hold `x` bytes,
their sizes drawn from SEED (default 1719) in a fixed order, so the same
arguments give the same tree, byte for byte; 800 projects make about
210,000 entries in about 0.9 GB. Prints a summary line.
"""
import os
import random
import shutil
import subprocess
import sys

root = sys.argv[1]
projects = int(sys.argv[2]) if len(sys.argv) > 2 else 800
draw = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1719).randint
made = 0


def put(path, size):
    """One file of `size` bytes, its directories made on the way."""
    global made
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(b"x" * size)
    made += 1


def fill(directory, count, low=1, high=2048, suffix=".dat"):
    """`count` files f0000 ... with sizes drawn between `low` and `high`."""
    for index in range(count):
        put(os.path.join(directory, f"f{index:04d}{suffix}"), draw(low, high))


def node(project):
    put(os.path.join(project, "package.json"), 200)
    fill(os.path.join(project, "src"), 20, suffix=".js")
    for index in range(draw(20, 60)):
        package = os.path.join(project, "node_modules", f"pkg{index:03d}")
        put(os.path.join(package, "package.json"), 150)
        fill(os.path.join(package, "lib"), draw(5, 25), suffix=".js")
        if index % 7 == 0:  # a dependency of its own, as npm nests them
            fill(os.path.join(package, "node_modules", "dep", "lib"), 8, suffix=".js")


def rust(project):
    put(os.path.join(project, "Cargo.toml"), 300)
    fill(os.path.join(project, "src"), 15, suffix=".rs")
    for part in ("deps", "build", "incremental"):
        fill(os.path.join(project, "target", "debug", part), draw(40, 120), 64, 8192)


def python(project):
    put(os.path.join(project, "pyproject.toml"), 300)
    fill(os.path.join(project, "pkg"), 15, suffix=".py")
    fill(os.path.join(project, "pkg", "__pycache__"), 15, suffix=".pyc")
    venv = os.path.join(project, ".venv")
    put(os.path.join(venv, "pyvenv.cfg"), 100)
    packages = os.path.join(venv, "lib", "python3.11", "site-packages")
    for index in range(draw(10, 30)):
        fill(os.path.join(packages, f"mod{index:02d}"), 12, suffix=".py")


def swift(project):
    put(os.path.join(project, "Package.swift"), 400)
    fill(os.path.join(project, "Sources", "App"), 10, suffix=".swift")
    fill(os.path.join(project, ".build", "debug", "App.build"), draw(50, 150), 64, 8192)


def php(project):
    put(os.path.join(project, "composer.json"), 200)
    fill(os.path.join(project, "src"), 10, suffix=".php")
    for index in range(draw(5, 20)):
        fill(os.path.join(project, "vendor", f"v{index:02d}", "src"), 10, suffix=".php")


def elixir(project):
    put(os.path.join(project, "mix.exs"), 200)
    fill(os.path.join(project, "lib"), 10, suffix=".ex")
    fill(os.path.join(project, "_build", "dev", "lib"), 60, suffix=".beam")
    fill(os.path.join(project, "deps", "dep", "lib"), 40, suffix=".ex")


def gradle(project):
    put(os.path.join(project, "build.gradle"), 200)
    fill(os.path.join(project, "src", "main", "java"), 10, suffix=".java")
    fill(os.path.join(project, ".gradle", "8.0"), 30)
    fill(os.path.join(project, "build", "classes"), 60, suffix=".class")


def decoy(project):
    fill(os.path.join(project, "notes"), 10, suffix=".md")
    # A person's own folders, named as build output is, with no sentinel.
    fill(os.path.join(project, "node_modules"), 10, suffix=".txt")
    fill(os.path.join(project, "target"), 10, suffix=".txt")


kinds = [node, rust, python, swift, php, elixir, gradle, decoy]
os.makedirs(root, exist_ok=True)
fill(os.path.join(root, "Documents"), 400, 1024, 65536, ".pdf")
fill(os.path.join(root, "Pictures", "2026"), 300, 4096, 65536, ".jpg")
for cache in ("fontconfig", "mesa_shader_cache", "pip", "thumbnails"):
    fill(os.path.join(root, ".cache", cache), 500, 64, 4096)
fill(os.path.join(root, ".npm", "_cacache", "content-v2"), 2000, 64, 2048)
fill(os.path.join(root, ".cargo", "registry", "cache"), 1000, 64, 4096, ".crate")
fill(os.path.join(root, ".m2", "repository", "org"), 1000, 64, 4096, ".jar")
fill(os.path.join(root, ".gradle", "caches", "modules-2"), 1000, 64, 4096, ".jar")

git = shutil.which("git")
for number in range(projects):
    kind = kinds[number % len(kinds)]
    project = os.path.join(root, "code", f"p{number:03d}-{kind.__name__}")
    kind(project)
    if number % 3 == 0:
        put(os.path.join(project, ".gitignore"), 0)
        with open(os.path.join(project, ".gitignore"), "w") as ignore:
            ignore.write("*.log\nout/\n")
        fill(os.path.join(project, "out"), 10, suffix=".o")
        for index in range(3):
            put(os.path.join(project, f"run{index}.log"), 512)
        if git:
            subprocess.run([git, "init", "-q", project], check=True)

print(f"{made} files in a home-like tree under {root}, {projects} projects")
