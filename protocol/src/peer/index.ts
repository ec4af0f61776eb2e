/**
 * @mcpd/protocol/peer: the JSON-RPC peer (ids, deadlines, cancellation by id) and what its callers hand it.
 * With `@mcpd/protocol/core` it is everything the client SDK needs, without the SSE codec and its parser (an
 * npm package the client never uses): a process that imports `@mcpd/client` (every `mcpd status`, `mcpd
 * call`) starts without loading it. Every export is also exported by the package's index, from the same
 * modules. Every export of this file is public API.
 */
export { JsonRpcPeer } from "./jsonrpc-peer.js";
export type {
  JsonRpcPeerOptions,
  MessageContext,
  PeerNotificationHandler,
  PeerRequestHandler,
  PeerRequestOptions,
  PeerSink,
} from "./peer-ports.js";
export { Cancellation, type CancelById } from "./cancellation.js";
export { SignalFanout } from "./signal-fanout.js";
export { MAX_TIMER_MS, type RequestReply } from "./pending-requests.js";
