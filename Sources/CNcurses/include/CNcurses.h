// The C boundary of `skipbackup browse`: ncurses (Debian's libncursesw and
// libtinfo, linked statically into the release tool), through functions
// Swift can call. curses.h's interface is mostly macros over the global
// `stdscr` and `SP`, which Swift 6 cannot import (function-like macros) or
// touch from a concurrent context (mutable globals): each shim here is one
// such call made a function.
#ifndef CNCURSES_H
#define CNCURSES_H

#include <stddef.h>
#include <stdint.h>

#if defined(__has_include) && !__has_include(<curses.h>)
#error "skipbackup browse needs ncurses' header and library: install the Debian/Ubuntu package libncurses-dev (apt-get install libncurses-dev)"
#endif

// The keys the browser reads, as getch(3X) returns them.
enum {
  CNCURSES_KEY_NONE = -1,
  CNCURSES_KEY_DOWN = 0402,
  CNCURSES_KEY_UP = 0403,
  CNCURSES_KEY_LEFT = 0404,
  CNCURSES_KEY_RIGHT = 0405,
  CNCURSES_KEY_HOME = 0406,
  CNCURSES_KEY_BACKSPACE = 0407,
  CNCURSES_KEY_NPAGE = 0522,
  CNCURSES_KEY_PPAGE = 0523,
  CNCURSES_KEY_ENTER = 0527,
  CNCURSES_KEY_END = 0550,
  CNCURSES_KEY_RESIZE = 0632,
};

// Text attributes.
enum {
  CNCURSES_NORMAL = 0,
  CNCURSES_REVERSE = 1,
  CNCURSES_BOLD = 2,
};

/// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that put the
/// terminal back as it was (its termios, saved here, and ncurses' exit
/// sequences, read once ncurses has started) and then let the signal kill
/// the process, so that its status says so. Call before cncurses_begin:
/// ncurses installs its own handlers only where none is set, and its
/// handler calls functions that are not async-signal-safe, then exit(1).
/// Returns -1 (errno set) when standard input's termios cannot be read.
int cncurses_guard_terminal(void);

/// Starts ncurses on standard output and input (newterm, which returns an
/// error where initscr would print one and exit): no echo, keys one at a
/// time, function keys decoded, no cursor. -1 when the terminal type is
/// unknown or cannot drive a full screen.
int cncurses_begin(void);

/// Ends ncurses: the terminal as it was before cncurses_begin.
void cncurses_end(void);

int cncurses_lines(void);
int cncurses_columns(void);

/// The next key (blocking); CNCURSES_KEY_RESIZE after SIGWINCH.
int cncurses_key(void);

void cncurses_erase(void);
void cncurses_refresh(void);

/// Writes `length` bytes of `text` (UTF-8 under a UTF-8 locale, ASCII
/// otherwise) at row `y`, column `x`, with `attributes`.
void cncurses_put(int y, int x, const char *text, int length, int attributes);

/// Fills row `y` from column `x` to the end with spaces in `attributes`.
void cncurses_fill(int y, int x, int attributes);

/// Columns a Unicode scalar takes on the terminal (wcwidth(3)); -1 for one
/// that is not printable.
int cncurses_scalar_width(uint32_t scalar);

/// Sets the locale from the environment; 1 when its character set is
/// UTF-8, so that names in UTF-8 can be shown as they are.
int cncurses_use_locale(void);

#endif
