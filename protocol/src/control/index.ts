/** mcpd's control protocol: the `mcpd/*` methods, their shapes and the types to implement or call them. */
export * from "./control-types.js";
export * from "./status-types.js";
export * from "./control-method.js";
export * from "./control-methods.js";
export type { Fields, FieldSpec, Presence } from "./fields.js";
export * from "./http-front-status.js";
export * from "./auth-types.js";
export * from "./http-token-types.js";
export * from "./dashboard-types.js";
