package org.tensorcache.testing;

import java.nio.file.Path;
import java.util.Collection;

/**
 * The shell text of the {@link Reaper}: the cleanup script it keeps up to date (one line per thing
 * to end) and the watchdog that runs that script once the JVM is gone. POSIX {@code sh} and Linux's
 * {@code /proc}; nothing else.
 */
final class ReaperScript {
  /**
   * The functions the cleanup lines call. {@code alive PID START}: the process runs (not a zombie)
   * and is the one that was registered (same start time, so a reused pid is left alone). {@code
   * reap PID START}: SIGTERM to it and its descendants, up to 5 s, then SIGKILL. {@code pidfile
   * FILE SIGNAL}: the signal to the process named on the file's first line, then up to 10 s for it
   * to end.
   */
  private static final String FUNCTIONS =
      """
      alive() {
        st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1,20) || return 1
        [ -n "$st" ] && [ "${st%% *}" != Z ] && [ "${st#* }" = "$2" ]
      }
      tree() {
        for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
        echo "$1"
      }
      reap() {
        alive "$1" "$2" || return 0
        kill -TERM $(tree "$1") 2>/dev/null
        i=0
        while alive "$1" "$2" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        alive "$1" "$2" && kill -KILL $(tree "$1") 2>/dev/null
        return 0
      }
      pidfile() {
        p=$(head -n 1 "$1" 2>/dev/null) || return 0
        [ -n "$p" ] || return 0
        kill -"$2" "$p" 2>/dev/null || return 0
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        return 0
      }
      """;

  /**
   * The watchdog: {@code sh -c WATCHDOG reaper JVM_PID JVM_START DIR}. It ignores the signals of a
   * Ctrl-C or a stopped build (it runs in a session of its own too), polls the JVM every second,
   * then runs {@code DIR/cleanup.sh} and removes {@code DIR}.
   */
  static final String WATCHDOG =
      FUNCTIONS
          + """
          trap '' INT TERM HUP QUIT
          while alive "$1" "$2"; do sleep 1; done
          [ -f "$3/cleanup.sh" ] && sh "$3/cleanup.sh" >/dev/null 2>&1
          rm -rf "$3"
          """;

  private ReaperScript() {}

  /** The cleanup script: the processes and stop commands newest first, then the directories. */
  static String cleanup(Collection<String> stops, Collection<String> directories) {
    StringBuilder text = new StringBuilder("#!/bin/sh\n").append(FUNCTIONS);
    stops.forEach(line -> text.append(line).append('\n'));
    directories.forEach(line -> text.append(line).append('\n'));
    return text.toString();
  }

  /** The cleanup line of a process started at {@code start} (clock ticks after boot). */
  static String reap(long pid, String start) {
    return "reap " + pid + " " + quote(start);
  }

  /** The cleanup line of a detached server whose pid is on the first line of {@code file}. */
  static String pidFile(Path file, String signal) {
    return "pidfile " + quote(file.toAbsolutePath().toString()) + " " + quote(signal);
  }

  /** The cleanup line that removes {@code dir}. */
  static String remove(Path dir) {
    return "rm -rf " + quote(dir.toAbsolutePath().toString());
  }

  /** {@code s} as one word of {@code sh}. */
  static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
