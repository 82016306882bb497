#!/usr/bin/env python3
"""The report of scripts/benchmark-backup: medians of the interleaved rounds
hyperfine exported, with/without ratios of wall and CPU time against the 1.1x
target, written into docs/performance.md between <!-- backup-NFILES:begin -->
and <!-- backup-NFILES:end -->.

usage: benchmark-backup-report.py ROUNDS_DIR DOC NFILES ENTRIES MARKED LOAD_BEFORE LOAD_AFTER ROUNDS
"""
import json, os, statistics, sys, datetime
rounds_dir, doc, nfiles, entries, marked, load_before, load_after, rounds = sys.argv[1:]
LABELS = {"rsync": "include list", "tar": "include list",
          "restic": "exclusion file", "borg": "exclusion file (pf:)"}
rows = []
for group in sorted(os.listdir(rounds_dir)):
    times = {}
    for f in sorted(os.listdir(os.path.join(rounds_dir, group))):
        for r in json.load(open(os.path.join(rounds_dir, group, f)))["results"]:
            t = times.setdefault(r["command"], {"wall": [], "cpu": []})
            t["wall"].append(r["times"][0])
            t["cpu"].append(r["user"] + r["system"])
    tool, run = group.rsplit("-", 1)
    if "without" not in times:
        continue
    base = times["without"]
    bw, bc = statistics.median(base["wall"]), statistics.median(base["cpu"])
    for name, t in times.items():
        if name == "without":
            continue
        w, c = statistics.median(t["wall"]), statistics.median(t["cpu"])
        label = {"with": LABELS.get(tool, "with"), "exclusion file": "mirror: exclusion file",
                 "run": "`skipbackup run` (the view)"}.get(name, name)
        if tool == "tar":
            run = "first (a repeat is the same: tar keeps no state)"
        ok = "met" if w / bw <= 1.1 and c / bc <= 1.1 else "missed"
        rows.append(f"| {tool} | {run} | {label} | {w:.2f} s / {bw:.2f} s | {w / bw:.2f}x "
                    f"| {c:.2f} s / {bc:.2f} s | {c / bc:.2f}x | {ok} |")
block = [
    f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `scripts/benchmark-backup {nfiles.split('-')[0]}`: "
    f"{int(entries):,} entries, {int(marked):,} topmost marked; {rounds} interleaved rounds, medians; "
    f"load average {load_before} before and {load_after} after (2 cores, shared). "
    "CPU is user + system time of the whole recipe, skipbackup included.",
    "",
    "| tool | backup | with the marks | wall with / without | wall ratio | CPU with / without | CPU ratio | 1.1x |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
] + rows
begin, end = f"<!-- backup-{nfiles}:begin -->", f"<!-- backup-{nfiles}:end -->"
text = open(doc).read()
if begin in text:
    head, rest = text.split(begin, 1)
    text = head + begin + "\n" + "\n".join(block) + "\n" + end + rest.split(end, 1)[1]
else:
    text = text.rstrip("\n") + f"\n\n{begin}\n" + "\n".join(block) + f"\n{end}\n"
open(doc, "w").write(text)
print("\n".join(block))
