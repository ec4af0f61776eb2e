import { packageVersion } from "./infra/package-root.js";

/** mcpd's version, read once from the daemon package's manifest ("0.0.0" when it cannot be found). */
export const VERSION: string = (() => {
  try {
    return packageVersion();
  } catch {
    return "0.0.0";
  }
})();
