/*
 * The layout shared by the BPF programs (ab-ebpf.bpf.c) and the user-space
 * reader (ab-ebpf.c): the per-syscall argument table user space fills in
 * before load, and the fixed-layout event the programs write to the ring
 * buffer. Fixed widths only: the same header is compiled for the BPF target
 * and for x86_64.
 */
#ifndef AB_EBPF_H
#define AB_EBPF_H

/* Syscalls one run may trace (the table in sandbox/ebpf/syscalls.ts has ~45). */
#define AB_MAX_CALLS 64
/* Tracepoint arguments: the syscall's, at ctx offset 16 + 8 * slot. */
#define AB_MAX_ARGS 6
/* Longest string copied (PATH_MAX, NUL included): a read of AB_STR_MAX - 1 bytes may have been cut. */
#define AB_STR_MAX 4096
/* Bytes of a sockaddr copied: sizeof(struct sockaddr_un), as program.ts's SOCKADDR_LIMIT. */
#define AB_SOCK_MAX 110
/* execve arguments copied per call, as syscalls.ts's ARGV_LIMIT. */
#define AB_ARGV_LIMIT 24
/* sendmmsg messages whose destination is copied per call, as syscalls.ts's MMSG_LIMIT. */
#define AB_MMSG_LIMIT 8
/* sizeof(struct mmsghdr) on x86_64: a struct user_msghdr (56 bytes), msg_len, padding. */
#define AB_MMSGHDR_SIZE 64
/* Cgroups one hub traces at once (a rollout slot each). */
#define AB_MAX_CGROUPS 1024
/*
 * Ring buffers: a hub spreads its cgroups over AB_RINGS of them (each cgroup writes to one), so
 * a container flooding its own ring cannot make another's records be dropped while fewer than
 * AB_RINGS are traced; a single-container tracer has one, of AB_SINGLE_RING_BYTES.
 */
#define AB_RINGS 8
#define AB_HUB_RING_BYTES (8u << 20)
#define AB_SINGLE_RING_BYTES (32u << 20)
/* Path components the resolved-path walk (D records) follows at most: a deeper path is reported cut. */
#define AB_PATH_DEPTH 128
/* The readiness path's longest length (run.ts's paths are far shorter). */
#define AB_READY_MAX 128

/* AB_MSG: a struct user_msghdr pointer; its msg_name's sockaddr is copied as AB_SOCK's is. */
enum ab_kind { AB_NONE = 0, AB_INT = 1, AB_STR = 2, AB_SOCK = 3, AB_HOW = 4, AB_MSG = 5 };

/* Call flags. */
#define AB_CALL_EXEC 1    /* execve/execveat: argv records, no re-read at exit */
#define AB_CALL_TMPFILE 2 /* open/openat: O_TMPFILE in the flags slot asks for the inode at exit */
#define AB_CALL_READY 4   /* openat: the readiness marker's call */
#define AB_CALL_MMSG 8    /* sendmmsg: an N record per message with a destination (aux_slot: the vector, count_slot: vlen) */
#define AB_CALL_RESOLVE 16 /* open, openat, openat2, creat: a D record with the returned fd's resolved path */

struct ab_arg {
  unsigned char kind;    /* enum ab_kind */
  unsigned char slot;    /* which syscall argument (0..5) */
  unsigned char len_slot; /* AB_SOCK: the slot holding the length */
  unsigned char pad;
};

struct ab_call {
  unsigned char nargs;
  unsigned char flags;
  unsigned char aux_slot; /* AB_CALL_EXEC: the argv slot; AB_CALL_TMPFILE: the open flags' slot */
  unsigned char filename_slot; /* AB_CALL_READY: the slot holding the path */
  unsigned char count_slot; /* AB_CALL_MMSG: the slot holding vlen */
  struct ab_arg args[AB_MAX_ARGS];
};

/* A traced cgroup's entry (the programs' `cgroups` map): what user space set, and what the ring buffer lost. */
struct ab_cgroup {
  unsigned long long lost;
  unsigned int level; /* the container's pid namespace level: event pids are as it numbers them */
  unsigned int ring;  /* the ring buffer its records go to (0..AB_RINGS-1) */
};

/* Event types: the record letters program.ts prints. */
#define AB_EV_S 'S'
#define AB_EV_P 'P'
#define AB_EV_R 'R'
#define AB_EV_A 'A'
#define AB_EV_M 'M'
#define AB_EV_F 'F'
#define AB_EV_Y 'Y'
#define AB_EV_I 'I'
#define AB_EV_N 'N'
#define AB_EV_D 'D'

struct ab_event {
  unsigned long long ts;
  unsigned long long cgid; /* the cgroup the event came from (a hub's demultiplexing key) */
  unsigned int tgid;
  unsigned int tid;
  unsigned char type;
  unsigned char call; /* index into the call table */
  unsigned char idx;  /* P: the argument index in the call's table; A: the argv index; N: the message index; D: 1 when cut */
  unsigned char pad;
  unsigned int len;   /* bytes in data: a string (no NUL) or a sockaddr */
  unsigned long long v[AB_MAX_ARGS]; /* S: the raw argument slots; R: ret; F: parent, child; I: inode */
  unsigned char data[AB_STR_MAX]; /* S, P, A: a string; N, S: a sockaddr; D: the opened file's resolved path */
};

#define AB_EVENT_HEAD ((unsigned long)&((struct ab_event *)0)->data)

#endif
