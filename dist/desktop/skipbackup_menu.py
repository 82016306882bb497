"""skipbackup in GNOME Files (nautilus-python 4) and Nemo (nemo-python).

Adds "Exclude from backups" and "Include in backups" to the menu of a
selection, and an emblem on every item skipbackup sees as excluded, its own
mark or a folder's above it. The same file serves both file managers: each
loads its extensions after importing its own typelib, so the one already in
sys.modules says which this is.

Both menu items run skipbackup-desktop (installed beside skipbackup, under
PREFIX/libexec/skipbackup), the one command every file manager's menu runs:
it chooses the marks, passes the paths to skipbackup as a NUL-separated
list and shows skipbackup's messages in a dialog.

The emblem: the file manager asks for one item at a time, so a process
per item would cost a skipbackup start (7 ms, measured) for each. Instead
the first item asked for in a folder runs one `skipbackup status` of every
entry of that folder (one listing of the folder, no walk below it: 0.24 s
for 10,000 files), and the other items are answered from that. It runs
while the file manager waits: answered later (IN_PROGRESS, then
info_provider_update_complete_invoke), GNOME Files 43 showed "Loading..."
for good on a home folder under Xvfb.
"""

import base64
import json
import os
import sys
from collections import OrderedDict

import gi
from gi.repository import Gio, GLib, GObject

if "gi.repository.Nemo" in sys.modules:
    from gi.repository import Nemo as FileManager
elif "gi.repository.Nautilus" in sys.modules:
    from gi.repository import Nautilus as FileManager
else:
    # Imported on its own (a test): GNOME Files' module.
    gi.require_version("Nautilus", "4.0")
    from gi.repository import Nautilus as FileManager

PREFIX = "@PREFIX@"
TOOL = os.path.join(PREFIX, "bin", "skipbackup")
ACTION = os.path.join(PREFIX, "libexec", "skipbackup", "skipbackup-desktop")
# The marks the emblem and the Include item go by: every attribute mark and
# CACHEDIR.TAG (what the Exclude item writes). nodump is read by skipbackup
# only when named, as on the command line; Include clears it too.
MARKS = "all,cachedir"
EMBLEM = "emblem-skipbackup-excluded"
# Folders whose entries' states are kept, the most recent first: enough for
# the windows and tabs a person has open.
FOLDERS_KEPT = 64


def _failed(message):
    """What skipbackup-desktop could not show itself (it did not start): a
    dialog, and the file manager's log."""
    print("skipbackup: %s" % message, file=sys.stderr)
    try:
        Gio.Subprocess.new(
            ["zenity", "--error", "--no-markup", "--title=skipbackup", "--width=560",
             "--text=Could not run the menu's command:\n\n" + message],
            Gio.SubprocessFlags.NONE)
    except GLib.Error:
        pass


def _path(file):
    """The item's local path as bytes, or None for a remote or virtual one."""
    if file.get_uri_scheme() != "file":
        return None
    location = file.get_location()
    path = location.get_path() if location is not None else None
    return os.fsencode(path) if path is not None else None


def _parse(output):
    """skipbackup status --format json lines: path bytes -> (excluded, own marks)."""
    states = {}
    for line in output.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if "path_base64" in item:
            key = base64.b64decode(item["path_base64"])
        else:
            key = item["path"].encode("utf-8")
        states[key] = (bool(item["excluded"]), tuple(item["marks"]))
    return states


def _status_command():
    return [TOOL, "status", "--quiet", "--format", "json", "-m", MARKS,
            "--files-from", "-", "-0"]


class SkipBackupExtension(GObject.GObject, FileManager.MenuProvider,
                          FileManager.InfoProvider):
    def __init__(self):
        super().__init__()
        # folder path bytes -> {item path bytes: (excluded, own marks)}
        self._folders = OrderedDict()

    # The emblem.

    def update_file_info(self, file):
        path = _path(file)
        if path is None:
            return FileManager.OperationResult.COMPLETE
        folder = os.path.dirname(path)
        states = self._folders.get(folder)
        if states is None or path not in states:
            # Each state answers once: asked again (the item changed, or
            # the menu invalidated it), the folder is read again.
            states = self._read_folder(folder, path)
        state = states.pop(path, None)
        if state is not None and state[0]:
            file.add_emblem(EMBLEM)
        return FileManager.OperationResult.COMPLETE

    def _read_folder(self, folder, first):
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        paths = [os.path.join(folder, name) for name in names]
        if first not in paths:
            paths.append(first)
        states = self._states(paths)
        self._folders[folder] = states
        self._folders.move_to_end(folder)
        while len(self._folders) > FOLDERS_KEPT:
            self._folders.popitem(last=False)
        return states

    # The menu.

    def get_file_items(self, *arguments):
        # GNOME Files 43 passes (files), Nemo (window, files).
        files = arguments[-1]
        chosen = [(path, file) for file in files
                  for path in [_path(file)] if path is not None]
        if not chosen:
            return []
        states = self._states([path for path, _ in chosen])
        marked = [bool(states.get(path, (False, ()))[1]) for path, _ in chosen]
        items = []
        if not all(marked):
            item = FileManager.MenuItem(
                name="SkipBackup::Exclude", label="Exclude from backups",
                tip="Mark the selected items so that backups leave them out",
                icon=EMBLEM)
            item.connect("activate", self._run, "exclude", chosen)
            items.append(item)
        if any(marked):
            item = FileManager.MenuItem(
                name="SkipBackup::Include", label="Include in backups",
                tip="Remove the selected items' marks, so that backups keep them again",
                icon="")
            item.connect("activate", self._run, "include", chosen)
            items.append(item)
        return items

    def get_background_items(self, *arguments):
        return []

    def _states(self, paths):
        """The state of each item, read now (the menu must say what is
        true when it opens): one skipbackup status for all of them."""
        try:
            process = Gio.Subprocess.new(
                _status_command(),
                Gio.SubprocessFlags.STDIN_PIPE | Gio.SubprocessFlags.STDOUT_PIPE
                | Gio.SubprocessFlags.STDERR_SILENCE)
            _, stdout, _ = process.communicate(
                GLib.Bytes.new(b"".join(p + b"\0" for p in paths)), None)
        except GLib.Error:
            return {}
        return _parse(stdout.get_data() if stdout is not None else b"")

    def _run(self, item, verb, chosen):
        # The paths on standard input, NUL-separated: as arguments, 30,000
        # of them exceed the kernel's limit (E2BIG) and nothing would run.
        try:
            process = Gio.Subprocess.new(
                [ACTION, verb, "-0"], Gio.SubprocessFlags.STDIN_PIPE)
        except GLib.Error as error:
            _failed("%s: %s" % (ACTION, error.message))
            return
        process.communicate_async(
            GLib.Bytes.new(b"".join(path + b"\0" for path, _ in chosen)), None,
            self._ran, chosen)

    def _ran(self, process, result, chosen):
        try:
            process.communicate_finish(result)
        except GLib.Error as error:
            _failed("%s: %s" % (ACTION, error.message))
        # The marks changed: every folder read before is read again (an
        # item below a chosen folder changes too), and each chosen item
        # asks for its state again.
        self._folders.clear()
        for _, file in chosen:
            file.invalidate_extension_info()
