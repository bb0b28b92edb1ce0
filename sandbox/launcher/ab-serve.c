/*
 * ab-launch --serve: the long-lived in-container agent behind SandboxSession.
 *
 * Started once per session through one attached Docker exec, it reads request
 * frames on stdin and answers each with one response frame on stdout, so one
 * sandboxed command costs one round trip over an open stream instead of
 * several exec/archive API calls. The wire format is documented in
 * sandbox/launcher/protocol.ts (the TypeScript side, which mirrors this file).
 *
 * The agent never enforces anything itself: a request carries the same argv
 * the exec path runs (strace … -- ab-launch --rules … -- cmd), and the agent
 * only writes the request's files, spawns that argv in its own process group
 * with fresh pipes for stdin/stdout/stderr, enforces the timeout by killing the
 * group, caps the captured output, and reads back the files asked for (the
 * launcher report, the strace output). Every descriptor it opens is
 * close-on-exec, so a command inherits nothing but its three pipes.
 *
 *   ab-launch --serve              serve requests until stdin closes
 *   ab-launch --stop-serve PID     stop an agent that no longer reads stdin
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int serve_main(void);
int stop_serve_main(const char *pid_arg);

#define PROTOCOL_VERSION 1
/* Requests carry rules files and stdin; anything larger is a broken client. */
#define MAX_REQUEST_BYTES (256u << 20)
/* After the command exits, how long to keep reading output a background child may still write. */
#define DRAIN_GRACE_MS 500
/* After a timeout kill, how long to wait for escaped holders of the pipes (setsid) before giving up on them. */
#define KILL_DRAIN_MS 100
/* Without a pidfd, how often to look for the command's exit. */
#define WAIT_POLL_MS 5
#define READ_CHUNK 65536

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#define AB_CLOSE_RANGE_CLOEXEC (1U << 2)

/* Frame types and field tags (mirrored in protocol.ts). */
enum { F_HELLO = 'H', F_RUN = 'R', F_DONE = 'D', F_ERROR = 'E' };
enum {
  T_VERSION = 1,
  T_PID = 2,
  T_MESSAGE = 3,
  T_ARGV = 10,
  T_ENV = 11,
  T_CWD = 12,
  T_STDIN = 13,
  T_TIMEOUT_MS = 14,
  T_OUTPUT_CAP = 15,
  T_PUT = 16,
  T_COLLECT = 17,
  T_EXIT = 30,
  T_SIGNAL = 31,
  T_TIMED_OUT = 32,
  T_STDOUT = 33,
  T_STDOUT_BYTES = 34,
  T_STDERR = 35,
  T_STDERR_BYTES = 36,
  T_DURATION_US = 37,
  T_FILE = 38,
};

static const char *prog = "ab-agent";
static volatile pid_t running_group = 0;

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

/* 0: read n bytes; 1: end of stream before the first byte; -1: error or a cut frame. */
static int read_exact(int fd, void *data, size_t n) {
  unsigned char *p = data;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return got == 0 ? 1 : -1;
    got += (size_t)r;
  }
  return 0;
}

static int out_fd = 1;

static void send_frame(uint8_t type, const struct buf *fields) {
  struct buf frame = {0};
  put_be(&frame, 1 + fields->len, 4);
  buf_put(&frame, &type, 1);
  buf_put(&frame, fields->p, fields->len);
  if (write_all(out_fd, frame.p, frame.len) != 0) {
    /* The client is gone; nobody is left to answer. */
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
  memset(r, 0, sizeof *r);
}

/* NULL on success, else what is wrong with the request. */
static const char *parse_request(const unsigned char *p, size_t n, struct request *r) {
  memset(r, 0, sizeof *r);
  r->output_cap = 1u << 20;
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
        if (len != 4) return "number field is not 4 bytes";
        if (tag == T_TIMEOUT_MS)
          r->timeout_ms = get_be32(v);
        else
          r->output_cap = get_be32(v);
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
  int fd = open(put->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
  int fd = open(path, O_RDONLY | O_CLOEXEC);
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

static void child_exec(const struct request *r, int in_fd, int out_w, int err_w) __attribute__((noreturn));
static void child_exec(const struct request *r, int in_fd, int out_w, int err_w) {
  setpgid(0, 0);
  /* The agent ignores SIGPIPE and handles SIGTERM; an ignored disposition would survive exec. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dup2(in_fd, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) _exit(126);
  for (size_t i = 0; i < r->n_env; i++) putenv(r->env[i]);
  if (r->cwd != NULL && chdir(r->cwd) != 0) {
    dprintf(2, "%s: chdir %s: %s\n", prog, r->cwd, strerror(errno));
    _exit(126);
  }
  execvp(r->argv[0], r->argv);
  int e = errno;
  dprintf(2, "%s: exec %s: %s\n", prog, r->argv[0], strerror(e));
  _exit(e == ENOENT ? 127 : 126);
}

static void run_request(struct request *r) {
  for (size_t i = 0; i < r->n_puts; i++) {
    if (write_file(&r->puts[i]) != 0) {
      send_error("cannot write", r->puts[i].path, errno);
      return;
    }
  }

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    send_error("pipe", "", errno);
    return;
  }
  int64_t started_us = now_us();
  int64_t deadline = r->timeout_ms == 0 ? -1 : now_ms() + r->timeout_ms;
  pid_t pid = fork();
  if (pid < 0) {
    send_error("fork", "", errno);
    close(in_pipe[0]), close(in_pipe[1]), close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
    return;
  }
  if (pid == 0) child_exec(r, in_pipe[0], out_pipe[1], err_pipe[1]);
  setpgid(pid, pid); /* also here: the timeout may fire before the child ran */
  running_group = pid;
  close(in_pipe[0]), close(out_pipe[1]), close(err_pipe[1]);

  int in_w = in_pipe[1], out_r = out_pipe[0], err_r = err_pipe[0];
  fcntl(in_w, F_SETFL, O_NONBLOCK);
  size_t in_off = 0;
  if (r->stdin_len == 0) close(in_w), in_w = -1;
  int pidfd = (int)syscall(__NR_pidfd_open, pid, 0); /* close-on-exec by definition */

  struct capture out = {{0}, 0, r->output_cap}, err = {{0}, 0, r->output_cap};
  int reaped = 0, status = 0, timed_out = 0;
  int64_t finished_us = 0, drain_until = 0;
  unsigned char chunk[READ_CHUNK];

  for (;;) {
    if (reaped && (out_r < 0 && err_r < 0)) break;
    int64_t now = now_ms();
    if (reaped && now >= drain_until) break;
    if (!reaped && deadline >= 0 && now >= deadline && !timed_out) {
      kill(-pid, SIGKILL);
      timed_out = 1;
    }

    struct pollfd fds[5];
    int n = 0, i_ctl, i_in = -1, i_out = -1, i_err = -1, i_pid = -1;
    /* events 0: only hang-up, i.e. the client went away mid-command. */
    i_ctl = n, fds[n++] = (struct pollfd){0, 0, 0};
    if (in_w >= 0) i_in = n, fds[n++] = (struct pollfd){in_w, POLLOUT, 0};
    if (out_r >= 0) i_out = n, fds[n++] = (struct pollfd){out_r, POLLIN, 0};
    if (err_r >= 0) i_err = n, fds[n++] = (struct pollfd){err_r, POLLIN, 0};
    if (!reaped && pidfd >= 0) i_pid = n, fds[n++] = (struct pollfd){pidfd, POLLIN, 0};

    int wait_ms = -1;
    if (reaped) wait_ms = (int)(drain_until - now);
    else if (deadline >= 0 && !timed_out) wait_ms = (int)(deadline - now);
    if (!reaped && (pidfd < 0 || timed_out) && (wait_ms < 0 || wait_ms > WAIT_POLL_MS)) wait_ms = WAIT_POLL_MS;
    if (poll(fds, (nfds_t)n, wait_ms) < 0 && errno != EINTR) fatal("poll");

    if (fds[i_ctl].revents & (POLLHUP | POLLERR)) {
      kill(-pid, SIGKILL);
      waitpid(pid, NULL, 0);
      exit(0);
    }
    if (i_in >= 0 && fds[i_in].revents) {
      ssize_t w = write(in_w, r->stdin_data + in_off, r->stdin_len - in_off);
      if (w > 0) in_off += (size_t)w;
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off == r->stdin_len) close(in_w), in_w = -1;
    }
    int *readers[2] = {&out_r, &err_r};
    struct capture *captures[2] = {&out, &err};
    int indices[2] = {i_out, i_err};
    for (int k = 0; k < 2; k++) {
      if (indices[k] < 0 || fds[indices[k]].revents == 0) continue;
      ssize_t got = read(*readers[k], chunk, sizeof chunk);
      if (got > 0) capture_add(captures[k], chunk, (size_t)got);
      else if (got == 0 || (errno != EAGAIN && errno != EINTR)) close(*readers[k]), *readers[k] = -1;
    }
    if (!reaped && (i_pid < 0 || fds[i_pid].revents)) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = 1;
        finished_us = now_us();
        drain_until = now_ms() + (timed_out ? KILL_DRAIN_MS : DRAIN_GRACE_MS);
        if (in_w >= 0) close(in_w), in_w = -1;
      }
    }
  }
  running_group = 0;
  if (pidfd >= 0) close(pidfd);
  if (in_w >= 0) close(in_w);
  if (out_r >= 0) close(out_r);
  if (err_r >= 0) close(err_r);

  struct buf fields = {0};
  if (timed_out)
    put_field(&fields, T_TIMED_OUT, NULL, 0);
  else if (WIFSIGNALED(status))
    put_u32_field(&fields, T_SIGNAL, (uint32_t)WTERMSIG(status));
  else
    put_u32_field(&fields, T_EXIT, (uint32_t)WEXITSTATUS(status));
  put_field(&fields, T_STDOUT, out.kept.p, out.kept.len);
  put_u64_field(&fields, T_STDOUT_BYTES, out.total);
  put_field(&fields, T_STDERR, err.kept.p, err.kept.len);
  put_u64_field(&fields, T_STDERR_BYTES, err.total);
  put_u64_field(&fields, T_DURATION_US, (uint64_t)(finished_us - started_us));
  for (size_t i = 0; i < r->n_collect; i++) collect_file(&fields, r->collect[i]);
  send_frame(F_DONE, &fields);
  free(fields.p);
  free(out.kept.p);
  free(err.kept.p);
}

/* ---- entry points ---- */

static void on_term(int sig) {
  (void)sig;
  pid_t group = running_group;
  if (group > 0) kill(-group, SIGKILL);
  _exit(143);
}

int serve_main(void) {
  /* Docker hands us only 0/1/2, but make sure nothing else could reach a command. */
  syscall(__NR_close_range, 3U, ~0U, AB_CLOSE_RANGE_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  struct buf hello = {0};
  put_u32_field(&hello, T_VERSION, PROTOCOL_VERSION);
  put_u32_field(&hello, T_PID, (uint32_t)getpid());
  send_frame(F_HELLO, &hello);
  free(hello.p);

  for (;;) {
    unsigned char header[5];
    int rc = read_exact(0, header, sizeof header);
    if (rc == 1) return 0; /* the client closed the stream: the session is over */
    if (rc != 0) {
      fprintf(stderr, "%s: request stream cut mid-frame\n", prog);
      return 1;
    }
    uint32_t len = get_be32(header);
    if (len < 1 || len > MAX_REQUEST_BYTES || header[4] != F_RUN) {
      /* Framing is lost: answering and carrying on could misread every later request. */
      struct buf fields = {0};
      const char *msg = "malformed request frame";
      put_field(&fields, T_MESSAGE, msg, strlen(msg));
      send_frame(F_ERROR, &fields);
      fprintf(stderr, "%s: %s (length %u, type %u)\n", prog, msg, len, header[4]);
      return 1;
    }
    unsigned char *body = malloc(len - 1 > 0 ? len - 1 : 1);
    if (body == NULL) fatal("out of memory");
    if (read_exact(0, body, len - 1) != 0) {
      fprintf(stderr, "%s: request stream cut mid-frame\n", prog);
      return 1;
    }
    struct request r;
    const char *problem = parse_request(body, len - 1, &r);
    if (problem != NULL) {
      struct buf fields = {0};
      put_field(&fields, T_MESSAGE, problem, strlen(problem));
      send_frame(F_ERROR, &fields);
      free(fields.p);
    } else {
      run_request(&r);
    }
    free_request(&r);
    free(body);
  }
}

int stop_serve_main(const char *pid_arg) {
  char *end;
  long pid = strtol(pid_arg, &end, 10);
  if (*pid_arg == '\0' || *end != '\0' || pid <= 1) {
    fprintf(stderr, "%s: --stop-serve needs a pid, got '%s'\n", prog, pid_arg);
    return 120;
  }
  if (kill((pid_t)pid, SIGTERM) != 0) return errno == ESRCH ? 0 : 1;
  for (int i = 0; i < 100; i++) {
    if (kill((pid_t)pid, 0) != 0) return 0;
    usleep(20000);
  }
  kill((pid_t)pid, SIGKILL);
  return 0;
}
