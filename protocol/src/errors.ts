/**
 * mcpd's error model, one file per family: the base class and the wire mapping (`mcpd-error.ts`), what a
 * transport or peer raises (`transport-errors.ts`), what the servers and views raise (`server-errors.ts`),
 * the daemon's connections (`connection-errors.ts`) and authorization (`auth-errors.ts`). Every code is a
 * row of `ERROR_CODES` (`error-codes.ts`).
 */
export * from "./mcpd-error.js";
export * from "./transport-errors.js";
export * from "./server-errors.js";
export * from "./connection-errors.js";
export * from "./auth-errors.js";
