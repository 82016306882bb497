#!/usr/bin/env python3
"""The parts of scripts/benchmark that are easier in Python than in bash.

    benchmark-helper.py record TREE LIST        the resource-value marks TREE has now
    benchmark-helper.py reset TREE LIST         put TREE's resource-value marks back to LIST
    benchmark-helper.py verify-mark LOG ENTRIES every cscan line in LOG: all ENTRIES marked
    benchmark-helper.py verify-query TREE CSCAN_OUT LIST_OUT STATUS_OUT ENTRIES
    benchmark-helper.py timings GROUP_DIR OUT [NAME=EXIT_CODE ...]
    benchmark-helper.py library RUNS_DIR OUT
    benchmark-helper.py report DATA_DIR DOC

`reset` is the `--prepare` step of the mark benchmark: it removes the
resource-value attribute from every entry that did not have it when `record`
ran and writes it back where it was, so every contender starts from the tree
mktree.py made (the legacy attribute is never touched by any contender).
`report` prints the table and rewrites the generated part of DOC.
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone

RESOURCE = "user.com.apple.metadata:com_apple_backup_excludeItem"
BEGIN = "<!-- BEGIN scripts/benchmark: generated, rewritten by every run -->"
END = "<!-- END scripts/benchmark -->"


def walk(root):
    """Every path under root (bytes), root first, never following links."""
    yield root
    stack = [root]
    while stack:
        directory = stack.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                yield entry.path
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)


def record(tree, out):
    tree = os.fsencode(tree)
    with open(out, "wb") as listing:
        for path in walk(tree):
            try:
                value = os.getxattr(path, RESOURCE, follow_symlinks=False)
            except OSError:
                continue
            listing.write(os.path.relpath(path, tree) + b"\0" + value.hex().encode() + b"\0")


def reset(tree, listing):
    tree = os.fsencode(tree)
    fields = open(listing, "rb").read().split(b"\0")
    keep = {fields[i]: bytes.fromhex(fields[i + 1].decode()) for i in range(0, len(fields) - 1, 2)}
    for path in walk(tree):
        value = keep.get(os.path.relpath(path, tree))
        if value is None:
            try:
                os.removexattr(path, RESOURCE, follow_symlinks=False)
            except OSError:
                pass
        else:
            os.setxattr(path, RESOURCE, value, follow_symlinks=False)


def cscan_counts(line):
    match = re.match(r"(\d+) entries, (\d+) marked", line)
    if not match:
        sys.exit(f"benchmark: unexpected cscan summary: {line!r}")
    return int(match.group(1)), int(match.group(2))


def verify_mark(log, entries):
    lines = [line for line in open(log).read().splitlines() if line.strip()]
    if not lines:
        sys.exit("benchmark: the mark contenders were never verified")
    for line in lines:
        seen, marked = cscan_counts(line)
        if seen != int(entries) or marked != seen:
            sys.exit(f"benchmark: a mark contender left the tree partly unmarked: {line}")


def verify_query(tree, cscan_out, list_out, status_out, entries):
    """`list --excluded` prints the topmost marked items: cscan's marked set
    without anything below a marked directory. `status` prints one line an entry."""
    marked = {p for p in open(cscan_out, "rb").read().split(b"\0") if p}
    listed = [p for p in open(list_out, "rb").read().split(b"\0") if p]

    def topmost(path):
        parent = os.path.dirname(path)
        while len(parent) >= len(tree):
            if parent in marked:
                return False
            parent = os.path.dirname(parent)
        return True

    expected = {p for p in marked if topmost(p)}
    if set(listed) != expected or len(listed) != len(expected):
        sys.exit(
            f"benchmark: skipbackup list printed {len(listed)} paths, cscan's marks say "
            f"{len(expected)}; the tool and the floor disagree, so timing them means nothing")
    lines = sum(1 for _ in open(status_out, "rb"))
    if lines != int(entries):
        sys.exit(f"benchmark: skipbackup status printed {lines} lines for {entries} entries")


def library(rounds_dir, out):
    """The p50 of each benchmark of each run of the suite (the histogramPercentiles
    export: a header, then one `PERCENTILE<TAB>VALUE` line a percentile), by name."""
    merged = {}
    for run in sorted(os.listdir(rounds_dir)):
        for name in os.listdir(os.path.join(rounds_dir, run)):
            match = re.match(r".*\.IsExcluded\.(.*)\.wallClock\.histogram\.percentiles\.tsv$", name)
            if not match:
                continue
            for line in open(os.path.join(rounds_dir, run, name)):
                fields = line.split()
                if len(fields) == 2 and fields[0] == "50":
                    merged.setdefault(match.group(1).replace("_", " "), []).append(float(fields[1]))
    if not merged:
        sys.exit("benchmark: the library benchmark wrote no results")
    json.dump(merged, open(out, "w"), indent=1)


def timings(group_dir, out, expectations):
    """Merges the rounds' hyperfine exports: every run's time, by command name."""
    expected = dict(e.split("=", 1) for e in expectations)
    merged = {}
    for name in sorted(os.listdir(group_dir)):
        if not name.endswith(".json"):
            continue
        for result in json.load(open(os.path.join(group_dir, name)))["results"]:
            command = result["command"]
            want = int(expected.get(command, "0"))
            bad = [code for code in result["exit_codes"] if code != want]
            if bad:
                sys.exit(f"benchmark: '{command}' exited {bad[0]}, expected {want}")
            runs = merged.setdefault(command, {"times": [], "cpu": []})
            runs["times"].extend(result["times"])
            # hyperfine exports user and system time as means over a round's runs.
            runs["cpu"].append(result["user"] + result["system"])
    json.dump(merged, open(out, "w"), indent=1)


# MARK: - The report


def summary(values):
    values = sorted(values)
    quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {
        "median": statistics.median(values), "p25": quartiles[0], "p75": quartiles[2],
        "min": values[0], "max": values[-1], "n": len(values),
    }


def table_row(cells):
    """A Markdown table row; a `|` in a cell (a shell pipe) is escaped."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def seconds(value):
    if value >= 1:
        return f"{value:.3f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.2f} µs"


def machine(data_dir):
    """info.txt: KEY<TAB>VALUE lines that scripts/benchmark wrote; commands.txt: one a line."""
    info = {}
    for line in open(os.path.join(data_dir, "info.txt")).read().splitlines():
        key, value = line.split("\t", 1)
        info[key] = int(value) if value.isdigit() else value
    info["commands"] = open(os.path.join(data_dir, "commands.txt")).read().splitlines()
    model = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    info["cpu"] = f"{model}, {os.cpu_count()} cores"
    info["kernel"] = f"Linux {platform.release()} ({platform.machine()})"
    return info


def report(data_dir, doc):
    load = lambda name: json.load(open(os.path.join(data_dir, name)))
    info = machine(data_dir)
    groups = {}
    for g in ("list", "status", "mark", "check", "check-unmarked"):
        groups[g] = {}
        for command, runs in load(f"{g}.json").items():
            groups[g][command] = summary(runs["times"])
            groups[g][command]["cpu"] = statistics.median(runs["cpu"])
    memory = {k: summary(v) for k, v in load("memory.json").items()}
    library = load("library.json") if os.path.exists(os.path.join(data_dir, "library.json")) else None

    rows = []

    # Each row: measurement, skipbackup, reference, ratio, target, met/missed, and
    # the same ratio of CPU (user + system) times, which load on the machine
    # disturbs less.
    def at_most(label, group, tool, reference, target):
        t, r = groups[group][tool], groups[group][reference]
        ratio = t["median"] / r["median"]
        rows.append((label, seconds(t["median"]), seconds(r["median"]), f"{ratio:.2f}×",
                     f"≤ {target}×", "met" if ratio <= target else "missed",
                     f"{t['cpu'] / r['cpu']:.2f}×"))

    def faster(label, group, tool, reference, target):
        t, r = groups[group][tool], groups[group][reference]
        ratio = r["median"] / t["median"]
        rows.append((label, seconds(t["median"]), seconds(r["median"]), f"{ratio:.2f}× faster",
                     f"≥ {target}× faster", "met" if ratio >= target else "missed",
                     f"{r['cpu'] / t['cpu']:.2f}× faster"))

    at_most("`list --excluded -0` ÷ `cscan`", "list", "skipbackup list", "cscan", 1.0)
    faster("`list --excluded -0` against `getfattr -R`", "list", "skipbackup list", "getfattr -R", 2)
    at_most("`list --excluded -0` ÷ `xscan` (the expert floor, two threads)", "list",
            "skipbackup list", "xscan", 1.15)
    at_most("`status -R --format json` ÷ `cscan`", "status", "skipbackup status", "cscan", 1.0)
    at_most("`status -R --format json` ÷ `xscan` (the expert floor, two threads)", "status",
            "skipbackup status", "xscan", 1.15)
    faster("`status -R --format json` against `getfattr -R`", "status", "skipbackup status",
           "getfattr -R", 2)
    at_most("`mark -R` ÷ `cmark`", "mark", "skipbackup mark", "cmark", 1.2)
    faster("`mark -R` against `find -print0 | xargs -0 setfattr`", "mark", "skipbackup mark",
           "find | xargs setfattr", 3)
    at_most("`check FILE` ÷ `getfattr -n` (marked file)", "check", "skipbackup check",
            "getfattr -n", 1.5)
    at_most("`check FILE` ÷ `getfattr -n` (unmarked file: the directories above are read too)",
            "check-unmarked", "skipbackup check", "getfattr -n", 1.5)

    small, large = memory["1000"]["median"], memory[str(info["nfiles"])]["median"]
    delta = (large - small) / 1024
    rows.append((f"peak RSS of `list`, {info['nfiles']:,} files against 1,000 files",
                 f"{large / 1024:.1f} MiB", f"{small / 1024:.1f} MiB", f"{delta:+.1f} MiB",
                 "≤ +4 MiB", "met" if delta <= 4 else "missed", ""))

    if library:
        lib = {name: statistics.median(values) for name, values in library.items()}
        for api, label in (("isExcludedFromBackup", "`FilePath.isExcludedFromBackup`"),
                           ("resource isMarked", "`Mechanism.resource.isMarked`")):
            for state in ("marked", "unmarked"):
                t, r = lib[f"{api} ({state})"], lib[f"raw getxattr ({state})"]
                ratio = t / r
                rows.append((f"library {label} ÷ raw `getxattr` ({state} file)",
                             f"{t:.0f} ns", f"{r:.0f} ns", f"{ratio:.2f}×", "≤ 1.2×",
                             "met" if ratio <= 1.2 else "missed", ""))
    else:
        rows.append(("library `isExcludedFromBackup` ÷ raw `getxattr`", "not run", "not run",
                     "", "≤ 1.2×", "not run (BENCH_SKIP_LIBRARY)", ""))

    out = []
    out.append(BEGIN)
    out.append("")
    out.append("## Results")
    out.append("")
    out.append(f"Measured {info['date']} with `scripts/benchmark {info['nfiles']}` at commit "
               f"`{info['commit']}`. Ratios are from this one run; absolute times from different "
               "runs are not comparable (the machines are shared and noisy).")
    out.append("")
    out.append("| | |")
    out.append("| --- | --- |")
    out.append(f"| CPU | {info['cpu']} |")
    out.append(f"| kernel | {info['kernel']} |")
    out.append(f"| filesystem of the trees | {info['filesystem']} (`{info['tmp']}`) |")
    out.append(f"| Swift | {info['swift']} |")
    out.append(f"| tool measured | `.build/release/skipbackup` as `scripts/build` makes it "
               f"({info['linkage']}) |")
    out.append(f"| timing | {info['hyperfine']}; GNU time for peak RSS |")
    out.append(f"| trees | {info['tree']} ({info['entries']:,} entries, {info['marked']:,} of them "
               f"marked); 1,000 files for the memory baseline |")
    out.append(f"| runs | median of {info['rounds']} interleaved rounds after a warm-up run of each "
               f"command; `check`: {info['check_rounds']} rounds of {info['check_runs']}; memory: median "
               f"of {info['memory_runs']}; library: the median, over "
               f"{info['library_rounds']} run(s) of the suite, of each run's p50 |")
    out.append("")
    out.append("### Targets")
    out.append("")
    out.append("Wall-clock medians; the ratio and its target. The last column "
               "is the same ratio of CPU time (user + system), for reading a run on a busy "
               "machine; it says nothing of a second core.")
    out.append("")
    out.append("| measurement | skipbackup | reference | ratio | target | | CPU ratio |")
    out.append("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for row in rows:
        out.append(table_row(row))
    out.append("")
    out.append("### Every command")
    out.append("")
    out.append("Wall-clock medians with the interquartile range; `spread` is (p75 − p25) ÷ median. "
               "`CPU` is the median of user + system time, which other load on the machine "
               "disturbs less than wall-clock time (but which hides any use of the second core).")
    out.append("")
    out.append("| benchmark | command | median | p25 – p75 | spread | min – max | CPU | runs |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for group, commands in groups.items():
        for command, s in commands.items():
            spread = (s["p75"] - s["p25"]) / s["median"] * 100
            out.append(table_row((
                group, command, seconds(s["median"]), f"{seconds(s['p25'])} – {seconds(s['p75'])}",
                f"{spread:.0f} %", f"{seconds(s['min'])} – {seconds(s['max'])}",
                seconds(s["cpu"]), str(s["n"]))))
    for size, s in memory.items():
        out.append(f"| memory | `list`, {int(size):,} files | {s['median'] / 1024:.1f} MiB | "
                   f"{s['p25'] / 1024:.1f} – {s['p75'] / 1024:.1f} MiB | | "
                   f"{s['min'] / 1024:.1f} – {s['max'] / 1024:.1f} MiB | | {s['n']} |")
    if library:
        for name, values in sorted(library.items()):
            s = summary(values)
            out.append(f"| library | {name} | {s['median']:.0f} ns | {s['p25']:.0f} – "
                       f"{s['p75']:.0f} ns | | {s['min']:.0f} – {s['max']:.0f} ns | | {s['n']} |")
    out.append("")
    out.append("The commands, with `TREE` the tree above and `NAME` the resource-value attribute:")
    out.append("")
    for line in info["commands"]:
        out.append(f"- {line}")
    out.append("")
    out.append(END)
    generated = "\n".join(out)

    print("\n".join(["", "| measurement | skipbackup | reference | ratio | target | | CPU ratio |"] +
                    [table_row(row) for row in rows]))

    if os.path.exists(doc):
        text = open(doc).read()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1]
            text = head + generated + tail
        else:
            text = text.rstrip("\n") + "\n\n" + generated + "\n"
    else:
        text = "# Performance\n\n" + generated + "\n"
    open(doc, "w").write(text)
    print(f"\nwrote {doc}")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "record":
        record(*args)
    elif command == "reset":
        reset(*args)
    elif command == "verify-mark":
        verify_mark(*args)
    elif command == "verify-query":
        tree, cscan_out, list_out, status_out, entries = args
        verify_query(os.fsencode(tree), cscan_out, list_out, status_out, entries)
    elif command == "library":
        library(*args)
    elif command == "timings":
        timings(args[0], args[1], args[2:])
    elif command == "report":
        report(*args)
    else:
        sys.exit(f"benchmark-helper.py: unknown command {command}")


if __name__ == "__main__":
    main()
