import { lstatSync, type Stats } from "node:fs";

/** What a path holds, for messages: "a FIFO (named pipe)", "a directory", ... */
export function fileKind(st: Stats): string {
  if (st.isFile()) return "a regular file";
  if (st.isDirectory()) return "a directory";
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/**
 * What lies at `path` (not following a link), for the message of an open(2) that refused it (ELOOP: a
 * symbolic link, ENXIO: a FIFO without a reader or a socket, EISDIR); undefined when nothing is there.
 */
export function kindAt(path: string): string | undefined {
  try {
    return fileKind(lstatSync(path));
  } catch {
    return undefined;
  }
}
