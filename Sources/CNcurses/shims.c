// See CNcurses.h. Every function here is a call Swift cannot make directly,
// or (the signal handler) code that must not run the Swift runtime.
#define _GNU_SOURCE 1
#define _XOPEN_SOURCE_EXTENDED 1
#include "CNcurses.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

static struct termios saved_termios;
static int saved = 0;
// ncurses' sequences to leave the full screen, copied while it runs, for the
// signal handler, which may only call async-signal-safe functions.
static char leave_sequence[256];
static size_t leave_length = 0;

static void restore_and_die(int signal_number) {
  if (leave_length > 0) {
    (void)!write(STDOUT_FILENO, leave_sequence, leave_length);
  }
  if (saved) {
    (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

int cncurses_guard_terminal(void) {
  if (tcgetattr(STDIN_FILENO, &saved_termios) != 0) return -1;
  saved = 1;
  int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t index = 0; index < sizeof signals / sizeof signals[0]; index++) {
    struct sigaction old;
    // A signal that is ignored (nohup) stays ignored.
    if (sigaction(signals[index], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = restore_and_die;
    sigemptyset(&action.sa_mask);
    (void)sigaction(signals[index], &action, NULL);
  }
  return 0;
}

static void append_capability(const char *name) {
  char *value = tigetstr(name);
  if (value == NULL || value == (char *)-1) return;
  size_t length = strlen(value);
  if (leave_length + length >= sizeof leave_sequence) return;
  memcpy(leave_sequence + leave_length, value, length);
  leave_length += length;
}

int cncurses_begin(void) {
  if (newterm(NULL, stdout, stdin) == NULL) return -1;
  leave_length = 0;
  append_capability("sgr0");
  append_capability("cnorm");
  append_capability("rmkx");
  append_capability("rmcup");
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  return 0;
}

void cncurses_end(void) {
  endwin();
  leave_length = 0;
}

int cncurses_lines(void) { return LINES; }
int cncurses_columns(void) { return COLS; }
int cncurses_key(void) { return getch(); }
void cncurses_erase(void) { erase(); }
void cncurses_refresh(void) { refresh(); }

static attr_t attributes_of(int attributes) {
  attr_t result = A_NORMAL;
  if (attributes & CNCURSES_REVERSE) result |= A_REVERSE;
  if (attributes & CNCURSES_BOLD) result |= A_BOLD;
  return result;
}

void cncurses_put(int y, int x, const char *text, int length, int attributes) {
  attr_t attribute = attributes_of(attributes);
  attron(attribute);
  mvaddnstr(y, x, text, length);
  attroff(attribute);
}

void cncurses_fill(int y, int x, int attributes) {
  attr_t attribute = attributes_of(attributes);
  attron(attribute);
  for (int column = x; column < COLS; column++) mvaddch(y, column, ' ');
  attroff(attribute);
}

int cncurses_scalar_width(uint32_t scalar) { return wcwidth((wchar_t)scalar); }

int cncurses_use_locale(void) {
  if (setlocale(LC_ALL, "") == NULL) return 0;
  const char *codeset = nl_langinfo(CODESET);
  return codeset != NULL && strcmp(codeset, "UTF-8") == 0;
}
