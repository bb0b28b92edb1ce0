/**
 * Landlock's access rights by ABI, and which of them a rule on a non-directory
 * may carry (the kernel rejects directory-only rights on a file with EINVAL).
 */
import { FS_ACCESS, FS_ACCESS_SINCE_ABI } from '../launcher/index.ts';
import type { FsAccess } from '../launcher/index.ts';

export const LATEST_LANDLOCK_ABI = 7;

/** The filesystem rights a ruleset handles at this ABI; rights it does not handle are always allowed. */
export function handledFsAccess(abi: number): FsAccess[] {
  return FS_ACCESS.filter((a) => FS_ACCESS_SINCE_ABI[a] <= abi);
}

export function accessSinceAbi(access: FsAccess): number {
  return FS_ACCESS_SINCE_ABI[access];
}

/** Rights that make sense on a file inode. */
export const FILE_ACCESS: readonly FsAccess[] = ['execute', 'write_file', 'read_file', 'truncate', 'ioctl_dev'];

/** Everything `/**` on the write axis means beneath a directory. Device nodes (make_char/make_block) stay denied. */
export const WRITE_TREE: readonly FsAccess[] = [
  'write_file',
  'truncate',
  'make_reg',
  'make_dir',
  'make_sym',
  'make_fifo',
  'make_sock',
  'remove_file',
  'remove_dir',
  'refer',
];

/** What creating a not-yet-existing path needs on its nearest existing directory. */
export const CREATE_BENEATH: readonly FsAccess[] = ['make_reg', 'make_dir', 'write_file', 'truncate'];

export const READ_TREE: readonly FsAccess[] = ['read_file', 'read_dir'];
export const EXECUTE_FILE: readonly FsAccess[] = ['execute', 'read_file'];
