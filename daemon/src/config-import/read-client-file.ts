import { readFile } from "node:fs/promises";
import { parseJsonc } from "../config/parse-jsonc.js";

/** Largest client config file read, in bytes: `~/.claude.json` holds history and grows, but not this far. */
export const MAX_CLIENT_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads a client's JSON (or JSONC: VS Code allows comments and trailing commas) config file.
 * @returns the parsed value, or `undefined` when the file does not exist.
 * @throws ConfigError (MCPD_CONFIG_INVALID) naming the file, line and column for a syntax error; an
 * Error naming the file when it is too large or unreadable.
 */
export async function readClientFile(path: string): Promise<unknown> {
  let text: string;
  try {
    const buf = await readFile(path);
    if (buf.length > MAX_CLIENT_FILE_BYTES) {
      throw new Error(`${path} is ${buf.length} bytes, more than the ${MAX_CLIENT_FILE_BYTES} bytes mcpd reads`);
    }
    text = buf.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if ((err as NodeJS.ErrnoException).code) throw new Error(`cannot read ${path}: ${(err as Error).message}`);
    throw err;
  }
  return parseJsonc(text, path).value;
}
