import type { NameFilterSpec } from "../config/config-schema.js";
import { compileGlobs } from "../config/globs.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/**
 * One `include` / `exclude` filter, compiled once (each list becomes one matcher: a Set of its exact
 * names and its wildcard globs, matched in linear time) when the config or a connection's selection gives it. Verdicts are remembered per name, so a name asked for again (every
 * `tools/call` of a tool) costs a Map lookup, not a glob match. The memory holds at most
 * `RUNTIME_DEFAULTS.filterMemoEntries` names; past that it starts over.
 */
export class NameFilter {
  private readonly include: ((name: string) => boolean) | undefined;
  private readonly exclude: ((name: string) => boolean) | undefined;
  private readonly memo = new Map<string, boolean>();

  private constructor(readonly spec: NameFilterSpec) {
    this.include = spec.include ? compileGlobs(spec.include) : undefined;
    this.exclude = spec.exclude && spec.exclude.length > 0 ? compileGlobs(spec.exclude) : undefined;
  }

  /** The compiled filter, or undefined when `spec` filters nothing. Globs must be valid (the config checked them). */
  static compile(spec: NameFilterSpec | undefined): NameFilter | undefined {
    if (spec === undefined || (spec.include === undefined && (spec.exclude === undefined || spec.exclude.length === 0))) return undefined;
    return new NameFilter(spec);
  }

  /** Whether `name` passes: included (or no include list) and not excluded. */
  allows(name: string): boolean {
    const known = this.memo.get(name);
    if (known !== undefined) return known;
    const verdict = this.match(name);
    if (this.memo.size >= RUNTIME_DEFAULTS.filterMemoEntries) this.memo.clear();
    this.memo.set(name, verdict);
    return verdict;
  }

  /** Whether any of `names` passes (for a resource known by two forms of its URI). */
  allowsAny(...names: string[]): boolean {
    return names.some((n) => this.allows(n));
  }

  private match(name: string): boolean {
    if (this.include !== undefined && !this.include(name)) return false;
    return this.exclude === undefined || !this.exclude(name);
  }

  /** The globs of `list` that match none of `names` (each name given as one or more forms). */
  unmatched(list: "include" | "exclude", names: readonly (readonly string[])[]): string[] {
    const globs = this.spec[list] ?? [];
    return globs.filter((g) => {
      const match = compileGlobs([g]);
      return !names.some((forms) => forms.some(match));
    });
  }
}
