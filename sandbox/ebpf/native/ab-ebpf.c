/*
 * ab-ebpf: the native eBPF tracer (sandbox/ebpf/native.ts builds it, run.ts
 * runs it as root on the host). Loads ab-ebpf.bpf.c (embedded as a libbpf
 * skeleton), attaches it to each syscall's enter/exit tracepoint and to
 * sched_process_fork, filtered on one container's cgroup id, and prints every
 * event as EXACTLY the text record the bpftrace program (program.ts) prints,
 * so parse.ts reads both backends alike:
 *
 *   RS nonce US type US field US field ... US \n
 *
 * The ring buffers (one for a single container; AB_RINGS for a hub, each
 * cgroup writing to one) are drained every POLL_MS (at once again while a
 * pass was busy): the programs never wake this reader, except for the
 * readiness marker, which the BPF side copies into every ring. On SIGINT/SIGTERM it drains once more, prints `Lost N events` on
 * stderr when the ring buffer overflowed, closes both outputs (the trace is
 * complete: run.ts stops waiting there), detaches and exits 0.
 *
 * A successful open's fd, resolved as d_path resolves it (ab-ebpf.bpf.c), is one more record
 * before its R:  RS nonce US D US ts US tgid US tid US CUT US path US \n  (CUT 1: the path was
 * too deep or too long to resolve, and is empty; the path is the last field, raw bytes, so a
 * name holding US cannot shift the others). A kernel that refuses the walk gets the programs
 * without it and one line on stderr: `ab-ebpf: resolved paths are not recorded (...)`.
 *
 * Everything in the events is the container's (hostile) bytes: every copy is
 * bounded by the length the BPF side recorded and by the sample's size. The
 * program runs as root: its arguments are parsed strictly (usage: exit 2),
 * and it opens nothing but what libbpf needs (BTF, tracefs ids).
 *
 * Hub mode (`--hub` instead of `--cgroup-id`): one tracer for many containers
 * (eval's rollouts; attaching ~90 tracepoints per container would cost
 * seconds each). It starts with no cgroup and reads commands on stdin, one
 * per line: `+ID:LEVEL` traces cgroup ID from now on (its processes' pid namespace
 * at LEVEL: pids are printed as that namespace numbers them), `-ID` stops tracing it,
 * `?ID` asks what the ring buffer lost for it so far. Each
 * is acknowledged on stdout, in order with the records, once the kernel map
 * holds it:  RS nonce US K US +ID US RING US \n  (the ring its records go to: the one
 * the fewest traced cgroups use; `-ID` and `?ID`: the events its ring lost for that
 * cgroup instead; `!ID` and errno: refused). Before a run of records from another
 * cgroup it prints  RS nonce US G US ID US \n; readiness records belong to no
 * cgroup and say which ring their copy came through:  RS nonce US Y US TS US RING US \n. End of stdin stops it as SIGINT
 * does, and `Lost N events in ID` goes to stderr per cgroup still traced.
 *
 * Usage: ab-ebpf (--cgroup-id N --pid-level L | --hub) --nonce NONCE --ready-pid N
 *                --ready-path PATH --call SPEC [--call SPEC]...
 *        ab-ebpf --version
 * SPEC: NAME:FLAGS:ARGS — FLAGS `-` or any of x<slot> (exec: argv slot),
 * t<slot> (O_TMPFILE: flags slot), r<slot> (readiness: path slot), n<slot><vlen slot>
 * (sendmmsg: the message vector, an N record per message naming a destination), d (an
 * open: a D record with the returned fd's resolved path, before the R record); ARGS a
 * comma list in the table's order of i<slot> (int: printed as bpftrace's %d
 * prints it, the low 32 bits signed), s<slot> (string), h<slot> (open_how
 * flags, unsigned 64-bit), a<slot><len slot> (sockaddr, `\xNN` per byte).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ab-ebpf.h"
#include "ab-ebpf.skel.h"

#define RS '\x1e'
#define US '\x1f'
#define POLL_MS 5
/* A pass that consumed this many events drains again at once instead of sleeping. */
#define BUSY_EVENTS 256
/*
 * Records one pass consumes at most. libbpf's consume loops while records keep arriving, so a
 * container that floods would hold one pass (and the hub's commands, which other containers'
 * rollouts wait on) for as long as it floods; the callback ends the pass here instead, and the
 * loop reads commands between passes. A record is consumed before its callback runs, so
 * ending a pass loses nothing.
 */
#define PASS_LIMIT 4096
#define PASS_FULL (-EBUSY)
#define NAME_MAX_LEN 31
#define EXIT_USAGE 2
#define EXIT_LOAD 3

struct call_text {
  char name[NAME_MAX_LEN + 1];
  /* The argument letters per table position: i/s/h/a. */
  char kind[AB_MAX_ARGS];
  unsigned char slot[AB_MAX_ARGS];
};

static struct call_text texts[AB_MAX_CALLS];
static int ncalls;
static char nonce[65];
static volatile sig_atomic_t stopping;
static int hub;
/* Hub mode: the cgroup of the last record printed (0: none yet, or a readiness record). */
static unsigned long long printed_cgid;
static int cgroups_fd = -1;

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static int usage(const char *why) {
  fprintf(stderr, "ab-ebpf: %s\n", why);
  return EXIT_USAGE;
}

static int parse_u64(const char *s, unsigned long long *out) {
  if (*s == '\0' || strlen(s) > 20) return -1;
  unsigned long long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned long long d = (unsigned long long)(*p - '0');
    if (v > (~0ULL - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int slot_of(char c) {
  return c >= '0' && c < '0' + AB_MAX_ARGS ? c - '0' : -1;
}

/* NAME:FLAGS:ARGS into the BPF table entry and the formatter's text. */
static int parse_call(const char *spec, struct ab_call *c, struct call_text *t) {
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : 0;
  if (!colon || n == 0 || n > NAME_MAX_LEN) return -1;
  for (size_t i = 0; i < n; i++) {
    char ch = spec[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return -1;
  }
  memcpy(t->name, spec, n);
  t->name[n] = '\0';
  const char *p = colon + 1;
  if (*p == '-') {
    p++;
  } else {
    while (*p && *p != ':') {
      if (p[0] == 'd') {
        c->flags |= AB_CALL_RESOLVE;
        p++;
        continue;
      }
      int slot = slot_of(p[1]);
      if (slot < 0) return -1;
      if (p[0] == 'x') {
        c->flags |= AB_CALL_EXEC;
        c->aux_slot = slot;
      } else if (p[0] == 't') {
        c->flags |= AB_CALL_TMPFILE;
        c->aux_slot = slot;
      } else if (p[0] == 'r') {
        c->flags |= AB_CALL_READY;
        c->filename_slot = slot;
      } else if (p[0] == 'n') {
        int count = slot_of(p[2]);
        if (count < 0) return -1;
        c->flags |= AB_CALL_MMSG;
        c->aux_slot = slot;
        c->count_slot = count;
        p++;
      } else {
        return -1;
      }
      p += 2;
    }
  }
  if (*p != ':') return -1;
  p++;
  int nargs = 0;
  while (*p) {
    if (nargs >= AB_MAX_ARGS) return -1;
    struct ab_arg *a = &c->args[nargs];
    int slot = slot_of(p[1]);
    if (slot < 0) return -1;
    a->slot = slot;
    t->slot[nargs] = slot;
    t->kind[nargs] = p[0];
    if (p[0] == 'i' || p[0] == 's' || p[0] == 'h' || p[0] == 'm') {
      a->kind = p[0] == 'i' ? AB_INT : p[0] == 's' ? AB_STR : p[0] == 'h' ? AB_HOW : AB_MSG;
      p += 2;
    } else if (p[0] == 'a') {
      int len = slot_of(p[2]);
      if (len < 0) return -1;
      a->kind = AB_SOCK;
      a->len_slot = len;
      p += 3;
    } else {
      return -1;
    }
    nargs++;
    if (*p == ',') {
      p++;
      if (*p == '\0') return -1;
    } else if (*p != '\0') {
      return -1;
    }
  }
  if (nargs == 0) return -1;
  c->nargs = nargs;
  return 0;
}

/* The record's start: RS nonce US type US ts US tgid US tid. */
static void head(char type, const struct ab_event *e) {
  printf("%c%s%c%c%c%llu%c%d%c%d", RS, nonce, US, type, US, e->ts, US, (int)e->tgid, US, (int)e->tid);
}

/* Raw bytes, bounded by the recorded length and by what the sample holds. */
static void bytes(const struct ab_event *e, size_t avail) {
  size_t n = e->len < avail ? e->len : avail;
  fwrite(e->data, 1, n, stdout);
}

static void end(void) {
  putchar(US);
  putchar('\n');
}

static int print_event(const void *data, size_t size);
/* The ring buffers (one per slot of the BPF side's `rings`), the records each consumed this pass, the cgroups writing to each. */
static struct ring_buffer *rbs[AB_RINGS];
static int nrings;
static long pass_events[AB_RINGS];
static unsigned int ring_load[AB_RINGS];

/* ctx: the ring's index. Each ring has its own pass limit, so one flooding ring cannot starve the others. */
static int on_event(void *ctx, void *data, size_t size) {
  long ring = (long)ctx;
  print_event(data, size);
  return ++pass_events[ring] >= PASS_LIMIT ? PASS_FULL : 0;
}

/* One pass over every ring; 1 when a ring was busy (full pass or many records), -errno on a failure. */
static int consume_all(void) {
  int busy = 0;
  for (int i = 0; i < nrings; i++) {
    pass_events[i] = 0;
    int n = ring_buffer__consume(rbs[i]);
    if (n < 0 && n != -EINTR && n != PASS_FULL) return n;
    if (n == PASS_FULL || n >= BUSY_EVENTS) busy = 1;
  }
  return busy;
}

/* One ring-buffer record as its text record (or nothing, for a record too short to hold one). */
static int print_event(const void *data, size_t size) {
  if (size < AB_EVENT_HEAD) return 0;
  const struct ab_event *e = data;
  size_t avail = size - AB_EVENT_HEAD;
  if (hub && e->type != AB_EV_Y && e->cgid != printed_cgid) {
    printf("%c%s%cG%c%llu%c\n", RS, nonce, US, US, e->cgid, US);
    printed_cgid = e->cgid;
  }
  const struct call_text *t = e->call < ncalls ? &texts[e->call] : NULL;
  switch (e->type) {
    case AB_EV_S: {
      if (!t) return 0;
      head('S', e);
      printf("%c%s", US, t->name);
      int first = -1;
      for (int i = 0; i < AB_MAX_ARGS && t->kind[i]; i++) {
        char k = t->kind[i];
        int slot = t->slot[i];
        if (k == 's') {
          if (first < 0) first = i;
          continue;
        }
        putchar(US);
        if (k == 'i') printf("%d", (int)(unsigned int)e->v[slot]);
        else if (k == 'h') printf("%llu", e->v[slot]);
        else {
          size_t n = e->len < avail ? e->len : avail;
          for (size_t b = 0; b < n && b < AB_SOCK_MAX; b++) printf("\\x%02x", e->data[b]);
        }
      }
      if (first >= 0) {
        putchar(US);
        bytes(e, avail);
      }
      end();
      break;
    }
    case AB_EV_P:
    case AB_EV_A:
      head((char)e->type, e);
      printf("%c%d%c", US, e->idx, US);
      bytes(e, avail);
      end();
      break;
    case AB_EV_D:
      // The opened fd's path as the kernel resolves it (1: cut, no path): the last field, raw bytes.
      head('D', e);
      printf("%c%d%c", US, e->idx == 1, US);
      bytes(e, avail);
      end();
      break;
    case AB_EV_M:
      head('M', e);
      end();
      break;
    case AB_EV_N: {
      // A sendmmsg message's destination: its index, the sockaddr as a's arguments print one.
      head('N', e);
      printf("%c%d%c", US, e->idx, US);
      size_t n = e->len < avail ? e->len : avail;
      for (size_t b = 0; b < n && b < AB_SOCK_MAX; b++) printf("\\x%02x", e->data[b]);
      end();
      break;
    }
    case AB_EV_R:
      if (!t) return 0;
      head('R', e);
      printf("%c%s%c%lld", US, t->name, US, (long long)e->v[0]);
      end();
      break;
    case AB_EV_I:
      head('I', e);
      printf("%c%llu", US, e->v[0]);
      end();
      break;
    case AB_EV_F:
      printf("%c%s%c%c%c%llu%c%d%c%d%c%d", RS, nonce, US, 'F', US, e->ts, US, (int)e->tgid, US, (int)(long long)e->v[0], US,
             (int)(long long)e->v[1]);
      end();
      break;
    case AB_EV_Y:
      // A hub says which ring the copy came through (a take waits for its cgroup's rings).
      printf("%c%s%c%c%c%llu", RS, nonce, US, 'Y', US, e->ts);
      if (hub) printf("%c%u", US, (unsigned int)e->idx);
      end();
      break;
    default:
      break;
  }
  return 0;
}

static void *detach_one(void *link) {
  bpf_link__destroy(link);
  return NULL;
}

/*
 * Detach every link at once: each tracepoint's last detach waits for an RCU grace period
 * (~60-80 ms on this 2-core VM), and concurrent waiters share one, so ~90 links take about
 * one wait instead of ~6 s in a row. A link whose thread could not start is detached here.
 */
static void detach_all(struct bpf_link **links, int n) {
  static pthread_t threads[2 * AB_MAX_CALLS + 1];
  int started[2 * AB_MAX_CALLS + 1] = {0};
  for (int i = 0; i < n; i++) started[i] = pthread_create(&threads[i], NULL, detach_one, links[i]) == 0;
  for (int i = 0; i < n; i++) {
    if (started[i]) pthread_join(threads[i], NULL);
    else bpf_link__destroy(links[i]);
  }
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list args) {
  // Warnings and errors only: the debug stream is megabytes of verifier output.
  if (level == LIBBPF_DEBUG) return 0;
  return vfprintf(stderr, fmt, args);
}

static int valid_nonce(const char *s) {
  size_t n = strlen(s);
  if (n < 8 || n > 64) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return 0;
  }
  return 1;
}

static int valid_ready_path(const char *s) {
  size_t n = strlen(s);
  if (n < 2 || n >= AB_READY_MAX || s[0] != '/') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("/._-", c))) return 0;
  }
  return 1;
}

static void ack(char op, unsigned long long cgid, long long value) {
  printf("%c%s%cK%c%c%llu%c%lld%c\n", RS, nonce, US, US, op, cgid, US, value, US);
}

/* One stdin line: +ID:LEVEL, -ID or ?ID. Anything else is refused on stderr (the host sends only these). */
static void command(char *line) {
  unsigned long long cgid = 0, level = 0;
  char *colon = strchr(line, ':');
  if (line[0] == '+' && colon) *colon = '\0';
  int ok = (line[0] == '+' && colon && parse_u64(colon + 1, &level) == 0 && level <= 31) || ((line[0] == '-' || line[0] == '?') && !colon);
  if (!ok || parse_u64(line + 1, &cgid) != 0 || cgid <= 1) {
    fprintf(stderr, "ab-ebpf: ignored a command that is not +ID:LEVEL, -ID or ?ID\n");
    return;
  }
  if (line[0] == '+') {
    // The ring fewest traced cgroups write to: its own while fewer than AB_RINGS are traced.
    unsigned int ring = 0;
    for (int i = 1; i < nrings; i++)
      if (ring_load[i] < ring_load[ring]) ring = (unsigned int)i;
    struct ab_cgroup cg = {.lost = 0, .level = (unsigned int)level, .ring = ring};
    if (bpf_map_update_elem(cgroups_fd, &cgid, &cg, BPF_NOEXIST) != 0) {
      ack('!', cgid, errno);
    } else {
      ring_load[ring]++;
      ack('+', cgid, ring);
    }
    return;
  }
  struct ab_cgroup cg = {0};
  if (bpf_map_lookup_elem(cgroups_fd, &cgid, &cg) != 0 || (line[0] == '-' && bpf_map_delete_elem(cgroups_fd, &cgid) != 0)) {
    ack('!', cgid, errno);
    return;
  }
  if (line[0] == '-' && cg.ring < AB_RINGS && ring_load[cg.ring] > 0) ring_load[cg.ring]--;
  ack(line[0], cgid, (long long)cg.lost);
}

/* Reads what stdin has; runs each complete line. Returns -1 at end of input. */
static int read_commands(void) {
  static char buf[256];
  static size_t used;
  ssize_t n = read(STDIN_FILENO, buf + used, sizeof buf - 1 - used);
  if (n == 0) return -1;
  if (n < 0) return errno == EINTR || errno == EAGAIN ? 0 : -1;
  used += (size_t)n;
  char *start = buf;
  for (char *nl; (nl = memchr(start, '\n', used - (size_t)(start - buf))) != NULL; start = nl + 1) {
    *nl = '\0';
    command(start);
  }
  used -= (size_t)(start - buf);
  memmove(buf, start, used);
  // A line longer than any command: drop it rather than wait forever for its end.
  if (used == sizeof buf - 1) used = 0;
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("ab-ebpf libbpf %u.%u\n", libbpf_major_version(), libbpf_minor_version());
    return 0;
  }
  unsigned long long cgid = 0, ready_pid = 0, pid_level = 0;
  int have_level = 0;
  const char *ready_path = NULL;
  static struct ab_call calls[AB_MAX_CALLS];
  for (int i = 1; i < argc; i += 2) {
    const char *opt = argv[i];
    if (strcmp(opt, "--hub") == 0) {
      hub = 1;
      i--;
      continue;
    }
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!val) return usage("an option without its value");
    if (strcmp(opt, "--cgroup-id") == 0) {
      if (parse_u64(val, &cgid) != 0 || cgid <= 1) return usage("--cgroup-id: a container's cgroup id (> 1)");
    } else if (strcmp(opt, "--nonce") == 0) {
      if (!valid_nonce(val)) return usage("--nonce: 8-64 letters or digits");
      strcpy(nonce, val);
    } else if (strcmp(opt, "--ready-pid") == 0) {
      if (parse_u64(val, &ready_pid) != 0 || ready_pid == 0 || ready_pid > 0x7fffffff) return usage("--ready-pid: a pid");
    } else if (strcmp(opt, "--ready-path") == 0) {
      if (!valid_ready_path(val)) return usage("--ready-path: an absolute path of [A-Za-z0-9/._-]");
      ready_path = val;
    } else if (strcmp(opt, "--pid-level") == 0) {
      if (parse_u64(val, &pid_level) != 0 || pid_level > 31) return usage("--pid-level: a pid namespace level (0-31)");
      have_level = 1;
    } else if (strcmp(opt, "--call") == 0) {
      if (ncalls >= AB_MAX_CALLS) return usage("too many --call");
      if (parse_call(val, &calls[ncalls], &texts[ncalls]) != 0) return usage("--call: NAME:FLAGS:ARGS (see the source's header)");
      ncalls++;
    } else {
      return usage("unknown option");
    }
  }
  if ((cgid == 0) == (hub == 0) || (cgid != 0) != have_level) return usage("needs --cgroup-id with --pid-level, or --hub");
  if (nonce[0] == '\0' || ready_pid == 0 || !ready_path || ncalls == 0)
    return usage("needs --nonce, --ready-pid, --ready-path and at least one --call");

  // Never outlive the process that reads us: a root tracer left behind would trace on.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) return usage("the parent is gone");
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  libbpf_set_print(libbpf_log);
  static char outbuf[1 << 20];
  setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

  // First with the resolved-path walk (quietly: a kernel that refuses it gets one line, below),
  // then, if that load failed, without it (resolve_paths = 0 makes it dead code the verifier skips).
  struct ab_ebpf_bpf *skel = NULL;
  int err = 0;
  int resolved = 1;
  for (int attempt = 0; attempt < 2; attempt++) {
    skel = ab_ebpf_bpf__open();
    if (!skel) {
      fprintf(stderr, "ab-ebpf: could not open the BPF object: %s\n", strerror(errno));
      return EXIT_LOAD;
    }
    skel->rodata->ready_pid = (unsigned int)ready_pid;
    skel->rodata->ready_len = (unsigned int)strlen(ready_path);
    memcpy((char *)skel->rodata->ready_path, ready_path, strlen(ready_path));
    memcpy((void *)skel->rodata->calls, calls, sizeof calls);
    skel->rodata->resolve_paths = (unsigned char)resolved;
    libbpf_set_print(resolved ? NULL : libbpf_log);
    err = ab_ebpf_bpf__load(skel);
    libbpf_set_print(libbpf_log);
    if (!err || !resolved) break;
    ab_ebpf_bpf__destroy(skel);
    skel = NULL;
    resolved = 0;
    fprintf(stderr, "ab-ebpf: resolved paths are not recorded (this kernel refused the BPF programs with them: %s)\n", strerror(-err));
  }
  if (err) {
    fprintf(stderr, "ab-ebpf: could not load the BPF programs: %s\n", strerror(-err));
    ab_ebpf_bpf__destroy(skel);
    return EXIT_LOAD;
  }
  cgroups_fd = bpf_map__fd(skel->maps.cgroups);
  if (!hub) {
    struct ab_cgroup cg = {.lost = 0, .level = (unsigned int)pid_level};
    if (bpf_map_update_elem(cgroups_fd, &cgid, &cg, BPF_ANY) != 0) {
      fprintf(stderr, "ab-ebpf: could not add the cgroup: %s\n", strerror(errno));
      ab_ebpf_bpf__destroy(skel);
      return EXIT_LOAD;
    }
  }
  static struct bpf_link *links[2 * AB_MAX_CALLS + 1];
  int nlinks = 0;
  for (int i = 0; i < ncalls && !err; i++) {
    char tp[64];
    const char *names[2] = {"sys_enter_%s", "sys_exit_%s"};
    struct bpf_program *progs[2] = {skel->progs.on_enter, skel->progs.on_exit};
    for (int k = 0; k < 2; k++) {
      LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = (unsigned long long)i);
      snprintf(tp, sizeof tp, names[k], texts[i].name);
      struct bpf_link *l = bpf_program__attach_tracepoint_opts(progs[k], "syscalls", tp, &opts);
      if (!l) {
        err = -errno;
        fprintf(stderr, "ab-ebpf: could not attach syscalls/%s: %s\n", tp, strerror(errno));
        break;
      }
      links[nlinks++] = l;
    }
  }
  if (!err) {
    struct bpf_link *l = bpf_program__attach(skel->progs.on_fork);
    if (!l) {
      err = -errno;
      fprintf(stderr, "ab-ebpf: could not attach sched/sched_process_fork: %s\n", strerror(errno));
    } else {
      links[nlinks++] = l;
    }
  }
  // The rings: a hub's AB_RINGS (its cgroups spread over them), one for a single container.
  nrings = hub ? AB_RINGS : 1;
  int rings_fd = bpf_map__fd(skel->maps.rings);
  for (int i = 0; i < nrings && !err; i++) {
    int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ab_ring", 0, 0, hub ? AB_HUB_RING_BYTES : AB_SINGLE_RING_BYTES, NULL);
    unsigned int slot = (unsigned int)i;
    if (fd < 0 || bpf_map_update_elem(rings_fd, &slot, &fd, BPF_ANY) != 0 || !(rbs[i] = ring_buffer__new(fd, on_event, (void *)(long)i, NULL))) {
      err = -errno;
      fprintf(stderr, "ab-ebpf: could not open ring buffer %d: %s\n", i, strerror(errno));
    }
    // The map lives on in the rings map and in the ring buffer's mapping.
    if (fd >= 0) close(fd);
  }
  if (!err) {
    // Everything is attached: from here every record comes out (the readiness marker first proves it).
    struct pollfd fds[AB_RINGS + 1];
    for (int i = 0; i < nrings; i++) fds[i] = (struct pollfd){.fd = ring_buffer__epoll_fd(rbs[i]), .events = POLLIN};
    fds[nrings] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    while (!stopping) {
      int busy = consume_all();
      if (busy < 0) {
        fprintf(stderr, "ab-ebpf: reading the ring buffers: %s\n", strerror(-busy));
        err = busy;
        break;
      }
      if (fflush(stdout) != 0) break;
      if (busy) {
        // Busy (a flood): drain again at once, but a hub reads its commands between passes — an
        // acknowledgement never waits for a flood to end.
        struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
        if (hub && poll(&in, 1, 0) > 0 && (in.revents & (POLLIN | POLLHUP)) && read_commands() != 0) stopping = 1;
        continue;
      }
      // Sleeps POLL_MS unless the readiness marker forces a wake-up (then drains it at once), or
      // (a hub) a command arrives. The host never relies on records before a command's ack being
      // out (a take waits for its readiness marker), so one bounded pass is enough here.
      if (poll(fds, (nfds_t)(hub ? nrings + 1 : nrings), POLL_MS) > 0 && hub && (fds[nrings].revents & (POLLIN | POLLHUP))) {
        if (consume_all() < 0) break;
        if (read_commands() != 0) stopping = 1;
      }
      if (fflush(stdout) != 0) break;
    }
    // Everything before the host's last readiness marker is out already (run.ts waits for it);
    // this drain takes what came after (bounded: a flood that goes on is not waited for).
    for (int pass = 0; pass < 256; pass++) {
      if (consume_all() <= 0) break;
    }
    fflush(stdout);
    if (hub) {
      unsigned long long key, next;
      struct ab_cgroup cg;
      for (int more = bpf_map_get_next_key(cgroups_fd, NULL, &next) == 0; more; more = bpf_map_get_next_key(cgroups_fd, &key, &next) == 0) {
        key = next;
        if (bpf_map_lookup_elem(cgroups_fd, &key, &cg) == 0 && cg.lost > 0) fprintf(stderr, "Lost %llu events in %llu\n", cg.lost, key);
      }
    } else {
      struct ab_cgroup cg = {0};
      if (bpf_map_lookup_elem(cgroups_fd, &cgid, &cg) == 0 && cg.lost > 0) fprintf(stderr, "Lost %llu events\n", cg.lost);
    }
    // Detaching takes seconds (see detach_all): the reader need not wait for it.
    libbpf_set_print(NULL);
    fclose(stdout);
    fclose(stderr);
    detach_all(links, nlinks);
    nlinks = 0;
  }
  for (int i = 0; i < nrings; i++) ring_buffer__free(rbs[i]);
  for (int i = 0; i < nlinks; i++) bpf_link__destroy(links[i]);
  ab_ebpf_bpf__destroy(skel);
  return err ? EXIT_LOAD : 0;
}
