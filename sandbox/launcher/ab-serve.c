/*
 * ab-launch --serve: the long-lived in-container agent behind SandboxSession.
 *
 * Started once per session through one attached Docker exec, it reads request
 * frames on stdin and answers each with one response frame on stdout, so one
 * sandboxed command costs one round trip over an open stream instead of
 * several exec/archive API calls. The wire format is documented in
 * sandbox/launcher/protocol.ts (the TypeScript side, which mirrors this file).
 *
 * The agent never enforces anything itself: a request carries the argv to run
 * (strace … -- ab-launch --channel 4 --rules-fd 5 -- cmd, built by the host),
 * and the agent spawns it in its own process group with fresh pipes for
 * stdin/stdout/stderr and, at fixed descriptor numbers, what the wrappers
 * need: the trace pipe (fd 3, strace writes its output there), the launcher's
 * channel (fd 4, a socket: report, failure, and the seccomp listener through
 * which denied syscalls come back here to be recorded and answered EPERM) and
 * the rules (fd 5, a sealed memfd). None of them lives in the filesystem, so
 * no command can read, forge or void them.
 *
 * Processes: the agent is a child subreaper, so everything a command starts
 * stays below it whatever it does (double forks, setsid). A command ends when
 * its main process ends. Untraced, whatever is left is then killed and counted
 * (leftover). Traced, strace would wait for every tracee, so the agent watches
 * the command's main process (the trace's first pid): once strace has reaped it
 * the processes the tracer still follows are survivors, those it does not
 * escaped it (leftover, evidence of tampering); all are killed *before* the
 * tracer, which records their deaths and exits with the main process's status.
 * On a timeout the command's processes are likewise killed before the tracer,
 * so nothing ever runs untraced. A request may ask to keep its survivors
 * (KEEP_BACKGROUND, a service): they then run on as a background command, traced
 * and in the launch's sandbox, until the host's stop request (run_stop); at most
 * MAX_BACKGROUND at once. No process outlives the session. The trace is kept up to
 * the request's cap and counted beyond it (the pipe is always drained, so a flood
 * never blocks the tracer or grows the agent).
 *
 * The cut (the host's storage guard): `ab-launch --cut-serve PID`, docker exec'd by the host,
 * sends the agent SIGUSR1 and waits for its SIGUSR2. A cut stops everything of the agent's now: a
 * running command as on its timeout (its processes first, the tracer last; the answer says CUT),
 * and the processes of the background commands and of the persistent shell (their tracers record
 * it and exit; the stop request still answers with what they did until then). With nothing
 * running it is a no-op; either way it is consumed, so later requests run normally. A SIGUSR1
 * from one of the agent's own descendants (a command signalling it, which Landlock's signal
 * scope refuses anyway) is ignored: every command is below the agent (a child subreaper), a
 * docker exec'd process never is.
 *
 *   ab-launch --serve              serve requests until stdin closes
 *   ab-launch --serve --wake       the same, started by the container's main process (ab-launch.c
 *                                  idle_serving): says hello once the host sends the wake byte
 *   ab-launch --stop-serve PID     stop an agent that no longer reads stdin
 *   ab-launch --cut-serve PID      cut everything the agent runs (exit 0 once it acknowledged, 1 if not)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int serve_main(void);
int serve_after_wake_main(void);
int stop_serve_main(const char *pid_arg);
int cut_serve_main(const char *pid_arg);

#define PROTOCOL_VERSION 5
/* Requests carry rules and stdin; anything larger is a broken client. */
#define MAX_REQUEST_BYTES (256u << 20)
/* After the command's processes are gone, how long to wait for the pipes to report end of file. */
#define DRAIN_GRACE_MS 500
/* After killing a traced command's processes, how long the tracer has to flush its output and exit. */
#define TRACER_GRACE_MS 2000
/* Without a pidfd, how often to look for the command's exit. */
#define WAIT_POLL_MS 5
/* Traced: how often to look whether the command's main process is still there. */
#define MAIN_POLL_MS 20
/* "pid comm" lines kept per list of killed processes; the rest are counted. */
#define MAX_INFO_LINES 8
#define READ_CHUNK 65536
/* Denied syscalls recorded in detail per command; the rest are counted. */
#define MAX_DENIAL_RECORDS 4096
/* Launcher messages kept per command (a report is a few KiB). */
#define MAX_CHANNEL_BYTES (1u << 20)
#define MAX_LISTENERS 4
/* Commands whose processes may keep running in the background at once; a later command's are stopped as it ends. */
#define MAX_BACKGROUND 4
/* More survivors than this are not a service but a runaway (a fork bomb): they are stopped, not kept. */
#define MAX_BG_SURVIVORS 64
/* Trace kept per background command after its main process ended; the rest is counted. */
#define BG_TRACE_CAP (16u << 20)
/* After the main process is gone, how long to wait for the tracer to write its exit_group. */
#define EXIT_LINE_GRACE_MS 1000
/* Poll slots the background commands may need: trace, stdout, stderr and listeners each. */
#define BG_SLOTS (MAX_BACKGROUND * (3 + MAX_LISTENERS))
/* Processes a sweep looks at; a pids limit on the container keeps real numbers far below. */
#define MAX_PROCS 65536
/* Processes one sweep round kills. Above a container's pids limit, so a fork bomb loses every
 * process it has in one round rather than refilling what a smaller batch left between rounds. */
#define MAX_SWEEP 8192
/* Parent links one walk follows up; a fork bomb's chains run deep (each generation a child). */
#define MAX_CHAIN 4096
#define MAX_LISTING_BYTES (512u << 20)

/* The descriptors a command's wrappers find (mirrored in protocol.ts). */
#define FD_TRACE 3
#define FD_CHANNEL 4
#define FD_RULES 5
/* Everything the agent opens for itself lives at or above this, so placing 3..5 never collides. */
#define FD_FLOOR 10

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_memfd_create
#define __NR_memfd_create 319
#endif
#define AB_CLOSE_RANGE_CLOEXEC (1U << 2)
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif

/* Frame types and field tags (mirrored in protocol.ts). */
enum { F_HELLO = 'H', F_RUN = 'R', F_LIST = 'L', F_STOP = 'S', F_DONE = 'D', F_BACKGROUND = 'B', F_ERROR = 'E' };
enum {
  T_VERSION = 1,
  T_PID = 2,
  T_MESSAGE = 3,
  T_PIDS = 4,
  T_ARGV = 10,
  T_ENV = 11,
  T_CWD = 12,
  T_STDIN = 13,
  T_TIMEOUT_MS = 14,
  T_OUTPUT_CAP = 15,
  T_PUT = 16,
  T_COLLECT = 17,
  T_TRACE_CAP = 18,
  T_CHANNEL = 19,
  T_RULES = 20,
  T_CPU = 21,
  T_KEEP_BACKGROUND = 22,
  T_EXIT = 30,
  T_SIGNAL = 31,
  T_TIMED_OUT = 32,
  T_STDOUT = 33,
  T_STDOUT_BYTES = 34,
  T_STDERR = 35,
  T_STDERR_BYTES = 36,
  T_DURATION_US = 37,
  T_FILE = 38,
  T_TRACE = 39,
  T_TRACE_BYTES = 40,
  T_TRACE_LIMIT = 41, /* retired: a trace over its cap is cut, not the command */
  T_CHANNEL_MSG = 42,
  T_DENIAL = 43,
  T_DENIALS_TOTAL = 44,
  T_LEFTOVER = 45,
  T_SPAWN_ERROR = 46,
  T_MAIN_PID = 47,
  T_LEFTOVER_INFO = 48,
  T_SURVIVORS = 49,
  T_SURVIVOR_INFO = 50,
  T_BACKGROUND_JOB = 51,
  T_JOB = 52,
  T_SHELL = 53,
  T_SHELL_RESET = 54,
  T_SHELL_STARTED = 55,
  T_SHELL_ENDED = 56,
  T_SHELL_FORGED = 57,
  T_SHELL_NOT_RUN = 58,
  T_HOST_TRACED = 59,
  T_CUT = 60, /* empty, with TIMED_OUT: the host cut the command (ab-launch --cut-serve) */
};

static const char *prog = "ab-agent";
static volatile sig_atomic_t terminate_requested = 0;
static pid_t self_pid;

/* ---- buffers and the wire ---- */

struct buf {
  unsigned char *p;
  size_t len, cap;
};

static void fatal(const char *what) __attribute__((noreturn));
static void fatal(const char *what) {
  fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
  exit(1);
}

static void buf_put(struct buf *b, const void *data, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (p == NULL) fatal("out of memory");
    b->p = p;
    b->cap = cap;
  }
  if (n > 0) memcpy(b->p + b->len, data, n);
  b->len += n;
}

static void put_be(struct buf *b, uint64_t v, int bytes) {
  unsigned char out[8];
  for (int i = 0; i < bytes; i++) out[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
  buf_put(b, out, (size_t)bytes);
}

static void put_field(struct buf *b, uint8_t tag, const void *data, size_t n) {
  buf_put(b, &tag, 1);
  put_be(b, n, 4);
  buf_put(b, data, n);
}

static void put_u32_field(struct buf *b, uint8_t tag, uint32_t v) {
  unsigned char out[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
  put_field(b, tag, out, 4);
}

static void put_u64_field(struct buf *b, uint8_t tag, uint64_t v) {
  struct buf tmp = {0};
  put_be(&tmp, v, 8);
  put_field(b, tag, tmp.p, 8);
  free(tmp.p);
}

static uint32_t get_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int write_all(int fd, const void *data, size_t n) {
  const unsigned char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        poll(&pfd, 1, -1);
        continue;
      }
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* 0: read n bytes; 1: end of stream before the first byte; -1: error or a cut frame; -2: interrupted by SIGTERM. */
static int read_exact(int fd, void *data, size_t n) {
  unsigned char *p = data;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) {
      if (terminate_requested) return -2;
      continue;
    }
    if (r < 0) return -1;
    if (r == 0) return got == 0 ? 1 : -1;
    got += (size_t)r;
  }
  return 0;
}

static int out_fd = 1;

static void kill_all_descendants(void);

static void send_frame(uint8_t type, const struct buf *fields) {
  struct buf frame = {0};
  put_be(&frame, 1 + fields->len, 4);
  buf_put(&frame, &type, 1);
  buf_put(&frame, fields->p, fields->len);
  if (write_all(out_fd, frame.p, frame.len) != 0) {
    /* The client is gone; nobody is left to answer, and nothing may outlive the session. */
    kill_all_descendants();
    exit(0);
  }
  free(frame.p);
}

static void send_error(const char *what, const char *path, int err) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s%s%s: %s", what, path[0] ? " " : "", path, strerror(err));
  struct buf fields = {0};
  put_field(&fields, T_MESSAGE, msg, strlen(msg));
  send_frame(F_ERROR, &fields);
  free(fields.p);
}

/* ---- processes ---- */

struct proc {
  pid_t pid, ppid;
  char state;
  char comm[32];
};

/* Every process in the container's pid namespace: pid, parent, state, name. */
static size_t list_procs(struct proc *out, size_t max) {
  DIR *d = opendir("/proc");
  if (d == NULL) return 0;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < max) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char path[300], text[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    if (r <= 0) continue;
    text[r] = '\0';
    /* "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split at the last ')'. */
    char *open_paren = strchr(text, '(');
    char *close_paren = strrchr(text, ')');
    if (open_paren == NULL || close_paren == NULL || close_paren[1] != ' ') continue;
    struct proc p;
    memset(&p, 0, sizeof p);
    p.pid = (pid_t)atoi(text);
    size_t clen = (size_t)(close_paren - open_paren - 1);
    if (clen >= sizeof p.comm) clen = sizeof p.comm - 1;
    memcpy(p.comm, open_paren + 1, clen);
    p.state = close_paren[2];
    p.ppid = (pid_t)atoi(close_paren + 4);
    out[n++] = p;
  }
  closedir(d);
  return n;
}

static struct proc procs[MAX_PROCS];

static int by_pid(const void *a, const void *b) {
  pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
  return (x > y) - (x < y);
}

static ssize_t index_of(size_t n, pid_t pid) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (procs[mid].pid < pid) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && procs[lo].pid == pid ? (ssize_t)lo : -1;
}

/*
 * The live processes below this agent (children, and through the subreaper every orphan of
 * them), except `spare`. Zombies are left out: they cannot act and are reaped, not killed.
 */
/* Which processes a look below the agent passes over besides `spare` (see bg_owns). */
enum { BG_NONE = 0, BG_WHOLE = 1, BG_TRACERS = 2 };
static int bg_owns(pid_t pid, int mode);
static void bg_reaped(pid_t pid, int status);

static size_t descendants(pid_t spare, int bg_mode, struct proc *out, size_t max) {
  size_t n = list_procs(procs, MAX_PROCS);
  qsort(procs, n, sizeof procs[0], by_pid);
  /* 0: not yet known, 1: below the agent, 2: not */
  static unsigned char below[MAX_PROCS];
  memset(below, 0, n);
  size_t found = 0;
  for (size_t i = 0; i < n; i++) {
    /* Walk up the parent chain until the agent, the top, or a process already decided. */
    static ssize_t chain[MAX_CHAIN];
    int depth = 0;
    ssize_t cur = (ssize_t)i;
    unsigned char verdict = 2;
    while (cur >= 0 && depth < MAX_CHAIN) {
      if (below[cur] != 0) {
        verdict = below[cur];
        break;
      }
      chain[depth++] = cur;
      pid_t parent = procs[cur].ppid;
      if (parent == self_pid) {
        verdict = 1;
        break;
      }
      if (parent <= 1) break;
      cur = index_of(n, parent);
    }
    for (int k = 0; k < depth; k++) below[chain[k]] = verdict;
    if (below[i] == 0) below[i] = verdict;
  }
  for (size_t i = 0; i < n; i++) {
    if (below[i] != 1 || procs[i].pid == spare || procs[i].state == 'Z' || procs[i].state == 'X') continue;
    if (bg_mode != BG_NONE && bg_owns(procs[i].pid, bg_mode)) continue;
    if (found < max) out[found] = procs[i];
    found++;
  }
  return found;
}

/* ---- the host's cut (SIGUSR1 from ab-launch --cut-serve) ---- */

/* Senders recorded by the handler (async-signal-safe: stores and a write), checked outside it. */
#define MAX_CUT_SENDERS 16
/* How long --cut-serve waits for the agent's acknowledgement (the agent may be mid-sweep). */
#define CUT_ACK_MS 20000
static volatile sig_atomic_t cut_senders[MAX_CUT_SENDERS];
static volatile sig_atomic_t n_cut_senders = 0;
/* Written by the handler so a poll wakes however the signal and the poll interleave. */
static int cut_pipe[2] = {-1, -1};
/* Senders of the cut being acted on, told (SIGUSR2) once it was. */
static pid_t cut_acks[MAX_CUT_SENDERS];
static int n_cut_acks = 0;

static void on_cut(int sig, siginfo_t *info, void *context) {
  (void)sig, (void)context;
  /* Sent by a process (kill, sigqueue, tgkill), not raised by the kernel for a file (F_SETSIG). */
  if (info->si_code != SI_USER && info->si_code != SI_QUEUE && info->si_code != SI_TKILL) return;
  int saved = errno;
  if (n_cut_senders < MAX_CUT_SENDERS) cut_senders[n_cut_senders++] = (sig_atomic_t)info->si_pid;
  if (cut_pipe[1] >= 0) {
    char b = 1;
    if (write(cut_pipe[1], &b, 1) < 0) { /* full: a wake-up is pending already */ }
  }
  errno = saved;
}

static void drain_cut_pipe(void) {
  char drain[64];
  if (cut_pipe[0] >= 0)
    while (read(cut_pipe[0], drain, sizeof drain) > 0) continue;
}

static int cut_pending(void) { return n_cut_senders > 0; }

/* The parent of `pid` into *ppid (0: outside the pid namespace); 0 when `pid` is gone. */
static int stat_parent(pid_t pid, pid_t *ppid);

/*
 * Whether `pid` is below this agent: 1 yes, 0 no (it lives and its ancestry leaves the agent's
 * tree), -1 when that cannot be told (it is gone, or its chain keeps breaking).
 */
static int below_agent(pid_t pid) {
  for (int attempt = 0; attempt < 3; attempt++) {
    pid_t cur = pid, parent = 0;
    int depth = 0;
    for (; depth < MAX_CHAIN; depth++) {
      if (!stat_parent(cur, &parent)) break;
      if (parent == self_pid) return 1;
      if (parent <= 1) return 0; /* pid 1, or a parent outside the container's namespace (docker exec) */
      cur = parent;
    }
    if (depth == MAX_CHAIN || cur == pid) return -1;
    /* An ancestor was reaped mid-walk: look again. */
  }
  return -1;
}

/*
 * Take the pending SIGUSR1s: 1 when one came from outside the agent's tree (a cut to act on now;
 * its senders are told by cut_acknowledge once it was), 0 when none did (from a descendant, from
 * a process already gone: ignored). Either way they are consumed.
 */
static int take_cut(void) {
  drain_cut_pipe();
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &old);
  pid_t senders[MAX_CUT_SENDERS];
  int n = n_cut_senders;
  for (int i = 0; i < n; i++) senders[i] = (pid_t)cut_senders[i];
  n_cut_senders = 0;
  sigprocmask(SIG_SETMASK, &old, NULL);
  int cut = 0;
  for (int i = 0; i < n; i++) {
    /* si_pid 0: a sender outside the container's pid namespace, where no command can be. */
    if (senders[i] == 0) cut = 1;
    else if (senders[i] != self_pid && below_agent(senders[i]) == 0) {
      cut = 1;
      if (n_cut_acks < MAX_CUT_SENDERS) cut_acks[n_cut_acks++] = senders[i];
    }
  }
  return cut;
}

/* The cut was acted on: its senders (ab-launch --cut-serve, waiting) may go. */
static void cut_acknowledge(void) {
  for (int i = 0; i < n_cut_acks; i++) kill(cut_acks[i], SIGUSR2);
  n_cut_acks = 0;
}

/* Status of the command's main process once reaped here (it may be reaped while sweeping). */
static pid_t main_pid = 0;
static int main_reaped = 0, main_status = 0;

/* Reap every child that has ended: orphans adopted by the subreaper, and possibly the main process. */
static void reap(void) {
  for (;;) {
    int st;
    pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
    if (w <= 0) return;
    if (w == main_pid && !main_reaped) main_reaped = 1, main_status = st;
    else bg_reaped(w, st);
  }
}

/* Append "pid comm" to a newline-separated list. */
static void info_line(struct buf *info, const struct proc *p) {
  char line[64];
  int len = snprintf(line, sizeof line, "%s%d %s", info->len ? "\n" : "", (int)p->pid, p->comm);
  buf_put(info, line, (size_t)len);
}

/*
 * SIGKILL every descendant but `spare`, again and again until none is left: a process may fork
 * while the sweep runs, and the container's pids limit bounds how long that can go on.
 * Returns how many were alive at the first look; `info` gets "pid comm" of the first few.
 *
 * They are stopped first (SIGSTOP, until every one is), then killed. Killed outright, a fork bomb
 * that nothing slows (a host-traced command has no ptrace stops) refills the pids the last round
 * freed as fast as a round frees them, and the sweep chases it for seconds; a stopped process
 * cannot fork and keeps its pid, so at the pids limit the others cannot fork either, and the stop
 * rounds converge. A process that cannot stop yet (uninterruptible sleep) is killed after the
 * bounded stop rounds like the rest.
 */
#define SWEEP_STOP_ROUNDS 200
static size_t sweep(pid_t spare, int bg_mode, struct buf *info) {
  static struct proc found[MAX_SWEEP];
  size_t first = 0;
  for (int round = 0; round < SWEEP_STOP_ROUNDS; round++) {
    size_t n = descendants(spare, bg_mode, found, MAX_SWEEP), running = 0;
    if (round == 0) {
      first = n;
      for (size_t i = 0; i < n && i < MAX_INFO_LINES && info != NULL; i++) info_line(info, &found[i]);
    }
    for (size_t i = 0; i < n && i < MAX_SWEEP; i++) {
      if (found[i].state == 'T' || found[i].state == 't') continue;
      kill(found[i].pid, SIGSTOP);
      running++;
    }
    if (running == 0 && n <= MAX_SWEEP) break;
    reap();
    struct timespec pause_ = {0, 1000000};
    nanosleep(&pause_, NULL);
  }
  for (int round = 0; round < 1000; round++) {
    size_t n = descendants(spare, bg_mode, found, MAX_SWEEP);
    if (n == 0) break;
    for (size_t i = 0; i < n && i < MAX_SWEEP; i++) kill(found[i].pid, SIGKILL);
    reap();
    struct timespec pause_ = {0, 1000000};
    nanosleep(&pause_, NULL);
    reap();
  }
  return first;
}

static void kill_all_descendants(void) {
  sweep(0, BG_NONE, NULL);
  reap();
}

/*
 * The command's main process: the pid that starts the trace. With -f every line opens with
 * its process's pid, and the first line is the launcher's execve, made by strace's child (strace
 * writes each line as it happens). Not strace's children: strace forks short-lived probes of its
 * own at start-up (--seccomp-bpf), and taking one for the command would end the command when the
 * probe ends. 0 until a whole number is in.
 */
static pid_t first_trace_pid(const struct buf *kept) {
  size_t i = 0;
  while (i < kept->len && kept->p[i] == ' ') i++;
  size_t start = i;
  pid_t pid = 0;
  for (; i < kept->len && isdigit(kept->p[i]); i++) pid = pid * 10 + (pid_t)(kept->p[i] - '0');
  return i > start && i < kept->len ? pid : 0;
}

/* The parent of `pid` (0 when it is gone). A zombie keeps its parent until reaped. */
static pid_t ptracer_of(pid_t pid);
static int stat_parent(pid_t pid, pid_t *ppid) {
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t r = read(fd, text, sizeof text - 1);
  close(fd);
  if (r <= 0) return 0;
  text[r] = '\0';
  /* "pid (comm) S ppid ...": split at the last ')'. */
  const char *close_paren = strrchr(text, ')');
  if (close_paren == NULL || close_paren[1] != ' ') return 0;
  *ppid = (pid_t)atoi(close_paren + 4);
  return 1;
}

static pid_t parent_of(pid_t pid) {
  pid_t ppid = 0;
  return stat_parent(pid, &ppid) ? ppid : 0;
}

/* The running request's keeper (a host-traced command's "tracer", ab-keep.c), 0 when none. */
static pid_t current_keeper = 0;
static int is_keeper(pid_t pid);
static int any_keeper(void);

/*
 * The keeper `pid` is below, 0 for none, -1 when that cannot be told: a keeper is a subreaper,
 * so whatever its command started has it as an ancestor however it forked, and nothing else
 * does. An ancestor that is reaped mid-walk (a fork bomb's processes die by the hundred) breaks
 * the chain for a moment — its orphans are the keeper's by then — so the walk starts again; one
 * that keeps breaking is -1, as a dying process is for tracer_of, never "under no keeper" (that
 * would count a process of the command as having escaped it).
 */
static pid_t keeper_above(pid_t pid) {
  /* Under strace there is no keeper: a process no tracer follows escaped it, as before. */
  if (!any_keeper()) return 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    pid_t cur = pid;
    int depth = 0;
    for (; depth < MAX_CHAIN; depth++) {
      pid_t parent = parent_of(cur);
      if (parent == 0) break; /* cur is gone */
      if (parent == 1 || parent == self_pid) return 0;
      if (is_keeper(parent)) return parent;
      cur = parent;
    }
    if (depth == MAX_CHAIN) return 0;
    if (cur == pid) return -1; /* the process itself is gone */
  }
  return -1;
}

/*
 * Who traces `pid` (TracerPid), 0 for nobody, -1 when it is gone or dying: a zombie has left
 * its tracer already (a fork bomb's children die by the hundred while they are looked at), and
 * must not be counted as a process that escaped it. A host-traced command's process has no
 * TracerPid: its keeper stands for the tracer (the host follows everything in the container).
 */
static pid_t tracer_of(pid_t pid) {
  pid_t t = ptracer_of(pid);
  return t != 0 ? t : keeper_above(pid);
}

static pid_t ptracer_of(pid_t pid) {
  char path[64], text[2048];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, text, sizeof text - 1);
  close(fd);
  if (r <= 0) return -1;
  text[r] = '\0';
  const char *state = strstr(text, "\nState:");
  if (state != NULL) {
    state += strlen("\nState:");
    while (*state == ' ' || *state == '\t') state++;
    if (*state == 'Z' || *state == 'X') return -1;
  }
  const char *t = strstr(text, "\nTracerPid:");
  return t == NULL ? -1 : (pid_t)atoi(t + strlen("\nTracerPid:"));
}

/*
 * A traced command's main process has ended while the tracer still runs: what is left was
 * started by the command (background commands' processes are theirs, not this one's).
 * Processes the tracer follows are survivors (left running, e.g. a daemon); any it does not
 * follow escaped it. Counted here; the caller either stops them all, every descendant but the
 * tracer (as on a timeout, so nothing runs untraced), or keeps the command in the background.
 */
static void count_survivors(pid_t tracer, size_t *n_survivors, struct buf *survivor_info, size_t *n_escaped, struct buf *escaped_info) {
  static struct proc found[256];
  size_t n = descendants(tracer, BG_WHOLE, found, 256);
  for (size_t i = 0; i < n && i < 256; i++) {
    pid_t t = tracer_of(found[i].pid);
    if (t < 0) continue; /* died meanwhile */
    int followed = t == tracer;
    size_t *count = followed ? n_survivors : n_escaped;
    if (*count < MAX_INFO_LINES) info_line(followed ? survivor_info : escaped_info, &found[i]);
    (*count)++;
  }
  /* Beyond what one look holds: counted as survivors, the tracer follows every child by default. */
  if (n > 256) *n_survivors += n - 256;
}

/*
 * What a command leaves running is kept only once it has settled. A fork bomb that happened to be
 * small when its command ended (a denied `sleep` ends the command at once) keeps multiplying, and
 * its processes never end — a kept one went on to leave processes that were blamed on the next
 * command as escaped. So: three looks SETTLE_MS apart, after a first pause; it is still growing
 * when each look holds every process of the one before and more (nothing ended, something new).
 * A service (a daemon and its workers) settles within milliseconds, and a loop that runs a short
 * command now and then churns: its short command ends between looks, so no look contains the next.
 * (Two looks, "no more processes than before", killed such a loop whenever the first look fell
 * between its commands and the second on one: a coin toss per run.) More than MAX_BG_SURVIVORS at
 * any look is a runaway too.
 */
#define SETTLE_MS 100
#define SETTLE_LOOKS 3
/* Every process of `a` is in `b`, and `b` has more: `a` grew into `b` without anything ending. */
static int grew_from(const struct proc *a, size_t na, const struct proc *b, size_t nb) {
  if (nb <= na) return 0;
  for (size_t i = 0; i < na; i++) {
    int seen = 0;
    for (size_t j = 0; j < nb && !seen; j++) seen = a[i].pid == b[j].pid;
    if (!seen) return 0;
  }
  return 1;
}

static int settled(pid_t tracer) {
  static struct proc looks[SETTLE_LOOKS][MAX_BG_SURVIVORS + 1];
  size_t n[SETTLE_LOOKS];
  struct timespec pause_ = {0, (long)SETTLE_MS * 1000000L};
  int growing = 1;
  for (int k = 0; k < SETTLE_LOOKS; k++) {
    nanosleep(&pause_, NULL);
    n[k] = descendants(tracer, BG_WHOLE, looks[k], MAX_BG_SURVIVORS + 1);
    if (n[k] > MAX_BG_SURVIVORS) return 0;
    if (k > 0 && !grew_from(looks[k - 1], n[k - 1], looks[k], n[k])) growing = 0;
  }
  return !growing;
}

/* ---- requests ---- */

struct put {
  char *path;
  const unsigned char *data;
  size_t len;
};

struct request {
  char **argv;
  size_t argc, cap_argv;
  char **env;
  size_t n_env, cap_env;
  char *cwd;
  const unsigned char *stdin_data;
  size_t stdin_len;
  uint32_t timeout_ms; /* 0: none */
  uint32_t output_cap;
  struct put *puts;
  size_t n_puts, cap_puts;
  char **collect;
  size_t n_collect, cap_collect;
  uint32_t trace_cap; /* 0: no trace pipe */
  int channel;
  const unsigned char *rules;
  size_t rules_len;
  int has_rules;
  int cpu; /* -1: not pinned */
  int keep_background; /* traced: processes left running stay, as a background command */
  int host_traced;     /* the "tracer" is a keeper (ab-keep.c): the host traces with eBPF; its processes are its by ancestry */
  char *shell_nonce;   /* a call of the persistent shell (run_shell_call), ended by this nonce */
  int shell_reset;     /* end the persistent shell instead of running a call */
};

#define GROW(arr, n, cap)                                        \
  do {                                                           \
    if ((n) == (cap)) {                                          \
      (cap) = (cap) ? 2 * (cap) : 8;                             \
      void *grown_ = realloc((arr), ((cap) + 1) * sizeof(*(arr))); \
      if (grown_ == NULL) fatal("out of memory");                \
      (arr) = grown_;                                            \
    }                                                            \
  } while (0)

/* A copy as a C string; NULL when the bytes contain a NUL (it would cut the string short). */
static char *cstring(const unsigned char *p, size_t n) {
  if (memchr(p, '\0', n) != NULL) return NULL;
  char *s = malloc(n + 1);
  if (s == NULL) fatal("out of memory");
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

static void free_request(struct request *r) {
  for (size_t i = 0; i < r->argc; i++) free(r->argv[i]);
  for (size_t i = 0; i < r->n_env; i++) free(r->env[i]);
  for (size_t i = 0; i < r->n_puts; i++) free(r->puts[i].path);
  for (size_t i = 0; i < r->n_collect; i++) free(r->collect[i]);
  free(r->argv);
  free(r->env);
  free(r->puts);
  free(r->collect);
  free(r->cwd);
  free(r->shell_nonce);
  memset(r, 0, sizeof *r);
}

/* NULL on success, else what is wrong with the request. */
static const char *parse_request(const unsigned char *p, size_t n, struct request *r) {
  memset(r, 0, sizeof *r);
  r->output_cap = 1u << 20;
  r->cpu = -1;
  size_t off = 0;
  while (off < n) {
    if (n - off < 5) return "truncated field header";
    uint8_t tag = p[off];
    uint32_t len = get_be32(p + off + 1);
    off += 5;
    if (len > n - off) return "field overruns the frame";
    const unsigned char *v = p + off;
    off += len;
    char *s;
    switch (tag) {
      case T_ARGV:
        if ((s = cstring(v, len)) == NULL) return "NUL byte in argv";
        GROW(r->argv, r->argc, r->cap_argv);
        r->argv[r->argc++] = s;
        break;
      case T_ENV:
        if ((s = cstring(v, len)) == NULL || strchr(s, '=') == NULL || s[0] == '=') {
          free(s);
          return "env entry is not NAME=value";
        }
        GROW(r->env, r->n_env, r->cap_env);
        r->env[r->n_env++] = s;
        break;
      case T_CWD:
        free(r->cwd);
        if ((r->cwd = cstring(v, len)) == NULL) return "NUL byte in cwd";
        break;
      case T_STDIN:
        r->stdin_data = v;
        r->stdin_len = len;
        break;
      case T_TIMEOUT_MS:
      case T_OUTPUT_CAP:
      case T_TRACE_CAP:
      case T_CPU:
        if (len != 4) return "number field is not 4 bytes";
        if (tag == T_TIMEOUT_MS)
          r->timeout_ms = get_be32(v);
        else if (tag == T_OUTPUT_CAP)
          r->output_cap = get_be32(v);
        else if (tag == T_TRACE_CAP)
          r->trace_cap = get_be32(v);
        else
          r->cpu = (int)get_be32(v);
        if (tag == T_TRACE_CAP && r->trace_cap == 0) return "trace cap of 0";
        if (tag == T_CPU && (r->cpu < 0 || r->cpu >= CPU_SETSIZE)) return "cpu out of range";
        break;
      case T_CHANNEL:
        if (len != 0) return "channel field carries a value";
        r->channel = 1;
        break;
      case T_KEEP_BACKGROUND:
        if (len != 0) return "keep-background field carries a value";
        r->keep_background = 1;
        break;
      case T_HOST_TRACED:
        if (len != 0) return "host-traced field carries a value";
        r->host_traced = 1;
        break;
      case T_SHELL:
        free(r->shell_nonce);
        if ((r->shell_nonce = cstring(v, len)) == NULL || len < 16 || len > 64 || strspn(r->shell_nonce, "0123456789abcdef") != len)
          return "shell nonce is not 16 to 64 lowercase hex digits";
        break;
      case T_SHELL_RESET:
        if (len != 0) return "shell-reset field carries a value";
        r->shell_reset = 1;
        break;
      case T_RULES:
        r->rules = v;
        r->rules_len = len;
        r->has_rules = 1;
        break;
      case T_PUT: {
        const unsigned char *nul = memchr(v, '\0', len);
        if (nul == NULL || nul == v || v[0] != '/') return "put is not <absolute path> NUL <content>";
        GROW(r->puts, r->n_puts, r->cap_puts);
        struct put *put = &r->puts[r->n_puts++];
        put->path = cstring(v, (size_t)(nul - v));
        put->data = nul + 1;
        put->len = len - (size_t)(nul - v) - 1;
        break;
      }
      case T_COLLECT:
        if ((s = cstring(v, len)) == NULL) return "NUL byte in collect path";
        GROW(r->collect, r->n_collect, r->cap_collect);
        r->collect[r->n_collect++] = s;
        break;
      default:
        return "unknown field tag";
    }
  }
  if (r->shell_reset && r->shell_nonce == NULL) return "shell reset outside a shell request";
  if (r->host_traced && r->trace_cap == 0) return "host-traced needs a trace pipe";
  if (r->argc == 0) return "empty argv";
  r->argv[r->argc] = NULL;
  return NULL;
}

/* ---- files ---- */

static int mkdir_parents(char *path) {
  for (char *slash = strchr(path + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    int rc = mkdir(path, 0755);
    int err = errno;
    *slash = '/';
    if (rc != 0 && err != EEXIST) {
      errno = err;
      return -1;
    }
  }
  return 0;
}

static int write_file(struct put *put) {
  if (mkdir_parents(put->path) != 0) return -1;
  int fd = open(put->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return -1;
  int rc = write_all(fd, put->data, put->len);
  int err = errno;
  if (close(fd) != 0 && rc == 0) return -1;
  errno = err;
  return rc;
}

/* T_FILE: 1 + content when readable, 0 + the reason when not. */
static void collect_file(struct buf *fields, const char *path) {
  struct buf content = {0};
  unsigned char present = 1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  int err = 0;
  if (fd < 0 || fstat(fd, &st) != 0) {
    err = errno;
  } else if (!S_ISREG(st.st_mode)) {
    err = EINVAL;
  } else {
    unsigned char chunk[READ_CHUNK];
    for (;;) {
      ssize_t r = read(fd, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        err = errno;
        break;
      }
      if (r == 0) break;
      buf_put(&content, chunk, (size_t)r);
    }
  }
  if (fd >= 0) close(fd);
  if (err != 0) {
    present = 0;
    content.len = 0;
    const char *why = err == EINVAL ? "not a regular file" : strerror(err);
    buf_put(&content, why, strlen(why));
  }
  unsigned char tag = T_FILE;
  buf_put(fields, &tag, 1);
  put_be(fields, 1 + content.len, 4);
  buf_put(fields, &present, 1);
  buf_put(fields, content.p, content.len);
  free(content.p);
}

/* ---- running one command ---- */

struct capture {
  struct buf kept;
  uint64_t total;
  size_t limit;
};

static void capture_add(struct capture *c, const unsigned char *p, size_t n) {
  c->total += n;
  if (c->kept.len < c->limit) {
    size_t room = c->limit - c->kept.len;
    buf_put(&c->kept, p, n < room ? n : room);
  }
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Wall-clock microseconds, the clock strace -ttt prints, so denials and trace lines order together. */
static uint64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Move a descriptor to FD_FLOOR or above, close-on-exec. */
static int high_fd(int fd) {
  if (fd < 0 || fd >= FD_FLOOR) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, FD_FLOOR);
  int err = errno;
  close(fd);
  errno = err;
  return moved;
}

struct spawn_fds {
  int in_r, out_w, err_w;
  int trace_w, channel, rules; /* -1 when absent */
  int status_w;                /* close-on-exec: a write says why the command did not start */
};

static void child_exec(const struct request *r, const struct spawn_fds *fds) __attribute__((noreturn));
static void child_exec(const struct request *r, const struct spawn_fds *fds) {
  setpgid(0, 0);
  /* The agent ignores SIGPIPE and handles SIGTERM; an ignored disposition would survive exec. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  char why[160];
  if (r->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(r->cpu, &set);
    /* Tracer and tracee on one CPU: strace --seccomp-bpf is several times cheaper pinned. Not fatal. */
    sched_setaffinity(0, sizeof set, &set);
  }
  /* dup2 clears close-on-exec on the copy: exactly the descriptors below are inherited. */
  if (dup2(fds->in_r, 0) < 0 || dup2(fds->out_w, 1) < 0 || dup2(fds->err_w, 2) < 0 ||
      (fds->trace_w >= 0 && dup2(fds->trace_w, FD_TRACE) < 0) || (fds->channel >= 0 && dup2(fds->channel, FD_CHANNEL) < 0) ||
      (fds->rules >= 0 && dup2(fds->rules, FD_RULES) < 0)) {
    int n = snprintf(why, sizeof why, "setup %s", strerror(errno));
    if (write(fds->status_w, why, (size_t)n) < 0) {
    }
    _exit(126);
  }
  for (size_t i = 0; i < r->n_env; i++) putenv(r->env[i]);
  if (r->cwd != NULL && chdir(r->cwd) != 0) {
    int n = snprintf(why, sizeof why, "chdir %s", strerror(errno));
    if (write(fds->status_w, why, (size_t)n) < 0) {
    }
    _exit(126);
  }
  execvp(r->argv[0], r->argv);
  int e = errno;
  int n = snprintf(why, sizeof why, "exec %s", strerror(e));
  if (write(fds->status_w, why, (size_t)n) < 0) {
  }
  _exit(e == ENOENT ? 127 : 126);
}

/* A sealed memfd holding the rules, at FD_FLOOR or above. */
static int rules_memfd(const unsigned char *data, size_t len) {
  int fd = (int)syscall(__NR_memfd_create, "ab-rules", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  fd = high_fd(fd);
  if (fd < 0) return -1;
  if (write_all(fd, data, len) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

struct denials {
  struct buf records; /* 64 bytes each: u64 wall_us, u32 pid, u32 nr, 6 x u64 args */
  uint64_t total;
};

/* One notification from a launcher's seccomp filter: record it, answer EPERM. */
static void serve_notification(int listener, struct denials *d) {
  struct seccomp_notif req;
  memset(&req, 0, sizeof req);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return; /* ENOENT: the caller died meanwhile */
  struct seccomp_notif_resp resp;
  memset(&resp, 0, sizeof resp);
  resp.id = req.id;
  resp.error = -EPERM;
  resp.val = 0;
  resp.flags = 0;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  d->total++;
  if (d->total > MAX_DENIAL_RECORDS) return;
  put_be(&d->records, wall_us(), 8);
  put_be(&d->records, (uint32_t)req.pid, 4);
  put_be(&d->records, (uint32_t)req.data.nr, 4);
  for (int i = 0; i < 6; i++) put_be(&d->records, req.data.args[i], 8);
}

struct channel_state {
  int fd;
  struct buf messages; /* [u32 length][bytes] per message */
  int listeners[MAX_LISTENERS];
  int n_listeners;
};

/* Read every pending launcher message; a listener descriptor may ride along. */
static void read_channel(struct channel_state *c, int wait) {
  static unsigned char data[256 * 1024];
  for (;;) {
    struct iovec iov = {data, sizeof data};
    union {
      char buf[CMSG_SPACE(sizeof(int) * 4)];
      struct cmsghdr align;
    } control;
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof control.buf;
    ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    wait = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h != NULL; h = CMSG_NXTHDR(&mh, h)) {
      if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
      size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
        fd = high_fd(fd);
        if (fd >= 0 && c->n_listeners < MAX_LISTENERS)
          c->listeners[c->n_listeners++] = fd;
        else if (fd >= 0)
          close(fd);
      }
    }
    if (c->messages.len + 4 + (size_t)n <= MAX_CHANNEL_BYTES) {
      put_be(&c->messages, (uint64_t)n, 4);
      buf_put(&c->messages, data, (size_t)n);
    }
  }
}

/* ---- commands kept in the background ---- */

/*
 * The exit status of a traced command's main process, read off the trace: strace reaps that
 * process itself (it is strace's child), and -qq prints no "+++ exited" line, so the status is
 * its exit_group(N). The main process is the first line's pid (see first_trace_pid); strace
 * escapes newlines inside strings, so a command cannot forge a line.
 */
struct exit_scan {
  pid_t first_pid;
  int have_first, found, code;
  char line[256];
  size_t len;
};

static void exit_scan_line(struct exit_scan *x) {
  x->line[x->len] = '\0';
  const char *c = x->line;
  while (*c == ' ') c++;
  if (!isdigit((unsigned char)*c)) return;
  pid_t pid = (pid_t)atoi(c);
  if (!x->have_first) x->first_pid = pid, x->have_first = 1;
  if (pid != x->first_pid || x->found) return;
  while (isdigit((unsigned char)*c)) c++;
  while (*c == ' ') c++;
  while (isdigit((unsigned char)*c) || *c == '.') c++;
  while (*c == ' ') c++;
  if (strncmp(c, "exit_group(", 11) != 0) return;
  x->found = 1;
  x->code = atoi(c + 11) & 0xff;
}

static void exit_scan_add(struct exit_scan *x, const unsigned char *p, size_t n) {
  if (x->found) return;
  for (size_t i = 0; i < n && !x->found; i++) {
    if (p[i] == '\n') {
      exit_scan_line(x);
      x->len = 0;
    } else if (x->len < sizeof x->line - 1) {
      x->line[x->len++] = (char)p[i];
    }
  }
}

/*
 * A command whose main process ended while processes it started still ran, kept so: the tracer
 * and what it follows live on, under the launch's Landlock domain and seccomp filter (inherited,
 * never dropped), until the host's stop request (episode end). Their trace is drained all along
 * (kept up to BG_TRACE_CAP, counted beyond), their refused syscalls answered and recorded, their
 * output read and dropped (a writer on a closed pipe would die of SIGPIPE).
 */
struct bg_job {
  int used;
  uint32_t id;
  pid_t tracer;
  int keeper; /* the tracer is a keeper (host-traced): what it holds is below it, not ptraced by it */
  int reaped;
  int fd[3]; /* trace, stdout, stderr; -1 once at end of file */
  struct capture trace;
  int listeners[MAX_LISTENERS];
  int n_listeners;
  struct denials denied;
  size_t stopped;
  struct buf stopped_info;
  /* The persistent shell (run_shell_call) is a background command too, with more kept: */
  int is_shell;
  int in_fd;                /* our end of its stdin, a socket: calls go in, delimiter lines come back */
  int status;               /* the tracer's wait status, once reaped */
  pid_t shell_pid;          /* the shell (the trace's first pid), 0 until known */
  struct capture out, err;  /* its output since the last call's end: the next call's */
  struct exit_scan exit_line;
  struct channel_state chan; /* the launcher's report and listeners, at its start */
  struct buf ident;         /* exe and cmdline of the shell once it ran its driver */
  struct buf ctl;           /* a partial delimiter line */
  int in_eof;               /* the shell's end of the socket is closed */
  ino_t shell_ino;          /* inode of the shell's end of the socket */
  int cut;                  /* the host cut the shell's processes (it ended so) */
};

static struct bg_job jobs[MAX_BACKGROUND];
static uint32_t next_job_id = 1;

static struct bg_job *job_of_tracer(pid_t tracer) {
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used && !jobs[k].reaped && jobs[k].tracer == tracer) return &jobs[k];
  return NULL;
}

static int any_keeper(void) {
  if (current_keeper > 0) return 1;
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used && !jobs[k].reaped && jobs[k].keeper) return 1;
  return 0;
}

static int is_keeper(pid_t pid) {
  if (pid <= 0) return 0;
  if (pid == current_keeper) return 1;
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used && !jobs[k].reaped && jobs[k].keeper && jobs[k].tracer == pid) return 1;
  return 0;
}

static int bg_any(void) {
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used) return 1;
  return 0;
}

/* BG_TRACERS: the background tracers; BG_WHOLE: those and every process they follow. */
static int bg_owns(pid_t pid, int mode) {
  if (!bg_any()) return 0;
  if (job_of_tracer(pid) != NULL) return 1;
  if (mode != BG_WHOLE) return 0;
  pid_t t = tracer_of(pid);
  return t > 0 && job_of_tracer(t) != NULL;
}

static void bg_reaped(pid_t pid, int status) {
  struct bg_job *j = job_of_tracer(pid);
  if (j != NULL) j->reaped = 1, j->status = status;
}

struct bg_slot {
  struct bg_job *job;
  int kind; /* 0..2: fd[kind]; 3 + k: listeners[k] */
};

/* Add every open descriptor of the background commands to a poll set from `n`; returns the new count. */
static int bg_fill(struct pollfd *pfds, int n, struct bg_slot *slots) {
  int first = n;
  for (int k = 0; k < MAX_BACKGROUND; k++) {
    struct bg_job *j = &jobs[k];
    if (!j->used) continue;
    for (int f = 0; f < 3; f++)
      if (j->fd[f] >= 0) slots[n - first] = (struct bg_slot){j, f}, pfds[n++] = (struct pollfd){j->fd[f], POLLIN, 0};
    for (int l = 0; l < j->n_listeners; l++) slots[n - first] = (struct bg_slot){j, 3 + l}, pfds[n++] = (struct pollfd){j->listeners[l], POLLIN, 0};
  }
  return n;
}

static void bg_service(const struct pollfd *pfds, const struct bg_slot *slots, int count) {
  static unsigned char chunk[READ_CHUNK];
  /* Listeners are closed last, highest index first, so the slots' indices stay valid meanwhile. */
  for (int i = count - 1; i >= 0; i--) {
    struct bg_job *j = slots[i].job;
    short ev = pfds[i].revents;
    if (ev == 0) continue;
    if (slots[i].kind < 3) {
      int *fd = &j->fd[slots[i].kind];
      ssize_t got = read(*fd, chunk, sizeof chunk);
      if (got > 0 && slots[i].kind == 0) {
        capture_add(&j->trace, chunk, (size_t)got);
        if (j->is_shell) exit_scan_add(&j->exit_line, chunk, (size_t)got);
      } else if (got > 0 && j->is_shell) {
        /* The shell's output between calls is the next call's, not dropped. */
        capture_add(slots[i].kind == 1 ? &j->out : &j->err, chunk, (size_t)got);
      } else if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) close(*fd), *fd = -1;
    } else {
      int l = slots[i].kind - 3;
      if (ev & POLLIN) serve_notification(j->listeners[l], &j->denied);
      else if (ev & (POLLHUP | POLLERR | POLLNVAL)) {
        close(j->listeners[l]);
        j->listeners[l] = j->listeners[--j->n_listeners];
      }
    }
  }
}

/* One pass: wait up to `wait_ms` for the background commands, reap, serve them. */
static void bg_pump(int wait_ms) {
  struct pollfd pfds[BG_SLOTS];
  struct bg_slot slots[BG_SLOTS];
  int n = bg_fill(pfds, 0, slots);
  if (poll(pfds, (nfds_t)n, wait_ms) < 0 && errno != EINTR) fatal("poll");
  reap();
  bg_service(pfds, slots, n);
}

/* Release a background command's slot: its descriptors closed, its tracer killed if it still runs. */
static void job_free(struct bg_job *j) {
  for (int f = 0; f < 3; f++)
    if (j->fd[f] >= 0) close(j->fd[f]);
  for (int l = 0; l < j->n_listeners; l++) close(j->listeners[l]);
  if (!j->reaped) kill(j->tracer, SIGKILL);
  if (j->is_shell) {
    if (j->in_fd >= 0) close(j->in_fd);
    if (j->chan.fd >= 0) close(j->chan.fd);
    for (int l = 0; l < j->chan.n_listeners; l++) close(j->chan.listeners[l]);
    free(j->out.kept.p);
    free(j->err.kept.p);
    free(j->chan.messages.p);
    free(j->ident.p);
    free(j->ctl.p);
  }
  free(j->trace.kept.p);
  free(j->denied.records.p);
  free(j->stopped_info.p);
  memset(j, 0, sizeof *j);
}

static int bg_free_slot(void) {
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (!jobs[k].used) return k;
  return -1;
}

/*
 * The host's stop request (episode end): every process of every background command dies (the
 * tracers last, so nothing runs untraced), the tracers record it and exit, and each command's
 * remaining trace, denials and stopped processes are answered in one frame, a JOB field heading
 * each. Processes no tracer follows (escaped) are killed too and counted as LEFTOVER.
 */
/* Processes no tracer followed, found while stopping background commands; reported with the stop. */
static size_t bg_leftover = 0;
static struct buf bg_leftover_info = {0};

/*
 * Kill every process below the agent but the background tracers and `spare` (a running command's
 * tracer, whose own processes are gone already; 0: none), counting each as its background
 * command's stopped process or, followed by no tracer, as leftover. The tracers then record the
 * deaths and exit.
 */
static void bg_kill_processes(pid_t spare) {
  static struct proc found[256];
  size_t n = descendants(spare, BG_TRACERS, found, 256);
  for (size_t i = 0; i < n && i < 256; i++) {
    pid_t t = tracer_of(found[i].pid);
    if (t < 0) continue;
    struct bg_job *j = t > 0 ? job_of_tracer(t) : NULL;
    if (j == NULL) {
      if (bg_leftover < MAX_INFO_LINES) info_line(&bg_leftover_info, &found[i]);
      bg_leftover++;
      continue;
    }
    if (j->stopped < MAX_INFO_LINES) info_line(&j->stopped_info, &found[i]);
    j->stopped++;
  }
  sweep(spare, BG_TRACERS, NULL);
}

/* A cut reaches the background commands and the persistent shell: their processes die now. */
static void cut_background(pid_t spare) {
  if (!bg_any()) return;
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used && jobs[k].is_shell) jobs[k].cut = 1;
  bg_kill_processes(spare);
}

/* A cut that came while no command runs: the background's processes stop; with none, nothing to do. */
static void serve_pending_cut(void) {
  if (!cut_pending() || !take_cut()) return;
  cut_background(0);
  cut_acknowledge();
}

static void run_stop(void) {
  bg_kill_processes(0);
  int64_t deadline = now_ms() + TRACER_GRACE_MS, drain_until = -1;
  for (;;) {
    int busy = 0;
    for (int k = 0; k < MAX_BACKGROUND; k++)
      if (jobs[k].used && (!jobs[k].reaped || jobs[k].fd[0] >= 0)) busy = 1;
    if (!busy) break;
    int64_t now = now_ms();
    if (drain_until < 0 && now >= deadline) {
      /* A tracer that does not exit by itself is killed: its tracees are gone already. */
      for (int k = 0; k < MAX_BACKGROUND; k++)
        if (jobs[k].used && !jobs[k].reaped) kill(jobs[k].tracer, SIGKILL);
      drain_until = now + DRAIN_GRACE_MS;
    }
    if (drain_until >= 0 && now >= drain_until) break;
    bg_pump(WAIT_POLL_MS);
  }
  struct buf fields = {0};
  if (bg_leftover > 0) {
    put_u32_field(&fields, T_LEFTOVER, (uint32_t)bg_leftover);
    put_field(&fields, T_LEFTOVER_INFO, bg_leftover_info.p, bg_leftover_info.len);
  }
  for (int k = 0; k < MAX_BACKGROUND; k++) {
    struct bg_job *j = &jobs[k];
    if (!j->used) continue;
    put_u32_field(&fields, T_JOB, j->id);
    put_field(&fields, T_TRACE, j->trace.kept.p, j->trace.kept.len);
    put_u64_field(&fields, T_TRACE_BYTES, j->trace.total);
    for (size_t off = 0; off + 64 <= j->denied.records.len; off += 64) put_field(&fields, T_DENIAL, j->denied.records.p + off, 64);
    if (j->denied.total > 0) put_u64_field(&fields, T_DENIALS_TOTAL, j->denied.total);
    if (j->stopped > 0) {
      put_u32_field(&fields, T_SURVIVORS, (uint32_t)j->stopped);
      put_field(&fields, T_SURVIVOR_INFO, j->stopped_info.p, j->stopped_info.len);
    }
    job_free(j);
  }
  reap();
  send_frame(F_BACKGROUND, &fields);
  free(fields.p);
  free(bg_leftover_info.p);
  memset(&bg_leftover_info, 0, sizeof bg_leftover_info);
  bg_leftover = 0;
}

/* Between requests: keep the background commands served, and take cuts, until the next request arrives. */
static int wait_for_request(void) {
  for (;;) {
    serve_pending_cut();
    struct pollfd pfds[2 + BG_SLOTS];
    struct bg_slot slots[BG_SLOTS];
    pfds[0] = (struct pollfd){0, POLLIN, 0};
    pfds[1] = (struct pollfd){cut_pipe[0], POLLIN, 0};
    int n = bg_fill(pfds, 2, slots);
    if (poll(pfds, (nfds_t)n, bg_any() ? 1000 : -1) < 0 && errno != EINTR) fatal("poll");
    if (terminate_requested) return -2;
    if (pfds[1].revents) drain_cut_pipe();
    reap();
    bg_service(pfds + 2, slots, n - 2);
    if (pfds[0].revents) {
      /* A cut that came with the request is for what ran before it, not for it. */
      serve_pending_cut();
      return 0;
    }
  }
}

/*
 * How often the container's pids limit has refused a fork (the "max" line of pids.events, cgroup
 * v2 or v1 layout); -1 when neither file can be read. A command whose processes hit the limit is
 * a runaway (a fork bomb) whatever number of them happens to be alive when its main process ends:
 * nothing of it is kept.
 */
static long pids_limit_hits(void) {
  static const char *const files[] = {"/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/pids/pids.events"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    FILE *f = fopen(files[i], "re");
    if (f == NULL) continue;
    long hits = -1;
    char key[16];
    long value;
    while (fscanf(f, "%15s %ld", key, &value) == 2)
      if (strcmp(key, "max") == 0) hits = value;
    fclose(f);
    if (hits >= 0) return hits;
  }
  return -1;
}

static void run_request(struct request *r) {
  for (size_t i = 0; i < r->n_puts; i++) {
    if (write_file(&r->puts[i]) != 0) {
      send_error("cannot write", r->puts[i].path, errno);
      return;
    }
  }

  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, trace_pipe[2] = {-1, -1},
      status_pipe[2] = {-1, -1}, sockets[2] = {-1, -1};
  int rules_fd = -1;
  int ok = pipe2(in_pipe, O_CLOEXEC) == 0 && pipe2(out_pipe, O_CLOEXEC) == 0 && pipe2(err_pipe, O_CLOEXEC) == 0 &&
           pipe2(status_pipe, O_CLOEXEC) == 0 && (r->trace_cap == 0 || pipe2(trace_pipe, O_CLOEXEC) == 0) &&
           (!r->channel || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) == 0);
  int err = errno;
  int *all[] = {&in_pipe[0], &in_pipe[1], &out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1],
                &trace_pipe[0], &trace_pipe[1], &status_pipe[0], &status_pipe[1], &sockets[0], &sockets[1]};
  const size_t n_all = sizeof all / sizeof all[0];
  for (size_t i = 0; i < n_all && ok; i++)
    if (*all[i] >= 0) ok = (*all[i] = high_fd(*all[i])) >= 0;
  if (ok && r->has_rules) ok = (rules_fd = rules_memfd(r->rules, r->rules_len)) >= 0;
  if (!ok) {
    err = errno ? errno : err;
    for (size_t i = 0; i < n_all; i++)
      if (*all[i] >= 0) close(*all[i]);
    send_error("command setup", "", err);
    return;
  }

  struct spawn_fds fds = {in_pipe[0], out_pipe[1], err_pipe[1], trace_pipe[1], sockets[1], rules_fd, status_pipe[1]};
  int64_t started_us = now_us();
  int64_t deadline = r->timeout_ms == 0 ? -1 : now_ms() + r->timeout_ms;
  /* Unreadable (-1 both times): the other rules still hold (a bounded count, nothing escaped). */
  long limit_hits = r->keep_background ? pids_limit_hits() : -1;
  main_reaped = 0;
  main_status = 0;
  pid_t pid = fork();
  if (pid < 0 && errno == EAGAIN && bg_any()) {
    /* The container's pids limit is spent while background commands hold processes (one grew
     * into a fork bomb after it was kept): they give way, so the next command still starts. */
    bg_kill_processes(0);
    for (int tries = 0; pid < 0 && tries < 200; tries++) {
      struct timespec pause_ = {0, 5000000};
      nanosleep(&pause_, NULL);
      reap();
      pid = fork();
    }
  }
  if (pid < 0) {
    err = errno;
    for (size_t i = 0; i < n_all; i++)
      if (*all[i] >= 0) close(*all[i]);
    if (rules_fd >= 0) close(rules_fd);
    send_error("fork", "", err);
    return;
  }
  if (pid == 0) child_exec(r, &fds);
  main_pid = pid;
  current_keeper = r->host_traced ? pid : 0;
  setpgid(pid, pid); /* also here: the timeout may fire before the child ran */
  close(in_pipe[0]), close(out_pipe[1]), close(err_pipe[1]), close(status_pipe[1]);
  if (trace_pipe[1] >= 0) close(trace_pipe[1]);
  if (sockets[1] >= 0) close(sockets[1]);
  if (rules_fd >= 0) close(rules_fd);

  int in_w = in_pipe[1], out_r = out_pipe[0], err_r = err_pipe[0], trace_r = trace_pipe[0], status_r = status_pipe[0];
  fcntl(in_w, F_SETFL, O_NONBLOCK);
  size_t in_off = 0;
  if (r->stdin_len == 0) close(in_w), in_w = -1;
  int pidfd = high_fd((int)syscall(__NR_pidfd_open, pid, 0)); /* close-on-exec by definition */

  struct capture out = {{0}, 0, r->output_cap}, errc = {{0}, 0, r->output_cap};
  struct capture trace = {{0}, 0, r->trace_cap};
  struct channel_state chan = {sockets[0], {0}, {-1, -1, -1, -1}, 0};
  struct denials denied = {{0}, 0};
  struct buf spawn_error = {0}, leftover_info = {0}, survivor_info = {0};
  size_t leftover = 0, survivors = 0;
  int timed_out = 0, killing = 0, swept = 0, cut = 0;
  struct bg_job *kept = NULL; /* set when the command's survivors stay in the background */
  struct exit_scan exit_line = {0};
  pid_t tracee = 0; /* the command's main process, once the trace names it */
  int64_t finished_us = 0, drain_until = 0, tracer_deadline = -1, next_child_check = 0;
  unsigned char chunk[READ_CHUNK];

  for (;;) {
    int64_t now = now_ms();
    if (!main_reaped && !killing && deadline >= 0 && now >= deadline) timed_out = 1;
    /* The host's cut: as the timeout, and the background's processes too. One that comes once the
     * command is ending is left pending, for what runs after it (wait_for_request). */
    if (!main_reaped && !killing && !timed_out && cut_pending() && take_cut()) timed_out = cut = 1;
    if (!main_reaped && !killing && timed_out) {
      /* Kill the command's processes first and the tracer last, so nothing ever runs untraced;
       * the tracer then flushes and exits by itself. */
      killing = 1;
      sweep(r->trace_cap ? pid : 0, BG_WHOLE, NULL);
      if (cut) {
        cut_background(r->trace_cap ? pid : 0);
        cut_acknowledge();
      }
      tracer_deadline = now_ms() + TRACER_GRACE_MS;
    }
    if (r->trace_cap && !main_reaped && !killing && now_ms() >= next_child_check) {
      /* Traced, the command ends when strace's child does: strace alone would wait for every
       * process the command left running (a daemon), until the timeout. The main process's pid
       * is read off the trace's first line; it has ended when strace has reaped it (its parent
       * is no longer strace: a reused pid has another parent). */
      next_child_check = now_ms() + MAIN_POLL_MS;
      if (tracee == 0) tracee = first_trace_pid(&trace.kept);
      if (tracee != 0 && parent_of(tracee) != pid) {
        finished_us = now_us();
        count_survivors(pid, &survivors, &survivor_info, &leftover, &leftover_info);
        int runaway = survivors > MAX_BG_SURVIVORS || (r->keep_background && pids_limit_hits() != limit_hits);
        if (r->keep_background && survivors > 0 && !runaway && leftover == 0) runaway = !settled(pid);
        int slot = r->keep_background && survivors > 0 && !runaway && leftover == 0 ? bg_free_slot() : -1;
        if (slot >= 0) {
          /* The tracer wrote the main process's exit_group as it reaped it (or is about to). */
          int64_t until = now_ms() + EXIT_LINE_GRACE_MS;
          while (!exit_line.found && trace_r >= 0 && now_ms() < until) {
            struct pollfd tp = {trace_r, POLLIN, 0};
            if (poll(&tp, 1, WAIT_POLL_MS) <= 0) continue;
            ssize_t got = read(trace_r, chunk, sizeof chunk);
            if (got <= 0) break;
            capture_add(&trace, chunk, (size_t)got);
            exit_scan_add(&exit_line, chunk, (size_t)got);
          }
        }
        /* The pids limit is looked at again after the wait: a runaway keeps growing meanwhile. */
        if (slot >= 0 && exit_line.found && pids_limit_hits() == limit_hits) {
          kept = &jobs[slot];
          break;
        }
        /* Not kept (not asked for, escaped processes, no free slot, no status): all stop now. */
        killing = 1;
        sweep(pid, BG_WHOLE, NULL);
        tracer_deadline = now_ms() + TRACER_GRACE_MS;
      }
    }
    if (!main_reaped && killing && tracer_deadline >= 0 && now_ms() >= tracer_deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      tracer_deadline = -1;
    }
    reap();
    if (main_reaped && !swept) {
      swept = 1;
      if (finished_us == 0) finished_us = now_us();
      /* The main process is gone: whatever is left below us escaped it (or, untraced, was left in
       * the background). Either way it dies now; the count says how many there were. */
      leftover += sweep(0, BG_WHOLE, &leftover_info);
      drain_until = now_ms() + DRAIN_GRACE_MS;
      if (in_w >= 0) close(in_w), in_w = -1;
    }
    if (main_reaped && ((out_r < 0 && err_r < 0 && trace_r < 0 && status_r < 0) || now_ms() >= drain_until)) break;

    struct pollfd pfds[9 + MAX_LISTENERS + BG_SLOTS];
    struct bg_slot bg_slots[BG_SLOTS];
    int n = 0, i_ctl, i_in = -1, i_out = -1, i_err = -1, i_trace = -1, i_chan = -1, i_status = -1, i_pid = -1, i_l0 = -1, i_cut = -1;
    /* events 0: only hang-up, i.e. the client went away mid-command. */
    i_ctl = n, pfds[n++] = (struct pollfd){0, 0, 0};
    if (in_w >= 0) i_in = n, pfds[n++] = (struct pollfd){in_w, POLLOUT, 0};
    if (out_r >= 0) i_out = n, pfds[n++] = (struct pollfd){out_r, POLLIN, 0};
    if (err_r >= 0) i_err = n, pfds[n++] = (struct pollfd){err_r, POLLIN, 0};
    if (trace_r >= 0) i_trace = n, pfds[n++] = (struct pollfd){trace_r, POLLIN, 0};
    if (status_r >= 0) i_status = n, pfds[n++] = (struct pollfd){status_r, POLLIN, 0};
    if (chan.fd >= 0 && !main_reaped) i_chan = n, pfds[n++] = (struct pollfd){chan.fd, POLLIN, 0};
    if (!main_reaped && pidfd >= 0) i_pid = n, pfds[n++] = (struct pollfd){pidfd, POLLIN, 0};
    if (!main_reaped && !killing && cut_pipe[0] >= 0) i_cut = n, pfds[n++] = (struct pollfd){cut_pipe[0], POLLIN, 0};
    i_l0 = n;
    for (int k = 0; k < chan.n_listeners; k++) pfds[n++] = (struct pollfd){chan.listeners[k], POLLIN, 0};
    int i_bg = n;
    n = bg_fill(pfds, n, bg_slots);

    int wait_ms = -1;
    now = now_ms();
    if (main_reaped) wait_ms = (int)(drain_until - now);
    else if (deadline >= 0 && !killing) wait_ms = (int)(deadline - now);
    if (killing && tracer_deadline >= 0 && (wait_ms < 0 || wait_ms > tracer_deadline - now)) wait_ms = (int)(tracer_deadline - now);
    /* Orphans are reaped on each pass; without a pidfd the main process is polled for. */
    if (!main_reaped && (pidfd < 0 || killing) && (wait_ms < 0 || wait_ms > WAIT_POLL_MS)) wait_ms = WAIT_POLL_MS;
    if (r->trace_cap && !main_reaped && !killing && (wait_ms < 0 || wait_ms > next_child_check - now))
      wait_ms = next_child_check > now ? (int)(next_child_check - now) : 0;
    if (wait_ms < 0 && !main_reaped) wait_ms = 100;
    if (wait_ms < 0) wait_ms = 0;
    if (poll(pfds, (nfds_t)n, wait_ms) < 0 && errno != EINTR) fatal("poll");

    if ((pfds[i_ctl].revents & (POLLHUP | POLLERR)) || terminate_requested) {
      kill_all_descendants();
      exit(terminate_requested ? 143 : 0);
    }
    if (i_cut >= 0 && pfds[i_cut].revents) drain_cut_pipe();
    bg_service(pfds + i_bg, bg_slots, n - i_bg);
    for (int k = 0; k < chan.n_listeners; k++) {
      short ev = pfds[i_l0 + k].revents;
      if (ev & POLLIN) serve_notification(chan.listeners[k], &denied);
      else if (ev & (POLLHUP | POLLERR | POLLNVAL)) {
        /* No process uses that filter any more. */
        close(chan.listeners[k]);
        chan.listeners[k] = chan.listeners[--chan.n_listeners];
        k--;
      }
    }
    if (i_chan >= 0 && (pfds[i_chan].revents & POLLIN)) read_channel(&chan, 0);
    if (i_in >= 0 && pfds[i_in].revents) {
      ssize_t w = write(in_w, r->stdin_data + in_off, r->stdin_len - in_off);
      if (w > 0) in_off += (size_t)w;
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off == r->stdin_len) close(in_w), in_w = -1;
    }
    int *readers[3] = {&out_r, &err_r, &trace_r};
    struct capture *captures[3] = {&out, &errc, &trace};
    int indices[3] = {i_out, i_err, i_trace};
    for (int k = 0; k < 3; k++) {
      if (indices[k] < 0 || pfds[indices[k]].revents == 0) continue;
      ssize_t got = read(*readers[k], chunk, sizeof chunk);
      if (got > 0 && k == 2) exit_scan_add(&exit_line, chunk, (size_t)got);
      if (got > 0) capture_add(captures[k], chunk, (size_t)got);
      else if (got == 0 || (errno != EAGAIN && errno != EINTR)) close(*readers[k]), *readers[k] = -1;
    }
    if (i_status >= 0 && pfds[i_status].revents) {
      ssize_t got = read(status_r, chunk, 256);
      if (got > 0) {
        if (spawn_error.len < 256) buf_put(&spawn_error, chunk, (size_t)got);
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(status_r), status_r = -1;
      }
    }
    if (!main_reaped && i_pid >= 0 && pfds[i_pid].revents) reap();
  }
  /* Whatever the launcher said last (its report, an exec failure) and denials still queued. */
  if (chan.fd >= 0) read_channel(&chan, 0);
  if (kept != NULL) {
    /* What the main process wrote before it ended is in the pipes already; the rest is the
     * background command's, read and dropped from now on. */
    int *live[3] = {&trace_r, &out_r, &err_r};
    struct capture *into[3] = {&trace, &out, &errc};
    for (int k = 0; k < 3; k++) {
      if (*live[k] < 0) continue;
      fcntl(*live[k], F_SETFL, O_NONBLOCK);
      ssize_t got;
      while ((got = read(*live[k], chunk, sizeof chunk)) > 0) capture_add(into[k], chunk, (size_t)got);
    }
    memset(kept, 0, sizeof *kept);
    kept->used = 1;
    kept->id = next_job_id++;
    kept->tracer = pid;
    kept->keeper = r->host_traced;
    kept->fd[0] = trace_r, kept->fd[1] = out_r, kept->fd[2] = err_r;
    trace_r = out_r = err_r = -1;
    size_t room = r->trace_cap > trace.kept.len ? r->trace_cap - trace.kept.len : 0;
    kept->trace.limit = room < BG_TRACE_CAP ? room : BG_TRACE_CAP;
    for (int k = 0; k < chan.n_listeners; k++) kept->listeners[k] = chan.listeners[k];
    kept->n_listeners = chan.n_listeners;
    chan.n_listeners = 0;
    main_status = exit_line.code << 8; /* as wait() reports an exit with that code */
  }
  for (int k = 0; k < chan.n_listeners; k++) close(chan.listeners[k]);
  if (chan.fd >= 0) close(chan.fd);
  main_pid = 0;
  if (pidfd >= 0) close(pidfd);
  if (in_w >= 0) close(in_w);
  if (out_r >= 0) close(out_r);
  if (err_r >= 0) close(err_r);
  if (trace_r >= 0) close(trace_r);
  if (status_r >= 0) close(status_r);
  if (finished_us == 0) finished_us = now_us();

  struct buf fields = {0};
  if (timed_out)
    put_field(&fields, T_TIMED_OUT, NULL, 0);
  else if (WIFSIGNALED(main_status))
    put_u32_field(&fields, T_SIGNAL, (uint32_t)WTERMSIG(main_status));
  else
    put_u32_field(&fields, T_EXIT, (uint32_t)WEXITSTATUS(main_status));
  if (cut) put_field(&fields, T_CUT, NULL, 0);
  put_field(&fields, T_STDOUT, out.kept.p, out.kept.len);
  put_u64_field(&fields, T_STDOUT_BYTES, out.total);
  put_field(&fields, T_STDERR, errc.kept.p, errc.kept.len);
  put_u64_field(&fields, T_STDERR_BYTES, errc.total);
  put_u64_field(&fields, T_DURATION_US, (uint64_t)(finished_us - started_us));
  put_u32_field(&fields, T_MAIN_PID, (uint32_t)pid);
  if (r->trace_cap != 0) {
    put_field(&fields, T_TRACE, trace.kept.p, trace.kept.len);
    put_u64_field(&fields, T_TRACE_BYTES, trace.total);
  }
  for (size_t off = 0; off + 4 <= chan.messages.len;) {
    uint32_t len = get_be32(chan.messages.p + off);
    put_field(&fields, T_CHANNEL_MSG, chan.messages.p + off + 4, len);
    off += 4 + len;
  }
  for (size_t off = 0; off + 64 <= denied.records.len; off += 64) put_field(&fields, T_DENIAL, denied.records.p + off, 64);
  if (denied.total > 0) put_u64_field(&fields, T_DENIALS_TOTAL, denied.total);
  if (leftover > 0) {
    put_u32_field(&fields, T_LEFTOVER, (uint32_t)leftover);
    put_field(&fields, T_LEFTOVER_INFO, leftover_info.p, leftover_info.len);
  }
  if (survivors > 0) {
    put_u32_field(&fields, T_SURVIVORS, (uint32_t)survivors);
    put_field(&fields, T_SURVIVOR_INFO, survivor_info.p, survivor_info.len);
  }
  if (spawn_error.len > 0) put_field(&fields, T_SPAWN_ERROR, spawn_error.p, spawn_error.len);
  if (kept != NULL) put_u32_field(&fields, T_BACKGROUND_JOB, kept->id);
  for (size_t i = 0; i < r->n_collect; i++) collect_file(&fields, r->collect[i]);
  send_frame(F_DONE, &fields);
  free(fields.p);
  free(out.kept.p);
  free(errc.kept.p);
  free(trace.kept.p);
  free(chan.messages.p);
  free(denied.records.p);
  free(spawn_error.p);
  free(leftover_info.p);
  free(survivor_info.p);
  /* Kept, it is its job's keeper now (bg_job.keeper); else it is gone. */
  current_keeper = 0;
}

/* ---- the persistent shell ---- */

/*
 * One shell per episode (`eval --shell persistent`): a request carrying SHELL runs a call in it.
 * The first such request starts it from its argv (strace … ab-launch … -- bash -c <driver>, built
 * by the host, with the episode's rules), as a command is started, but with a socket as its stdin;
 * it then lives on as a background command — one launcher domain, one tracer — between calls, and
 * every call is a window onto it: what the domain did (trace, denials, output) from the previous
 * call's end to this call's end.
 *
 * A call is written to the socket as `<nonce> NUL <command> NUL`; the driver (agent/persistent-shell.ts)
 * runs the command with /dev/null as its stdin and writes `<nonce> <status>\n` back to the socket,
 * which is the end of the call's window. Why a socket and a nonce: external programs never get the
 * socket (the driver's redirections leave them /dev/null, and a socket cannot be reopened through
 * /proc), output can print any look-alike line (it is not read for delimiters), and a delimiter
 * without this call's nonce (128 random bits, new per call) is counted (FORGED), never taken. What
 * a command can still do: it runs *in* the shell, so a builtin can read the nonce and the socket's
 * saved copy and end its window early or fake its status. That only moves the command's own
 * later activity into the next window of the same episode: same domain, same trace, nothing lost.
 *
 * The shell is ended (and the call's answer says why, SHELL_ENDED) when it exits or dies, when its
 * process was replaced (exec: its exe or cmdline changed), when it waits for input without having
 * ended the call (its driver was changed: a trap, a function named like a builtin), and when a
 * timed-out call does not come back after its processes were killed. The next call then starts
 * a fresh one. A shell found ended at a call's start (a background job killed it) is answered with
 * its tail and NOT_RUN, and the host asks again.
 */
#define SHELL_FD_CHECK_MS 200
/* After the delimiter, how long the trace may stay quiet before the window closes (lines lag a little). */
#define SHELL_TRACE_QUIET_MS 30
#define SHELL_TRACE_SETTLE_MS 500

static struct bg_job *shell_job(void) {
  for (int k = 0; k < MAX_BACKGROUND; k++)
    if (jobs[k].used && jobs[k].is_shell) return &jobs[k];
  return NULL;
}

/* Every live process the shell's tracer follows (the domain), but `spare`; killed when `kill_them`. */
static size_t shell_domain(struct bg_job *j, pid_t spare, int kill_them, struct buf *info) {
  static struct proc found[MAX_SWEEP];
  size_t first = 0;
  for (int round = 0; round < (kill_them ? 1000 : 1); round++) {
    size_t n = descendants(j->tracer, BG_NONE, found, MAX_SWEEP), hit = 0;
    for (size_t i = 0; i < n && i < MAX_SWEEP; i++) {
      if (found[i].pid == spare || tracer_of(found[i].pid) != j->tracer) continue;
      if (round == 0 && info != NULL && hit < MAX_INFO_LINES) info_line(info, &found[i]);
      hit++;
      if (kill_them) kill(found[i].pid, SIGKILL);
    }
    if (round == 0) first = hit;
    if (hit == 0 || !kill_them) break;
    reap();
    struct timespec pause_ = {0, 1000000};
    nanosleep(&pause_, NULL);
    reap();
  }
  return first;
}

/* End the shell's domain: its processes, then the tracer; what they wrote is drained into the window. */
static void shell_finish(struct bg_job *j) {
  if (!j->reaped) {
    shell_domain(j, 0, 1, NULL);
    int64_t until = now_ms() + TRACER_GRACE_MS;
    while (!j->reaped && now_ms() < until) bg_pump(WAIT_POLL_MS);
    if (!j->reaped) kill(j->tracer, SIGKILL);
    until = now_ms() + TRACER_GRACE_MS;
    while (!j->reaped && now_ms() < until) bg_pump(WAIT_POLL_MS);
  }
  int64_t until = now_ms() + DRAIN_GRACE_MS;
  while ((j->fd[0] >= 0 || j->fd[1] >= 0 || j->fd[2] >= 0) && now_ms() < until) bg_pump(WAIT_POLL_MS);
}

/* exe and cmdline of a process, or an empty buffer once it is gone (a zombie has no exe). */
static void process_ident(pid_t pid, struct buf *out) {
  char path[64], text[4096];
  out->len = 0;
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  ssize_t n = readlink(path, text, sizeof text);
  if (n <= 0) return;
  buf_put(out, text, (size_t)n);
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  buf_put(out, "\n", 1);
  n = read(fd, text, sizeof text);
  if (n > 0) buf_put(out, text, (size_t)n);
  close(fd);
}

/* The shell is blocked reading its call socket: it waits for a call without having ended this one. */
static int shell_waits_for_input(struct bg_job *j) {
  char path[64], text[256], want[64], link[64];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)j->shell_pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  if (!isdigit((unsigned char)text[0]) || atol(text) != SYS_read) return 0;
  const char *arg = strchr(text, ' ');
  if (arg == NULL) return 0;
  long rfd = strtol(arg + 1, NULL, 16);
  snprintf(path, sizeof path, "/proc/%d/fd/%ld", (int)j->shell_pid, rfd);
  ssize_t l = readlink(path, link, sizeof link - 1);
  if (l <= 0) return 0;
  link[l] = '\0';
  snprintf(want, sizeof want, "socket:[");
  return strncmp(link, want, strlen(want)) == 0 && (ino_t)strtoull(link + strlen(want), NULL, 10) == j->shell_ino;
}

/* A new shell's domain, as run_request starts a command, its stdin a socket; NULL with `why` set when it did not start. */
static struct bg_job *shell_spawn(struct request *r, struct buf *why) {
  int slot = bg_free_slot();
  if (slot < 0) {
    const char *m = "setup no background slot is free for the shell";
    buf_put(why, m, strlen(m));
    return NULL;
  }
  int in_sock[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, trace_pipe[2] = {-1, -1}, status_pipe[2] = {-1, -1},
      sockets[2] = {-1, -1};
  int rules_fd = -1;
  int ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_sock) == 0 && pipe2(out_pipe, O_CLOEXEC) == 0 &&
           pipe2(err_pipe, O_CLOEXEC) == 0 && pipe2(status_pipe, O_CLOEXEC) == 0 && pipe2(trace_pipe, O_CLOEXEC) == 0 &&
           (!r->channel || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) == 0);
  int *all[] = {&in_sock[0], &in_sock[1], &out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1],
                &trace_pipe[0], &trace_pipe[1], &status_pipe[0], &status_pipe[1], &sockets[0], &sockets[1]};
  const size_t n_all = sizeof all / sizeof all[0];
  for (size_t i = 0; i < n_all && ok; i++)
    if (*all[i] >= 0) ok = (*all[i] = high_fd(*all[i])) >= 0;
  if (ok && r->has_rules) ok = (rules_fd = rules_memfd(r->rules, r->rules_len)) >= 0;
  pid_t pid = -1;
  if (ok) {
    struct spawn_fds fds = {in_sock[1], out_pipe[1], err_pipe[1], trace_pipe[1], sockets[1], rules_fd, status_pipe[1]};
    pid = fork();
    if (pid == 0) child_exec(r, &fds);
  }
  if (pid < 0) {
    char m[96];
    int len = snprintf(m, sizeof m, "setup %s", strerror(errno));
    buf_put(why, m, (size_t)len);
    for (size_t i = 0; i < n_all; i++)
      if (*all[i] >= 0) close(*all[i]);
    if (rules_fd >= 0) close(rules_fd);
    return NULL;
  }
  setpgid(pid, pid);
  struct stat shell_end;
  ino_t shell_ino = fstat(in_sock[1], &shell_end) == 0 ? shell_end.st_ino : 0;
  close(in_sock[1]), close(out_pipe[1]), close(err_pipe[1]), close(status_pipe[1]), close(trace_pipe[1]);
  if (sockets[1] >= 0) close(sockets[1]);
  if (rules_fd >= 0) close(rules_fd);
  /* The status pipe reads end of file once the wrappers exec'd, or why they could not. */
  unsigned char chunk[256];
  ssize_t got;
  while ((got = read(status_pipe[0], chunk, sizeof chunk)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0) buf_put(why, chunk, (size_t)got);
  close(status_pipe[0]);
  struct bg_job *j = &jobs[slot];
  memset(j, 0, sizeof *j);
  j->used = 1, j->is_shell = 1, j->id = next_job_id++, j->tracer = pid;
  /* Host-traced: the shell's "tracer" is a keeper (ab-keep.c); its domain is what is below it. */
  j->keeper = r->host_traced;
  j->fd[0] = trace_pipe[0], j->fd[1] = out_pipe[0], j->fd[2] = err_pipe[0];
  j->in_fd = in_sock[0];
  j->shell_ino = shell_ino;
  fcntl(j->in_fd, F_SETFL, O_NONBLOCK);
  j->chan = (struct channel_state){sockets[0], {0}, {-1, -1, -1, -1}, 0};
  if (why->len > 0) {
    /* Nothing runs; the tracer's exit is reaped by the finish. */
    shell_finish(j);
    job_free(j);
    return NULL;
  }
  return j;
}

/* The launcher's messages and the seccomp listeners it hands over, moved where bg_service serves them. */
static void shell_read_channel(struct bg_job *j) {
  if (j->chan.fd < 0) return;
  read_channel(&j->chan, 0);
  while (j->chan.n_listeners > 0) {
    int fd = j->chan.listeners[--j->chan.n_listeners];
    if (j->n_listeners < MAX_LISTENERS) j->listeners[j->n_listeners++] = fd;
    else close(fd);
  }
}

/* The window: everything the shell's domain did since the last answer, then the window starts anew. */
static void shell_window_fields(struct bg_job *j, struct buf *fields) {
  put_field(fields, T_STDOUT, j->out.kept.p, j->out.kept.len);
  put_u64_field(fields, T_STDOUT_BYTES, j->out.total);
  put_field(fields, T_STDERR, j->err.kept.p, j->err.kept.len);
  put_u64_field(fields, T_STDERR_BYTES, j->err.total);
  put_u32_field(fields, T_MAIN_PID, (uint32_t)j->tracer);
  put_field(fields, T_TRACE, j->trace.kept.p, j->trace.kept.len);
  put_u64_field(fields, T_TRACE_BYTES, j->trace.total);
  for (size_t off = 0; off + 4 <= j->chan.messages.len;) {
    uint32_t len = get_be32(j->chan.messages.p + off);
    put_field(fields, T_CHANNEL_MSG, j->chan.messages.p + off + 4, len);
    off += 4 + len;
  }
  for (size_t off = 0; off + 64 <= j->denied.records.len; off += 64) put_field(fields, T_DENIAL, j->denied.records.p + off, 64);
  if (j->denied.total > 0) put_u64_field(fields, T_DENIALS_TOTAL, j->denied.total);
  j->out.kept.len = j->err.kept.len = j->trace.kept.len = j->chan.messages.len = j->denied.records.len = 0;
  j->out.total = j->err.total = j->trace.total = j->denied.total = 0;
}

/* Why the shell is gone, as far as its tracer tells. */
static void shell_end_reason(struct bg_job *j, char *reason, size_t n) {
  if (j->cut) snprintf(reason, n, "the host cut the agent's processes");
  else if (j->exit_line.found) snprintf(reason, n, "the shell exited with status %d", j->exit_line.code);
  else if (j->reaped && WIFSIGNALED(j->status)) snprintf(reason, n, "the shell was killed by signal %d", WTERMSIG(j->status));
  else snprintf(reason, n, "the shell ended");
}

static void shell_outcome(struct bg_job *j, struct buf *fields, int timed_out, int done, int status, int killed) {
  if (timed_out) put_field(fields, T_TIMED_OUT, NULL, 0);
  else if (done) put_u32_field(fields, T_EXIT, (uint32_t)status);
  else if (j->exit_line.found) put_u32_field(fields, T_EXIT, (uint32_t)j->exit_line.code);
  else if (killed) put_u32_field(fields, T_SIGNAL, SIGKILL);
  else if (j->reaped && WIFSIGNALED(j->status)) put_u32_field(fields, T_SIGNAL, (uint32_t)WTERMSIG(j->status));
  else put_u32_field(fields, T_EXIT, j->reaped ? (uint32_t)WEXITSTATUS(j->status) : 0u);
}

/* Read delimiter lines off the socket: 1 when this call's arrived (its status in *status). */
static int shell_read_ctl(struct bg_job *j, const char *nonce, uint32_t *forged, int *status) {
  unsigned char chunk[512];
  size_t nlen = strlen(nonce);
  for (;;) {
    ssize_t got = read(j->in_fd, chunk, sizeof chunk);
    if (got == 0) j->in_eof = 1;
    if (got <= 0) return 0;
    for (ssize_t i = 0; i < got; i++) {
      if (chunk[i] != '\n') {
        if (j->ctl.len < 128) buf_put(&j->ctl, &chunk[i], 1);
        else j->ctl.len = 129; /* too long to be ours; marked */
        continue;
      }
      int ours = j->ctl.len > nlen + 1 && j->ctl.len <= 128 && memcmp(j->ctl.p, nonce, nlen) == 0 && j->ctl.p[nlen] == ' ';
      int code = 0;
      for (size_t k = nlen + 1; ours && k < j->ctl.len; k++) {
        if (!isdigit(j->ctl.p[k])) ours = 0;
        else code = code * 10 + (j->ctl.p[k] - '0');
        if (code > 255) ours = 0;
      }
      j->ctl.len = 0;
      if (!ours) {
        (*forged)++;
        continue;
      }
      /* Whatever follows the delimiter was written after it: not this call's, and not ours. */
      *forged += (uint32_t)(memchr(chunk + i + 1, '\n', (size_t)(got - i - 1)) != NULL);
      *status = code;
      return 1;
    }
  }
}

static void run_shell_call(struct request *r) {
  struct bg_job *j = shell_job();
  struct buf fields = {0};
  char reason[160];
  if (j != NULL && (r->shell_reset || j->reaped || (j->shell_pid != 0 && parent_of(j->shell_pid) != j->tracer))) {
    /* The host ends the shell (its policy changed), or it ended between calls: its tail, not run. */
    if (r->shell_reset) snprintf(reason, sizeof reason, "the host ended the shell (a new policy)");
    else shell_end_reason(j, reason, sizeof reason);
    shell_finish(j);
    if (!r->shell_reset && !j->cut && !j->exit_line.found && !(j->reaped && WIFSIGNALED(j->status))) snprintf(reason, sizeof reason, "the shell ended between calls");
    shell_outcome(j, &fields, 0, 0, 0, 0);
    put_u64_field(&fields, T_DURATION_US, 0);
    shell_window_fields(j, &fields);
    put_field(&fields, T_SHELL_ENDED, reason, strlen(reason));
    put_field(&fields, T_SHELL_NOT_RUN, NULL, 0);
    job_free(j);
    send_frame(F_DONE, &fields);
    free(fields.p);
    return;
  }
  if (r->shell_reset) {
    put_u32_field(&fields, T_EXIT, 0);
    const char *none = "";
    put_field(&fields, T_STDOUT, none, 0);
    put_u64_field(&fields, T_STDOUT_BYTES, 0);
    put_field(&fields, T_STDERR, none, 0);
    put_u64_field(&fields, T_STDERR_BYTES, 0);
    put_u64_field(&fields, T_DURATION_US, 0);
    put_field(&fields, T_SHELL_NOT_RUN, NULL, 0);
    send_frame(F_DONE, &fields);
    free(fields.p);
    return;
  }
  int64_t started_us = now_us();
  int started = 0;
  if (j == NULL) {
    struct buf why = {0};
    j = shell_spawn(r, &why);
    if (j == NULL) {
      if (why.len >= 6 && memcmp(why.p, "setup ", 6) == 0) {
        buf_put(&why, "", 1);
        send_error("shell", (const char *)why.p, 0);
      } else {
        put_u32_field(&fields, T_EXIT, 126);
        put_field(&fields, T_STDOUT, "", 0);
        put_u64_field(&fields, T_STDOUT_BYTES, 0);
        put_field(&fields, T_STDERR, "", 0);
        put_u64_field(&fields, T_STDERR_BYTES, 0);
        put_u64_field(&fields, T_DURATION_US, 0);
        put_field(&fields, T_SPAWN_ERROR, why.p, why.len);
        put_u32_field(&fields, T_SHELL_FORGED, 0);
        send_frame(F_DONE, &fields);
      }
      free(why.p);
      free(fields.p);
      return;
    }
    started = 1;
  }
  j->out.limit = j->err.limit = r->output_cap;
  j->trace.limit = r->trace_cap ? r->trace_cap : BG_TRACE_CAP;
  long limit_hits = pids_limit_hits();
  int64_t deadline = r->timeout_ms == 0 ? -1 : now_ms() + r->timeout_ms, grace_until = -1, next_check = 0;
  size_t in_off = 0;
  uint32_t forged = 0;
  int done = 0, status = 0, timed_out = 0, ended = 0, killed = 0, cut = 0;
  int64_t waiting_since = -1;
  reason[0] = '\0';
  for (;;) {
    struct pollfd pfds[5 + BG_SLOTS];
    struct bg_slot slots[BG_SLOTS];
    int n = 0, i_in, i_chan = -1, i_cut = -1;
    pfds[n++] = (struct pollfd){0, 0, 0};
    i_in = n, pfds[n++] = (struct pollfd){j->in_eof ? -1 : j->in_fd, (short)(POLLIN | (in_off < r->stdin_len ? POLLOUT : 0)), 0};
    if (j->chan.fd >= 0) i_chan = n, pfds[n++] = (struct pollfd){j->chan.fd, POLLIN, 0};
    if (cut_pipe[0] >= 0) i_cut = n, pfds[n++] = (struct pollfd){cut_pipe[0], POLLIN, 0};
    int i_bg = n;
    n = bg_fill(pfds, n, slots);
    int64_t now = now_ms();
    int wait_ms = (int)(next_check > now ? next_check - now : 0);
    if (poll(pfds, (nfds_t)n, wait_ms) < 0 && errno != EINTR) fatal("poll");
    if ((pfds[0].revents & (POLLHUP | POLLERR)) || terminate_requested) {
      kill_all_descendants();
      exit(terminate_requested ? 143 : 0);
    }
    reap();
    if (i_cut >= 0 && pfds[i_cut].revents) drain_cut_pipe();
    bg_service(pfds + i_bg, slots, n - i_bg);
    if (cut_pending() && take_cut()) {
      /* The host's cut: the shell's processes (the shell too) and every background command's die
       * now, the tracers last; the shell ends with this call. */
      cut_background(0);
      cut_acknowledge();
      timed_out = ended = killed = cut = 1;
      snprintf(reason, sizeof reason, "the host cut the agent's processes");
      break;
    }
    if (i_chan >= 0 && (pfds[i_chan].revents & (POLLIN | POLLHUP | POLLERR))) {
      shell_read_channel(j);
      if (pfds[i_chan].revents & (POLLHUP | POLLERR)) close(j->chan.fd), j->chan.fd = -1;
    }
    if ((pfds[i_in].revents & POLLOUT) && in_off < r->stdin_len) {
      ssize_t w = write(j->in_fd, r->stdin_data + in_off, r->stdin_len - in_off);
      if (w > 0) in_off += (size_t)w;
    }
    if ((pfds[i_in].revents & POLLIN) && shell_read_ctl(j, r->shell_nonce, &forged, &status)) {
      done = 1;
      break;
    }
    now = now_ms();
    if (now < next_check) continue;
    next_check = now + MAIN_POLL_MS;
    if (j->shell_pid == 0) j->shell_pid = first_trace_pid(&j->trace.kept);
    if (j->reaped || (j->shell_pid != 0 && parent_of(j->shell_pid) != j->tracer)) {
      /* Its reason once the tracer's output is drained (shell_finish, below): a keeper writes the
       * exit line after it reaped the shell, so the line may still be in the pipe now. */
      ended = 1;
      break;
    }
    if (j->shell_pid != 0 && j->ident.len > 0) {
      struct buf cur = {0};
      process_ident(j->shell_pid, &cur);
      /* Gone or a zombie (empty): not replaced; the look above sees it ended once it is reaped. */
      int replaced = cur.len > 0 && !(cur.len == j->ident.len && memcmp(cur.p, j->ident.p, cur.len) == 0);
      /* exe and cmdline are two reads, and an exec between them gives the old exe with the new
       * cmdline: replaced all the same, but the reason would name the old program. Look again
       * until two looks agree (an exec takes microseconds; bounded all the same). */
      for (int look = 0; replaced && look < 20; look++) {
        struct buf again = {0};
        bg_pump(5);
        process_ident(j->shell_pid, &again);
        int settled = again.len == 0 || (again.len == cur.len && memcmp(again.p, cur.p, cur.len) == 0);
        if (again.len > 0) {
          free(cur.p);
          cur = again;
        } else {
          free(again.p);
        }
        if (settled) break;
      }
      if (replaced) {
        char *nl = memchr(cur.p, '\n', cur.len);
        snprintf(reason, sizeof reason, "the shell was replaced (exec of %.*s)", (int)(nl == NULL ? cur.len : (size_t)(nl - (char *)cur.p)), (const char *)cur.p);
      }
      free(cur.p);
      if (replaced) {
        ended = killed = 1;
        break;
      }
    }
    if (j->shell_pid != 0 && in_off == r->stdin_len) {
      /* Blocked at two looks SHELL_FD_CHECK_MS apart: no call input was left to read, and the
       * delimiter (read before this look) never came. */
      if (!shell_waits_for_input(j)) waiting_since = -1;
      else if (waiting_since < 0) waiting_since = now;
      else if (now - waiting_since >= SHELL_FD_CHECK_MS) {
        ended = killed = 1;
        snprintf(reason, sizeof reason, "the shell waited for input without ending the call (its driver was changed)");
        break;
      }
    }
    if (!timed_out && deadline >= 0 && now >= deadline) {
      /* Every process of the shell but the shell dies; if the shell then ends the call, it lives on. */
      timed_out = 1;
      shell_domain(j, j->shell_pid, 1, NULL);
      grace_until = now_ms() + TRACER_GRACE_MS;
    }
    if (timed_out && now >= grace_until) {
      ended = killed = 1;
      snprintf(reason, sizeof reason, "the call timed out and its shell did not come back");
      break;
    }
  }
  int64_t finished_us = now_us();
  size_t survivors = 0;
  struct buf survivor_info = {0};
  if (done) {
    /* The shell's pid is the trace's first line (strace's, or the keeper's), looked for every
     * MAIN_POLL_MS: a first call that ended sooner must still learn it before its window clears
     * the buffer, or the shell would never be known (a keeper writes nothing after that line). */
    for (int64_t until = now_ms() + SHELL_TRACE_SETTLE_MS; j->shell_pid == 0 && (j->shell_pid = first_trace_pid(&j->trace.kept)) == 0 && now_ms() < until;) bg_pump(5);
    /* The driver ran: what the shell is now is what it must stay. */
    if (j->ident.len == 0 && j->shell_pid != 0) process_ident(j->shell_pid, &j->ident);
    /* Jobs a call left running stay in the shell, traced, their activity in later windows; more
     * than a service needs (or a call that hit the pids limit) is a runaway, stopped now. */
    size_t running = shell_domain(j, j->shell_pid, 0, NULL);
    if (running > MAX_BG_SURVIVORS || (limit_hits >= 0 && pids_limit_hits() != limit_hits)) survivors = shell_domain(j, j->shell_pid, 1, &survivor_info);
    /* strace writes a line as a call returns, maybe just after the shell wrote the delimiter. A
     * keeper writes nothing then: the host's take waits for its own marker instead. */
    int64_t until = j->keeper ? 0 : now_ms() + SHELL_TRACE_SETTLE_MS;
    for (uint64_t seen = j->trace.total + 1; seen != j->trace.total && now_ms() < until;) {
      seen = j->trace.total;
      int64_t quiet = now_ms() + SHELL_TRACE_QUIET_MS;
      while (now_ms() < quiet) bg_pump(5);
    }
  } else {
    shell_finish(j);
    if (ended && reason[0] == '\0') shell_end_reason(j, reason, sizeof reason);
  }
  shell_read_channel(j);
  shell_outcome(j, &fields, timed_out, done, status, killed);
  if (cut) put_field(&fields, T_CUT, NULL, 0);
  put_u64_field(&fields, T_DURATION_US, (uint64_t)(finished_us - started_us));
  shell_window_fields(j, &fields);
  if (survivors > 0) {
    put_u32_field(&fields, T_SURVIVORS, (uint32_t)survivors);
    put_field(&fields, T_SURVIVOR_INFO, survivor_info.p, survivor_info.len);
  }
  if (started) put_field(&fields, T_SHELL_STARTED, NULL, 0);
  put_u32_field(&fields, T_SHELL_FORGED, forged); /* always: it marks the answer as a shell call's */
  if (ended) put_field(&fields, T_SHELL_ENDED, reason, strlen(reason));
  else put_u32_field(&fields, T_BACKGROUND_JOB, j->id);
  if (ended) job_free(j);
  send_frame(F_DONE, &fields);
  free(fields.p);
  free(survivor_info.p);
}

/* ---- listing the filesystem for the policy compiler ---- */

/*
 * The records sandbox/paths/snapshot.ts parses, as GNU find -xdev would print them:
 * `<type> <octal mode> <path>\0`, and for a symlink one more `<link text>\0`. Done here rather
 * than with the image's own find, which a command may have replaced.
 */
static void list_entry(struct buf *out, int dirfd, const char *name, const char *path, dev_t dev, int depth) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  char type = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : S_ISCHR(st.st_mode) ? 'c'
              : S_ISBLK(st.st_mode) ? 'b' : S_ISFIFO(st.st_mode) ? 'p' : 's';
  char head[32];
  int n = snprintf(head, sizeof head, "%c %o ", type, (unsigned)(st.st_mode & 07777));
  if (out->len + (size_t)n + strlen(path) + 2 > MAX_LISTING_BYTES) return;
  buf_put(out, head, (size_t)n);
  buf_put(out, path, strlen(path) + 1);
  if (type == 'l') {
    char target[4096];
    ssize_t t = readlinkat(dirfd, name, target, sizeof target - 1);
    if (t < 0) t = 0;
    buf_put(out, target, (size_t)t);
    buf_put(out, "", 1);
    return;
  }
  if (type != 'd' || st.st_dev != dev || depth > 256) return;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    return;
  }
  struct dirent *e;
  size_t plen = strlen(path);
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    size_t need = plen + strlen(e->d_name) + 2;
    char *child = malloc(need);
    if (child == NULL) fatal("out of memory");
    snprintf(child, need, "%s%s%s", path, plen > 0 && path[plen - 1] == '/' ? "" : "/", e->d_name);
    list_entry(out, fd, e->d_name, child, dev, depth + 1);
    free(child);
  }
  closedir(d);
}

static void run_list(const unsigned char *p, size_t n) {
  int64_t started = now_us();
  struct buf listing = {0};
  size_t off = 0;
  while (off + 5 <= n) {
    uint8_t tag = p[off];
    uint32_t len = get_be32(p + off + 1);
    off += 5;
    if (len > n - off) break;
    if (tag == T_ARGV) {
      char *root = cstring(p + off, len);
      if (root != NULL && root[0] == '/') {
        struct stat st;
        if (lstat(root, &st) == 0) list_entry(&listing, AT_FDCWD, root, root, st.st_dev, 0);
      }
      free(root);
    }
    off += len;
  }
  struct buf fields = {0};
  put_u32_field(&fields, T_EXIT, listing.len >= MAX_LISTING_BYTES ? 1 : 0);
  put_field(&fields, T_STDOUT, listing.p, listing.len);
  put_u64_field(&fields, T_STDOUT_BYTES, listing.len);
  put_field(&fields, T_STDERR, NULL, 0);
  put_u64_field(&fields, T_STDERR_BYTES, 0);
  put_u64_field(&fields, T_DURATION_US, (uint64_t)(now_us() - started));
  send_frame(F_DONE, &fields);
  free(fields.p);
  free(listing.p);
}

/* ---- entry points ---- */

static void on_term(int sig) {
  (void)sig;
  terminate_requested = 1;
}

int serve_main(void) {
  /* Docker hands us only 0/1/2, but make sure nothing else could reach a command. */
  syscall(__NR_close_range, 3U, ~0U, AB_CLOSE_RANGE_CLOEXEC);
  self_pid = getpid();
  /* Orphans of commands are re-parented here rather than to pid 1, so they can be found and killed. */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fatal("PR_SET_CHILD_SUBREAPER");
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term; /* no SA_RESTART: a blocked read returns EINTR and the flag is seen */
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* The host's cut. SA_RESTART: only the polls need waking (they are never restarted, and the
   * handler's byte on cut_pipe wakes them however the two interleave). */
  int cut_fds[2];
  if (pipe2(cut_fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    cut_pipe[0] = high_fd(cut_fds[0]);
    cut_pipe[1] = high_fd(cut_fds[1]);
  }
  struct sigaction cut_sa;
  memset(&cut_sa, 0, sizeof cut_sa);
  cut_sa.sa_sigaction = on_cut;
  cut_sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGUSR1, &cut_sa, NULL);

  /* The processes already here (pid 1, the container's idle process) are the harness's: the host
   * uses this list to tell a command signalling them from one signalling its own children. */
  struct buf hello = {0};
  put_u32_field(&hello, T_VERSION, PROTOCOL_VERSION);
  put_u32_field(&hello, T_PID, (uint32_t)self_pid);
  size_t np = list_procs(procs, MAX_PROCS);
  for (size_t i = 0; i < np; i++)
    if (procs[i].pid != self_pid) put_u32_field(&hello, T_PIDS, (uint32_t)procs[i].pid);
  send_frame(F_HELLO, &hello);
  free(hello.p);

  for (;;) {
    unsigned char header[5];
    int rc = wait_for_request();
    if (rc == 0) rc = read_exact(0, header, sizeof header);
    if (rc == 1 || rc == -2) {
      /* The client closed the stream (or asked us to stop): the session is over, and so is
       * every process it started. */
      kill_all_descendants();
      return rc == 1 ? 0 : 143;
    }
    if (rc != 0) {
      fprintf(stderr, "%s: request stream cut mid-frame\n", prog);
      kill_all_descendants();
      return 1;
    }
    uint32_t len = get_be32(header);
    if (len < 1 || len > MAX_REQUEST_BYTES || (header[4] != F_RUN && header[4] != F_LIST && header[4] != F_STOP)) {
      /* Framing is lost: answering and carrying on could misread every later request. */
      struct buf fields = {0};
      const char *msg = "malformed request frame";
      put_field(&fields, T_MESSAGE, msg, strlen(msg));
      send_frame(F_ERROR, &fields);
      fprintf(stderr, "%s: %s (length %u, type %u)\n", prog, msg, len, header[4]);
      kill_all_descendants();
      return 1;
    }
    unsigned char *body = malloc(len - 1 > 0 ? len - 1 : 1);
    if (body == NULL) fatal("out of memory");
    if (read_exact(0, body, len - 1) != 0) {
      fprintf(stderr, "%s: request stream cut mid-frame\n", prog);
      kill_all_descendants();
      return 1;
    }
    if (header[4] == F_STOP) {
      run_stop();
      free(body);
      continue;
    }
    if (header[4] == F_LIST) {
      run_list(body, len - 1);
      free(body);
      continue;
    }
    struct request r;
    const char *problem = parse_request(body, len - 1, &r);
    if (problem != NULL) {
      struct buf fields = {0};
      put_field(&fields, T_MESSAGE, problem, strlen(problem));
      send_frame(F_ERROR, &fields);
      free(fields.p);
    } else if (r.shell_nonce != NULL) {
      run_shell_call(&r);
    } else {
      run_request(&r);
    }
    free_request(&r);
    free(body);
  }
}

/* The byte a host sends to wake the main process's agent (AGENT_WAKE_BYTE in protocol.ts). */
#define WAKE_BYTE 0x57

int serve_after_wake_main(void) {
  unsigned char wake;
  int rc = read_exact(0, &wake, 1);
  /* End of stream first: the container goes (or the host let the agent go) before any session. */
  if (rc == 1) return 0;
  if (rc != 0 || wake != WAKE_BYTE) {
    fprintf(stderr, "%s: expected the wake byte before any request\n", prog);
    return 1;
  }
  return serve_main();
}

int stop_serve_main(const char *pid_arg) {
  char *end;
  long pid = strtol(pid_arg, &end, 10);
  if (*pid_arg == '\0' || *end != '\0' || pid <= 1) {
    fprintf(stderr, "%s: --stop-serve needs a pid, got '%s'\n", prog, pid_arg);
    return 120;
  }
  if (kill((pid_t)pid, SIGTERM) != 0) return errno == ESRCH ? 0 : 1;
  /* A stopped agent cannot act on SIGTERM until it runs again. */
  kill((pid_t)pid, SIGCONT);
  for (int i = 0; i < 50; i++) {
    if (kill((pid_t)pid, 0) != 0) return 0;
    usleep(20000);
  }
  kill((pid_t)pid, SIGKILL);
  return 0;
}

/*
 * The host's cut (SandboxSession.cut, through a docker exec): SIGUSR1 to the agent, then wait for
 * its SIGUSR2, sent once it has acted (run_request, run_shell_call, serve_pending_cut). 0 once
 * acknowledged; 1, with a message, when the pid is no session agent, is gone, or never answered.
 */
int cut_serve_main(const char *pid_arg) {
  char *end;
  long pid = strtol(pid_arg, &end, 10);
  if (*pid_arg == '\0' || *end != '\0' || pid <= 1 || pid > 0x3fffffff) {
    fprintf(stderr, "%s: --cut-serve needs a pid, got '%s'\n", prog, pid_arg);
    return 120;
  }
  /* Only a session agent (`ab-launch --serve`), so a reused pid is never signalled. */
  char path[64], cmdline[256];
  snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t len = fd < 0 ? -1 : read(fd, cmdline, sizeof cmdline - 1);
  if (fd >= 0) close(fd);
  if (len <= 0) {
    fprintf(stderr, "%s: --cut-serve: no session agent %ld (it ended)\n", prog, pid);
    return 1;
  }
  cmdline[len] = '\0';
  const char *arg1 = memchr(cmdline, '\0', (size_t)len);
  if (arg1 == NULL || arg1 + 1 >= cmdline + len || strcmp(arg1 + 1, "--serve") != 0) {
    fprintf(stderr, "%s: --cut-serve: process %ld is not a session agent\n", prog, pid);
    return 1;
  }
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  sigprocmask(SIG_BLOCK, &usr2, NULL);
  if (kill((pid_t)pid, SIGUSR1) != 0) {
    fprintf(stderr, "%s: --cut-serve: cannot signal the agent %ld: %s\n", prog, pid, strerror(errno));
    return 1;
  }
  int64_t until = now_ms() + CUT_ACK_MS;
  for (int64_t left; (left = until - now_ms()) > 0;) {
    struct timespec wait = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
    siginfo_t info;
    int sig = sigtimedwait(&usr2, &info, &wait);
    if (sig == SIGUSR2 && info.si_pid == (pid_t)pid) return 0;
  }
  if (kill((pid_t)pid, 0) != 0) fprintf(stderr, "%s: --cut-serve: the agent %ld ended before it acknowledged\n", prog, pid);
  else fprintf(stderr, "%s: --cut-serve: the agent %ld did not acknowledge within %d ms\n", prog, pid, CUT_ACK_MS);
  return 1;
}
