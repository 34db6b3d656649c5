"""pty_drive.py ACTION CMD...: run CMD on a new terminal; once it printed "ready", ACTION at that terminal:
'intr' types Ctrl-C (the terminal sends SIGINT to its foreground group, si_code SI_KERNEL), 'winch' resizes it
(SIGWINCH the same way). Prints how CMD ended ("exit N" or "signal N"), then which of "winch" and "done" its
output holds (or "-" when none). For record's signal forwarding: tests/core/record_cli.t,
tests/cli/record_signals.t."""
import fcntl
import os
import pty
import signal
import struct
import sys
import termios

action, cmd = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    # as in an interactive shell's foreground job: a harness started in the background (a non-interactive shell's
    # `cmd &`) has SIGINT and SIGQUIT ignored, which record now keeps for its command (nohup's HUP likewise)
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    os.execvp(cmd[0], cmd)
out, sent = b"", False
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
    if not sent and b"ready" in out:
        if action == "intr":
            os.write(fd, b"\x03")
        else:
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        sent = True
_, st = os.waitpid(pid, 0)
how = "exit %d" % os.WEXITSTATUS(st) if os.WIFEXITED(st) else "signal %d" % os.WTERMSIG(st)
# substrings: the terminal's echo of Ctrl-C ("^C") runs into the next output
print(how, " ".join(w for w in ("winch", "done") if w.encode() in out) or "-")
