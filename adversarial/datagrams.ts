/**
 * Python lines that send one datagram per destination in a single sendmmsg(2)
 * call (Python's socket module has none, so through ctypes): the batch a
 * hostile command could use to send data without connect, which both tracers
 * must show destination by destination. Used by the adversarial suite and by
 * the tracers' tests. Pure.
 */

/**
 * `socket` names a bound-or-not UDP socket object, `data` a bytes expression already defined;
 * prints `batch-sent N` with what sendmmsg returned. The script must `import socket` itself.
 */
export function sendmmsgLines(socket: string, data: string, destinations: readonly (readonly [string, number])[]): string[] {
  const to = destinations.map(([ip, port]) => `(${JSON.stringify(ip)}, ${port})`).join(', ');
  return [
    'import ctypes',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'class Addr(ctypes.Structure): _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_ushort), ("addr", ctypes.c_uint32), ("zero", ctypes.c_char * 8)]',
    'class Iov(ctypes.Structure): _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]',
    'class Hdr(ctypes.Structure): _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(Iov)), ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]',
    'class MHdr(ctypes.Structure): _fields_ = [("hdr", Hdr), ("len", ctypes.c_uint)]',
    `payload = ctypes.create_string_buffer(${data})`,
    `iov = Iov(ctypes.cast(payload, ctypes.c_void_p), len(${data}))`,
    // sin_addr in network order as the struct's little-endian u32 holds it.
    `addrs = [Addr(socket.AF_INET, socket.htons(p), int.from_bytes(socket.inet_aton(ip), "little")) for ip, p in (${to},)]`,
    'msgs = (MHdr * len(addrs))()',
    'for m, a in zip(msgs, addrs): m.hdr.name = ctypes.cast(ctypes.pointer(a), ctypes.c_void_p); m.hdr.namelen = 16; m.hdr.iov = ctypes.pointer(iov); m.hdr.iovlen = 1',
    `print("batch-sent", libc.sendmmsg(${socket}.fileno(), msgs, len(addrs), 0))`,
  ];
}
