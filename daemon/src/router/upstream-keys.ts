/** A number per upstream object (see {@link upstreamSerial}). */
const serials = new WeakMap<object, number>();
let lastSerial = 0;

/**
 * A number that names one upstream object (a server's shared session, one connection's private session of
 * a per-client server, a UI session) for as long as it lives: keys of what an upstream owns are made with
 * it, never with the server's name, which every session of one server shares.
 */
export function upstreamSerial(upstream: object): number {
  let serial = serials.get(upstream);
  if (serial === undefined) serials.set(upstream, (serial = ++lastSerial));
  return serial;
}

/**
 * The key of the server-to-client request `id` that `upstream` sent: per upstream object (each per-client
 * process of a server numbers its own requests from 1 under the same name), and per id with its type (`1`
 * and `"1"` are two requests).
 */
export function upstreamRequestKey(upstream: object, id: unknown): string {
  return `${upstreamSerial(upstream)}\0${JSON.stringify(id) ?? ""}`;
}
