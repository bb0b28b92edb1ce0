// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The native eBPF tracer's kernel side: one program for every
 * tracepoint/syscalls/sys_enter_<name>, one for every sys_exit_<name> (the
 * attach cookie says which syscall of the table it is), one for
 * sched/sched_process_fork. Each first looks the current cgroup id up in the
 * traced set (one container's, or a hub's many) and returns at once for any
 * other process, then writes
 * fixed-layout events (ab-ebpf.h) into its cgroup's ring buffer WITHOUT
 * waking the reader: user space drains them on a timer, so the tracee never
 * pays for a wake-up (bpftrace's perf-buffer printfs woke its reader per
 * record). Only the readiness marker forces a wake-up: run.ts and hub.ts wait
 * for it.
 *
 * The semantics are program.ts's (see its header): strings that read empty at
 * entry are read again at exit (not for execve/execveat), argv up to
 * AB_ARGV_LIMIT with an M event when it goes on, O_TMPFILE opens report the
 * inode the returned fd names.
 *
 * One more, of the native backend only: at the exit of a successful open
 * (the calls flagged AB_CALL_RESOLVE: open, openat, openat2, creat), a D event
 * with the path of the file the returned fd holds, as the kernel resolved it
 * (symlinks followed) — what strace's `-y` reads from /proc/<pid>/fd/<fd>
 * there, i.e. d_path: the fd's dentry walked up to the task's fs root,
 * crossing mounts, so it is the path as the container's root names it. The
 * walk is d_path's without its locks (a rename racing it may give a mixed
 * path, as a readlink racing it would), without " (deleted)" (parse.ts drops
 * it anyway), for AB_PATH_DEPTH components at most: deeper, or longer than
 * AB_STR_MAX - 1 bytes, is a D event flagged cut (parse.ts: unparsed, never a
 * guess). A file of a pseudo filesystem that names its files itself (pipes,
 * sockets: `pipe:[N]`, which strace's real_path skips too) has none. Where the
 * kernel refuses the walk (its verifier, or struct fields CO-RE cannot find),
 * ab-ebpf loads the programs again with resolve_paths = 0 (the walk is then
 * dead code) and says so on stderr.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "ab-ebpf.h"

/* The kernel lends bpf_probe_read_user_str and friends only to GPL-compatible programs: this file
 * (alone in the Apache-2.0 project) is dual BSD/GPL, as BPF programs usually are. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The few kernel structs the O_TMPFILE inode read walks, as CO-RE
 * relocations against the running kernel's BTF: declaring only the fields
 * used keeps the build independent of the build host's kernel (a vmlinux.h
 * generated there would tie the builder image's content hash to it).
 */
struct inode {
  unsigned long i_ino;
} __attribute__((preserve_access_index));
/* What the resolved-path walk reads (d_path's walk: dentries up to the root, mounts crossed). */
struct qstr {
  unsigned int len;
  const unsigned char *name;
} __attribute__((preserve_access_index));
struct dentry_operations {
  void *d_dname;
} __attribute__((preserve_access_index));
struct dentry {
  struct dentry *d_parent;
  struct qstr d_name;
  const struct dentry_operations *d_op;
} __attribute__((preserve_access_index));
struct vfsmount {
  struct dentry *mnt_root;
} __attribute__((preserve_access_index));
struct mount {
  struct mount *mnt_parent;
  struct dentry *mnt_mountpoint;
  struct vfsmount mnt;
} __attribute__((preserve_access_index));
struct path {
  struct vfsmount *mnt;
  struct dentry *dentry;
} __attribute__((preserve_access_index));
struct fs_struct {
  struct path root;
} __attribute__((preserve_access_index));
struct file {
  struct inode *f_inode;
  struct path f_path;
} __attribute__((preserve_access_index));
struct fdtable {
  unsigned int max_fds;
  struct file **fd;
} __attribute__((preserve_access_index));
struct files_struct {
  struct fdtable *fdt;
} __attribute__((preserve_access_index));
/* A pid as each namespace from the root down to the task's own sees it: numbers[level]. */
struct upid {
  int nr;
} __attribute__((preserve_access_index));
struct pid {
  unsigned int level;
  struct upid numbers[1];
} __attribute__((preserve_access_index));
struct task_struct {
  struct files_struct *files;
  struct fs_struct *fs;
  struct pid *thread_pid;
  struct task_struct *group_leader;
} __attribute__((preserve_access_index));

/* Set by user space before load (read-only to the programs). */
const volatile __u32 ready_pid = 0;
const volatile __u32 ready_len = 0;
const volatile char ready_path[AB_READY_MAX] = {};
const volatile struct ab_call calls[AB_MAX_CALLS] = {};
/* 0: no D events (user space's second load, on a kernel that refused the walk). */
const volatile __u8 resolve_paths = 1;

#define O_TMPFILE_BIT 020000000

/* The ring buffers (ab-ebpf.h's AB_RINGS): user space creates each and puts it in a slot. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, AB_RINGS);
  __type(key, __u32);
  __array(values, struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, AB_HUB_RING_BYTES);
  });
} rings SEC(".maps");

/* Events built here, then copied out at their real size (a reserve must be of a constant size). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ab_event);
} scratch SEC(".maps");

/*
 * The resolved path, built backwards from the end of the first half (a component's copy may run
 * into the second half only when it is cut anyway).
 */
struct pathbuf {
  char b[2 * AB_STR_MAX];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct pathbuf);
} pathbufs SEC(".maps");

/*
 * The traced cgroups: id -> its ring and the events that ring had no room for (a hub traces
 * several containers at once, and one flooding its ring must not make another's trace look
 * complete). User space adds and removes them; a process is traced while its cgroup is here.
 */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, AB_MAX_CGROUPS);
  __type(key, __u64);
  __type(value, struct ab_cgroup);
} cgroups SEC(".maps");

/* What a thread's exit must do for the call it entered: strings to re-read, an O_TMPFILE inode. */
struct pending {
  __u64 ptr[AB_MAX_ARGS];
  __u8 mask;
  __u8 tmpfile;
  __u8 call;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct pending);
} pendings SEC(".maps");

struct exit_ctx {
  __u64 common;
  __s64 nr;
  __s64 ret;
};

/* The current process's traced cgroup, or 0 when it is in none. */
static __always_inline struct ab_cgroup *traced(void) {
  __u64 cgid = bpf_get_current_cgroup_id();
  return bpf_map_lookup_elem(&cgroups, &cgid);
}

/*
 * A pid as the container's pid namespace (level `level`) numbers it, as strace in the container
 * and the session agent see it — not the host's, and not a namespace a command made below the
 * container's (its pids there could collide with the container's own).
 */
static __always_inline __u32 nr_at(struct pid *p, __u32 level) {
  if (!p || level > 31 || level > BPF_CORE_READ(p, level)) return 0;
  const char *at = (const char *)p + bpf_core_field_offset(struct pid, numbers) + level * bpf_core_type_size(struct upid) +
                   bpf_core_field_offset(struct upid, nr);
  int nr = 0;
  bpf_probe_read_kernel(&nr, sizeof nr, at);
  return (__u32)nr;
}

/* tgid << 32 | tid of a task in its container's pid namespace. */
static __always_inline __u64 ns_ids(struct task_struct *t, const struct ab_cgroup *cg) {
  __u32 level = cg->level;
  __u32 tid = nr_at(BPF_CORE_READ(t, thread_pid), level);
  __u32 tgid = nr_at(BPF_CORE_READ(t, group_leader, thread_pid), level);
  return (__u64)tgid << 32 | tid;
}

/* `ids`: tgid << 32 | tid as the event reports them (ns_ids). */
static __always_inline struct ab_event *event_init(__u8 type, __u8 call, __u64 ids) {
  __u32 zero = 0;
  struct ab_event *e = bpf_map_lookup_elem(&scratch, &zero);
  if (!e) return 0;
  e->ts = bpf_ktime_get_ns();
  e->cgid = bpf_get_current_cgroup_id();
  e->tgid = ids >> 32;
  e->tid = (__u32)ids;
  e->type = type;
  e->call = call;
  e->idx = 0;
  e->len = 0;
  return e;
}

/* Into the event's cgroup's ring; what does not fit is counted against that cgroup. */
static __always_inline void submit(struct ab_event *e, __u64 flags) {
  __u32 len = e->len;
  if (len > AB_STR_MAX) len = AB_STR_MAX;
  __u64 cgid = e->cgid;
  struct ab_cgroup *cg = bpf_map_lookup_elem(&cgroups, &cgid);
  if (!cg) return;
  __u32 slot = cg->ring;
  void *ring = bpf_map_lookup_elem(&rings, &slot);
  if (!ring || bpf_ringbuf_output(ring, e, AB_EVENT_HEAD + len, flags) != 0) __sync_fetch_and_add(&cg->lost, 1);
}

/* A user string into e->data; its length without the NUL, 0 when unreadable (as bpftrace's str() gives ""). */
static __always_inline __u32 read_str(struct ab_event *e, __u64 ptr) {
  long n = bpf_probe_read_user_str(e->data, AB_STR_MAX, (const void *)ptr);
  e->len = n > 0 ? (__u32)(n - 1) : 0;
  return e->len;
}

/*
 * D: the path of the file fd `fd` of `task` holds, as d_path gives it against the task's fs root
 * (strace's readlink of /proc/<pid>/fd/<fd>). idx 1: cut (deeper than AB_PATH_DEPTH, or longer
 * than AB_STR_MAX - 1 bytes), no path. Nothing for a pseudo file that names itself (d_dname).
 */
/* One walk's state, for walk_step (bpf_loop's callback: verified once, not per iteration). */
struct walk {
  struct dentry *d;
  struct vfsmount *vm;
  struct dentry *root_d;
  struct vfsmount *root_m;
  __u64 mnt_off;
  __u32 off;
  __u32 done;
};

/* One step up: to the root (done), across a mount, or one component prepended. 1 stops the loop. */
static long walk_step(__u32 i, void *ctx) {
  struct walk *w = ctx;
  __u32 zero = 0;
  struct pathbuf *pb = bpf_map_lookup_elem(&pathbufs, &zero);
  if (!pb) return 1;
  struct dentry *d = w->d;
  struct vfsmount *vm = w->vm;
  if (d == w->root_d && vm == w->root_m) {
    w->done = 1;
    return 1;
  }
  struct mount *m = (struct mount *)((char *)vm - w->mnt_off);
  if (d == BPF_CORE_READ(vm, mnt_root)) {
    struct mount *parent = BPF_CORE_READ(m, mnt_parent);
    // The root of its mount tree (or a detached mount) without meeting the task's root: d_path
    // gives the path from there, and so does this.
    if (!parent || parent == m) {
      w->done = 1;
      return 1;
    }
    w->d = BPF_CORE_READ(m, mnt_mountpoint);
    w->vm = (struct vfsmount *)((char *)parent + w->mnt_off);
    return 0;
  }
  struct dentry *up = BPF_CORE_READ(d, d_parent);
  if (!up || up == d) {
    w->done = 1;
    return 1;
  }
  __u32 len = BPF_CORE_READ(d, d_name.len);
  const unsigned char *name = BPF_CORE_READ(d, d_name.name);
  __u32 off = w->off;
  // Too long (the path would not fit AB_STR_MAX - 1 bytes): stop, not done — cut.
  if (len > 255 || off > AB_STR_MAX || len + 1 >= off) return 1;
  off -= len;
  bpf_probe_read_kernel(&pb->b[off & (AB_STR_MAX - 1)], len & 0xff, name);
  off -= 1;
  pb->b[off & (AB_STR_MAX - 1)] = '/';
  w->off = off;
  w->d = up;
  return 0;
}

/*
 * D: the path of the file fd `fd` of `task` holds, as d_path gives it against the task's fs root
 * (strace's readlink of /proc/<pid>/fd/<fd>). idx 1: cut (deeper than AB_PATH_DEPTH, or longer
 * than AB_STR_MAX - 1 bytes), no path. Nothing for a pseudo file that names itself (d_dname).
 */
static __always_inline void resolved_event(struct task_struct *task, __s64 fd, __u8 call, __u64 ids) {
  struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
  struct file *f = 0;
  if (!fds || bpf_probe_read_kernel(&f, sizeof f, fds + fd) != 0 || !f) return;
  struct dentry *d = BPF_CORE_READ(f, f_path.dentry);
  struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
  if (!d || !vm || BPF_CORE_READ(d, d_op, d_dname)) return;
  struct walk w = {};
  w.d = d;
  w.vm = vm;
  w.root_d = BPF_CORE_READ(task, fs, root.dentry);
  w.root_m = BPF_CORE_READ(task, fs, root.mnt);
  w.mnt_off = bpf_core_field_offset(struct mount, mnt);
  w.off = AB_STR_MAX;
  bpf_loop(AB_PATH_DEPTH, walk_step, &w, 0);
  __u32 zero = 0;
  struct pathbuf *pb = bpf_map_lookup_elem(&pathbufs, &zero);
  if (!pb) return;
  struct ab_event *e = event_init(AB_EV_D, call, ids);
  if (!e) return;
  __u32 off = w.off;
  if (!w.done || off > AB_STR_MAX || off == 0) {
    e->idx = 1;
  } else if (off == AB_STR_MAX) {
    e->data[0] = '/';
    e->len = 1;
  } else {
    __u32 len = AB_STR_MAX - off;
    bpf_probe_read_kernel(e->data, len & (AB_STR_MAX - 1), &pb->b[off & (AB_STR_MAX - 1)]);
    e->len = len & (AB_STR_MAX - 1);
  }
  submit(e, BPF_RB_NO_WAKEUP);
}

/* The host's readiness open (run.ts): openat by ready_pid of exactly ready_path. */
static __always_inline void maybe_ready(__u64 pid_tgid, const struct ab_call *c, const __u64 *args) {
  if ((pid_tgid >> 32) != ready_pid || !(c->flags & AB_CALL_READY)) return;
  char buf[AB_READY_MAX];
  __u32 slot = c->filename_slot;
  if (slot >= AB_MAX_ARGS) return;
  long n = bpf_probe_read_user_str(buf, sizeof buf, (const void *)args[slot]);
  if (n != (long)ready_len + 1) return;
  for (int i = 0; i < AB_READY_MAX; i++) {
    if (i >= ready_len) break;
    if (buf[i] != ready_path[i]) return;
  }
  struct ab_event *e = event_init(AB_EV_Y, 0, pid_tgid);
  if (!e) return;
  // A copy in every ring, after every record written to it before the open: a take waits for
  // the copies of the rings its cgroup wrote to, and a full ring delays only its own cgroups' takes.
  for (__u32 i = 0; i < AB_RINGS; i++) {
    __u32 slot = i;
    void *ring = bpf_map_lookup_elem(&rings, &slot);
    if (!ring) continue;
    e->idx = (__u8)i;
    bpf_ringbuf_output(ring, e, AB_EVENT_HEAD, BPF_RB_FORCE_WAKEUP);
  }
}

static __always_inline void argv_events(__u8 call, __u64 ids, __u64 argv) {
  for (int i = 0; i < AB_ARGV_LIMIT; i++) {
    __u64 a = 0;
    if (bpf_probe_read_user(&a, sizeof a, (const void *)(argv + i * 8)) != 0 || a == 0) return;
    struct ab_event *e = event_init(AB_EV_A, call, ids);
    if (!e) return;
    e->idx = i;
    read_str(e, a);
    submit(e, BPF_RB_NO_WAKEUP);
  }
  __u64 more = 0;
  bpf_probe_read_user(&more, sizeof more, (const void *)(argv + AB_ARGV_LIMIT * 8));
  if (more != 0) {
    struct ab_event *e = event_init(AB_EV_M, call, ids);
    if (e) submit(e, BPF_RB_NO_WAKEUP);
  }
}

/*
 * sendmmsg: the destination of each of the first AB_MMSG_LIMIT messages that name one, an N record
 * each (its index, the sockaddr bytes). Only the first vlen entries are the caller's: past them
 * is memory that was never a message.
 */
static __always_inline void mmsg_events(__u8 call, __u64 ids, __u64 vec, __u64 vlen) {
  for (int i = 0; i < AB_MMSG_LIMIT; i++) {
    if ((__u64)i >= (vlen & 0xffffffffULL)) return;
    struct {
      __u64 name;
      __s32 namelen;
    } hdr = {};
    if (bpf_probe_read_user(&hdr, sizeof hdr, (const void *)(vec + (__u64)i * AB_MMSGHDR_SIZE)) != 0) return;
    if (hdr.name == 0) continue;
    struct ab_event *e = event_init(AB_EV_N, call, ids);
    if (!e) return;
    e->idx = (__u8)i;
    __u32 len = hdr.namelen < 0 ? 0 : (__u32)hdr.namelen;
    if (len > AB_SOCK_MAX) len = AB_SOCK_MAX;
    asm volatile("" : "+r"(len));
    len &= 0x7f;
    if (len > 0 && bpf_probe_read_user(e->data, len, (const void *)hdr.name) != 0) len = 0;
    e->len = len;
    submit(e, BPF_RB_NO_WAKEUP);
  }
}

SEC("tracepoint")
int on_enter(void *ctx) {
  __u64 cookie = bpf_get_attach_cookie(ctx);
  if (cookie >= AB_MAX_CALLS) return 0;
  const struct ab_call *c = (const struct ab_call *)&calls[cookie];
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u64 args[AB_MAX_ARGS] = {};
  struct ab_cgroup *cg = traced();
  if (!cg) {
    // The readiness open comes from the host process, outside the container's cgroup.
    if ((pid_tgid >> 32) == ready_pid && (c->flags & AB_CALL_READY)) {
      bpf_probe_read_kernel(args, sizeof args, (char *)ctx + 16);
      maybe_ready(pid_tgid, c, args);
    }
    return 0;
  }
  // The syscall's arguments sit at 16 + 8 * slot; a helper read, because a direct load past the
  // smallest tracepoint's record would make the program unattachable to it.
  bpf_probe_read_kernel(args, sizeof args, (char *)ctx + 16);
  __u64 ids = ns_ids((struct task_struct *)bpf_get_current_task(), cg);
  struct ab_event *e = event_init(AB_EV_S, (__u8)cookie, ids);
  if (!e) return 0;
  struct pending p = {};
  p.call = (__u8)cookie;
  int first = -1;
  for (int i = 0; i < AB_MAX_ARGS; i++) {
    e->v[i] = args[i];
  }
  for (int i = 0; i < AB_MAX_ARGS; i++) {
    if (i >= c->nargs) break;
    __u8 kind = c->args[i].kind;
    __u32 slot = c->args[i].slot;
    if (slot >= AB_MAX_ARGS) return 0;
    if (kind == AB_HOW) {
      __u64 how = 0;
      bpf_probe_read_user(&how, sizeof how, (const void *)args[slot]);
      e->v[slot] = how;
    } else if (kind == AB_SOCK || kind == AB_MSG) {
      __u64 addr = args[slot];
      __s32 given = 0;
      if (kind == AB_MSG) {
        // struct user_msghdr starts { void *msg_name; int msg_namelen; }: the destination is there.
        struct {
          __u64 name;
          __s32 namelen;
        } hdr = {};
        if (addr == 0 || bpf_probe_read_user(&hdr, sizeof hdr, (const void *)addr) != 0) hdr.name = 0;
        addr = hdr.name;
        given = hdr.namelen;
      } else {
        __u32 len_slot = c->args[i].len_slot;
        if (len_slot >= AB_MAX_ARGS) return 0;
        given = (__s32)args[len_slot];
      }
      // A NULL address (a send on a connected socket) or a negative length copies nothing.
      __u32 len = addr == 0 || given < 0 ? 0 : (__u32)given;
      if (len > AB_SOCK_MAX) len = AB_SOCK_MAX;
      // Hide the bound from the compiler so the mask stays next to the call: the verifier needs it there.
      asm volatile("" : "+r"(len));
      len &= 0x7f;
      if (len > 0 && bpf_probe_read_user(e->data, len, (const void *)addr) != 0) len = 0;
      e->len = len;
    } else if (kind == AB_STR && first < 0) {
      first = i;
      if (read_str(e, args[slot]) == 0 && !(c->flags & AB_CALL_EXEC)) {
        p.mask |= 1 << i;
        p.ptr[i] = args[slot];
      }
    }
  }
  submit(e, BPF_RB_NO_WAKEUP);
  // Further strings: a P event each (the S event carries the first).
  for (int i = 0; i < AB_MAX_ARGS; i++) {
    if (i >= c->nargs) break;
    if (c->args[i].kind != AB_STR || i == first) continue;
    __u32 slot = c->args[i].slot;
    if (slot >= AB_MAX_ARGS) return 0;
    e = event_init(AB_EV_P, (__u8)cookie, ids);
    if (!e) return 0;
    e->idx = i;
    if (read_str(e, args[slot]) == 0 && !(c->flags & AB_CALL_EXEC)) {
      p.mask |= 1 << i;
      p.ptr[i] = args[slot];
    }
    submit(e, BPF_RB_NO_WAKEUP);
  }
  if (c->flags & AB_CALL_EXEC) {
    __u32 argv_slot = c->aux_slot;
    if (argv_slot < AB_MAX_ARGS) argv_events((__u8)cookie, ids, args[argv_slot]);
  }
  if (c->flags & AB_CALL_MMSG) {
    __u32 vec_slot = c->aux_slot;
    __u32 count_slot = c->count_slot;
    if (vec_slot < AB_MAX_ARGS && count_slot < AB_MAX_ARGS) mmsg_events((__u8)cookie, ids, args[vec_slot], args[count_slot]);
  }
  if (c->flags & AB_CALL_TMPFILE) {
    __u32 fs = c->aux_slot;
    if (fs < AB_MAX_ARGS && (args[fs] & O_TMPFILE_BIT)) p.tmpfile = 1;
  }
  if (p.mask || p.tmpfile) {
    __u32 tid = (__u32)pid_tgid;
    bpf_map_update_elem(&pendings, &tid, &p, BPF_ANY);
  }
  return 0;
}

SEC("tracepoint")
int on_exit(struct exit_ctx *ctx) {
  struct ab_cgroup *cg = traced();
  if (!cg) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  if (cookie >= AB_MAX_CALLS) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)pid_tgid;
  __s64 ret = ctx->ret;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  __u64 ids = ns_ids(task, cg);
  struct pending *p = bpf_map_lookup_elem(&pendings, &tid);
  if (p) {
    struct pending copy = *p;
    bpf_map_delete_elem(&pendings, &tid);
    if (copy.call == cookie) {
      if (copy.tmpfile && ret >= 0) {
        struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
        struct file *f = 0;
        bpf_probe_read_kernel(&f, sizeof f, fds + ret);
        struct ab_event *e = event_init(AB_EV_I, (__u8)cookie, ids);
        if (e) {
          e->v[0] = BPF_CORE_READ(f, f_inode, i_ino);
          submit(e, BPF_RB_NO_WAKEUP);
        }
      }
      for (int i = 0; i < AB_MAX_ARGS; i++) {
        if (!(copy.mask & (1 << i))) continue;
        struct ab_event *e = event_init(AB_EV_P, (__u8)cookie, ids);
        if (!e) break;
        e->idx = i;
        read_str(e, copy.ptr[i]);
        submit(e, BPF_RB_NO_WAKEUP);
      }
    }
  }
  if (resolve_paths && ret >= 0) {
    const struct ab_call *c = (const struct ab_call *)&calls[cookie];
    if (c->flags & AB_CALL_RESOLVE) resolved_event(task, ret, (__u8)cookie, ids);
  }
  struct ab_event *e = event_init(AB_EV_R, (__u8)cookie, ids);
  if (!e) return 0;
  e->v[0] = (__u64)ret;
  submit(e, BPF_RB_NO_WAKEUP);
  return 0;
}

/*
 * A fork or clone, in the parent, with both tasks at hand (a BTF-typed tracepoint: the plain one
 * has only host pids, and the child's pid in the container's namespace is what the trace needs).
 * F: the parent's thread and the child, as the container numbers them.
 */
SEC("tp_btf/sched_process_fork")
int on_fork(__u64 *ctx) {
  struct ab_cgroup *cg = traced();
  if (!cg) return 0;
  struct task_struct *parent = (struct task_struct *)ctx[0];
  struct task_struct *child = (struct task_struct *)ctx[1];
  __u64 ids = ns_ids(parent, cg);
  struct ab_event *e = event_init(AB_EV_F, 0, ids);
  if (!e) return 0;
  e->v[0] = (__u32)ids;
  e->v[1] = nr_at(BPF_CORE_READ(child, thread_pid), cg->level);
  submit(e, BPF_RB_NO_WAKEUP);
  return 0;
}
