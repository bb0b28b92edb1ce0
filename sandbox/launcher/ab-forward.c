/*
 * ab-launch --forward PORT: the container's end of the model relay tunnel (taskenv/relay-forward.ts).
 *
 * Listens on 127.0.0.1:PORT and carries every accepted connection over its own stdin/stdout,
 * which are one attached Docker exec: the host end connects each one to the model relay. So a
 * task container with network `none` reaches the relay through exactly one loopback port, no
 * host directory is mounted into it, and it works with a remote Docker engine too (the bytes
 * travel inside the Docker API connection). The API key stays with the relay on the host.
 *
 * It is harness, not agent: the host starts it as its own exec, outside every command's
 * Landlock domain, so sandboxed commands cannot signal, ptrace or read it (scoped signals, the
 * ptrace wall) and reach it only by connect(127.0.0.1:PORT), which their policy must grant.
 * It holds no capability and sets no_new_privs: nothing it does needs either.
 *
 * Frames, both ways (mirrored in sandbox/launcher/forward.ts): type (1 byte), connection id
 * (u32 big-endian), payload length (u32 big-endian), payload.
 *   container → host: L (listening; payload: this process's pid), F (could not listen;
 *     payload: the reason, then exit 1), O (connection accepted), D (bytes from the client),
 *     E (the client shut down its sending side), K (the connection is gone).
 *   host → container: D (bytes for the client), E (the relay finished its side), K (drop it).
 * End of file on stdin (the host closed the tunnel) ends the process and every connection.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

int forward_main(int argc, char **argv);

#define HEADER_BYTES 9
/* Connections at once; more are accepted and closed at once (a runaway client, not an agent). */
#define MAX_CONNS 64
#define CHUNK 65536
/* The host sends at most CHUNK per frame; anything much larger is a broken peer. */
#define MAX_FRAME (1u << 20)
/* Bytes waiting for one slow client; past it the connection is dropped rather than the tunnel stalled. */
#define MAX_PENDING (16u << 20)

struct conn {
  int fd;
  uint32_t id;
  int read_done;   /* the client shut down its side (E sent) */
  int write_done;  /* the host sent E: shut our side once pending bytes are out */
  char *out;
  size_t out_len, out_cap;
};

static struct conn conns[MAX_CONNS];
static uint32_t next_id = 1;

static void put_u32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, len -= (size_t)n;
  }
  return 0;
}

/* A frame to the host. stdout is the tunnel: if it is gone, so is the reason to run. */
static void send_frame(char type, uint32_t id, const void *payload, size_t len) {
  unsigned char head[HEADER_BYTES];
  head[0] = (unsigned char)type;
  put_u32(head + 1, id);
  put_u32(head + 5, (uint32_t)len);
  if (write_all(1, head, sizeof head) != 0 || (len > 0 && write_all(1, payload, len) != 0)) _exit(0);
}

static void drop(struct conn *c, int tell_host) {
  if (c->fd < 0) return;
  if (tell_host) send_frame('K', c->id, NULL, 0);
  close(c->fd);
  free(c->out);
  memset(c, 0, sizeof *c);
  c->fd = -1;
}

static struct conn *find(uint32_t id) {
  for (int i = 0; i < MAX_CONNS; i++)
    if (conns[i].fd >= 0 && conns[i].id == id) return &conns[i];
  return NULL;
}

/* Write what is pending for a client without blocking the tunnel; 0 ok, -1 the client is gone. */
static int flush(struct conn *c) {
  while (c->out_len > 0) {
    ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) return -1;
    memmove(c->out, c->out + n, c->out_len - (size_t)n);
    c->out_len -= (size_t)n;
  }
  if (c->write_done) shutdown(c->fd, SHUT_WR);
  return 0;
}

static int queue(struct conn *c, const unsigned char *data, size_t len) {
  if (c->out_len + len > MAX_PENDING) return -1;
  if (c->out_len + len > c->out_cap) {
    size_t cap = c->out_cap == 0 ? CHUNK : c->out_cap;
    while (cap < c->out_len + len) cap *= 2;
    char *p = realloc(c->out, cap);
    if (p == NULL) return -1;
    c->out = p, c->out_cap = cap;
  }
  memcpy(c->out + c->out_len, data, len);
  c->out_len += len;
  return 0;
}

/* One frame from the host. Frames for a connection already dropped are ignored: the host may not know yet. */
static void on_host_frame(char type, uint32_t id, const unsigned char *payload, size_t len) {
  struct conn *c = find(id);
  if (c == NULL) return;
  if (type == 'D') {
    if (c->write_done || queue(c, payload, len) != 0 || flush(c) != 0) drop(c, 1);
  } else if (type == 'E') {
    c->write_done = 1;
    if (flush(c) != 0) drop(c, 1);
  } else if (type == 'K') {
    drop(c, 0);
  }
  if (c->fd >= 0 && c->read_done && c->write_done && c->out_len == 0) drop(c, 1);
}

static int listen_on(int port, char *why, size_t why_len) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(why, why_len, "socket: %s", strerror(errno));
    return -1;
  }
  /* Only lets a fresh forward reuse a port whose old connections linger in TIME_WAIT; a live listener still refuses. */
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    snprintf(why, why_len, "%s 127.0.0.1:%d: %s", errno == EADDRINUSE ? "in use" : "bind", port, strerror(errno));
    close(fd);
    return -1;
  }
  if (listen(fd, 64) != 0) {
    snprintf(why, why_len, "listen 127.0.0.1:%d: %s", port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

static void drop_privileges(void) {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  syscall(SYS_capset, &head, data);
}

int forward_main(int argc, char **argv) {
  char *end = NULL;
  long port = argc == 3 ? strtol(argv[2], &end, 10) : 0;
  if (argc != 3 || end == argv[2] || *end != '\0' || port < 1 || port > 65535) {
    fprintf(stderr, "ab-launch: usage: ab-launch --forward PORT (1-65535)\n");
    return 120;
  }
  signal(SIGPIPE, SIG_IGN);
  drop_privileges();
  for (int i = 0; i < MAX_CONNS; i++) conns[i].fd = -1;
  char why[256];
  int lfd = listen_on((int)port, why, sizeof why);
  if (lfd < 0) {
    send_frame('F', 0, why, strlen(why));
    return 1;
  }
  char pid[32];
  int pid_len = snprintf(pid, sizeof pid, "%d", (int)getpid());
  send_frame('L', 0, pid, (size_t)pid_len);

  static unsigned char in[MAX_FRAME + HEADER_BYTES];
  static unsigned char buf[CHUNK];
  size_t in_len = 0;
  for (;;) {
    struct pollfd fds[MAX_CONNS + 2];
    int slot[MAX_CONNS + 2];
    int n = 0;
    fds[n].fd = 0, fds[n].events = POLLIN, slot[n++] = -1;
    fds[n].fd = lfd, fds[n].events = POLLIN, slot[n++] = -1;
    for (int i = 0; i < MAX_CONNS; i++) {
      if (conns[i].fd < 0) continue;
      short ev = (short)((conns[i].read_done ? 0 : POLLIN) | (conns[i].out_len > 0 ? POLLOUT : 0));
      if (ev == 0) continue;
      fds[n].fd = conns[i].fd, fds[n].events = ev, slot[n++] = i;
    }
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (fds[0].revents != 0) {
      ssize_t got = read(0, in + in_len, sizeof in - in_len);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      in_len += (size_t)got;
      size_t at = 0;
      while (in_len - at >= HEADER_BYTES) {
        uint32_t len = get_u32(in + at + 5);
        if (len > MAX_FRAME) {
          fprintf(stderr, "ab-launch: --forward: frame of %u bytes from the host\n", len);
          return 1;
        }
        if (in_len - at < HEADER_BYTES + len) break;
        on_host_frame((char)in[at], get_u32(in + at + 1), in + at + HEADER_BYTES, len);
        at += HEADER_BYTES + len;
      }
      memmove(in, in + at, in_len - at);
      in_len -= at;
    }
    if (fds[1].revents & POLLIN) {
      int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (cfd >= 0) {
        int i = 0;
        while (i < MAX_CONNS && conns[i].fd >= 0) i++;
        if (i == MAX_CONNS) {
          close(cfd);
        } else {
          int one = 1;
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns[i].fd = cfd, conns[i].id = next_id++;
          send_frame('O', conns[i].id, NULL, 0);
        }
      }
    }
    for (int k = 2; k < n; k++) {
      struct conn *c = &conns[slot[k]];
      if (c->fd != fds[k].fd || fds[k].revents == 0) continue;
      if ((fds[k].revents & POLLOUT) && flush(c) != 0) {
        drop(c, 1);
        continue;
      }
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (c->read_done) {
          if (fds[k].revents & POLLERR) drop(c, 1);
          continue;
        }
        ssize_t got = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got < 0) {
          drop(c, 1);
          continue;
        }
        if (got == 0) {
          c->read_done = 1;
          send_frame('E', c->id, NULL, 0);
        } else {
          send_frame('D', c->id, buf, (size_t)got);
        }
      }
      if (c->fd >= 0 && c->read_done && c->write_done && c->out_len == 0) drop(c, 1);
    }
  }
  for (int i = 0; i < MAX_CONNS; i++) drop(&conns[i], 0);
  close(lfd);
  return 0;
}
