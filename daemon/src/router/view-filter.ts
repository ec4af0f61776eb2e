import { HiddenError, type HiddenKind, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import type { ProfileSpec } from "../config/config-schema.js";
import { NameFilter } from "./name-filter.js";
import { namespacedUri, viewedUri } from "./resource-uris.js";

/** A profile of the config, compiled once per definition: its servers as a Set, each filter as a {@link NameFilter}. */
export class CompiledProfile {
  readonly servers: ReadonlySet<string> | undefined;
  readonly tools: NameFilter | undefined;
  readonly prompts: NameFilter | undefined;
  readonly resources: NameFilter | undefined;

  constructor(
    readonly name: string,
    readonly spec: ProfileSpec,
  ) {
    this.servers = spec.servers ? new Set(spec.servers) : undefined;
    this.tools = NameFilter.compile(spec.tools);
    this.prompts = NameFilter.compile(spec.prompts);
    this.resources = NameFilter.compile(spec.resources);
  }
}

/**
 * What an HTTP session opened with a scoped token is held to: nothing outside its view, by any method
 * (per-request routing included), and with `server` that one server alone.
 */
export interface Confinement {
  readonly server?: string;
}

const NOUN: Readonly<Record<HiddenKind, string>> = { tool: "Tool", prompt: "Prompt", resource: "Resource" };
const LIST: Readonly<Record<HiddenKind, string>> = { tool: "tools/list", prompt: "prompts/list", resource: "resources/list" };

/** Most one-off globs an error or a status line quotes. */
const MAX_QUOTED_GLOBS = 5;

/**
 * What one connection's selection lets it see of the aggregate view: a profile (`mcpd.profiles.<name>`)
 * and/or one-off tool globs, both over the names the aggregate view gives (`<server>__<tool>`; resources by
 * their URI or its `mcpd://<server>/` form). Every check is a Set or memoized Map lookup: the globs were
 * compiled when the profile or the selection was. A profile the config no longer has (removed by a reload
 * while the connection used it) shows nothing: a view only ever narrows, so losing its definition must not
 * widen it.
 */
export class ViewFilter {
  /** Lists already narrowed, by the catalog's list (a new array whenever the catalog is rebuilt). */
  private readonly narrowed = new WeakMap<readonly object[], readonly object[]>();

  /**
   * @param profileName the profile selected, if any
   * @param profile its current definition; undefined with a `profileName`: it is gone from the config
   * @param toolGlobs the one-off tool globs, if any, and `selection`, them compiled
   * @param confinement set for a session opened with a scoped HTTP token (see {@link Confinement})
   */
  constructor(
    readonly profileName: string | undefined,
    readonly profile: CompiledProfile | undefined,
    readonly toolGlobs: readonly string[] | undefined,
    private readonly selection: NameFilter | undefined,
    readonly confinement?: Confinement,
  ) {}

  /** `filter` (undefined: no selection) held to `confinement` as well. */
  static confined(filter: ViewFilter | undefined, confinement: Confinement): ViewFilter {
    return filter === undefined
      ? new ViewFilter(undefined, undefined, undefined, undefined, confinement)
      : new ViewFilter(filter.profileName, filter.profile, filter.toolGlobs, filter.selection, confinement);
  }

  /**
   * The items of a catalog list this view keeps (`keep` must be one of this filter's checks), computed
   * once per list: a listing repeated while the catalog is unchanged costs one WeakMap lookup.
   */
  narrow<T extends object>(all: readonly T[], keep: (item: T) => boolean): readonly T[] {
    return this.derive(all, (a) => a.filter(keep));
  }

  /**
   * What this view makes of a catalog list (`compute` must depend on nothing but the list and this
   * filter), computed once per list, as {@link narrow}; one derivation per list.
   */
  derive<T extends object, U extends object>(all: readonly T[], compute: (all: readonly T[]) => readonly U[]): readonly U[] {
    let out = this.narrowed.get(all) as readonly U[] | undefined;
    if (out === undefined) {
      out = compute(all);
      this.narrowed.set(all, out);
    }
    return out;
  }

  /** The same selection over a new definition of its profile (a reload). */
  withProfile(profile: CompiledProfile | undefined): ViewFilter {
    return new ViewFilter(this.profileName, profile, this.toolGlobs, this.selection, this.confinement);
  }

  private get gone(): boolean {
    return this.profileName !== undefined && this.profile === undefined;
  }

  /** Whether the server's items and notifications are in this view at all. */
  viewsServer(server: string): boolean {
    if (this.gone) return false;
    const only = this.confinement?.server;
    if (only !== undefined && server !== only) return false;
    const servers = this.profile?.servers;
    return servers === undefined || servers.has(server);
  }

  /** Whether the tool `exposed` (its aggregate name) of `server` is in this view. */
  allowsTool(server: string, exposed: string): boolean {
    if (!this.viewsServer(server)) return false;
    const p = this.profile?.tools;
    if (p !== undefined && !p.allows(exposed)) return false;
    return this.selection === undefined || this.selection.allows(exposed);
  }

  /** Whether the prompt `exposed` (its aggregate name) of `server` is in this view (the tool globs do not narrow prompts). */
  allowsPrompt(server: string, exposed: string): boolean {
    if (!this.viewsServer(server)) return false;
    const p = this.profile?.prompts;
    return p === undefined || p.allows(exposed);
  }

  /** Whether the resource (or template) `uri` of `server`, in the server's own form, is in this view. */
  allowsResource(server: string, uri: string): boolean {
    if (!this.viewsServer(server)) return false;
    const p = this.profile?.resources;
    return p === undefined || p.allowsAny(uri, namespacedUri(server, uri), viewedUri(server, uri, false));
  }

  /** The selection in words: `profile "coding"`, `tools selection (a*, b*)`, or both. */
  describe(): string {
    const parts: string[] = [];
    if (this.profileName !== undefined) parts.push(`profile "${this.profileName}"`);
    if (this.toolGlobs !== undefined) parts.push(`tools selection (${this.quotedGlobs()})`);
    return parts.join(" and ");
  }

  private quotedGlobs(): string {
    const globs = this.toolGlobs ?? [];
    const more = globs.length > MAX_QUOTED_GLOBS ? `, ... (${globs.length} in all)` : "";
    return globs.slice(0, MAX_QUOTED_GLOBS).join(", ") + more;
  }

  /**
   * The refusal of an item this view hides: `name` as the client wrote it, `server` the server it belongs
   * to, `exposed` its aggregate name (the URI for a resource). Says which part of the selection hides it.
   */
  hidden(kind: HiddenKind, name: string, server: string, exposed: string = name): HiddenError {
    const noun = `${NOUN[kind]} ${JSON.stringify(quote(name, PROTOCOL_DEFAULTS.quotedTextChars))}`;
    const extra = { server, ...(this.profileName !== undefined ? { profile: this.profileName } : {}) };
    const only = this.confinement?.server;
    if (only !== undefined && server !== only) {
      return new HiddenError(
        kind,
        name,
        "selection",
        `${NOUN[kind]} ${JSON.stringify(quote(name, PROTOCOL_DEFAULTS.quotedTextChars))} is hidden: ${reachOf(only)}`,
        extra,
      );
    }
    if (this.gone) {
      return new HiddenError(
        kind,
        name,
        "profile",
        `${noun} is hidden: this connection's profile "${this.profileName}" is no longer in mcpd's config (a reload removed it), ` +
          "so it sees nothing; reconnect with a profile that exists",
        extra,
      );
    }
    const profile = this.profile;
    if (profile !== undefined) {
      const why = !this.viewsServer(server)
        ? `its server "${server}" is not one of the profile's servers`
        : kind === "tool" && profile.tools !== undefined && !profile.tools.allows(exposed)
          ? `the profile's "tools" filter leaves it out`
          : kind === "prompt" && profile.prompts !== undefined && !profile.prompts.allows(exposed)
            ? `the profile's "prompts" filter leaves it out`
            : kind === "resource" && profile.resources !== undefined
              ? `the profile's "resources" filter leaves it out`
              : undefined;
      if (why !== undefined) {
        return new HiddenError(
          kind,
          name,
          "profile",
          `${noun} is hidden by profile "${profile.name}": ${why}; ${LIST[kind]} lists what it offers`,
          extra,
        );
      }
    }
    return new HiddenError(
      kind,
      name,
      "selection",
      `${noun} is hidden by this connection's tools selection (${this.quotedGlobs()}); ${LIST[kind]} lists what it offers`,
      extra,
    );
  }
}

/** Compiles a connection's one-off tool globs (already checked). */
export function compileSelection(globs: readonly string[] | undefined): NameFilter | undefined {
  return globs === undefined ? undefined : NameFilter.compile({ include: globs });
}

/** Why a session held to server `only` cannot reach another. */
export function reachOf(only: string): string {
  return `this session reaches only server "${only}" (the scope of the HTTP token it was opened with)`;
}
