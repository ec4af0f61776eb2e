/**
 * What `mcpd/select` chooses for a connection, checked against the running daemon: its view (a server's
 * transparent view, or the aggregate) and its {@link ViewFilter} (a profile and/or one-off tool globs).
 * Every face selects the same way (the socket, `mcpd connect --profile/--tools`, `@mcpd/client`'s
 * `profile`/`tools`, an HTTP front end): by this message.
 */
import { McpdError, McpdSelect, WireCode, toWireError, type JsonObject, type JsonRpcErrorObject, type SelectResult } from "@mcpd/protocol";
import type { Selection } from "./handshake.js";
import type { ServerDirectory } from "./ports.js";
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
  return result as unknown as JsonObject;
}
