/*
 * ab-launch --keep -- LAUNCHER ARGV...: what strace is to a traced command, for a command the
 * host traces with eBPF (sandbox/ebpf/hub.ts; the whole container's cgroup is traced, so nothing a
 * command starts runs untraced). The keeper is the command's parent and holds its processes:
 *
 * - It is a child subreaper, so every process the command starts stays below it whatever it does
 *   (double forks, setsid): the session agent (ab-serve.c) tells one command's processes from
 *   another's by ancestry here, as it tells them by their tracer under strace.
 * - It writes to fd 3 (the agent's trace pipe) the two lines of strace's output the agent reads:
 *   the main process's pid first (`PID execve(...) = 0`), and when that process exits,
 *   `PID exit_group(N) = ?`. Nothing of the command's goes into them (its argv could hold a
 *   newline and forge a line), and the command never holds fd 3 (close-on-exec here).
 * - It then reaps the command's other processes until none is left (the agent stops them, or
 *   keeps them as a background command until the episode's end), and exits with the main
 *   process's status; a main process killed by a signal makes it die of the same one, as strace.
 *
 * It runs outside the command's sandbox (the launcher it starts applies it), so the command can
 * neither signal it (Landlock's signal scope) nor read its /proc (the guard rules name it as the
 * session's mainPid, as they name strace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEEP_TRACE_FD 3
#define KEEP_EXIT_USAGE 120
#define KEEP_EXIT_SETUP 122

int keep_main(int argc, char **argv);

int keep_main(int argc, char **argv) {
  if (argc < 4 || strcmp(argv[1], "--keep") != 0 || strcmp(argv[2], "--") != 0) {
    fprintf(stderr, "ab-launch --keep: usage: ab-launch --keep -- cmd args...\n");
    return KEEP_EXIT_USAGE;
  }
  if (fcntl(KEEP_TRACE_FD, F_SETFD, FD_CLOEXEC) != 0) {
    fprintf(stderr, "ab-launch --keep: fd %d (the trace pipe) is not open\n", KEEP_TRACE_FD);
    return KEEP_EXIT_USAGE;
  }
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    fprintf(stderr, "ab-launch --keep: cannot become a subreaper: %s\n", strerror(errno));
    return KEEP_EXIT_SETUP;
  }
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "ab-launch --keep: fork: %s\n", strerror(errno));
    return KEEP_EXIT_SETUP;
  }
  if (child == 0) {
    execvp(argv[3], &argv[3]);
    _exit(errno == ENOENT ? 127 : 126);
  }
  dprintf(KEEP_TRACE_FD, "%d execve(\"keep\", [], []) = 0\n", (int)child);
  int main_status = 0, main_done = 0;
  for (;;) {
    int status;
    pid_t w = waitpid(-1, &status, __WALL);
    if (w < 0) {
      if (errno == EINTR) continue;
      break; /* ECHILD: nothing of the command is left */
    }
    if (w != child || main_done) continue;
    main_done = 1;
    main_status = status;
    if (WIFEXITED(status)) dprintf(KEEP_TRACE_FD, "%d exit_group(%d) = ?\n", (int)child, WEXITSTATUS(status));
  }
  close(KEEP_TRACE_FD);
  if (main_done && WIFSIGNALED(main_status)) {
    int sig = WTERMSIG(main_status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    kill(getpid(), sig);
    return 128 + sig;
  }
  return main_done && WIFEXITED(main_status) ? WEXITSTATUS(main_status) : 1;
}
