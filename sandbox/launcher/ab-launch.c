/*
 * ab-launch: apply a Landlock ruleset and a seccomp filter, then exec a command.
 *
 *   ab-launch [--best-effort] [--report FILE] [--channel FD] [--fsize-max BYTES] (--rules FILE | --rules-fd FD) -- cmd args...
 *   ab-launch --serve | --stop-serve PID      (the session agent, ab-serve.c)
 *   ab-launch --cut-serve PID                 (the host's cut: the agent stops everything it runs for the agent, ab-serve.c)
 *   ab-launch --idle                          (the container's main process: waits forever)
 *   ab-launch --idle --serve-stdin            (the same, with the first session agent as its child, on its stdin)
 *   ab-launch --keep -- cmd args...           (a host-traced command's parent, ab-keep.c)
 *   ab-launch --quarantine | --validator-exec | --fs-remove | --fs-mkdir | --install-bundle
 *             (validation-phase helpers and the rollback defense's filesystem steps, ab-harness.c)
 *
 * With --channel the launcher speaks to the session agent over an inherited
 * unix socket the command never sees (it is close-on-exec): its report, the
 * seccomp listener (denied syscalls go to the agent, which records them and
 * answers EPERM), and any failure travel there, never on the command's stderr
 * or exit code, so nothing the command prints or returns can pass for them.
 *
 * The rules file format is documented at the top of sandbox/launcher/rules.ts.
 *
 * --fsize-max BYTES sets RLIMIT_FSIZE (soft and hard) to BYTES before the filter is installed:
 * no file the command or its descendants write grows past it (EFBIG / SIGXFSZ), and without
 * CAP_SYS_RESOURCE (not in Docker's default set) nothing below can raise it again. Every
 * command also finds fallocate unsupported (EOPNOTSUPP; see build_filter).
 *
 * The launcher fails closed: unless --best-effort is given, anything it cannot
 * enforce stops it with a distinct exit code and a one-line message on stderr.
 * See README.md beside this file for what is and is not enforced.
 *
 * Built statically inside a builder container (Dockerfile beside this file), so
 * it runs in any task image regardless of the image's libc. The kernel here is
 * newer than the build headers, so every Landlock constant and syscall number
 * is carried below instead of taken from <linux/landlock.h>.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "ab-launch: only x86_64 is supported (the seccomp filter carries x86_64 syscall numbers)"
#endif

/* ---- exit codes (mirrored in sandbox/launcher/exit-codes.ts) ---- */
enum {
  EXIT_USAGE = 120,      /* bad command line or rules file */
  EXIT_LANDLOCK = 121,   /* Landlock unavailable, too old for the rules, or failed to apply */
  EXIT_SECCOMP = 122,    /* no_new_privs, the seccomp filter, the file-size limit or the tracer's capability drop failed */
  EXIT_PATH = 123,       /* no longer used: a rule path that cannot be opened is skipped (stricter, never weaker) */
  EXIT_EXEC_FAILED = 126, /* the command exists but could not be executed (shell convention) */
  EXIT_NOT_FOUND = 127,  /* the command was not found (shell convention) */
};

/* capget/capset without libcap (the launcher is static and depends on nothing but libc). */
#define CAP_SYS_PTRACE_NR 19
#define CAP_VERSION_3 0x20080522
struct cap_header {
  uint32_t version;
  int pid;
};
struct cap_data {
  uint32_t effective, permitted, inheritable;
};


/* ---- Landlock UAPI, carried here (ABI 1..7) ---- */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

/* Rights that make sense on a non-directory; Landlock rejects the others there. */
#define LL_FS_FILE_RIGHTS \
  (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)

#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/*
 * Below this ABI some right our rule model expresses (truncate, ioctl on
 * devices) is not handled by the kernel at all, i.e. silently allowed. Without
 * --best-effort the launcher refuses to run rather than enforce less.
 */
#define FULL_FS_ABI 5
#define SCOPE_ABI 6

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_seccomp
#define __NR_seccomp 317
#endif

struct access_name {
  const char *name;
  uint64_t bit;
  int min_abi;
};

static const struct access_name FS_ACCESS[] = {
    {"execute", LL_FS_EXECUTE, 1},         {"write_file", LL_FS_WRITE_FILE, 1},
    {"read_file", LL_FS_READ_FILE, 1},     {"read_dir", LL_FS_READ_DIR, 1},
    {"remove_dir", LL_FS_REMOVE_DIR, 1},   {"remove_file", LL_FS_REMOVE_FILE, 1},
    {"make_char", LL_FS_MAKE_CHAR, 1},     {"make_dir", LL_FS_MAKE_DIR, 1},
    {"make_reg", LL_FS_MAKE_REG, 1},       {"make_sock", LL_FS_MAKE_SOCK, 1},
    {"make_fifo", LL_FS_MAKE_FIFO, 1},     {"make_block", LL_FS_MAKE_BLOCK, 1},
    {"make_sym", LL_FS_MAKE_SYM, 1},       {"refer", LL_FS_REFER, 2},
    {"truncate", LL_FS_TRUNCATE, 3},       {"ioctl_dev", LL_FS_IOCTL_DEV, 5},
};
#define N_FS_ACCESS (sizeof(FS_ACCESS) / sizeof(FS_ACCESS[0]))

/* ---- rules ---- */
struct fs_rule {
  uint64_t access;
  char *path;
};

struct rules {
  struct fs_rule *fs;
  size_t n_fs, cap_fs;
  uint16_t *connect;
  size_t n_connect, cap_connect;
  uint16_t *bind;
  size_t n_bind, cap_bind;
  int allow_inet, allow_inet6;
  int setattr;
  int tcp_any; /* tcp-any: leave TCP connect/bind unhandled by Landlock */
  int fs_any;  /* fs-any: handle no filesystem right (the harness guard around unenforced commands) */
  int socket_any; /* socket any: every socket domain (unenforced commands) */
  uint64_t scoped;
  int require_abi;
};

struct skipped {
  const char *path;
  char reason[128];
};

static const char *prog = "ab-launch";

/* The session agent's socket (--channel), or -1. Messages are single datagrams:
 *   R<report JSON>           applied; sent just before exec (with the seccomp listener fd attached)
 *   F<exit code> <message>   the launcher failed; the command never ran
 *   X<exit code> <message>   exec failed after the report (126/127: the command's own failure) */
static int channel_fd = -1;

static void channel_send(char kind, const char *text, int pass_fd) {
  if (channel_fd < 0) return;
  size_t n = strlen(text);
  char *msg = malloc(n + 1);
  if (msg == NULL) return;
  msg[0] = kind;
  memcpy(msg + 1, text, n);
  struct iovec iov = {msg, n + 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (pass_fd >= 0) {
    memset(&control, 0, sizeof control);
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof control.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  while (sendmsg(channel_fd, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
  free(msg);
}

static void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

static void die(int code, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: %s\n", prog, text);
  char line[1100];
  snprintf(line, sizeof line, "%d %s", code, text);
  channel_send('F', line, -1);
  exit(code);
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (q == NULL) die(EXIT_USAGE, "out of memory");
  return q;
}

#define PUSH(arr, n, cap, value)                                   \
  do {                                                             \
    if ((n) == (cap)) {                                            \
      (cap) = (cap) ? 2 * (cap) : 16;                              \
      (arr) = xrealloc((arr), (cap) * sizeof(*(arr)));             \
    }                                                              \
    (arr)[(n)++] = (value);                                        \
  } while (0)

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode %XX in place; returns 0 on success. A %00 would truncate the path, so it is rejected. */
static int percent_decode(char *s) {
  char *out = s;
  for (char *in = s; *in != '\0'; in++) {
    if (*in != '%') {
      *out++ = *in;
      continue;
    }
    int hi = hexval(in[1]);
    int lo = hi < 0 ? -1 : hexval(in[2]);
    if (hi < 0 || lo < 0) return -1;
    char c = (char)(hi * 16 + lo);
    if (c == '\0') return -1;
    *out++ = c;
    in += 2;
  }
  *out = '\0';
  return 0;
}

static int parse_uint(const char *s, long max, long *out) {
  if (*s == '\0') return -1;
  long v = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > max) return -1;
  }
  *out = v;
  return 0;
}

static uint64_t parse_access_list(char *list, const char *file, int line) {
  uint64_t access = 0;
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    size_t i;
    for (i = 0; i < N_FS_ACCESS; i++)
      if (strcmp(tok, FS_ACCESS[i].name) == 0) break;
    if (i == N_FS_ACCESS) die(EXIT_USAGE, "%s:%d: unknown fs access '%s'", file, line, tok);
    access |= FS_ACCESS[i].bit;
  }
  if (access == 0) die(EXIT_USAGE, "%s:%d: empty fs access list", file, line);
  return access;
}

#define MAX_FIELDS 4

/* Rules come from a file (--rules) or from a descriptor the agent filled (--rules-fd, a sealed memfd). */
static void parse_rules(FILE *f, const char *file, struct rules *r) {
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, seen_header = 0;
  while (getline(&line, &cap, f) >= 0) {
    lineno++;
    char *fields[MAX_FIELDS + 1];
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
      if (n == MAX_FIELDS) die(EXIT_USAGE, "%s:%d: too many fields", file, lineno);
      fields[n++] = tok;
    }
    if (n == 0 || fields[0][0] == '#') continue;
    const char *d = fields[0];
    if (!seen_header) {
      if (strcmp(d, "authbench-rules") != 0 || n != 2 || strcmp(fields[1], "1") != 0)
        die(EXIT_USAGE, "%s:%d: expected header 'authbench-rules 1'", file, lineno);
      seen_header = 1;
      continue;
    }
    long v;
    if (strcmp(d, "fs") == 0) {
      if (n != 3) die(EXIT_USAGE, "%s:%d: usage: fs <access,...> <path>", file, lineno);
      struct fs_rule rule;
      rule.access = parse_access_list(fields[1], file, lineno);
      if (percent_decode(fields[2]) != 0) die(EXIT_USAGE, "%s:%d: bad percent-encoding in path", file, lineno);
      if (fields[2][0] != '/') die(EXIT_USAGE, "%s:%d: path must be absolute", file, lineno);
      rule.path = strdup(fields[2]);
      if (rule.path == NULL) die(EXIT_USAGE, "out of memory");
      PUSH(r->fs, r->n_fs, r->cap_fs, rule);
    } else if (strcmp(d, "net-connect") == 0 || strcmp(d, "net-bind") == 0) {
      if (n != 2 || parse_uint(fields[1], 65535, &v) != 0)
        die(EXIT_USAGE, "%s:%d: usage: %s <tcp port 0-65535>", file, lineno, d);
      if (d[4] == 'c')
        PUSH(r->connect, r->n_connect, r->cap_connect, (uint16_t)v);
      else
        PUSH(r->bind, r->n_bind, r->cap_bind, (uint16_t)v);
    } else if (strcmp(d, "socket") == 0) {
      if (n == 2 && strcmp(fields[1], "inet") == 0)
        r->allow_inet = 1;
      else if (n == 2 && strcmp(fields[1], "inet6") == 0)
        r->allow_inet6 = 1;
      else if (n == 2 && strcmp(fields[1], "any") == 0)
        r->socket_any = 1;
      else
        die(EXIT_USAGE, "%s:%d: usage: socket <inet|inet6|any>", file, lineno);
    } else if (strcmp(d, "scope") == 0) {
      if (n == 2 && strcmp(fields[1], "signal") == 0)
        r->scoped |= LL_SCOPE_SIGNAL;
      else if (n == 2 && strcmp(fields[1], "abstract-unix") == 0)
        r->scoped |= LL_SCOPE_ABSTRACT_UNIX;
      else
        die(EXIT_USAGE, "%s:%d: usage: scope <signal|abstract-unix>", file, lineno);
    } else if (strcmp(d, "setattr") == 0) {
      if (n != 1) die(EXIT_USAGE, "%s:%d: usage: setattr", file, lineno);
      r->setattr = 1;
    } else if (strcmp(d, "tcp-any") == 0) {
      if (n != 1) die(EXIT_USAGE, "%s:%d: usage: tcp-any", file, lineno);
      r->tcp_any = 1;
    } else if (strcmp(d, "fs-any") == 0) {
      if (n != 1) die(EXIT_USAGE, "%s:%d: usage: fs-any", file, lineno);
      r->fs_any = 1;
    } else if (strcmp(d, "require-abi") == 0) {
      if (n != 2 || parse_uint(fields[1], 1000, &v) != 0 || v < 1)
        die(EXIT_USAGE, "%s:%d: usage: require-abi <n >= 1>", file, lineno);
      if (v > r->require_abi) r->require_abi = (int)v;
    } else {
      die(EXIT_USAGE, "%s:%d: unknown directive '%s'", file, lineno, d);
    }
  }
  if (ferror(f)) die(EXIT_USAGE, "cannot read rules %s: %s", file, strerror(errno));
  if (!seen_header) die(EXIT_USAGE, "%s: missing header 'authbench-rules 1'", file);
  if (r->fs_any && r->n_fs > 0) die(EXIT_USAGE, "%s: fs-any and fs rules exclude each other", file);
  free(line);
  fclose(f);
}

/* ---- seccomp ---- */

#define MAX_FILTER 256

struct filter {
  struct sock_filter insn[MAX_FILTER];
  unsigned short len;
};

static void emit(struct filter *f, struct sock_filter insn) {
  if (f->len == MAX_FILTER) die(EXIT_SECCOMP, "seccomp filter too long");
  f->insn[f->len++] = insn;
}

#define STMT(code, k) ((struct sock_filter){(unsigned short)(code), 0, 0, (unsigned)(k)})
#define JUMP(code, k, t, f) ((struct sock_filter){(unsigned short)(code), (t), (f), (unsigned)(k)})
#define LD_NR STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARCH STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
/* The low 32 bits of an argument (little-endian); enough for int-typed arguments, which the kernel truncates. */
#define LD_ARG(i) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[(i)]))
#define AND(k) STMT(BPF_ALU | BPF_AND | BPF_K, (k))
#define RET(v) STMT(BPF_RET | BPF_K, (v))
#define JEQ(k, t, f) JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
/* A denial: with a channel, SECCOMP_RET_USER_NOTIF hands the call to the session agent, which
 * records it and answers EPERM — strace never sees a call another filter refused (ERRNO outranks
 * TRACE), so without this the denial would be invisible. Without a channel: plain EPERM. */
static unsigned deny_action = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
#define DENY RET(deny_action)
#define ALLOW RET(SECCOMP_RET_ALLOW)

/* Emit "if nr == NR then <block>", the block ending in returns on every path. */
static void emit_case(struct filter *f, long nr, const struct sock_filter *block, size_t n) {
  if (n > 255) die(EXIT_SECCOMP, "seccomp block too long");
  emit(f, JEQ((unsigned)nr, 0, (unsigned char)n));
  for (size_t i = 0; i < n; i++) emit(f, block[i]);
}

#define CASE(f, nr, ...)                                                     \
  do {                                                                       \
    const struct sock_filter block_[] = {__VA_ARGS__};                       \
    emit_case((f), (nr), block_, sizeof(block_) / sizeof(block_[0]));        \
  } while (0)

/* Flag and constant values, carried to not depend on header vintage. */
#define AB_AF_UNIX 1
#define AB_AF_INET 2
#define AB_AF_INET6 10
#define AB_SOCK_STREAM 1
#define AB_SOCK_DGRAM 2
#define AB_SOCK_TYPE_MASK 0xf
/* CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET, and CLONE_UNTRACED: a child made
 * with it is not followed by the tracer, so it would act with nothing in the trace. CLONE_NEWTIME
 * (0x80) overlaps the exit-signal byte of clone() and is only reachable through clone3/unshare,
 * both denied. */
#define AB_CLONE_DENY_MASK (0x7E020000u | 0x00800000u)
#define AB_TIOCSTI 0x5412
#define AB_TIOCLINUX 0x541C
#define AB_S_IFMT 0170000
#define AB_S_IFCHR 0020000
#define AB_S_IFBLK 0060000
#define AB_MFD_NOEXEC_SEAL 0x0008u
#define X32_SYSCALL_BIT 0x40000000u
#define AB_PRIO_PROCESS 0
#define AB_PRIO_PGRP 1
#define AB_IOPRIO_WHO_PROCESS 1
#define AB_IOPRIO_WHO_PGRP 2

/* Syscalls no sandboxed command needs and that reach past the filesystem/network policy
 * (ptrace and its relatives also reach the harness's own processes). */
static const long DENIED_SYSCALLS[] = {
    101 /* ptrace */,          310 /* process_vm_readv */,  311 /* process_vm_writev */,
    438 /* pidfd_getfd */,     165 /* mount */,             166 /* umount2 */,
    155 /* pivot_root */,      161 /* chroot */,            272 /* unshare */,
    308 /* setns */,           428 /* open_tree */,         429 /* move_mount */,
    430 /* fsopen */,          431 /* fsconfig */,          432 /* fsmount */,
    433 /* fspick */,          442 /* mount_setattr */,     467 /* open_tree_attr */,
    250 /* keyctl */,          248 /* add_key */,           249 /* request_key */,
    321 /* bpf */,             298 /* perf_event_open */,   246 /* kexec_load */,
    320 /* kexec_file_load */, 175 /* init_module */,       313 /* finit_module */,
    176 /* delete_module */,   323 /* userfaultfd */,       425 /* io_uring_setup */,
    426 /* io_uring_enter */,  427 /* io_uring_register */, 304 /* open_by_handle_at */,
    303 /* name_to_handle_at */,
};

/* Calls that act on another process named by their first argument (0 = the caller): changing
 * the limits, scheduling or CPUs of a process outside the command — the agent, the tracer,
 * pid 1 — could starve or break the harness, and Landlock does not mediate them. */
static const long SELF_ONLY_SYSCALLS[] = {
    203 /* sched_setaffinity */, 144 /* sched_setscheduler */, 142 /* sched_setparam */,
    314 /* sched_setattr */,
};

static void build_filter(const struct rules *r, struct filter *f) {
  f->len = 0;
  /* A foreign syscall ABI (i386 via int 0x80, where socketcall lives; x32) would bypass
   * every number below, so any such syscall kills the process. */
  emit(f, LD_ARCH);
  emit(f, JEQ(AUDIT_ARCH_X86_64, 1, 0));
  emit(f, RET(SECCOMP_RET_KILL_PROCESS));
  emit(f, LD_NR);
  emit(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1));
  emit(f, RET(SECCOMP_RET_KILL_PROCESS));

  for (size_t i = 0; i < sizeof(DENIED_SYSCALLS) / sizeof(DENIED_SYSCALLS[0]); i++)
    CASE(f, DENIED_SYSCALLS[i], DENY);

  /* clone3 passes its flags in a struct the filter cannot read: answer ENOSYS (not a denial:
   * glibc then falls back to clone(), whose flags are checked below). */
  CASE(f, 435 /* clone3 */, RET(SECCOMP_RET_ERRNO | ENOSYS));
  CASE(f, 56 /* clone */, LD_ARG(0), AND(AB_CLONE_DENY_MASK), JEQ(0, 0, 1), ALLOW, DENY);

  for (size_t i = 0; i < sizeof(SELF_ONLY_SYSCALLS) / sizeof(SELF_ONLY_SYSCALLS[0]); i++)
    CASE(f, SELF_ONLY_SYSCALLS[i], LD_ARG(0), JEQ(0, 0, 1), ALLOW, DENY);
  /* prlimit64(pid, resource, new, old): reading anyone's limits is harmless; setting them only for self. */
  CASE(f, 302 /* prlimit64 */, LD_ARG(0), JEQ(0, 5, 0), STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
       JEQ(0, 0, 2), STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]) + 4), JEQ(0, 1, 0), DENY, ALLOW);
  /* setpriority(which, who, prio) / ioprio_set(which, who, prio): the caller (who 0) or its own
   * process group only; PRIO_USER / IOPRIO_WHO_USER would reach every root process, the harness's too. */
  CASE(f, 141 /* setpriority */, LD_ARG(1), JEQ(0, 0, 3), LD_ARG(0), JEQ(AB_PRIO_PROCESS, 2, 0), JEQ(AB_PRIO_PGRP, 1, 0), DENY,
       ALLOW);
  CASE(f, 251 /* ioprio_set */, LD_ARG(1), JEQ(0, 0, 3), LD_ARG(0), JEQ(AB_IOPRIO_WHO_PROCESS, 2, 0),
       JEQ(AB_IOPRIO_WHO_PGRP, 1, 0), DENY, ALLOW);

  CASE(f, 16 /* ioctl */, LD_ARG(1), JEQ(AB_TIOCSTI, 2, 0), JEQ(AB_TIOCLINUX, 1, 0), ALLOW, DENY);
  CASE(f, 133 /* mknod */, LD_ARG(1), AND(AB_S_IFMT), JEQ(AB_S_IFCHR, 2, 0),
       JEQ(AB_S_IFBLK, 1, 0), ALLOW, DENY);
  CASE(f, 259 /* mknodat */, LD_ARG(2), AND(AB_S_IFMT), JEQ(AB_S_IFCHR, 2, 0),
       JEQ(AB_S_IFBLK, 1, 0), ALLOW, DENY);

  /* Landlock does not mediate executing a memfd (it lives on an internal mount, beneath no
   * rule), so memfd_create + fexecve would run code the execute rules never saw. Under a
   * filesystem policy only memfds sealed non-executable (MFD_NOEXEC_SEAL, Linux >= 6.3) may
   * be created; without one (fs-any) there are no execute rules to go around. */
  if (!r->fs_any)
    CASE(f, 319 /* memfd_create */, LD_ARG(1), AND(AB_MFD_NOEXEC_SEAL), JEQ(0, 0, 1), DENY, ALLOW);

  /* Landlock has no right for chmod/chown, so they cannot be limited by path: without a
   * `setattr` line they are denied outright; with it they are allowed, set-user/group-ID
   * bits included — every sandboxed process runs with no_new_privs and validators do too,
   * so those bits raise nothing (a setgid directory is ordinary task work). */
  static const long SETATTR_SYSCALLS[] = {90 /* chmod */, 91 /* fchmod */, 268 /* fchmodat */, 452 /* fchmodat2 */,
                                          92 /* chown */, 93 /* fchown */, 94 /* lchown */, 260 /* fchownat */};
  if (!r->setattr)
    for (size_t i = 0; i < sizeof(SETATTR_SYSCALLS) / sizeof(SETATTR_SYSCALLS[0]); i++) CASE(f, SETATTR_SYSCALLS[i], DENY);

  /* fallocate reserves real disk in microseconds (gigabytes at a time, and with FALLOC_FL_KEEP_SIZE
   * even past RLIMIT_FSIZE), faster than the host's storage watcher can see and stop it. Every
   * command finds it unsupported, whatever the policy — not a denial (no USER_NOTIF, nothing to
   * record): glibc's posix_fallocate then falls back to writing, which the limits and the watcher
   * do see, and fallocate(1) fails. Before the socket-any return, so it is in every filter. */
  CASE(f, 285 /* fallocate */, RET(SECCOMP_RET_ERRNO | (EOPNOTSUPP & SECCOMP_RET_DATA)));

  if (r->socket_any) {
    emit(f, ALLOW);
    return;
  }
  CASE(f, 53 /* socketpair */, LD_ARG(0), JEQ(AB_AF_UNIX, 0, 1), ALLOW, DENY);

  /* socket(): AF_UNIX always; AF_INET/AF_INET6 only when allowed, and then only stream and
   * datagram (no SOCK_RAW); every other domain (packet, netlink, ...) is denied. Netlink is
   * denied too: glibc's getaddrinfo falls back to "both families present" without it. */
  {
    struct sock_filter b[32];
    size_t n = 0;
    b[n++] = LD_ARG(1);
    b[n++] = AND(AB_SOCK_TYPE_MASK);
    b[n++] = STMT(BPF_MISC | BPF_TAX, 0);
    b[n++] = LD_ARG(0);
    b[n++] = JEQ(AB_AF_UNIX, 0, 1);
    b[n++] = ALLOW;
    const unsigned domains[2] = {r->allow_inet ? AB_AF_INET : 0, r->allow_inet6 ? AB_AF_INET6 : 0};
    for (int i = 0; i < 2; i++) {
      if (domains[i] == 0) continue;
      b[n++] = JEQ(domains[i], 0, 5);
      b[n++] = STMT(BPF_MISC | BPF_TXA, 0);
      b[n++] = JEQ(AB_SOCK_STREAM, 2, 0);
      b[n++] = JEQ(AB_SOCK_DGRAM, 1, 0);
      b[n++] = DENY;
      b[n++] = ALLOW;
    }
    b[n++] = DENY;
    emit_case(f, 41 /* socket */, b, n);
  }

  emit(f, ALLOW);
}

/* ---- report ---- */

#define MAX_REPORTED_SKIPS 100

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}

static void write_report(FILE *out, int abi, const char *enforcement, int seccomp, uint64_t handled_fs,
                         uint64_t handled_net, uint64_t scoped, size_t applied, const struct skipped *skipped,
                         size_t n_skipped, unsigned long long fsize_max) {
  fprintf(out, "{\"landlock_abi\":%d,\"enforcement\":\"%s\",\"seccomp\":%s,\"handled_fs\":[", abi, enforcement,
          seccomp ? "true" : "false");
  int first = 1;
  for (size_t i = 0; i < N_FS_ACCESS; i++) {
    if (!(handled_fs & FS_ACCESS[i].bit)) continue;
    fprintf(out, "%s\"%s\"", first ? "" : ",", FS_ACCESS[i].name);
    first = 0;
  }
  fprintf(out, "],\"handled_net\":[");
  first = 1;
  if (handled_net & LL_NET_BIND_TCP) fprintf(out, "\"bind_tcp\""), first = 0;
  if (handled_net & LL_NET_CONNECT_TCP) fprintf(out, "%s\"connect_tcp\"", first ? "" : ",");
  fprintf(out, "],\"scoped\":[");
  first = 1;
  if (scoped & LL_SCOPE_ABSTRACT_UNIX) fprintf(out, "\"abstract-unix\""), first = 0;
  if (scoped & LL_SCOPE_SIGNAL) fprintf(out, "%s\"signal\"", first ? "" : ",");
  fprintf(out, "],\"rules_applied\":%zu,\"rules_skipped_total\":%zu,\"rules_skipped\":[", applied, n_skipped);
  /* Bounded, so the report always fits one channel datagram; the total says how many there were. */
  for (size_t i = 0; i < n_skipped && i < MAX_REPORTED_SKIPS; i++) {
    fprintf(out, "%s{\"path\":", i == 0 ? "" : ",");
    json_string(out, skipped[i].path);
    fprintf(out, ",\"reason\":");
    json_string(out, skipped[i].reason);
    fputc('}', out);
  }
  fputc(']', out);
  /* Only when in effect (absent when not asked for, or not applied under --best-effort). */
  if (fsize_max > 0) fprintf(out, ",\"fsize_max\":%llu", fsize_max);
  fprintf(out, "}\n");
}

/* ---- main ---- */

static void usage(void) {
  die(EXIT_USAGE, "usage: ab-launch [--best-effort] [--report FILE] [--channel FD] [--fsize-max BYTES] (--rules FILE | --rules-fd FD) -- cmd args...");
}

static uint64_t fs_rights_for_abi(int abi) {
  uint64_t all = 0;
  for (size_t i = 0; i < N_FS_ACCESS; i++)
    if (FS_ACCESS[i].min_abi <= abi) all |= FS_ACCESS[i].bit;
  return all;
}

/* Close every descriptor above stderr except `keep` (-1: none). */
static void close_inherited_fds(int keep) {
  unsigned lo = 3;
  if (keep >= 3) {
    if (keep > 3 && syscall(__NR_close_range, 3U, (unsigned)keep - 1, 0U) != 0)
      for (int fd = 3; fd < keep; fd++) close(fd);
    lo = (unsigned)keep + 1;
  }
  if (syscall(__NR_close_range, lo, ~0U, 0U) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 1 << 20) max = 1 << 20;
  for (long fd = lo; fd < max; fd++) close((int)fd);
}

/* --fsize-max: a positive decimal integer, nothing else (no sign, no suffix, no overflow). */
static unsigned long long parse_fsize(const char *s) {
  if (*s == '\0') usage();
  unsigned long long v = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') usage();
    unsigned d = (unsigned)(*s - '0');
    if (v > (~0ULL - d) / 10) usage();
    v = v * 10 + d;
  }
  if (v == 0 || v == (unsigned long long)RLIM_INFINITY) usage();
  return v;
}

static int parse_fd(const char *s) {
  long v;
  if (parse_uint(s, 1 << 20, &v) != 0 || v < 3) usage();
  return (int)v;
}

/*
 * Open a rule path without following any symlink on the way. The compiler names realpaths
 * of the filesystem it listed; if a component has since become a symlink (a command replaced
 * it), following it would put the rule on whatever the link points at — so such a rule is
 * skipped instead (stricter, never weaker). Returns an O_PATH fd or -1 with errno set.
 */
static int open_rule_path(const char *path) {
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  const char *p = path;
  char name[4096];
  for (;;) {
    while (*p == '/') p++;
    if (*p == '\0') return dir; /* the path was "/" */
    const char *end = strchr(p, '/');
    size_t n = end == NULL ? strlen(p) : (size_t)(end - p);
    if (n >= sizeof name || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
      close(dir);
      errno = EINVAL;
      return -1;
    }
    memcpy(name, p, n);
    name[n] = '\0';
    int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    close(dir);
    if (fd < 0) {
      errno = err;
      return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
      close(fd);
      errno = ELOOP;
      return -1;
    }
    p += n;
    while (*p == '/') p++;
    if (*p == '\0') return fd;
    if (!S_ISDIR(st.st_mode)) {
      close(fd);
      errno = ENOTDIR;
      return -1;
    }
    dir = fd;
  }
}

/* SECCOMP_SET_MODE_FILTER with a listener for the agent when there is a channel; else prctl. Returns the
 * listener fd (>= 0), -2 when installed without one, -1 on failure (errno set). */
static int install_filter(struct sock_fprog *prog_) {
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
  if (channel_fd >= 0) {
    long fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog_);
    return fd < 0 ? -1 : (int)fd;
  }
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog_, 0, 0) == 0 ? -2 : -1;
}

static void idle_forever(void) __attribute__((noreturn));
static void idle_forever(void) {
  /* The container's main process: nothing to do but exist until the container is removed. */
  for (;;) pause();
}

/* The long-lived agent (ab-serve.c) shares this binary, so installing the launcher installs it. */
int serve_main(void);
int serve_after_wake_main(void);

/*
 * The container's main process when the host attached to it before the container started
 * (ContainerSpec.attachMain): the session's first agent runs as its child, on the container's
 * stdin and stdout, so the first session costs no Docker exec (a runc exec is the slowest step of
 * a rollout's setup after the container's own start). The child re-execs as `--serve --wake`:
 * named like any agent, and it lists the container's processes (its hello) only when the host
 * sends the wake byte, as an exec'd agent would at that moment.
 *
 * The agent ending, whether the session closed it or it died, never ends the container: this
 * process stays idle, as with --idle, so the validators still run and a later session starts an
 * agent by exec. docker-init holds the container's stdio open, so the host cannot see the end of
 * the stream: it is told by one line on stderr (IDLE_AGENT_ENDED, parsed by the host's
 * mainAgentEnded), written after the child was reaped, so no output of the agent follows it.
 */
#define IDLE_AGENT_ENDED "ab-launch --idle: the session agent ended"
static void idle_serving(const char *argv0) __attribute__((noreturn));
static void idle_serving(const char *argv0) {
  pid_t child = fork();
  /* No child: the host's wait for the hello times out and says so. */
  if (child < 0) idle_forever();
  if (child == 0) {
    char *const args[] = {(char *)argv0, "--serve", "--wake", NULL};
    execv("/proc/self/exe", args);
    fprintf(stderr, "ab-launch --idle: cannot start the session agent: %s\n", strerror(errno));
    _exit(127);
  }
  /* The stdin and stdout are the agent's alone from here. */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) dup2(null, 0), dup2(null, 1);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) continue;
  char line[128];
  int n = WIFSIGNALED(status) ? snprintf(line, sizeof line, "%s (signal %d)\n", IDLE_AGENT_ENDED, WTERMSIG(status))
                              : snprintf(line, sizeof line, "%s (exit %d)\n", IDLE_AGENT_ENDED, WEXITSTATUS(status));
  if (n > 0 && write(2, line, (size_t)n) < 0) { /* nobody to tell */ }
  if (null >= 0) dup2(null, 2);
  idle_forever();
}
int stop_serve_main(const char *pid_arg);
int cut_serve_main(const char *pid_arg);
int drop_tracer_capability(void);
/* Harness-side helpers for the validation phase (ab-harness.c). */
int harness_main(int argc, char **argv);
int forward_main(int argc, char **argv);
int keep_main(int argc, char **argv);

/*
 * The task container holds CAP_SYS_PTRACE for one process: strace. Without it strace cannot read
 * the memory of a tracee that changed uid (a non-dumpable process), and prints pointers instead of
 * paths: `setpriv --reuid=65534 ...` or a daemon dropping to www-data would hide what it opens from
 * the trace. Every command (and every validator) loses it before exec, from its bounding set too
 * where the container allows, and the launcher refuses to run when it cannot. Returns 0, or -1 with errno.
 */
int drop_tracer_capability(void) {
  /* Without CAP_SETPCAP the bounding set stays: harmless, since no_new_privs (always set next)
   * keeps set-uid and file capabilities from granting anything at exec. */
  if (prctl(PR_CAPBSET_READ, CAP_SYS_PTRACE_NR, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE_NR, 0, 0, 0) != 0 && errno != EPERM)
    return -1;
  /* Ambient capabilities are cleared when the bounding set loses one, but say it explicitly. */
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE_NR, 0, 0) != 0 && errno != EINVAL) return -1;
  struct cap_header head = {CAP_VERSION_3, 0};
  struct cap_data data[2];
  if (syscall(SYS_capget, &head, data) != 0) return -1;
  uint32_t bit = 1u << (CAP_SYS_PTRACE_NR % 32);
  struct cap_data *d = &data[CAP_SYS_PTRACE_NR / 32];
  if (((d->effective | d->permitted | d->inheritable) & bit) != 0) {
    d->effective &= ~bit;
    d->permitted &= ~bit;
    d->inheritable &= ~bit;
    if (syscall(SYS_capset, &head, data) != 0) return -1;
  }
  /* Trust nothing: read it back. */
  if (syscall(SYS_capget, &head, data) != 0) return -1;
  if (((d->effective | d->permitted | d->inheritable) & bit) != 0) {
    errno = EPERM;
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--serve") == 0) return serve_main();
  if (argc == 3 && strcmp(argv[1], "--stop-serve") == 0) return stop_serve_main(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--cut-serve") == 0) return cut_serve_main(argv[2]);
  if (argc == 2 && strcmp(argv[1], "--idle") == 0) idle_forever();
  if (argc == 3 && strcmp(argv[1], "--idle") == 0 && strcmp(argv[2], "--serve-stdin") == 0) idle_serving(argv[0]);
  if (argc == 3 && strcmp(argv[1], "--serve") == 0 && strcmp(argv[2], "--wake") == 0) return serve_after_wake_main();
  if (argc >= 2 && strcmp(argv[1], "--forward") == 0) return forward_main(argc, argv); /* the model relay tunnel, ab-forward.c */
  if (argc >= 2 && strcmp(argv[1], "--keep") == 0) return keep_main(argc, argv); /* a host-traced command's parent, ab-keep.c */
  if (argc >= 2 && (strcmp(argv[1], "--quarantine") == 0 || strcmp(argv[1], "--validator-exec") == 0 || strcmp(argv[1], "--fs-remove") == 0 ||
                    strcmp(argv[1], "--fs-mkdir") == 0 || strcmp(argv[1], "--install-bundle") == 0))
    return harness_main(argc, argv);
  int best_effort = 0, rules_fd = -1;
  unsigned long long fsize_max = 0; /* 0: no --fsize-max */
  const char *rules_path = NULL, *report_path = NULL;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (strcmp(argv[i], "--best-effort") == 0) {
      best_effort = 1;
    } else if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc) {
      rules_path = argv[++i];
    } else if (strcmp(argv[i], "--rules-fd") == 0 && i + 1 < argc) {
      rules_fd = parse_fd(argv[++i]);
    } else if (strcmp(argv[i], "--fsize-max") == 0 && i + 1 < argc) {
      fsize_max = parse_fsize(argv[++i]);
    } else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) {
      report_path = argv[++i];
    } else if (strcmp(argv[i], "--channel") == 0 && i + 1 < argc) {
      channel_fd = parse_fd(argv[++i]);
      /* Kept across a successful exec only long enough to be closed by it. */
      if (fcntl(channel_fd, F_SETFD, FD_CLOEXEC) != 0) {
        channel_fd = -1;
        die(EXIT_USAGE, "--channel %s: not an open descriptor", argv[i]);
      }
    } else {
      usage();
    }
  }
  if ((rules_path == NULL) == (rules_fd < 0) || i >= argc) usage();
  char **cmd = &argv[i];

  struct rules r;
  memset(&r, 0, sizeof r);
  if (rules_fd >= 0) {
    lseek(rules_fd, 0, SEEK_SET);
    FILE *f = fdopen(rules_fd, "r");
    if (f == NULL) die(EXIT_USAGE, "cannot read rules from fd %d: %s", rules_fd, strerror(errno));
    parse_rules(f, "rules", &r);
  } else {
    FILE *f = fopen(rules_path, "re");
    if (f == NULL) die(EXIT_USAGE, "cannot read rules %s: %s", rules_path, strerror(errno));
    parse_rules(f, rules_path, &r);
  }
  if (channel_fd >= 0) deny_action = SECCOMP_RET_USER_NOTIF;

  long abi_ret = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  int abi = abi_ret < 0 ? 0 : (int)abi_ret;
  int abi_errno = abi_ret < 0 ? errno : 0;

  int needed = r.fs_any ? SCOPE_ABI : FULL_FS_ABI;
  if (r.scoped != 0 && needed < SCOPE_ABI) needed = SCOPE_ABI;
  if (r.require_abi > needed) needed = r.require_abi;
  if (abi < needed && !best_effort) {
    if (abi == 0) die(EXIT_LANDLOCK, "Landlock unavailable: %s", strerror(abi_errno));
    die(EXIT_LANDLOCK, "Landlock ABI %d is older than the %d these rules need", abi, needed);
  }

  /* Opened before restriction: the report location need not be reachable by the command,
   * and the fd is closed before exec. */
  FILE *report = NULL;
  if (report_path != NULL) {
    report = fopen(report_path, "we");
    if (report == NULL) die(EXIT_USAGE, "cannot write report %s: %s", report_path, strerror(errno));
  }

  /* Out-of-memory kills pick the command's processes before the harness's (raising one's own
   * score needs no privilege; lowering it again does). Best effort: a missing /proc is no reason to refuse. */
  int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (oom >= 0) {
    if (write(oom, "1000", 4) < 0) {
    }
    close(oom);
  }

  struct skipped *skipped = NULL;
  size_t n_skipped = 0, cap_skipped = 0, applied = 0;
  uint64_t handled_fs = 0, handled_net = 0, scoped = 0;
  int ruleset_fd = -1;
  int landlock_ok = 0;

  if (abi >= 1) {
    handled_fs = r.fs_any ? 0 : fs_rights_for_abi(abi);
    handled_net = abi >= 4 && !r.tcp_any ? (LL_NET_BIND_TCP | LL_NET_CONNECT_TCP) : 0;
    scoped = abi >= SCOPE_ABI ? r.scoped : 0;
    struct ll_ruleset_attr attr = {handled_fs, handled_net, scoped};
    if (handled_fs == 0 && handled_net == 0 && scoped == 0) {
      /* Nothing to handle (fs-any, tcp-any, no scope usable): there is no domain to create. */
      if (!best_effort) die(EXIT_LANDLOCK, "nothing for Landlock to restrict at ABI %d", abi);
    } else {
      ruleset_fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
      if (ruleset_fd < 0) {
        if (!best_effort) die(EXIT_LANDLOCK, "landlock_create_ruleset: %s", strerror(errno));
      } else {
        landlock_ok = 1;
      }
    }
  }

  for (size_t k = 0; k < r.n_fs; k++) {
    struct skipped s = {r.fs[k].path, ""};
    int fd = open_rule_path(r.fs[k].path);
    if (fd < 0) {
      snprintf(s.reason, sizeof s.reason, "%s", errno == ELOOP ? "a symlink on the path (not followed)" : strerror(errno));
      PUSH(skipped, n_skipped, cap_skipped, s);
      continue;
    }
    if (!landlock_ok) {
      close(fd);
      snprintf(s.reason, sizeof s.reason, "Landlock not in effect");
      PUSH(skipped, n_skipped, cap_skipped, s);
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) die(EXIT_LANDLOCK, "fstat %s: %s", r.fs[k].path, strerror(errno));
    uint64_t access = r.fs[k].access & handled_fs;
    if (!S_ISDIR(st.st_mode)) access &= LL_FS_FILE_RIGHTS;
    if (access == 0) {
      /* Granting nothing is the same as having no rule: stricter, never weaker. */
      close(fd);
      snprintf(s.reason, sizeof s.reason, "no requested right applies to this %s at ABI %d",
               S_ISDIR(st.st_mode) ? "directory" : "file", abi);
      PUSH(skipped, n_skipped, cap_skipped, s);
      continue;
    }
    struct ll_path_beneath_attr pb = {access, fd};
    if (syscall(__NR_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0) != 0) {
      if (!best_effort) die(EXIT_LANDLOCK, "landlock_add_rule %s: %s", r.fs[k].path, strerror(errno));
      snprintf(s.reason, sizeof s.reason, "landlock_add_rule: %s", strerror(errno));
      PUSH(skipped, n_skipped, cap_skipped, s);
    } else {
      applied++;
    }
    close(fd);
  }

  if (landlock_ok && handled_net != 0) {
    for (size_t k = 0; k < r.n_connect + r.n_bind; k++) {
      int is_connect = k < r.n_connect;
      struct ll_net_port_attr np = {is_connect ? LL_NET_CONNECT_TCP : LL_NET_BIND_TCP,
                                    is_connect ? r.connect[k] : r.bind[k - r.n_connect]};
      if (syscall(__NR_landlock_add_rule, ruleset_fd, LL_RULE_NET_PORT, &np, 0) != 0)
        die(EXIT_LANDLOCK, "landlock_add_rule port %llu: %s", (unsigned long long)np.port, strerror(errno));
      applied++;
    }
  }

  if (drop_tracer_capability() != 0) die(EXIT_SECCOMP, "cannot drop CAP_SYS_PTRACE (the tracer's): %s", strerror(errno));
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(EXIT_SECCOMP, "no_new_privs: %s", strerror(errno));

  if (landlock_ok) {
    if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) != 0) {
      if (!best_effort) die(EXIT_LANDLOCK, "landlock_restrict_self: %s", strerror(errno));
      landlock_ok = 0;
    }
    close(ruleset_fd);
  }

  /* The file-size limit, soft and hard: the command cannot raise the hard one (no CAP_SYS_RESOURCE),
   * and everything it starts inherits it. Set before the filter, like every other limit here. */
  int fsize_ok = 1;
  if (fsize_max > 0) {
    struct rlimit fs_limit = {(rlim_t)fsize_max, (rlim_t)fsize_max};
    if (setrlimit(RLIMIT_FSIZE, &fs_limit) != 0) {
      if (!best_effort) die(EXIT_SECCOMP, "setrlimit RLIMIT_FSIZE %llu: %s", fsize_max, strerror(errno));
      fsize_ok = 0;
    }
  }

  static struct filter filter;
  build_filter(&r, &filter);
  struct sock_fprog fprog = {filter.len, filter.insn};
  int listener = install_filter(&fprog);
  int seccomp_ok = listener != -1;
  if (!seccomp_ok && !best_effort) die(EXIT_SECCOMP, "seccomp filter: %s", strerror(errno));

  const char *enforcement = "none";
  if (landlock_ok && !r.fs_any) {
    /* tcp-any asks for TCP to be left alone, so not handling it is what was asked. */
    int net_ok = r.tcp_any || handled_net != 0 || (r.n_connect == 0 && r.n_bind == 0 && !r.allow_inet && !r.allow_inet6);
    int full = abi >= needed && seccomp_ok && net_ok && scoped == r.scoped && fsize_ok;
    enforcement = full ? "full" : "partial";
  }

  char *text = NULL;
  size_t text_len = 0;
  FILE *mem = open_memstream(&text, &text_len);
  if (mem == NULL) die(EXIT_USAGE, "out of memory");
  write_report(mem, abi, enforcement, seccomp_ok, landlock_ok ? handled_fs : 0, landlock_ok ? handled_net : 0,
               landlock_ok ? scoped : 0, applied, skipped, n_skipped, fsize_ok ? fsize_max : 0);
  if (fclose(mem) != 0) die(EXIT_USAGE, "out of memory");
  if (report != NULL) {
    /* Under a file-size limit smaller than the report, the write fails (EFBIG) instead of the
     * launcher dying of SIGXFSZ; the command's own disposition is back to what it was before exec. */
    struct sigaction ignore_xfsz, saved_xfsz;
    memset(&ignore_xfsz, 0, sizeof ignore_xfsz);
    ignore_xfsz.sa_handler = SIG_IGN;
    int xfsz_saved = sigaction(SIGXFSZ, &ignore_xfsz, &saved_xfsz) == 0;
    fputs(text, report);
    if (fclose(report) != 0) die(EXIT_USAGE, "cannot write report %s: %s", report_path, strerror(errno));
    if (xfsz_saved) sigaction(SIGXFSZ, &saved_xfsz, NULL);
  }
  /* The listener goes to the agent with the report; this process (and so the command) keeps no copy. */
  channel_send('R', text, listener >= 0 ? listener : -1);
  if (listener >= 0) close(listener);
  free(text);

  /*
   * Landlock checks access when a file is opened, not when an open descriptor is used: a
   * descriptor opened outside the sandbox keeps every right it was opened with. Closing all
   * descriptors above stderr means the command starts with nothing but the three standard
   * streams (pipes the harness owns), so every file it touches is opened under the ruleset.
   * The channel stays open (close-on-exec) only to say why, if exec fails.
   */
  close_inherited_fds(channel_fd);

  execvp(cmd[0], cmd);
  int e = errno;
  int code = e == ENOENT ? EXIT_NOT_FOUND : EXIT_EXEC_FAILED;
  char line[1100];
  snprintf(line, sizeof line, "%d exec %s: %s", code, cmd[0], strerror(e));
  channel_send('X', line, -1);
  channel_fd = -1;
  die(code, "exec %s: %s", cmd[0], strerror(e));
}
