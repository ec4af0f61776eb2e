/** A number per upstream object (see {@link upstreamRequestKey}). */
const serials = new WeakMap<object, number>();
let lastSerial = 0;

/**
 * The key of the server-to-client request `id` that `upstream` sent: per upstream object, never per server
 * name (each per-client process of a server, and a server's UI session, numbers its own requests from 1
 * under the same name), and per id with its type (`1` and `"1"` are two requests).
 */
export function upstreamRequestKey(upstream: object, id: unknown): string {
  let serial = serials.get(upstream);
  if (serial === undefined) serials.set(upstream, (serial = ++lastSerial));
  return `${serial}\0${JSON.stringify(id) ?? ""}`;
}
