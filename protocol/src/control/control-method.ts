/**
 * How a control method is declared: its name, whether only a control connection may call it, and its
 * params and result types, carried for the compiler the way vscode-languageserver-protocol's
 * `RequestType<P, R, E>` carries them. The daemon's dispatcher ({@link ControlHandlers}) and the client
 * SDK's `control(declaration, params)` take their types from the declaration, so a handler answering the
 * wrong shape, or a caller expecting one, fails to compile.
 */
import type { JsonObject } from "../types.js";
import type { Fields } from "./fields.js";

/** The prefix of every control method's name. */
export const CONTROL_METHOD_PREFIX = "mcpd/";

/**
 * The `_meta` key that names a server: on a request, routes it to that server (per-request routing); on a
 * notification, a listed item or a server-to-client request from the aggregate view, the server it is from.
 */
export const MCPD_SERVER_META = "mcpd/server";

/** The `_meta` key of a `call_tool` answer (tool search) that names the tool it called, as `<server>__<tool>`. */
export const MCPD_CALLED_TOOL_META = "mcpd/calledTool";

/** Whether `method` is a control method's name (`mcpd/...`), declared or not. */
export function isControlMethod(method: string): boolean {
  return method.startsWith(CONTROL_METHOD_PREFIX);
}

/** A control method: `mcpd/<name>`, its params `P` and its result `R`. */
export interface ControlMethod<M extends string = string, P = unknown, R = unknown> {
  readonly method: M;
  /**
   * Whether only a control connection (`mcpd/select {"control": true}` as its first message) may call it;
   * any other connection gets -32071 `MCPD_FORBIDDEN`.
   */
  readonly privileged: boolean;
  /** The result's fields (of every variant, when it has several), for checking an answer at run time. */
  readonly result: Fields<R>;
  /** Never set: carries `P` and `R` for the compiler. */
  readonly _types?: { readonly params: P; readonly result: R };
}

/** A notification mcpd sends on its own (not relayed from a server). */
export interface ControlNotification<M extends string = string, P = unknown> {
  readonly method: M;
  /** The params' fields, for checking a notification at run time. */
  readonly params: Fields<P>;
  /** Never set: carries `P` for the compiler. */
  readonly _types?: { readonly params: P };
}

/** The params type of a declaration. */
export type ParamsOf<D> =
  D extends ControlMethod<string, infer P, unknown> ? P : D extends ControlNotification<string, infer P> ? P : never;

/** The result type of a declaration. */
export type ResultOf<D> = D extends ControlMethod<string, unknown, infer R> ? R : never;

/**
 * Declares a control method: `controlMethod("mcpd/x")<Params, Result>({ privileged, result })`. (Two
 * steps so that the name is inferred as a literal while the types are given.)
 */
export function controlMethod<M extends string>(method: M) {
  return <P, R>(spec: { privileged: boolean; result: Fields<R> }): ControlMethod<M, P, R> =>
    Object.freeze({ method, privileged: spec.privileged, result: spec.result });
}

/** Declares a notification: `controlNotification("notifications/mcpd/x")<Params>({ params })`. */
export function controlNotification<M extends string>(method: M) {
  return <P>(spec: { params: Fields<P> }): ControlNotification<M, P> => Object.freeze({ method, params: spec.params });
}

/**
 * How a dispatcher answers one method: `params` turns the params from the wire into `P` (throwing a
 * clear -32602 error naming what is wrong), `handle` answers with `R`. `Ctx` is whatever the dispatcher
 * passes along (the daemon: itself and the asking session).
 */
export interface ControlHandler<D, Ctx> {
  readonly params: (raw: JsonObject | undefined) => ParamsOf<D>;
  readonly handle: (params: ParamsOf<D>, context: Ctx) => Promise<ResultOf<D>>;
}
