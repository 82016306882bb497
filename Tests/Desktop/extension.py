"""The GNOME Files / Nemo extension, as the file manager loads it: imported
after the real gi.repository module (Nautilus 4.0 or Nemo 3.0), given
file items that implement the real FileInfo interface, its menu items
activated (with a GLib main loop) and its emblem requests answered.

    /usr/bin/python3 extension.py nautilus|nemo EXTENSION PREFIX TREE

EXTENSION is the installed skipbackup_menu.py, PREFIX the directory its
skipbackup and skipbackup-desktop are under (a DESTDIR's), TREE a folder
of hostile names that check made. Prints "ok" or raises.
"""

import importlib.util
import os
import sys

import gi

host, extension_path, prefix, tree = sys.argv[1:5]
if host == "nautilus":
    gi.require_version("Nautilus", "4.0")
    from gi.repository import Nautilus as FileManager
else:
    gi.require_version("Nemo", "3.0")
    from gi.repository import Nemo as FileManager
from gi.repository import Gio, GLib, GObject

spec = importlib.util.spec_from_file_location("skipbackup_menu", extension_path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert module.FileManager is FileManager, "the extension took the other file manager's module"
Extension = module.SkipBackupExtension
assert issubclass(Extension, FileManager.MenuProvider)
assert issubclass(Extension, FileManager.InfoProvider)
# The installed file names the install's PREFIX; this test's copy of it is
# in a DESTDIR, so the two commands are taken from there.
module.TOOL = os.path.join(prefix, "bin", "skipbackup")
module.ACTION = os.path.join(prefix, "libexec", "skipbackup", "skipbackup-desktop")


class Item(GObject.Object, FileManager.FileInfo):
    """A file as the file manager hands it to an extension."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.emblems = []
        self.invalidated = 0

    def do_get_uri_scheme(self):
        return "file"

    def do_get_location(self):
        return Gio.File.new_for_path(os.fsdecode(self.path))

    def do_is_directory(self):
        return os.path.isdir(self.path)

    def do_add_emblem(self, name):
        self.emblems.append(name)

    def do_invalidate_extension_info(self):
        self.invalidated += 1


def marks(path):
    return {name for name in os.listxattr(path, follow_symlinks=False)
            if name in ("user.com.apple.MobileBackup",
                        "user.com.apple.metadata:com_apple_backup_excludeItem",
                        "user.xdg.robots.backup")}


ALL = {"user.com.apple.MobileBackup",
       "user.com.apple.metadata:com_apple_backup_excludeItem",
       "user.xdg.robots.backup"}

tree = os.fsencode(tree)
names = sorted(os.listdir(tree))
paths = [os.path.join(tree, name) for name in names]
regular = [p for p in paths if not os.path.islink(p)]
assert len(regular) >= 5, names

loop = GLib.MainLoop()
extension = Extension()


def menu(items):
    arguments = (items,) if host == "nautilus" else (None, items)
    return {item.get_property("label"): item for item in extension.get_file_items(*arguments)}


def activate(item):
    done = []
    ran = extension._ran

    def finished(process, result, chosen):
        ran(process, result, chosen)
        done.append(True)
        loop.quit()

    extension._ran = finished
    item.activate()
    GLib.timeout_add_seconds(20, loop.quit)
    loop.run()
    extension._ran = ran
    assert done, "the menu's command did not finish within 20 s"


# Nothing marked: the menu offers Exclude only.
items = [Item(p) for p in regular]
offered = menu(items)
assert list(offered) == ["Exclude from backups"], offered

# Exclude: every item carries the three attribute marks, each directory a
# CACHEDIR.TAG; each item is asked to show its state again.
activate(offered["Exclude from backups"])
for item in items:
    assert marks(item.path) == ALL, (item.path, marks(item.path))
    assert item.invalidated == 1, item.path
    if os.path.isdir(item.path):
        assert os.path.isfile(os.path.join(item.path, b"CACHEDIR.TAG")), item.path
offered = menu(items)
assert list(offered) == ["Include in backups"], offered

# The emblem: the first item of the folder runs one skipbackup status of
# the whole folder, the others are answered from it; each excluded item
# gets the emblem, and a file inside a marked folder too (inherited).
COMPLETE = FileManager.OperationResult.COMPLETE
reads = []
read_folder = extension._read_folder
extension._read_folder = lambda folder, first: (reads.append(folder), read_folder(folder, first))[1]
fresh = [Item(p) for p in regular]
for item in fresh:
    assert extension.update_file_info(item) == COMPLETE, item.path
    assert item.emblems == [module.EMBLEM], (item.path, item.emblems)
assert reads == [tree], reads
directory = next(p for p in regular if os.path.isdir(p) and not os.path.islink(p))
inside = Item(os.path.join(directory, b"inside"))
open(inside.path, "w").close()
assert extension.update_file_info(inside) == COMPLETE
assert inside.emblems == [module.EMBLEM], inside.emblems
assert marks(inside.path) == set(), "the file inside was marked itself"
# Asked again for an item already answered: the folder is read again.
assert extension.update_file_info(Item(regular[0])) == COMPLETE
assert reads == [tree, directory, tree], reads

# Include: the marks and the tags go; the emblem with them.
activate(menu(items)["Include in backups"])
for item in items:
    assert marks(item.path) == set(), (item.path, marks(item.path))
    assert not os.path.exists(os.path.join(item.path, b"CACHEDIR.TAG")), item.path
again = [Item(p) for p in regular]
for item in again:
    extension.update_file_info(item)
    assert item.emblems == [], (item.path, item.emblems)

# A remote item (no local path) gets no menu and no emblem, and costs nothing.
class Remote(Item):
    def do_get_uri_scheme(self):
        return "sftp"


assert menu([Remote(b"/nowhere")]) == {}
assert extension.update_file_info(Remote(b"/nowhere")) == COMPLETE
assert reads[-1] != b"/", reads
print("ok")
