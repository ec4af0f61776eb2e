import { NotFoundError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { canonicalJson } from "../config/config-hash.js";
import { FILTER_KINDS, type ProfileSpec } from "../config/config-schema.js";
import type { ListKind } from "./upstream-port.js";
import { CompiledProfile, ViewFilter, compileSelection } from "./view-filter.js";

/** What a profile shows of one kind, as text: equal texts, equal views of that kind. */
function kindKey(spec: ProfileSpec | undefined, kind: ListKind): string {
  return spec === undefined ? "" : canonicalJson({ servers: spec.servers ?? null, filter: spec[kind] ?? null });
}

/**
 * The profiles of the config (`mcpd.profiles`), compiled once per definition, and the selections
 * connections make from them. The router replaces the definitions on every load and reload.
 */
export class Profiles {
  private byName = new Map<string, CompiledProfile>();

  /** The profile named, or undefined. */
  get(name: string): CompiledProfile | undefined {
    return this.byName.get(name);
  }

  /** The configured profiles' names, in config order. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Every configured profile. */
  all(): Iterable<CompiledProfile> {
    return this.byName.values();
  }

  /**
   * Replaces the definitions. Returns, for each profile whose view changed (one removed or redefined),
   * the kinds of list that changed for it; an unchanged profile keeps its compiled form.
   */
  update(specs: Readonly<Record<string, ProfileSpec>> | undefined): Map<string, Set<ListKind>> {
    const next = new Map<string, CompiledProfile>();
    const changed = new Map<string, Set<ListKind>>();
    for (const [name, spec] of Object.entries(specs ?? {})) {
      const old = this.byName.get(name);
      const kinds = new Set(FILTER_KINDS.filter((k) => kindKey(old?.spec, k) !== kindKey(spec, k)));
      // Another search mode changes what tools/list holds.
      if (old !== undefined && canonicalJson(old.spec.toolSearch ?? null) !== canonicalJson(spec.toolSearch ?? null)) kinds.add("tools");
      next.set(name, kinds.size === 0 && old !== undefined ? old : new CompiledProfile(name, spec));
      // A profile new to the config has no connection yet: nobody to tell.
      if (kinds.size > 0 && old !== undefined) changed.set(name, kinds);
    }
    for (const name of this.byName.keys()) if (!next.has(name)) changed.set(name, new Set(FILTER_KINDS));
    this.byName = next;
    return changed;
  }

  /**
   * The view filter of a selection: a profile and/or one-off tool globs (already checked for shape);
   * undefined when neither narrows anything.
   * @throws NotFoundError (MCPD_UNKNOWN_PROFILE) naming the configured profiles.
   */
  select(profile: string | undefined, tools: readonly string[] | undefined): ViewFilter | undefined {
    if (profile === undefined && tools === undefined) return undefined;
    let compiled: CompiledProfile | undefined;
    if (profile !== undefined) {
      compiled = this.byName.get(profile);
      if (compiled === undefined) {
        const known = this.names();
        throw new NotFoundError(
          "MCPD_UNKNOWN_PROFILE",
          `Unknown profile ${JSON.stringify(quote(profile, PROTOCOL_DEFAULTS.quotedNameChars))}; configured (mcpd.profiles): ${known.length ? known.join(", ") : "(none)"}`,
        );
      }
    }
    return new ViewFilter(profile, compiled, tools, compileSelection(tools));
  }

  /** A connection's filter after a reload: the same selection over its profile's current definition. */
  refresh(filter: ViewFilter): ViewFilter {
    return filter.profileName === undefined ? filter : filter.withProfile(this.byName.get(filter.profileName));
  }
}
