import { readFileSync } from "node:fs";

/** mcpd's version, read once from the daemon package's manifest. */
export const VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();
