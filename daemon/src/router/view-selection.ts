/**
 * What `mcpd/select` chooses for a connection, checked against the running daemon: its view (a server's
 * transparent view, or the aggregate) and its {@link ViewFilter} (a profile and/or one-off tool globs).
 * The socket's clients select by this message (`mcpd connect --profile/--tools`, `@mcpd/client`'s
 * `profile`/`tools`); an HTTP endpoint chooses its sessions' views itself ({@link chooseFaceView}), after
 * which the session refuses any `mcpd/select`.
 */
import {
  McpdError,
  McpdSelect,
  SOCKET_PROTOCOL_VERSIONS,
  WireCode,
  toWireError,
  type JsonObject,
  type JsonRpcErrorObject,
  type SelectResult,
  PROTOCOL_DEFAULTS,
  quote,
} from "@mcpd/protocol";
import { parseSelect, type Selection } from "./handshake.js";
import type { ServerDirectory } from "./upstream-port.js";
import type { Profiles } from "./profiles.js";
import type { ViewFilter } from "./view-filter.js";

/** A connection's view: every server (aggregate), or one server as it is (transparent). */
export type View = { kind: "aggregate" } | { kind: "server"; server: string };

/** A selection made: the view and the filter (undefined: nothing hidden beyond the servers' own filters). */
export interface ChosenView {
  view: View;
  filter: ViewFilter | undefined;
}

/**
 * Resolves a parsed `mcpd/select` against the configured servers and profiles; the error (as sent)
 * when it names an unknown server or profile (-32602 `MCPD_UNKNOWN_SERVER`, `MCPD_UNKNOWN_PROFILE`,
 * naming what is configured), a profile that leaves out the very server whose view it selects (-32602),
 * or when the connection (`current`: its filter) already made a selection (-32600).
 */
export function chooseView(
  selection: Selection,
  servers: ServerDirectory,
  profiles: Profiles,
  current: ViewFilter | undefined,
): ChosenView | { error: JsonRpcErrorObject } {
  // A selection only ever narrows: once made (by `mcpd connect --profile`, say), the client behind it
  // must not undo it with a select of its own before its initialize.
  if (current !== undefined) {
    return {
      error: {
        code: WireCode.InvalidRequest,
        message: `${McpdSelect.method}: this connection's selection (${current.describe()}) is already made and cannot be changed`,
        data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" },
      },
    };
  }
  try {
    return choose(selection, servers, profiles);
  } catch (err) {
    return { error: toWireError(err) };
  }
}

function choose(selection: Selection, servers: ServerDirectory, profiles: Profiles): ChosenView {
  const { server } = selection;
  if (server !== undefined) servers.require(server);
  const filter = profiles.select(selection.profile, selection.tools);
  if (server !== undefined && filter !== undefined && !filter.viewsServer(server)) {
    throw new McpdError(
      "MCPD_PROTOCOL_VIOLATION",
      `${McpdSelect.method}: profile "${selection.profile}" does not include server "${server}" (its servers: ` +
        `${[...(filter.profile?.servers ?? [])].join(", ") || "(none)"}); select its aggregate view, or another profile`,
      { wireCode: WireCode.InvalidParams },
    );
  }
  return { view: server !== undefined ? { kind: "server", server } : { kind: "aggregate" }, filter };
}

/** The answer to `mcpd/select`: the view, the selection, and `control` on a control connection. */
export function selectResult(chosen: ChosenView, control: boolean): JsonObject {
  const result: SelectResult = chosen.view.kind === "server" ? { view: "server", server: chosen.view.server } : { view: "aggregate" };
  const f = chosen.filter;
  if (f?.profileName !== undefined) result.profile = f.profileName;
  if (f?.toolGlobs !== undefined) result.tools = [...f.toolGlobs];
  if (control) result.control = true;
  // What a client of a newer or older release reads to know which eras it may use here (daemon-eras.ts).
  result.protocolVersions = [...SOCKET_PROTOCOL_VERSIONS];
  return result as unknown as JsonObject;
}

/**
 * A connection's `mcpd/select` (`params`; `first`: whether it is the connection's first message; `conn`:
 * whether it sent `initialize` already, and its filter) checked and resolved against the daemon's servers
 * and profiles: the selection and what it chose, or the error to answer.
 */
export function selectView(
  params: JsonObject | undefined,
  first: boolean,
  conn: { readonly initialized: boolean; readonly filter: ViewFilter | undefined },
  daemon: { readonly servers: ServerDirectory; readonly profiles: Profiles },
): { selection: Selection; chosen: ChosenView } | { error: JsonRpcErrorObject } {
  const selection = parseSelect(params, first, conn.initialized);
  if ("error" in selection) return selection;
  const chosen = chooseView(selection, daemon.servers, daemon.profiles, conn.filter);
  return "error" in chosen ? chosen : { selection, chosen };
}

/**
 * The answer to every request on a connection whose first message, a `mcpd/select`, failed (`reason`: its
 * error's message). Such a connection has no view: not the unfiltered aggregate view it would otherwise
 * fall back to, so a client that sent `initialize` right behind its select, or that ignores its error,
 * never gets more than it asked for.
 */
export function noViewError(reason: string): JsonRpcErrorObject {
  return {
    code: WireCode.InvalidRequest,
    // Bounded: it is repeated in every answer, and the select's error may echo what the client sent.
    message: `this connection has no view: its ${McpdSelect.method} failed (${quote(reason, PROTOCOL_DEFAULTS.quotedDescriptionChars)}); open a new connection`,
    data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" },
  };
}

/** What a selection sets on a connection (a router Session). */
export interface SelectingConnection {
  view: View;
  filter: ViewFilter | undefined;
  events: boolean;
  control: boolean;
  /** The tool-search mode its selection asked for; undefined: its profile's. */
  toolSearch: Selection["toolSearch"];
  readonly initialized: boolean;
  /** The view was chosen by the connection's face (its HTTP endpoint): no `mcpd/select` may change it. */
  viewChosenByFace: boolean;
}

/**
 * Applies a connection's `mcpd/select` (`first`: whether it is the connection's first message): the answer,
 * or the error (also when its face already chose its view).
 */
export function applySelect(
  conn: SelectingConnection,
  params: JsonObject | undefined,
  first: boolean,
  daemon: { readonly servers: ServerDirectory; readonly profiles: Profiles },
): { result: JsonObject } | { error: JsonRpcErrorObject } {
  if (conn.viewChosenByFace) {
    return {
      error: {
        code: WireCode.InvalidRequest,
        message: `${McpdSelect.method}: this session's view is the one its endpoint serves and cannot be changed; open the endpoint of the view you want (/mcp, /servers/<name>/mcp, /profiles/<name>/mcp)`,
        data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" },
      },
    };
  }
  const made = selectView(params, first, conn, daemon);
  if ("error" in made) return made;
  conn.view = made.chosen.view;
  conn.filter = made.chosen.filter;
  conn.toolSearch = made.selection.toolSearch;
  conn.events = made.selection.events;
  if (made.selection.control) conn.control = true;
  return { result: selectResult(made.chosen, conn.control) };
}

/**
 * Sets the view a connection's face chose for it (an HTTP endpoint's: a server's, a profile's, or the
 * aggregate view) before anything else reaches it; from then on it refuses `mcpd/select`. The error (as
 * {@link chooseView} gives it) when the server or profile is unknown.
 */
export function chooseFaceView(
  conn: SelectingConnection,
  choice: { server?: string; profile?: string; toolSearch?: Selection["toolSearch"] },
  daemon: { readonly servers: ServerDirectory; readonly profiles: Profiles },
): JsonRpcErrorObject | undefined {
  const { server, profile, toolSearch } = choice;
  const selection: Selection = { server, profile, toolSearch, tools: undefined, events: false, control: false };
  const chosen = chooseView(selection, daemon.servers, daemon.profiles, conn.filter);
  if ("error" in chosen) return chosen.error;
  conn.view = chosen.view;
  conn.filter = chosen.filter;
  conn.toolSearch = toolSearch;
  conn.viewChosenByFace = true;
  return undefined;
}
