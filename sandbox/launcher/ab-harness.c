/*
 * ab-launch --quarantine | --validator-exec: the harness side of the validation phase
 * (validators/run.ts drives both); --fs-remove | --fs-mkdir: the rollback defense's
 * filesystem steps during an episode (agent/defenses/snapshot.ts).
 *
 *   ab-launch --quarantine [--stop-strays] PATH...
 *   ab-launch --validator-exec [--env NAME=VALUE]... [--unset NAME]... [--cwd DIR]
 *             [--timeout SECONDS] [--cap BYTES] [--trailer TOKEN] -- cmd args...
 *   ab-launch --fs-remove [--stdin] [--] PATH...
 *   ab-launch --fs-mkdir [--] PATH...
 *   ab-launch --install-bundle < BUNDLE
 *
 * After an agent episode every file the agent could write is hostile, the image's own
 * binaries included (`mv`, `mkdir`, `test`, `timeout` may have been replaced). So the steps
 * that decide what the validators see are done here, in the static binary on the harness's
 * read-only mount, and nothing of the image runs before the validator itself.
 *
 * --quarantine moves each PATH that exists (or the first component on its way that is not
 * a directory: a symlinked /logs is moved as the link) into a fresh directory under
 * /var/lib/authbench-quarantine/, never following a symlink, and prints one JSON line per
 * move: {"path":...,"to":...,"type":"dir|file|symlink|other"}. Nothing is deleted: what the
 * agent left is evidence. --stop-strays first SIGKILLs every process of the container but
 * init, its main process, this one and its parent (the session agent, when the host runs it
 * through the session; none under a Docker exec), so nothing the agent left running can rewrite the
 * tests or the reward after they are put in place; it prints {"stopped":N}.
 * Exit 0 when everything asked for was done, 1 (message on stderr) otherwise.
 *
 * --validator-exec sets no_new_privs (a set-uid binary the agent planted gains nothing when
 * a validator runs it), scopes signals with Landlock where the kernel can (ABI 6: nothing the
 * validator starts, such as a `mkdir` the agent replaced, can signal the container's init,
 * the harness or its own supervisor; ptrace is scoped by the same domain), closes every descriptor above stderr, keeps the environment the exec
 * gave it (the container's configured one) with the --env/--unset edits applied, enters
 * --cwd (or / when the agent removed it: a missing workdir must not keep the tests from
 * judging), and execs the command. With --timeout, --cap or --trailer it supervises instead
 * of exec'ing in place: the command runs in its own process group on fresh pipes, output is
 * relayed up to --cap bytes per stream and counted in full, the group is SIGKILLed at the
 * timeout (no coreutils `timeout` from the image), and after the command's output the line
 *   TOKEN{"exit_code":N|null,"signal":N|null,"timed_out":B,"stdout_bytes":N,"stderr_bytes":N,
 *         "signal_scoped":B,"run_ms":N}
 * (run_ms: the command's wall time, fork to reap — what the task's own tests took, apart from
 * the harness's work around them; the rollout's phases report it.)
 * is written to stdout, always last. The token is random per run, so the command cannot
 * forge the status line.
 *
 * --fs-remove removes each PATH (absolute, normalised, not /) and everything below it, like
 * `rm -rf` but never following a symlink: the way to PATH is walked from / with O_NOFOLLOW,
 * a symlink (at PATH or anywhere below it) is removed as the link, a directory tree is removed
 * with openat/unlinkat one directory at a time (any depth), and a mount point is neither
 * entered nor removed. With --stdin the paths (also) come NUL-separated on stdin, so any
 * number fit. One JSON line per path: {"path":P,"removed":"dir|file|symlink|other"}, or
 * "removed":null when nothing is there (a component is missing), or {"path":P,"error":M} with
 * "through":C when component C on the way is not a directory (a symlink or a file: what P
 * names is not reachable without following it, so nothing is removed).
 * --fs-mkdir is `mkdir -p` that never goes through a symlink: each missing component is
 * created 0755 (root's), an existing one must be a real directory. One JSON line per path:
 * {"path":P,"created":N} (N components created), or {"path":P,"error":M[,"through":C]}.
 * Both exit 0 when every path was handled, 1 when one was not (message on stderr too).
 *
 * --install-bundle puts the validation phase's files in place after the quarantine (what the
 * Docker archive API did, without a daemon round trip when the host asks through the session's
 * agent): stdin is "ABB1" then entries, each a type byte ('d' directory, 'f' file, 'l' symlink),
 * mode (u32), mtime (i64 seconds, -1: none), name (u32 length + bytes: relative to /, normalised)
 * and data (u32 length + bytes: the file's content or the link's target), numbers big-endian.
 * Every name is walked from / one component at a time with O_NOFOLLOW, missing parents created
 * 0755; a file is created O_EXCL (never written through or over something there), a directory
 * may exist only as a real directory. Prints {"installed":N}; exit 0, or 1 at the first entry it
 * could not put in place (message on stderr).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int harness_main(int argc, char **argv);
int drop_tracer_capability(void);

/* Exit codes: the launcher's (sandbox/launcher/exit-codes.ts) where the meaning is the same. */
enum {
  EXIT_FAILED = 1,        /* --quarantine could not do everything asked */
  EXIT_NOT_ROOT = 2,      /* --quarantine not run as root: nothing was done (the caller asks again as root) */
  EXIT_USAGE = 120,       /* bad command line */
  EXIT_NO_NEW_PRIVS = 122, /* no_new_privs could not be set */
  EXIT_TIMED_OUT = 124,   /* supervised command hit --timeout (coreutils convention) */
  EXIT_EXEC_FAILED = 126,
  EXIT_NOT_FOUND = 127,
};

#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
/* The Landlock ABI that scopes signals (LANDLOCK_SCOPE_SIGNAL, Linux 6.12). */
#define HARNESS_SCOPE_ABI 6
#define HARNESS_SCOPE_SIGNAL (1ULL << 1)
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#define QUARANTINE_PARENT_1 "var"
#define QUARANTINE_PARENT_2 "lib"
#define QUARANTINE_NAME "authbench-quarantine"
#define QUARANTINE_ROOT "/" QUARANTINE_PARENT_1 "/" QUARANTINE_PARENT_2 "/" QUARANTINE_NAME

/* After the command exits, how long to keep relaying output a background child still writes. */
#define DRAIN_GRACE_MS 500
/* After a kill, how long to wait for the pipes to close before giving up on escaped holders. */
#define KILL_DRAIN_MS 100
#define POLL_SLICE_MS 20
#define READ_CHUNK 65536

static void vsay(const char *fmt, va_list ap) {
  fputs("ab-launch: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

static void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

static void die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
  exit(code);
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}

static uint64_t random_u64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
  }
  return v;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fds_above_stderr(void) {
  if (syscall(__NR_close_range, 3U, ~0U, 0U) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 1 << 20) max = 1 << 20;
  for (long fd = 3; fd < max; fd++) close((int)fd);
}

/* ---- --quarantine ---- */

static const char *type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "dir";
  if (S_ISREG(mode)) return "file";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

/* A directory below `at`, created if missing; never through a symlink (O_NOFOLLOW). */
static int open_subdir(int at, const char *name, mode_t mode) {
  if (mkdirat(at, name, mode) != 0 && errno != EEXIST) return -1;
  return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

struct quarantine {
  int fd;          /* the fresh run directory, or -1: move next to each path instead */
  char path[256];  /* its absolute path */
  char run[64];    /* the run's name, also used for same-directory fallbacks */
  unsigned moved;
};

/*
 * The fresh directory this run moves things into: /var/lib/authbench-quarantine/<run>/, every
 * component opened without following symlinks. When the agent made that impossible (a symlink
 * or file at /var/lib, a quarantine root it owns), moves fall back to a hidden sibling of each
 * path: the point is to get the path out of the validators' way, and a rename within one
 * directory cannot cross filesystems or be redirected.
 */
static void quarantine_open(struct quarantine *q, int rootfd) {
  q->fd = -1;
  q->moved = 0;
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(q->run, sizeof q->run, "%s-%016llx", stamp, (unsigned long long)random_u64());

  int var = open_subdir(rootfd, QUARANTINE_PARENT_1, 0755);
  int lib = var < 0 ? -1 : open_subdir(var, QUARANTINE_PARENT_2, 0755);
  int root = lib < 0 ? -1 : open_subdir(lib, QUARANTINE_NAME, 0700);
  if (var >= 0) close(var);
  if (lib >= 0) close(lib);
  struct stat st;
  if (root < 0 || fstat(root, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0) {
    warn("%s is unusable (%s); moving aside next to each path", QUARANTINE_ROOT, root < 0 ? strerror(errno) : "not root's directory");
    if (root >= 0) close(root);
    return;
  }
  /* Whoever created it, only root may look inside: quarantined files can hold the task's secrets. */
  if (fchmod(root, 0700) != 0) warn("chmod %s: %s", QUARANTINE_ROOT, strerror(errno));
  for (int attempt = 0; attempt < 16; attempt++) {
    if (mkdirat(root, q->run, 0700) == 0) {
      q->fd = openat(root, q->run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (q->fd >= 0) snprintf(q->path, sizeof q->path, "%s/%s", QUARANTINE_ROOT, q->run);
      break;
    }
    if (errno != EEXIST) break;
    snprintf(q->run, sizeof q->run, "%s-%016llx", stamp, (unsigned long long)random_u64());
  }
  if (q->fd < 0) warn("cannot create a run directory in %s: %s; moving aside next to each path", QUARANTINE_ROOT, strerror(errno));
  close(root);
}

static int rename_noreplace(int from_dir, const char *from, int to_dir, const char *to) {
  if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0) return 0;
  /* A filesystem without RENAME_NOREPLACE: the target is a fresh name anyway. */
  if (errno == EINVAL) return renameat(from_dir, from, to_dir, to);
  return -1;
}

/* Move `name` (in directory `dir`, shown as `shown`) aside; prints the JSON line. */
static int move_aside(struct quarantine *q, int dir, const char *name, const char *shown, mode_t mode) {
  char target[NAME_MAX + 1], to[PATH_MAX];
  unsigned n = ++q->moved;
  if (q->fd >= 0) {
    snprintf(target, sizeof target, "%u-%.200s", n, name);
    if (rename_noreplace(dir, name, q->fd, target) == 0) {
      snprintf(to, sizeof to, "%s/%s", q->path, target);
      goto moved;
    }
    /* A separate filesystem (a volume) or a mount point: try beside it. */
    if (errno != EXDEV) {
      warn("cannot move %s to %s: %s", shown, q->path, strerror(errno));
      return -1;
    }
  }
  snprintf(target, sizeof target, ".authbench-quarantine-%s-%u-%.160s", q->run, n, name);
  if (rename_noreplace(dir, name, dir, target) != 0) {
    warn("cannot move %s aside: %s", shown, strerror(errno));
    return -1;
  }
  {
    const char *slash = strrchr(shown, '/');
    int parent_len = slash == NULL || slash == shown ? 0 : (int)(slash - shown);
    snprintf(to, sizeof to, "%.*s/%s", parent_len, shown, target);
  }
moved:
  fputs("{\"path\":", stdout);
  json_string(stdout, shown);
  fputs(",\"to\":", stdout);
  json_string(stdout, to);
  printf(",\"type\":\"%s\"}\n", type_name(mode));
  fflush(stdout);
  return 0;
}

/*
 * Walk PATH from / one component at a time with O_NOFOLLOW. The first component that is not a
 * directory (a symlink, a file) or the last one is moved; a missing one means nothing to do.
 */
static int quarantine_path(struct quarantine *q, int rootfd, const char *path) {
  if (path[0] != '/' || strlen(path) >= PATH_MAX) {
    warn("not an absolute path: %s", path);
    return -1;
  }
  char copy[PATH_MAX], shown[PATH_MAX];
  strcpy(copy, path);
  char *parts[PATH_MAX / 2];
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r(copy, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
    if (strcmp(tok, ".") == 0 || strcmp(tok, "..") == 0) {
      warn("not a normalised path: %s", path);
      return -1;
    }
    parts[n++] = tok;
  }
  if (n == 0) {
    warn("refusing to move /");
    return -1;
  }
  int dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
  if (dir < 0) {
    warn("dup: %s", strerror(errno));
    return -1;
  }
  shown[0] = '\0';
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(shown);
    snprintf(shown + len, sizeof shown - len, "/%s", parts[i]);
    struct stat st;
    if (fstatat(dir, parts[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) {
        warn("cannot inspect %s: %s", shown, strerror(errno));
        rc = -1;
      }
      break;
    }
    if (i + 1 == n || !S_ISDIR(st.st_mode)) {
      rc = move_aside(q, dir, parts[i], shown, st.st_mode);
      break;
    }
    int next = openat(dir, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      /* It was a directory a moment ago: something is still changing the tree. */
      warn("cannot open %s: %s", shown, strerror(errno));
      rc = -1;
      break;
    }
    close(dir);
    dir = next;
  }
  close(dir);
  return rc;
}

/* ---- --stop-strays ---- */

struct proc_info {
  pid_t pid, ppid;
  char state;
  unsigned long long start; /* clock ticks after boot */
};

static int read_proc(pid_t pid, struct proc_info *p) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, text, sizeof text - 1);
  close(fd);
  if (r <= 0) return -1;
  text[r] = '\0';
  /* "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split at the last ')'. */
  char *close_paren = strrchr(text, ')');
  if (close_paren == NULL || close_paren[1] != ' ') return -1;
  p->pid = pid;
  p->state = close_paren[2];
  /* Fields after comm: 3 state, 4 ppid, ... 22 starttime. */
  char *save = NULL, *tok = strtok_r(close_paren + 2, " ", &save);
  for (int field = 3; tok != NULL; field++, tok = strtok_r(NULL, " ", &save)) {
    if (field == 4) p->ppid = (pid_t)atoi(tok);
    if (field == 22) {
      p->start = strtoull(tok, NULL, 10);
      return 0;
    }
  }
  return -1;
}

static int read_comm(pid_t pid, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, out, size - 1);
  close(fd);
  if (r <= 0) return -1;
  out[r] = '\0';
  out[strcspn(out, "\n")] = '\0';
  return 0;
}

/*
 * The container's main process, which must survive: with Docker's --init, PID 1 is docker-init
 * and the main process (`ab-launch --idle`) is its oldest child; everything else PID 1 adopted
 * is an orphan. Without an init, PID 1 is the main process itself. 0: nothing to spare.
 */
static pid_t main_process(void) {
  char comm[64];
  if (read_comm(1, comm, sizeof comm) != 0) return 0;
  if (strcmp(comm, "docker-init") != 0 && strcmp(comm, "tini") != 0) return 0;
  DIR *d = opendir("/proc");
  if (d == NULL) return 0;
  pid_t best = 0;
  unsigned long long best_start = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    struct proc_info p;
    if (read_proc((pid_t)atoi(e->d_name), &p) != 0 || p.ppid != 1) continue;
    if (best == 0 || p.start < best_start) best = p.pid, best_start = p.start;
  }
  closedir(d);
  return best;
}

/* Pids already killed, so a later pass counts (and waits for) only newcomers. */
#define MAX_KILLED 4096
static pid_t killed_pids[MAX_KILLED];
static size_t n_killed;

static int was_killed(pid_t pid) {
  for (size_t i = 0; i < n_killed; i++)
    if (killed_pids[i] == pid) return 1;
  return 0;
}

/* One pass: SIGKILL every live process but init, `spare`, our parent and ourselves. Returns how many new ones. */
static int kill_pass(pid_t spare, pid_t parent, pid_t self) {
  DIR *d = opendir("/proc");
  if (d == NULL) return -1;
  int fresh = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pid_t pid = (pid_t)atoi(e->d_name);
    if (pid == 1 || pid == spare || pid == parent || pid == self) continue;
    struct proc_info p;
    /* Zombies cannot act; their parent (init) reaps them. */
    if (read_proc(pid, &p) != 0 || p.state == 'Z' || p.state == 'X') continue;
    if (kill(pid, SIGKILL) != 0 || was_killed(pid)) continue;
    if (n_killed < MAX_KILLED) killed_pids[n_killed++] = pid;
    fresh++;
  }
  closedir(d);
  return fresh;
}

static int any_alive(pid_t spare, pid_t parent, pid_t self) {
  DIR *d = opendir("/proc");
  if (d == NULL) return 0;
  int alive = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && !alive;) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pid_t pid = (pid_t)atoi(e->d_name);
    struct proc_info p;
    if (pid == 1 || pid == spare || pid == parent || pid == self || read_proc(pid, &p) != 0) continue;
    if (p.state != 'Z' && p.state != 'X') alive = 1;
  }
  closedir(d);
  return alive;
}

/*
 * Stop whatever the agent left running. kill(-1, SIGSTOP) freezes every process of the
 * namespace but init and us in one step, so none can fork or react while the rest are found
 * and killed; the pass repeats until one finds nobody new (a process mid-fork may slip a pass).
 * The main process is resumed. Returns the number killed, -1 when /proc is unreadable.
 */
static int stop_strays(void) {
  /* kill(-1) reaches every process this one may signal: in anything but an authbench container
   * (a host, a container with another init) that is far more than the agent's leftovers. */
  char comm[64];
  if (read_comm(1, comm, sizeof comm) != 0) return -1;
  if (strcmp(comm, "docker-init") != 0 && strcmp(comm, "tini") != 0 && strcmp(comm, "ab-launch") != 0 &&
      strcmp(comm, "sleep") != 0) {
    warn("refusing to stop processes: PID 1 is '%s', not an authbench container's init", comm);
    errno = EPERM;
    return -1;
  }
  /* Our parent is the harness process that started us: the session agent (ab-serve) when the host
   * asks through it, which answers once we are done. Under a Docker exec it is outside the
   * container (getppid() is 0). Nothing the agent runs can be the parent of a harness step. */
  pid_t self = getpid(), spare = main_process(), parent = getppid();
  if (parent <= 1) parent = 0;
  int total = 0;
  for (int round = 0; round < 20; round++) {
    kill(-1, SIGSTOP);
    int n = kill_pass(spare, parent, self);
    if (n < 0) return -1;
    total += n;
    if (n == 0) break;
  }
  if (spare > 0) kill(spare, SIGCONT);
  if (parent > 0) kill(parent, SIGCONT);
  /* SIGKILL is asynchronous: wait (briefly) until none of them can still be mid-write. */
  for (long long until = now_ms() + 2000; any_alive(spare, parent, self) && now_ms() < until;) {
    struct timespec pause_ = {0, 10 * 1000000};
    nanosleep(&pause_, NULL);
  }
  return total;
}

static int quarantine_main(int argc, char **argv) {
  int i = 2, strays = 0;
  if (i < argc && strcmp(argv[i], "--stop-strays") == 0) strays = 1, i++;
  if (i < argc && strcmp(argv[i], "--") == 0) i++;
  if (i >= argc && !strays) die(EXIT_USAGE, "usage: ab-launch --quarantine [--stop-strays] PATH...");
  /* Through a session whose agent runs as the image's own user, not root: refuse before touching
   * anything, so a retry as root finds everything where the agent left it. */
  if (geteuid() != 0) die(EXIT_NOT_ROOT, "--quarantine runs as root only (uid %u here): nothing was done", (unsigned)geteuid());
  int failed = 0;
  if (strays) {
    int n = stop_strays();
    if (n < 0) {
      warn("could not stop leftover processes: %s", strerror(errno));
      failed = 1;
    } else {
      printf("{\"stopped\":%d}\n", n);
      fflush(stdout);
    }
  }
  if (i >= argc) return failed ? EXIT_FAILED : 0;
  int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) die(EXIT_FAILED, "cannot open /: %s", strerror(errno));
  struct quarantine q;
  quarantine_open(&q, rootfd);
  for (; i < argc; i++)
    if (quarantine_path(&q, rootfd, argv[i]) != 0) failed = 1;
  if (q.fd >= 0) close(q.fd);
  close(rootfd);
  return failed ? EXIT_FAILED : 0;
}

/* ---- --validator-exec ---- */

struct vexec {
  const char *cwd;
  long long timeout_ms; /* -1: none */
  long long cap;        /* -1: no cap */
  const char *trailer;
  const char *collect; /* --collect DIR: its files go into the status line; NULL: not asked */
  char **cmd;
  int scope_ruleset; /* signal_scope_ruleset(); -1: not scoped */
};

static int valid_env_name(const char *s, size_t len) {
  if (len == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
  }
  return 1;
}

static long long parse_count(const char *s, long long max) {
  if (*s == '\0') return -1;
  long long v = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > max) return -1;
  }
  return v;
}

/* Seconds with an optional fraction ("600", "0.5") as milliseconds; -1 when malformed. */
static long long parse_seconds_ms(const char *s) {
  const char *dot = strchr(s, '.');
  char whole[32];
  size_t wlen = dot == NULL ? strlen(s) : (size_t)(dot - s);
  if (wlen == 0 || wlen >= sizeof whole) return -1;
  memcpy(whole, s, wlen);
  whole[wlen] = '\0';
  long long sec = parse_count(whole, 100000000LL);
  if (sec < 0) return -1;
  long long ms = sec * 1000;
  if (dot != NULL) {
    long long scale = 100;
    const char *f = dot + 1;
    if (*f == '\0') return -1;
    for (; *f != '\0'; f++) {
      if (*f < '0' || *f > '9') return -1;
      ms += (*f - '0') * scale;
      scale /= 10;
    }
  }
  return ms > 0 ? ms : -1;
}

static void validator_usage(void) {
  die(EXIT_USAGE,
      "usage: ab-launch --validator-exec [--env NAME=VALUE]... [--unset NAME]... [--cwd DIR] "
      "[--timeout SECONDS] [--cap BYTES] [--trailer TOKEN [--collect DIR]] -- cmd args...");
}

/* What every validator process starts from, whether exec'd in place or supervised. */
static void reset_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
}

static void __attribute__((noreturn)) exec_command(char **cmd) {
  reset_signals();
  close_fds_above_stderr();
  execvp(cmd[0], cmd);
  int e = errno;
  die(e == ENOENT ? EXIT_NOT_FOUND : EXIT_EXEC_FAILED, "exec %s: %s", cmd[0], strerror(e));
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

struct stream {
  int fd;      /* read end; -1 once closed */
  int out;     /* where it is relayed */
  int out_ok;  /* 0 once relaying failed (the reader went away): keep counting */
  unsigned long long total, relayed;
};

static void pump(struct stream *s, long long cap) {
  static char buf[READ_CHUNK];
  ssize_t r = read(s->fd, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (r <= 0) {
    close(s->fd);
    s->fd = -1;
    return;
  }
  s->total += (unsigned long long)r;
  size_t keep = (size_t)r;
  if (cap >= 0) {
    unsigned long long room = s->relayed >= (unsigned long long)cap ? 0 : (unsigned long long)cap - s->relayed;
    if (keep > room) keep = (size_t)room;
  }
  if (keep > 0 && s->out_ok && write_all(s->out, buf, keep) != 0) s->out_ok = 0;
  s->relayed += keep;
}

/* Relay both streams for up to `ms` (or until both closed). */
static void pump_for(struct stream *out, struct stream *err, long long cap, int ms) {
  struct pollfd fds[2];
  int n = 0;
  if (out->fd >= 0) fds[n++] = (struct pollfd){out->fd, POLLIN, 0};
  if (err->fd >= 0) fds[n++] = (struct pollfd){err->fd, POLLIN, 0};
  if (n == 0) {
    struct timespec pause_ = {0, (long)ms * 1000000L};
    nanosleep(&pause_, NULL);
    return;
  }
  if (poll(fds, (nfds_t)n, ms) <= 0) return;
  for (int k = 0; k < n; k++) {
    if (fds[k].revents == 0) continue;
    pump(fds[k].fd == out->fd ? out : err, cap);
  }
}

/*
 * A Landlock ruleset that handles no access right and only scopes signals, or -1 where the
 * kernel has no ABI 6. The validator's process restricts itself with it after the fork, so
 * it and everything it starts can signal each other but nothing outside: not the container's
 * init, not the harness, not this supervisor (which still reaches them: they are nested in
 * its domain). Best effort by design: on an older kernel the validator still runs (judging
 * must not depend on the host kernel) and the trailer says it was not scoped.
 */
static int signal_scope_ruleset(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
  if (abi < HARNESS_SCOPE_ABI) return -1;
  struct {
    uint64_t handled_access_fs, handled_access_net, scoped;
  } attr = {0, 0, HARNESS_SCOPE_SIGNAL};
  int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) warn("landlock_create_ruleset (signal scope): %s", strerror(errno));
  return fd;
}

/* In the validator's process, before exec: enter the scope (no_new_privs is already set). */
static void enter_signal_scope(int ruleset) {
  if (ruleset < 0) return;
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    /* Only a 16-deep domain stack fails here, which a fresh exec from the daemon never has. */
    warn("landlock_restrict_self (signal scope): %s", strerror(errno));
    _exit(EXIT_EXEC_FAILED);
  }
  close(ruleset);
}

/* ---- --collect ---- */

static int split_path(const char *path, char *copy, char **parts, size_t *n);
static int open_parent(int rootfd, char **parts, size_t n, char *through, size_t through_size);

/* What --collect reads in all, and how many files: past either it reports nothing (the host then
 * reads the directory itself, as it did before). The host's exec output cap allows for both. */
#define COLLECT_MAX_BYTES (16LL * 1024 * 1024)
#define COLLECT_MAX_FILES 256

struct dyn {
  char *p;
  size_t len, cap;
  int failed;
};

static void dyn_add(struct dyn *d, const char *s, size_t n) {
  if (d->failed) return;
  if (d->len + n + 1 > d->cap) {
    size_t cap = d->cap == 0 ? 4096 : d->cap;
    while (d->len + n + 1 > cap) cap *= 2;
    char *p = realloc(d->p, cap);
    if (p == NULL) {
      d->failed = 1;
      return;
    }
    d->p = p, d->cap = cap;
  }
  memcpy(d->p + d->len, s, n);
  d->len += n;
  d->p[d->len] = '\0';
}

static void dyn_str(struct dyn *d, const char *s) { dyn_add(d, s, strlen(s)); }

static void dyn_base64(struct dyn *d, const unsigned char *s, size_t n) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char quad[4];
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
    quad[0] = alphabet[v >> 18 & 63], quad[1] = alphabet[v >> 12 & 63];
    quad[2] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
    quad[3] = i + 2 < n ? alphabet[v & 63] : '=';
    dyn_add(d, quad, 4);
  }
}

/* A name the status line carries as it is: 1-255 of [A-Za-z0-9._-], not . or .. (the verdict files all are). */
static int plain_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 255 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
  for (; *s != '\0'; s++)
    if (!(isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')) return 0;
  return 1;
}

/* A regular file below `dir`, whole, up to `room` bytes; -1 when it is not one or outgrew `room`. */
static ssize_t read_regular(int dir, const char *name, unsigned char **out, long long room) {
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > room) {
    close(fd);
    return -1;
  }
  /* Read to EOF, not to st_size: a file still growing must not be cut silently. */
  size_t cap = (size_t)st.st_size + 1, len = 0;
  unsigned char *buf = malloc(cap);
  while (buf != NULL) {
    if (len == cap) {
      if ((long long)cap > room) break;
      unsigned char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) break;
      buf = bigger, cap *= 2;
    }
    ssize_t got = read(fd, buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    if (got == 0) {
      close(fd);
      if ((long long)len > room) break;
      *out = buf;
      return (ssize_t)len;
    }
    len += (size_t)got;
  }
  free(buf);
  close(fd);
  return -1;
}

/*
 * The files a validator left in `path` (its verdict: JUnit XML, reward.txt|json), read here after
 * the command instead of by a Docker archive call of the host's own: appended to the status line
 * as `,"verifier":{"files":{NAME:BASE64,...},"other":N}`, where `other` counts the entries that are
 * not regular files with plain names (the host reads any of those it wants on its own, as before).
 * `"verifier":"missing"` when the directory (or a component on its way) does not exist. Nothing is
 * appended when it cannot be read whole — not a directory, a symlink on the way (never followed),
 * past COLLECT_MAX_BYTES or COLLECT_MAX_FILES: the host then reads it the old way.
 */
static void collect_dir(const char *path, struct dyn *line) {
  char copy[PATH_MAX], through[PATH_MAX];
  char *parts[PATH_MAX / 2];
  size_t n = 0;
  if (split_path(path, copy, parts, &n) != 0 || n == 0) return;
  int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) return;
  int parent = open_parent(rootfd, parts, n, through, sizeof through);
  int e = errno;
  close(rootfd);
  int dir = parent < 0 ? -1 : openat(parent, parts[n - 1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (parent >= 0) e = errno, close(parent);
  if (dir < 0) {
    if (e == ENOENT) dyn_str(line, ",\"verifier\":\"missing\"");
    return;
  }
  DIR *dp = fdopendir(dir);
  if (dp == NULL) {
    close(dir);
    return;
  }
  struct dyn files = {0};
  long long total = 0;
  unsigned files_n = 0, other = 0;
  int whole = 1;
  for (struct dirent *de; whole && (de = readdir(dp)) != NULL;) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    struct stat st;
    if (!plain_name(de->d_name) || fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      other++;
      continue;
    }
    unsigned char *content = NULL;
    ssize_t len = read_regular(dirfd(dp), de->d_name, &content, COLLECT_MAX_BYTES - total);
    if (len < 0 || ++files_n > COLLECT_MAX_FILES) {
      /* Swapped for something else since the stat, or too much: not whole. */
      free(content);
      whole = 0;
      break;
    }
    total += len;
    dyn_str(&files, files_n == 1 ? "\"" : ",\"");
    dyn_str(&files, de->d_name);
    dyn_str(&files, "\":\"");
    dyn_base64(&files, content, (size_t)len);
    dyn_str(&files, "\"");
    free(content);
  }
  closedir(dp);
  if (whole && !files.failed) {
    char tail[64];
    snprintf(tail, sizeof tail, "},\"other\":%u}", other);
    dyn_str(line, ",\"verifier\":{\"files\":{");
    if (files.len > 0) dyn_add(line, files.p, files.len);
    dyn_str(line, tail);
  }
  free(files.p);
}

static int supervise(const struct vexec *v) {
  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) die(EXIT_EXEC_FAILED, "pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  long long started_ms = now_ms();
  pid_t pid = fork();
  if (pid < 0) die(EXIT_EXEC_FAILED, "fork: %s", strerror(errno));
  if (pid == 0) {
    /* Its own group, so the timeout and the cleanup reach everything the validator started. */
    setpgid(0, 0);
    if (dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0) _exit(EXIT_EXEC_FAILED);
    enter_signal_scope(v->scope_ruleset);
    exec_command(v->cmd);
  }
  setpgid(pid, pid); /* also here: the timeout may fire before the child ran */
  close(outp[1]);
  close(errp[1]);
  /* A host that stopped reading must not kill the supervisor before it reports. */
  signal(SIGPIPE, SIG_IGN);

  struct stream out = {outp[0], 1, 1, 0, 0}, err = {errp[0], 2, 1, 0, 0};
  long long deadline = v->timeout_ms < 0 ? -1 : now_ms() + v->timeout_ms;
  int status = 0, exited = 0, timed_out = 0;
  while (!exited) {
    int slice = POLL_SLICE_MS;
    pump_for(&out, &err, v->cap, slice);
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) exited = 1;
    else if (w < 0 && errno != EINTR) die(EXIT_EXEC_FAILED, "waitpid: %s", strerror(errno));
    if (!exited && deadline >= 0 && now_ms() >= deadline) {
      kill(-pid, SIGKILL);
      timed_out = 1;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      exited = 1;
    }
  }
  long long run_ms = now_ms() - started_ms;
  /* Output a background child of the validator still writes, briefly; then nothing it started may
   * outlive it (the next validator runs in the same container). */
  for (long long until = now_ms() + (timed_out ? KILL_DRAIN_MS : DRAIN_GRACE_MS); (out.fd >= 0 || err.fd >= 0) && now_ms() < until;)
    pump_for(&out, &err, v->cap, POLL_SLICE_MS);
  kill(-pid, SIGKILL);
  for (long long until = now_ms() + KILL_DRAIN_MS; (out.fd >= 0 || err.fd >= 0) && now_ms() < until;)
    pump_for(&out, &err, v->cap, POLL_SLICE_MS);
  if (out.fd >= 0) close(out.fd);
  if (err.fd >= 0) close(err.fd);

  int code, sig = -1;
  if (timed_out) code = EXIT_TIMED_OUT;
  else if (WIFSIGNALED(status)) sig = WTERMSIG(status), code = 128 + sig;
  else code = WEXITSTATUS(status);
  if (v->trailer != NULL) {
    char line[512];
    struct dyn status = {0};
    char exit_text[16], sig_text[16];
    if (timed_out || sig >= 0) snprintf(exit_text, sizeof exit_text, "null");
    else snprintf(exit_text, sizeof exit_text, "%d", code);
    if (sig >= 0 && !timed_out) snprintf(sig_text, sizeof sig_text, "%d", sig);
    else snprintf(sig_text, sizeof sig_text, "null");
    int len = snprintf(line, sizeof line,
                       "%s{\"exit_code\":%s,\"signal\":%s,\"timed_out\":%s,\"stdout_bytes\":%llu,\"stderr_bytes\":%llu,"
                       "\"signal_scoped\":%s,\"run_ms\":%lld",
                       v->trailer, exit_text, sig_text, timed_out ? "true" : "false", out.total, err.total,
                       v->scope_ruleset >= 0 ? "true" : "false", run_ms);
    if (len > 0 && (size_t)len < sizeof line) {
      dyn_add(&status, line, (size_t)len);
      /* After the group was killed: nothing the validator started still writes there. */
      if (v->collect != NULL) collect_dir(v->collect, &status);
      dyn_str(&status, "}\n");
      if (!status.failed) write_all(1, status.p, status.len);
    }
    free(status.p);
  }
  return code;
}

/*
 * What the --env/--unset edits replaced, as AUTHBENCH_VALIDATOR_RESTORE (`NAME=<hex of the old
 * value>` or a bare `NAME` when it was unset, `;`-separated): the harness's pytest plugin puts
 * the environment back as soon as pytest has read its options, so processes the tests start see
 * the container's own environment, not the validator's isolation (PYTHONSAFEPATH would take the
 * working directory off the sys.path of a test's own `python -m pytest`).
 */
static char restore[16384];
static size_t restore_len = 0;
static int restore_full = 0;

static void remember(const char *name) {
  for (size_t at = 0; at < restore_len;) {
    size_t n = strcspn(restore + at, "=;");
    if (n == strlen(name) && strncmp(restore + at, name, n) == 0) return; /* first value only */
    const char *end = strchr(restore + at, ';');
    if (end == NULL) break;
    at = (size_t)(end - restore) + 1;
  }
  const char *old = getenv(name);
  size_t need = strlen(name) + 2 + (old == NULL ? 0 : 2 * strlen(old) + 1);
  if (restore_len + need >= sizeof restore) {
    restore_full = 1;
    return;
  }
  restore_len += (size_t)snprintf(restore + restore_len, sizeof restore - restore_len, "%s", name);
  if (old != NULL) {
    restore[restore_len++] = '=';
    for (const unsigned char *p = (const unsigned char *)old; *p != '\0'; p++)
      restore_len += (size_t)snprintf(restore + restore_len, sizeof restore - restore_len, "%02x", *p);
  }
  restore[restore_len++] = ';';
  restore[restore_len] = '\0';
}

static int validator_exec_main(int argc, char **argv) {
  struct vexec v = {NULL, -1, -1, NULL, NULL, NULL, -1};
  int i, supervised = 0;
  for (i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) validator_usage();
    const char *value = argv[++i];
    if (strcmp(a, "--env") == 0) {
      const char *eq = strchr(value, '=');
      if (eq == NULL || !valid_env_name(value, (size_t)(eq - value))) die(EXIT_USAGE, "--env wants NAME=VALUE, got '%s'", value);
      char name[256];
      if ((size_t)(eq - value) >= sizeof name) die(EXIT_USAGE, "--env name too long");
      memcpy(name, value, (size_t)(eq - value));
      name[eq - value] = '\0';
      remember(name);
      if (setenv(name, eq + 1, 1) != 0) die(EXIT_USAGE, "setenv %s: %s", name, strerror(errno));
    } else if (strcmp(a, "--unset") == 0) {
      if (!valid_env_name(value, strlen(value))) die(EXIT_USAGE, "--unset wants a variable name, got '%s'", value);
      remember(value);
      unsetenv(value);
    } else if (strcmp(a, "--cwd") == 0) {
      v.cwd = value;
    } else if (strcmp(a, "--timeout") == 0) {
      if ((v.timeout_ms = parse_seconds_ms(value)) < 0) die(EXIT_USAGE, "--timeout wants positive seconds, got '%s'", value);
      supervised = 1;
    } else if (strcmp(a, "--cap") == 0) {
      if ((v.cap = parse_count(value, 1LL << 40)) < 0) die(EXIT_USAGE, "--cap wants a byte count, got '%s'", value);
      supervised = 1;
    } else if (strcmp(a, "--trailer") == 0) {
      size_t len = strlen(value);
      if (len < 8 || len > 128 || !valid_env_name(value, len)) die(EXIT_USAGE, "--trailer wants 8-128 of [A-Za-z0-9_]");
      v.trailer = value;
      supervised = 1;
    } else if (strcmp(a, "--collect") == 0) {
      if (value[0] != '/' || strlen(value) >= PATH_MAX / 2) die(EXIT_USAGE, "--collect wants an absolute directory, got '%s'", value);
      v.collect = value;
    } else {
      validator_usage();
    }
  }
  if (i >= argc) validator_usage();
  if (v.collect != NULL && v.trailer == NULL) die(EXIT_USAGE, "--collect reports in the status line: it needs --trailer");
  v.cmd = &argv[i];
  /* Too many edits to remember them all: the plugin then leaves the environment as it is. */
  if (restore_len > 0 && !restore_full && setenv("AUTHBENCH_VALIDATOR_RESTORE", restore, 1) != 0)
    die(EXIT_USAGE, "setenv AUTHBENCH_VALIDATOR_RESTORE: %s", strerror(errno));

  /* Validators have no use for the tracer's capability (ab-launch.c says why the container has it). */
  if (drop_tracer_capability() != 0) die(EXIT_NO_NEW_PRIVS, "cannot drop CAP_SYS_PTRACE: %s", strerror(errno));
  /* Inherited by everything the validator starts: exec can no longer raise privileges. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(EXIT_NO_NEW_PRIVS, "no_new_privs: %s", strerror(errno));
  umask(022);
  if (v.cwd != NULL && chdir(v.cwd) != 0) {
    warn("cannot enter %s (%s); running from /", v.cwd, strerror(errno));
    if (chdir("/") != 0) die(EXIT_EXEC_FAILED, "chdir /: %s", strerror(errno));
  }
  /* Only the three standard streams reach the validator (and the supervisor holds nothing else). */
  close_fds_above_stderr();
  v.scope_ruleset = signal_scope_ruleset();
  if (!supervised) {
    enter_signal_scope(v.scope_ruleset);
    exec_command(v.cmd);
  }
  return supervise(&v);
}

/* ---- --fs-remove / --fs-mkdir ---- */

/*
 * The rollback defense's filesystem steps during an episode (agent/defenses/snapshot.ts): the
 * image's `rm` and `mkdir` may have been replaced by the agent, so the harness never runs them.
 * Every path is walked from / one component at a time with O_NOFOLLOW: a symlink is never
 * followed, on the way or at the end.
 */

/* Paths read from stdin (--stdin): NUL-separated, at most this many bytes in all. */
#define FS_STDIN_MAX (64 * 1024 * 1024)

/* Split an absolute, normalised path into its components (in `copy`); -1 (warned) otherwise. */
static int split_path(const char *path, char *copy, char **parts, size_t *n) {
  if (path[0] != '/' || strlen(path) >= PATH_MAX) {
    warn("not an absolute path: %s", path);
    return -1;
  }
  strcpy(copy, path);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(copy, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
    if (strcmp(tok, ".") == 0 || strcmp(tok, "..") == 0) {
      warn("not a normalised path: %s", path);
      return -1;
    }
    parts[(*n)++] = tok;
  }
  return 0;
}

static void fs_line(const char *path, const char *key, const char *value, const char *through) {
  fputs("{\"path\":", stdout);
  json_string(stdout, path);
  printf(",\"%s\":", key);
  if (value == NULL) fputs("null", stdout);
  else json_string(stdout, value);
  if (through != NULL) {
    fputs(",\"through\":", stdout);
    json_string(stdout, through);
  }
  fputs("}\n", stdout);
  fflush(stdout);
}

static void fs_error(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fs_error(const char *path, const char *fmt, ...) {
  char message[PATH_MAX + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  warn("%s: %s", path, message);
  fs_line(path, "error", message, NULL);
}

/*
 * Open the directory holding the last of `parts[0..n)`, from `rootfd`, never through a symlink.
 * Returns the descriptor; -1 with errno ENOENT when a component is missing, ENOTDIR when one is
 * not a directory (a symlink, a file: its path is then in `through`), anything else on failure.
 */
static int open_parent(int rootfd, char **parts, size_t n, char *through, size_t through_size) {
  int dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
  if (dir < 0) return -1;
  through[0] = '\0';
  for (size_t i = 0; i + 1 < n; i++) {
    size_t len = strlen(through);
    snprintf(through + len, through_size - len, "/%s", parts[i]);
    int next = openat(dir, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int e = errno == ELOOP ? ENOTDIR : errno;
      close(dir);
      errno = e;
      return -1;
    }
    close(dir);
    dir = next;
  }
  return dir;
}

/* One directory on the way down a tree being removed. */
struct rm_level {
  dev_t dev;
  ino_t ino;
  char *name;   /* its name in the level above (the tree's own name for level 0) */
  char **subs;  /* its subdirectories, found when it was scanned */
  size_t nsubs, next;
};

static void rm_level_free(struct rm_level *l) {
  for (size_t i = l->next; i < l->nsubs; i++) free(l->subs[i]);
  free(l->subs);
  free(l->name);
}

/* Unlink everything in `dir` that is not a directory, and list its subdirectories in `l`. */
static int rm_scan(int dir, struct rm_level *l, const char *shown) {
  l->subs = NULL;
  l->nsubs = l->next = 0;
  int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (d == NULL) {
    if (fd >= 0) close(fd);
    fs_error(shown, "cannot read a directory below it: %s", strerror(errno));
    return -1;
  }
  /* Names first, changes after: nothing is unlinked while the directory is being read. */
  char **names = NULL;
  unsigned char *types = NULL;
  size_t count = 0, cap = 0;
  int rc = 0;
  errno = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL; errno = 0) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (count == cap) {
      size_t bigger = cap == 0 ? 64 : cap * 2;
      char **more_names = realloc(names, bigger * sizeof *names);
      if (more_names != NULL) names = more_names;
      unsigned char *more_types = more_names == NULL ? NULL : realloc(types, bigger);
      if (more_types != NULL) types = more_types;
      if (more_names == NULL || more_types == NULL) {
        rc = -1;
        break;
      }
      cap = bigger;
    }
    if ((names[count] = strdup(e->d_name)) == NULL) {
      rc = -1;
      break;
    }
    types[count++] = e->d_type;
  }
  if (rc == 0 && errno != 0) rc = -1;
  int saved = errno;
  closedir(d);
  if (rc != 0) {
    fs_error(shown, "cannot list a directory below it: %s", strerror(saved != 0 ? saved : ENOMEM));
    for (size_t i = 0; i < count; i++) free(names[i]);
    free(names);
    free(types);
    return -1;
  }
  for (size_t i = 0; i < count; i++) {
    int is_dir = types[i] == DT_DIR;
    if (types[i] == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(dir, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) is_dir = S_ISDIR(st.st_mode);
    }
    if (!is_dir) {
      if (unlinkat(dir, names[i], 0) == 0 || errno == ENOENT) {
        free(names[i]);
        continue;
      }
      if (errno != EISDIR) {
        if (rc == 0) fs_error(shown, "cannot remove %s below it: %s", names[i], strerror(errno));
        rc = -1;
        free(names[i]);
        continue;
      }
    }
    names[l->nsubs++] = names[i]; /* compacted in place: nsubs <= i */
  }
  free(types);
  if (rc != 0) {
    for (size_t i = 0; i < l->nsubs; i++) free(names[i]);
    free(names);
    l->nsubs = 0;
    return -1;
  }
  l->subs = names;
  return 0;
}

/*
 * Remove the directory `name` in `anchor` and everything below it, without recursion (a tree
 * may be deeper than the stack or the descriptor limit) and without following a symlink: only
 * one directory is open at a time, each entered with O_NOFOLLOW, and the way back up through
 * ".." is checked against the device and inode it came down from. A directory on another
 * filesystem (a mount point) is not entered. Nothing of the agent's runs meanwhile (its
 * command has ended and left no process behind), so the tree does not change under the walk.
 */
static int remove_tree(int anchor, const char *name, const struct stat *top, const char *shown) {
  size_t depth = 0, cap = 16;
  struct rm_level *levels = calloc(cap, sizeof *levels);
  int cur = openat(anchor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (levels == NULL || cur < 0 || fstat(cur, &st) != 0 || st.st_dev != top->st_dev || st.st_ino != top->st_ino) {
    fs_error(shown, "cannot open it: %s", levels == NULL ? strerror(ENOMEM) : cur < 0 ? strerror(errno) : "it changed while being removed");
    if (cur >= 0) close(cur);
    free(levels);
    return -1;
  }
  levels[0] = (struct rm_level){st.st_dev, st.st_ino, strdup(name), NULL, 0, 0};
  int rc = levels[0].name == NULL ? (fs_error(shown, "%s", strerror(ENOMEM)), -1) : rm_scan(cur, &levels[0], shown);
  while (rc == 0) {
    struct rm_level *l = &levels[depth];
    if (l->next < l->nsubs) {
      char *sub = l->subs[l->next++];
      int next = openat(cur, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT) {
        free(sub);
        continue;
      }
      if (next < 0 || fstat(next, &st) != 0) {
        fs_error(shown, "cannot enter %s below it: %s", sub, strerror(errno));
        if (next >= 0) close(next);
        free(sub);
        rc = -1;
        break;
      }
      if (st.st_dev != top->st_dev) {
        fs_error(shown, "%s below it is a mount point; not removing it", sub);
        close(next);
        free(sub);
        rc = -1;
        break;
      }
      if (depth + 1 == cap) {
        struct rm_level *grown = realloc(levels, 2 * cap * sizeof *levels);
        if (grown == NULL) {
          fs_error(shown, "%s", strerror(ENOMEM));
          close(next);
          free(sub);
          rc = -1;
          break;
        }
        levels = grown;
        cap *= 2;
      }
      close(cur);
      cur = next;
      depth++;
      levels[depth] = (struct rm_level){st.st_dev, st.st_ino, sub, NULL, 0, 0};
      rc = rm_scan(cur, &levels[depth], shown);
      continue;
    }
    /* Everything below this level is gone: remove it from the level above. */
    if (depth == 0) {
      close(cur);
      cur = -1;
      if (unlinkat(anchor, name, AT_REMOVEDIR) != 0) {
        fs_error(shown, "cannot remove it: %s", strerror(errno));
        rc = -1;
      }
      break;
    }
    int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (up < 0 || fstat(up, &st) != 0 || st.st_dev != levels[depth - 1].dev || st.st_ino != levels[depth - 1].ino) {
      fs_error(shown, "a directory below it moved while it was being removed");
      if (up >= 0) close(up);
      rc = -1;
      break;
    }
    close(cur);
    cur = up;
    if (unlinkat(cur, l->name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
      fs_error(shown, "cannot remove %s below it: %s", l->name, strerror(errno));
      rc = -1;
      break;
    }
    rm_level_free(l);
    depth--;
  }
  if (cur >= 0) close(cur);
  for (size_t i = 0; i <= depth; i++) rm_level_free(&levels[i]);
  free(levels);
  return rc;
}

/* --fs-remove for one path: prints its JSON line; 0 when it is gone (or was never there). */
static int fs_remove_path(int rootfd, const char *path) {
  char copy[PATH_MAX], through[PATH_MAX];
  char *parts[PATH_MAX / 2];
  size_t n;
  if (split_path(path, copy, parts, &n) != 0) {
    fs_line(path, "error", "not an absolute, normalised path", NULL);
    return -1;
  }
  if (n == 0) {
    fs_error(path, "refusing to remove /");
    return -1;
  }
  int parent = open_parent(rootfd, parts, n, through, sizeof through);
  if (parent < 0) {
    if (errno == ENOENT) {
      fs_line(path, "removed", NULL, NULL);
      return 0;
    }
    if (errno == ENOTDIR) {
      /* What the path names is only reachable through a symlink (or not at all): not ours to touch. */
      warn("%s: %s is not a directory (a symlink or a file); not removing anything through it", path, through);
      fs_line(path, "error", "a component on the way is not a directory", through);
      return -1;
    }
    fs_error(path, "cannot open %s: %s", through, strerror(errno));
    return -1;
  }
  const char *leaf = parts[n - 1];
  struct stat st;
  int rc = 0;
  if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) fs_line(path, "removed", NULL, NULL);
    else fs_error(path, "cannot inspect it: %s", strerror(errno)), rc = -1;
  } else if (!S_ISDIR(st.st_mode)) {
    /* A symlink is removed as the link; a file, device, fifo or socket as itself. */
    if (unlinkat(parent, leaf, 0) == 0 || errno == ENOENT) fs_line(path, "removed", type_name(st.st_mode), NULL);
    else fs_error(path, "cannot remove it: %s", strerror(errno)), rc = -1;
  } else {
    struct stat pst;
    if (fstat(parent, &pst) == 0 && pst.st_dev != st.st_dev) fs_error(path, "it is a mount point; not removing it"), rc = -1;
    else if ((rc = remove_tree(parent, leaf, &st, path)) == 0) fs_line(path, "removed", "dir", NULL);
  }
  close(parent);
  return rc;
}

/* --fs-mkdir for one path: every missing component is created (0755, root's), none followed. */
static int fs_mkdir_path(int rootfd, const char *path) {
  char copy[PATH_MAX], shown[PATH_MAX];
  char *parts[PATH_MAX / 2];
  size_t n;
  if (split_path(path, copy, parts, &n) != 0) {
    fs_line(path, "error", "not an absolute, normalised path", NULL);
    return -1;
  }
  int dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
  if (dir < 0) {
    fs_error(path, "dup: %s", strerror(errno));
    return -1;
  }
  unsigned created = 0;
  shown[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(shown);
    snprintf(shown + len, sizeof shown - len, "/%s", parts[i]);
    int next = openat(dir, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (mkdirat(dir, parts[i], 0755) == 0) created++;
      else if (errno != EEXIST) {
        fs_error(path, "cannot create %s: %s", shown, strerror(errno));
        close(dir);
        return -1;
      }
      next = openat(dir, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        warn("%s: %s is not a directory (a symlink or a file); not going through it", path, shown);
        fs_line(path, "error", "a component on the way is not a directory", shown);
      } else {
        fs_error(path, "cannot open %s: %s", shown, strerror(errno));
      }
      close(dir);
      return -1;
    }
    close(dir);
    dir = next;
  }
  close(dir);
  fputs("{\"path\":", stdout);
  json_string(stdout, path);
  printf(",\"created\":%u}\n", created);
  fflush(stdout);
  return 0;
}

/* All of stdin, NUL-separated paths: appended to `list` (empty names are skipped). */
static int read_stdin_paths(char ***list, size_t *count) {
  size_t size = 0, cap = 0;
  char *buf = NULL;
  for (;;) {
    if (size == cap) {
      if (cap >= FS_STDIN_MAX) {
        warn("more than %d bytes of paths on stdin", FS_STDIN_MAX);
        free(buf);
        return -1;
      }
      cap = cap == 0 ? 65536 : cap * 2;
      char *grown = realloc(buf, cap + 1);
      if (grown == NULL) {
        free(buf);
        return -1;
      }
      buf = grown;
    }
    ssize_t r = read(0, buf + size, cap - size);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      warn("read stdin: %s", strerror(errno));
      free(buf);
      return -1;
    }
    if (r == 0) break;
    size += (size_t)r;
  }
  if (buf == NULL) return 0;
  buf[size] = '\0';
  for (size_t at = 0; at < size;) {
    size_t len = strlen(buf + at);
    if (len > 0) {
      char **grown = realloc(*list, (*count + 1) * sizeof **list);
      if (grown == NULL) return -1;
      *list = grown;
      (*list)[(*count)++] = buf + at;
    }
    at += len + 1;
  }
  return 0; /* buf stays referenced by the list until exit */
}

static int fs_main(int argc, char **argv) {
  int remove = strcmp(argv[1], "--fs-remove") == 0, from_stdin = 0, i = 2;
  if (remove && i < argc && strcmp(argv[i], "--stdin") == 0) from_stdin = 1, i++;
  if (i < argc && strcmp(argv[i], "--") == 0) i++;
  char **paths = NULL;
  size_t count = 0;
  for (; i < argc; i++) {
    char **grown = realloc(paths, (count + 1) * sizeof *paths);
    if (grown == NULL) die(EXIT_FAILED, "%s", strerror(ENOMEM));
    paths = grown;
    paths[count++] = argv[i];
  }
  if (from_stdin && read_stdin_paths(&paths, &count) != 0) die(EXIT_FAILED, "cannot read the paths from stdin");
  if (count == 0 && !from_stdin) die(EXIT_USAGE, "usage: ab-launch --fs-remove [--stdin] [--] PATH... | --fs-mkdir [--] PATH...");
  umask(022);
  int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) die(EXIT_FAILED, "cannot open /: %s", strerror(errno));
  int failed = 0;
  for (size_t k = 0; k < count; k++)
    if ((remove ? fs_remove_path(rootfd, paths[k]) : fs_mkdir_path(rootfd, paths[k])) != 0) failed = 1;
  close(rootfd);
  free(paths);
  return failed ? EXIT_FAILED : 0;
}

/* ---- --install-bundle ---- */

#define BUNDLE_MAX (256 * 1024 * 1024)

struct reader {
  const unsigned char *p;
  size_t left;
};

static int take(struct reader *r, void *out, size_t n) {
  if (r->left < n) return -1;
  if (out != NULL) memcpy(out, r->p, n);
  r->p += n, r->left -= n;
  return 0;
}

static int take_u32(struct reader *r, uint32_t *v) {
  unsigned char b[4];
  if (take(r, b, 4) != 0) return -1;
  *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
  return 0;
}

/* The directory that holds `name`'s last component, from `rootfd`: missing parents made 0755, none followed. */
static int install_parent(int rootfd, char *name, const char **last) {
  int dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
  char *part = name;
  for (char *slash; dir >= 0 && (slash = strchr(part, '/')) != NULL; part = slash + 1) {
    *slash = '\0';
    if (mkdirat(dir, part, 0755) != 0 && errno != EEXIST) part = NULL;
    int next = part == NULL ? -1 : openat(dir, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    *slash = '/';
    close(dir);
    dir = next;
    errno = e;
    if (part == NULL) return -1;
  }
  *last = part;
  return dir;
}

/* A relative, normalised name: no empty, "." or ".." component, no leading or trailing slash. */
static int bundle_name_ok(const char *name) {
  if (name[0] == '\0' || name[0] == '/') return 0;
  for (const char *c = name; *c != '\0';) {
    const char *end = strchr(c, '/');
    size_t len = end == NULL ? strlen(c) : (size_t)(end - c);
    if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) return 0;
    if (end == NULL) break;
    c = end + 1;
  }
  return 1;
}

static int install_entry(int rootfd, char type, mode_t mode, int64_t mtime, char *name, const unsigned char *data, size_t len) {
  const char *last = NULL;
  int dir = install_parent(rootfd, name, &last);
  if (dir < 0) return -1;
  struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
  int rc = -1;
  if (type == 'd') {
    struct stat st;
    if (mkdirat(dir, last, mode) == 0 || (errno == EEXIST && fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)))
      rc = fchmodat(dir, last, mode, 0);
    else if (errno == EEXIST)
      errno = ENOTDIR;
  } else if (type == 'f') {
    int fd = openat(dir, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      rc = write_all(fd, (const char *)data, len) == 0 && fchmod(fd, mode) == 0 && (mtime < 0 || futimens(fd, times) == 0) ? 0 : -1;
      int e = errno;
      close(fd);
      errno = e;
    }
  } else if (type == 'l') {
    char *target = strndup((const char *)data, len);
    if (target != NULL && strlen(target) == len && symlinkat(target, dir, last) == 0)
      rc = mtime < 0 ? 0 : utimensat(dir, last, times, AT_SYMLINK_NOFOLLOW);
    else if (target != NULL && strlen(target) != len)
      errno = EINVAL;
    free(target);
  } else {
    errno = EINVAL;
  }
  int e = errno;
  close(dir);
  errno = e;
  return rc;
}

static int install_bundle_main(void) {
  size_t cap = 1 << 20, len = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (buf == NULL) die(EXIT_FAILED, "%s", strerror(ENOMEM));
    if (len == cap) {
      if (cap >= BUNDLE_MAX) die(EXIT_FAILED, "the bundle is larger than %d bytes", BUNDLE_MAX);
      buf = realloc(buf, cap *= 2);
      continue;
    }
    ssize_t got = read(0, buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) die(EXIT_FAILED, "read: %s", strerror(errno));
    if (got == 0) break;
    len += (size_t)got;
  }
  struct reader r = {buf, len};
  char magic[4];
  if (take(&r, magic, 4) != 0 || memcmp(magic, "ABB1", 4) != 0) die(EXIT_FAILED, "stdin is not a bundle (no ABB1)");
  umask(0);
  int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) die(EXIT_FAILED, "cannot open /: %s", strerror(errno));
  unsigned installed = 0;
  while (r.left > 0) {
    unsigned char type, when[8];
    uint32_t mode, name_len, data_len;
    if (take(&r, &type, 1) != 0 || take_u32(&r, &mode) != 0 || take(&r, when, 8) != 0 || take_u32(&r, &name_len) != 0 || name_len == 0 || name_len >= PATH_MAX || r.left < name_len)
      die(EXIT_FAILED, "entry %u: truncated or malformed", installed + 1);
    char name[PATH_MAX];
    take(&r, name, name_len);
    name[name_len] = '\0';
    if (take_u32(&r, &data_len) != 0 || r.left < data_len) die(EXIT_FAILED, "entry %u: truncated data", installed + 1);
    const unsigned char *data = r.p;
    take(&r, NULL, data_len);
    uint64_t raw = 0;
    for (int k = 0; k < 8; k++) raw = raw << 8 | when[k];
    if (strlen(name) != name_len || !bundle_name_ok(name)) die(EXIT_FAILED, "entry %u: not a relative, normalised name", installed + 1);
    char shown[PATH_MAX + 2];
    snprintf(shown, sizeof shown, "/%s", name);
    if (install_entry(rootfd, (char)type, (mode_t)(mode & 07777), (int64_t)raw, name, data, data_len) != 0)
      die(EXIT_FAILED, "cannot put %s in place: %s", shown, strerror(errno));
    installed++;
  }
  close(rootfd);
  free(buf);
  printf("{\"installed\":%u}\n", installed);
  return 0;
}

int harness_main(int argc, char **argv) {
  if (strcmp(argv[1], "--install-bundle") == 0) {
    if (argc != 2) die(EXIT_USAGE, "usage: ab-launch --install-bundle < BUNDLE");
    return install_bundle_main();
  }
  if (strcmp(argv[1], "--quarantine") == 0) return quarantine_main(argc, argv);
  if (strcmp(argv[1], "--fs-remove") == 0 || strcmp(argv[1], "--fs-mkdir") == 0) return fs_main(argc, argv);
  return validator_exec_main(argc, argv);
}
